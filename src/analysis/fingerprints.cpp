#include "analysis/fingerprints.h"

#include "analysis/ipvs.h"
#include "analysis/strings.h"

#include <map>
#include <set>

namespace dpscope::analysis {

// Read from each project's sources (release / commit, file):
//   kube-router v2.11.1 (7c2c2779): pkg/controllers/proxy/network_services_controller.go
//     (KUBE-ROUTER-SERVICES, KUBE-ROUTER-HAIRPIN, kube-dummy-if), pkg/controllers/netpol/
//     network_policy_controller.go + npc_nftables.go (KUBE-ROUTER-INPUT/FORWARD/OUTPUT, KUBE-NWPLCY-*,
//     tables ip kube-router-filter-ipv4 / ip6 kube-router-filter-ipv6).
//   Calico v3.34.0-dev (87c15906): felix/dataplane/linux/int_dataplane.go (nftables tables "calico" v4/v6,
//     "calico-arp" created whatever the mode), felix/bpf/bpfdefs/defs.go (TcxPinDir /sys/fs/bpf/tcx,
//     NetkitPinDir /sys/fs/bpf/netkit, CtlbPinDir ctlb under the bpffs mount).
//   Antrea v2.2.0-dev (fc70f2bb): pkg/agent/route/route_linux.go (ANTREA-* chains and ipsets),
//     pkg/agent/util/nftables/nftables.go (table "antrea", families ip and ip6).
//   OVN-Kubernetes v1.1.0-dev (6c366bb4): go-controller/pkg/node/gateway_iptables.go (OVN-KUBE-NODEPORT,
//     -EXTERNALIP, -ETP, -ITP, -EGRESS-SVC, -UDN-MASQUERADE), managementport (OVN-KUBE-SNAT-MGMTPORT),
//     go-controller/pkg/node/nftables (table inet ovn-kubernetes).
//   aws-network-policy-agent v1.4.0+ (c8619c05): pkg/ebpf/bpf_client.go (programs handle_ingress /
//     handle_egress, maps ingress_map / egress_map / aws_conntrack_map), pkg/utils/utils.go (pins under
//     /sys/fs/bpf/globals/aws/).
const std::vector<FingerprintRule>& fingerprint_rules() {
  static const std::vector<FingerprintRule> kRules = {
      {"kube-router", "chain", "KUBE-ROUTER-SERVICES", "services", "kube-router v2.11.1 proxy/network_services_controller.go"},
      {"kube-router", "chain", "KUBE-ROUTER-HAIRPIN", "services", "kube-router v2.11.1 proxy/network_services_controller.go"},
      {"kube-router", "chain", "KUBE-ROUTER-*", "policy", "kube-router v2.11.1 netpol/network_policy_controller.go"},
      {"kube-router", "chain", "KUBE-NWPLCY-*", "policy", "kube-router v2.11.1 netpol/network_policy_controller.go"},
      {"kube-router", "ipset", "kube-router-svip", "services", "kube-router v2.11.1 proxy/network_services_controller.go (kube-router-svip, -svip-prt)"},
      {"kube-router", "ipset", "kube-router-", "policy", "kube-router v2.11.1 routing/network_routes_controller.go, proxy (local-ips)"},
      {"kube-router", "ipset", "KUBE-SRC-", "policy", "kube-router v2.11.1 netpol/network_policy_controller.go"},
      {"kube-router", "ipset", "KUBE-DST-", "policy", "kube-router v2.11.1 netpol/network_policy_controller.go"},
      {"kube-router", "nft-table", "ip kube-router-filter-ipv4", "policy", "kube-router v2.11.1 netpol/npc_nftables.go"},
      {"kube-router", "nft-table", "ip6 kube-router-filter-ipv6", "policy", "kube-router v2.11.1 netpol/npc_nftables.go"},
      {"calico", "nft-table", "ip calico", "policy", "Calico v3.34 felix/dataplane/linux/int_dataplane.go"},
      {"calico", "nft-table", "ip6 calico", "policy", "Calico v3.34 felix/dataplane/linux/int_dataplane.go"},
      {"calico", "nft-table", "arp calico-arp", "marker", "Calico v3.34 felix/dataplane/linux/int_dataplane.go"},
      {"calico", "bpf-pin", "/sys/fs/bpf/tcx/", "ebpf", "Calico v3.34 felix/bpf/bpfdefs/defs.go TcxPinDir"},
      {"calico", "bpf-pin", "/sys/fs/bpf/netkit/", "ebpf", "Calico v3.34 felix/bpf/bpfdefs/defs.go NetkitPinDir"},
      {"calico", "bpf-pin", "/sys/fs/bpf/ctlb/", "ebpf", "Calico v3.34 felix/bpf/bpfdefs/defs.go CtlbPinDir"},
      {"antrea", "chain", "ANTREA-*", "policy", "Antrea v2.2 pkg/agent/route/route_linux.go"},
      {"antrea", "ipset", "ANTREA-", "policy", "Antrea v2.2 pkg/agent/route/route_linux.go"},
      {"antrea", "nft-table", "ip antrea", "policy", "Antrea v2.2 pkg/agent/util/nftables/nftables.go"},
      {"antrea", "nft-table", "ip6 antrea", "policy", "Antrea v2.2 pkg/agent/util/nftables/nftables.go"},
      {"ovn-kubernetes", "chain", "OVN-KUBE-*", "services", "OVN-Kubernetes v1.1 go-controller/pkg/node/gateway_iptables.go"},
      {"ovn-kubernetes", "nft-table", "inet ovn-kubernetes", "policy", "OVN-Kubernetes v1.1 go-controller/pkg/node/nftables"},
      {"aws-network-policy-agent", "bpf-pin", "/sys/fs/bpf/globals/aws/", "policy", "aws-network-policy-agent v1.4 pkg/utils/utils.go"},
      {"aws-network-policy-agent", "bpf-map", "aws_conntrack_m", "policy", "aws-network-policy-agent v1.4 pkg/ebpf/bpf_client.go (aws_conntrack_map, cut to 15)"},
      {"aws-network-policy-agent", "bpf-program", "handle_ingress", "policy", "aws-network-policy-agent v1.4 pkg/ebpf/bpf_client.go"},
      {"aws-network-policy-agent", "bpf-program", "handle_egress", "policy", "aws-network-policy-agent v1.4 pkg/ebpf/bpf_client.go"},
      {"aws-network-policy-agent", "bpf-map", "ingress_map", "policy", "aws-network-policy-agent v1.4 pkg/ebpf/bpf_client.go"},
      {"aws-network-policy-agent", "bpf-map", "egress_map", "policy", "aws-network-policy-agent v1.4 pkg/ebpf/bpf_client.go"},
  };
  return kRules;
}

std::string nft_table_owner(const std::string& family, const std::string& name) {
  if (name == "kube-proxy" && (family == "ip" || family == "ip6")) return "kube-proxy";
  const std::string key = family + " " + name;
  for (const auto& r : fingerprint_rules()) {
    if (r.kind == "nft-table" && r.value == key) return std::string(r.dataplane);
  }
  return "";
}

const Dataplane* find_dataplane(const std::vector<Dataplane>& v, std::string_view id) {
  for (const auto& d : v) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

namespace {

bool chain_matches(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*') return starts_with(name, pattern.substr(0, pattern.size() - 1));
  return pattern == name;
}

std::string count_of(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string names(const std::set<std::string>& v, size_t max = 4) {
  std::string out;
  size_t i = 0;
  for (const auto& s : v) {
    if (i == max) {
      out += ", ... (" + std::to_string(v.size() - max) + " more)";
      break;
    }
    out += (i++ ? ", " : "") + s;
  }
  return out;
}

// What was found for one (dataplane, rule): the matched object names.
struct Hits {
  std::set<std::string> objects;
  uint64_t chains = 0;
};

// The first matching chain rule of each dataplane wins, so a KUBE-ROUTER-SERVICES
// chain is a "services" hit, not also a "policy" one.
const FingerprintRule* chain_rule(const std::string& chain) {
  for (const auto& r : fingerprint_rules()) {
    if (r.kind == "chain" && chain_matches(r.value, chain)) return &r;
  }
  return nullptr;
}

void pins_hit(const std::vector<std::string>& pins, const std::string& what,
              std::map<const FingerprintRule*, Hits>& hits) {
  for (const auto& p : pins) {
    for (const auto& r : fingerprint_rules()) {
      if (r.kind == "bpf-pin" && starts_with(p, r.value)) hits[&r].objects.insert(what + " " + p);
    }
  }
}

void name_hit(std::string_view kind, const std::string& name, std::map<const FingerprintRule*, Hits>& hits) {
  for (const auto& r : fingerprint_rules()) {
    if (r.kind == kind && starts_with(name, r.value)) hits[&r].objects.insert(name);
  }
}

struct Project {
  std::string_view dataplane;
  std::string label;
  std::string services_hidden;  // when it serves Services where dpscope cannot read
};

}  // namespace

std::vector<Dataplane> detect_dataplanes(const model::Snapshot& s) {
  std::map<const FingerprintRule*, Hits> hits;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend == model::Backend::Nftables) {
      const std::string key = t.family + " " + t.name;
      for (const auto& r : fingerprint_rules()) {
        if (r.kind != "nft-table" || r.value != key) continue;
        auto& h = hits[&r];
        h.objects.insert(key);
        h.chains += t.chains.size();
      }
      continue;
    }
    for (const auto& c : t.chains) {
      if (c.base) continue;
      if (const auto* r = chain_rule(c.name)) {
        auto& h = hits[r];
        h.objects.insert(c.name);
        h.chains += 1;
      }
    }
  }
  for (const auto& p : s.ebpf.programs) {
    name_hit("bpf-program", p.name, hits);
    pins_hit(p.pinned, "program", hits);
  }
  for (const auto& m : s.ebpf.maps) {
    name_hit("bpf-map", m.name, hits);
    pins_hit(m.pinned, "map", hits);
  }
  for (const auto& l : s.ebpf.links) pins_hit(l.pinned, l.type + " link", hits);
  for (const auto& set : s.ipsets.sets) {
    const std::string name = starts_with(set.name, "inet6:") ? set.name.substr(6) : set.name;
    for (const auto& r : fingerprint_rules()) {
      if (r.kind != "ipset" || !starts_with(name, r.value)) continue;
      hits[&r].objects.insert(set.name);
      break;
    }
  }

  std::vector<Dataplane> out;
  auto add = [&](std::string id, std::string label, std::string_view dataplane, auto keep) {
    Dataplane d;
    d.id = std::move(id);
    d.label = std::move(label);
    for (const auto& r : fingerprint_rules()) {
      if (r.dataplane != dataplane || !keep(r)) continue;
      auto it = hits.find(&r);
      if (it == hits.end()) continue;
      const auto& h = it->second;
      // Chains are counted once per table, as the chain families count them.
      std::string what = r.kind == "chain"       ? count_of(h.chains, "chain", "chains") + " " + std::string(r.value)
                         : r.kind == "nft-table" ? "nftables table " + std::string(r.value) + " with " +
                                                       count_of(h.chains, "chain", "chains")
                         : r.kind == "bpf-pin"   ? count_of(h.objects.size(), "object", "objects") + " pinned under " +
                                                     std::string(r.value)
                         : r.kind == "ipset"     ? count_of(h.objects.size(), "ipset", "ipsets") + " " + std::string(r.value) +
                                                     "* (" + names(h.objects) + ")"
                         : r.kind == "bpf-map"   ? "BPF map " + names(h.objects)
                                                 : "BPF program " + names(h.objects);
      if (r.kind == "chain" && r.value.back() == '*') what += " (" + names(h.objects) + ")";
      if (r.role == "marker") what += ": created in every mode, so evidence of " + std::string(dataplane) + ", not of a mode";
      d.evidence.push_back(what + " [" + std::string(r.source) + "]");
      d.chains += h.chains;
      if (r.role == "services") d.serves_services = true;
    }
    if (!d.evidence.empty()) out.push_back(std::move(d));
  };
  auto any = [](const FingerprintRule&) { return true; };

  add("kube-router", "kube-router", "kube-router", any);
  if (auto* d = out.empty() ? nullptr : &out.back(); d && d->id == "kube-router" && d->serves_services) {
    const IpvsAnalysis ipvs = analyze_ipvs(s);
    d->services_hidden = ipvs_hidden(ipvs, "kube-router");
    if (ipvs.visible()) d->evidence.push_back(describe(ipvs) + " [kernel IPVS table]");
  }
  // Calico: its nftables dataplane is the ip/ip6 calico tables with chains; the
  // arp table exists in iptables mode too; the tcx/netkit/ctlb pins are its eBPF dataplane's.
  bool calico_nft = false;
  for (const auto& [r, h] : hits) {
    if (r->dataplane == "calico" && r->kind == "nft-table" && r->role == "policy" && h.chains > 0) calico_nft = true;
  }
  if (calico_nft) {
    add("calico-nftables", "Calico nftables dataplane", "calico",
        [](const FingerprintRule& r) { return r.kind == "nft-table"; });
  }
  add("calico-ebpf", "Calico eBPF dataplane (pins)", "calico", [](const FingerprintRule& r) { return r.role == "ebpf"; });
  if (!calico_nft) {
    add("calico", "Calico", "calico", [](const FingerprintRule& r) { return r.kind == "nft-table"; });
  }
  add("antrea", "Antrea", "antrea", any);
  if (auto* d = out.empty() ? nullptr : &out.back(); d && d->id == "antrea") {
    d->serves_services = true;  // AntreaProxy (on by default) programs Services as OVS flows
    d->services_hidden = "services handled by AntreaProxy in OVS; not visible here";
  }
  add("ovn-kubernetes", "OVN-Kubernetes", "ovn-kubernetes", any);
  if (auto* d = out.empty() ? nullptr : &out.back(); d && d->id == "ovn-kubernetes") {
    d->serves_services = true;  // Services are OVN load balancers, flows in OVS
    d->services_hidden = "services handled by OVN load balancers in OVS; not visible here";
  }
  // The agent's map names alone are common words: a pin under its directory,
  // its conntrack map, or one of its programs together with one of its maps.
  std::set<std::string_view> aws_kinds;
  bool aws_strong = false;
  for (const auto& [r, h] : hits) {
    if (r->dataplane != "aws-network-policy-agent") continue;
    aws_kinds.insert(r->kind);
    if (r->kind == "bpf-pin" || r->value == "aws_conntrack_m") aws_strong = true;
  }
  if (aws_strong || (aws_kinds.count("bpf-program") && aws_kinds.count("bpf-map"))) {
    add("aws-network-policy-agent", "AWS VPC CNI network policy agent", "aws-network-policy-agent", any);
  }
  return out;
}

}  // namespace dpscope::analysis
