#include "analysis/analysis.h"
#include "analysis/strings.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace dpscope::analysis {

using model::Backend;

namespace {

bool matches(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*') return starts_with(name, pattern.substr(0, pattern.size() - 1));
  return pattern == name;
}

const ChainFamily kBuiltin{"builtin", "", "netfilter", "built-in / base chain"};
const ChainFamily kOther{"other", "", "other", "any other chain"};

}  // namespace

// The one table of chain families. Order matters: first match wins.
const std::vector<ChainFamily>& chain_families() {
  static const std::vector<ChainFamily> kFamilies = {
      {"KUBE-SERVICES", "KUBE-SERVICES", "kube-proxy", "service dispatch: one rule per service port"},
      {"KUBE-SVC", "KUBE-SVC-*", "kube-proxy", "one chain per service port with endpoints (load-balancing over them)"},
      {"KUBE-SEP", "KUBE-SEP-*", "kube-proxy", "one chain per (service port, endpoint) (DNAT)"},
      {"KUBE-SVL", "KUBE-SVL-*", "kube-proxy", "local-endpoints chain (externalTrafficPolicy=Local)"},
      {"KUBE-EXT", "KUBE-EXT-*", "kube-proxy", "external destinations of a service"},
      {"KUBE-FW", "KUBE-FW-*", "kube-proxy", "load-balancer source ranges"},
      {"KUBE-XLB", "KUBE-XLB-*", "kube-proxy", "external load balancer (kube-proxy before 1.24)"},
      {"KUBE-NODEPORTS", "KUBE-NODEPORTS", "kube-proxy", "NodePort dispatch"},
      {"KUBE-EXTERNAL-SERVICES", "KUBE-EXTERNAL-SERVICES", "kube-proxy", "external IPs / no-endpoint rejects"},
      {"KUBE-MARK", "KUBE-MARK-*", "kube-proxy", "packet marks (MASQ, DROP)"},
      {"KUBE-POSTROUTING", "KUBE-POSTROUTING", "kube-proxy", "SNAT of marked service traffic"},
      {"KUBE-FORWARD", "KUBE-FORWARD", "kube-proxy", "forwarding accept rules"},
      {"KUBE-PROXY-FIREWALL", "KUBE-PROXY-FIREWALL", "kube-proxy", "load-balancer firewall"},
      {"KUBE-PROXY-CANARY", "KUBE-PROXY-CANARY", "kube-proxy", "flush canary"},
      {"KUBE-ipvs", "KUBE-LOAD-BALANCER", "kube-proxy", "ipvs mode"},
      {"KUBE-ipvs", "KUBE-NODE-PORT", "kube-proxy", "ipvs mode"},
      {"KUBE-ipvs", "KUBE-IPVS-*", "kube-proxy", "ipvs mode"},
      {"KUBE-ipvs", "KUBE-LOOP-BACK", "kube-proxy", "ipvs mode"},
      {"KUBE-FIREWALL", "KUBE-FIREWALL", "kubelet", "blocks incoming localnet connections (kube-proxy creates it too)"},
      {"KUBE-KUBELET-CANARY", "KUBE-KUBELET-CANARY", "kubelet", "flush canary"},
      {"KUBE-IPTABLES-HINT", "KUBE-IPTABLES-HINT", "kubelet", "iptables backend hint"},
      {"KUBE-ROUTER", "KUBE-ROUTER-*", "kube-router", "kube-router"},
      {"KUBE-NWPLCY", "KUBE-NWPLCY-*", "kube-router", "kube-router network policy (one chain per policy)"},
      {"KUBE-other", "KUBE-*", "kubernetes", "other KUBE-* chains"},
      {"ANTREA", "ANTREA-*", "antrea", "Antrea"},
      {"OVN-KUBE", "OVN-KUBE-*", "ovn-kubernetes", "OVN-Kubernetes (NodePort / external IP / egress service rules)"},
      {"CILIUM", "CILIUM_*", "cilium", "Cilium"},
      {"OLD_CILIUM", "OLD_CILIUM_*", "cilium", "Cilium chains left from a restart"},
      {"cali", "cali-*", "calico", "Calico"},
      {"FLANNEL", "FLANNEL-*", "flannel", "flannel"},
      {"KIND", "KIND-*", "kind", "kind / kindnet"},
      {"DOCKER", "DOCKER*", "docker", "Docker"},
      // Native nftables tables count as their project's family (no chain-name pattern:
      // analyze_netfilter assigns them by table, see nft_table_owner()).
      {"nft-kube-proxy", "", "kube-proxy", "chains of the nftables tables ip/ip6 kube-proxy"},
      {"nft-calico", "", "calico", "chains of the nftables tables ip/ip6 calico and arp calico-arp"},
      {"nft-kube-router", "", "kube-router", "chains of the nftables tables kube-router-filter-ipv4/-ipv6"},
      {"nft-antrea", "", "antrea", "chains of the nftables tables ip/ip6 antrea"},
      {"nft-ovn-kubernetes", "", "ovn-kubernetes", "chains of the nftables table inet ovn-kubernetes"},
  };
  return kFamilies;
}

const ChainFamily& family_of(std::string_view chain, bool is_base_chain) {
  if (is_base_chain) return kBuiltin;
  for (const auto& f : chain_families()) {
    if (!f.pattern.empty() && matches(f.pattern, chain)) return f;
  }
  return kOther;
}

std::optional<std::string> single_address(const std::string& cidr) {
  auto slash = cidr.find('/');
  if (slash == std::string::npos) return cidr;  // a bare address is one address
  std::string len = cidr.substr(slash + 1);
  bool v6 = cidr.find(':') != std::string::npos;
  if ((!v6 && len == "32") || (v6 && len == "128")) return cidr.substr(0, slash);
  return std::nullopt;
}

std::string TableStats::key() const { return std::string(model::to_string(backend)) + " " + family + " " + name; }

const LbSummary* EbpfAnalysis::lb_of(std::string_view dataplane) const {
  for (const auto& l : lb) {
    if (l.dataplane == dataplane) return &l;
  }
  return nullptr;
}

// ---------------------------------------------------------------- availability

namespace {

std::string describe(const model::Unavailable& u) {
  std::string s = u.reason;
  if (!u.hint.empty()) s += " (" + u.hint + ")";
  return s;
}

}  // namespace

// `section` itself or a parent listed unavailable -> unavailable; a child listed
// -> incomplete. An importer's "not imported: ..." record (errno 0) is a part
// the input did not contain: not collected, with that reason.
Availability availability_of(const model::Snapshot& s, const std::string& section, bool collected) {
  Availability a;
  a.collected = collected;
  for (const auto& u : s.unavailable) {
    bool self_or_parent = u.section == section || starts_with(section, u.section + ".");
    bool child = starts_with(u.section, section + ".");
    bool not_imported = u.error == 0 && starts_with(u.reason, "not imported");
    // A parent and its part often fail for the same reason: say it once.
    auto add_reason = [&](const std::string& r) {
      if (a.reason.find(r) == std::string::npos) a.reason += (a.reason.empty() ? "" : "; ") + r;
    };
    if (self_or_parent && not_imported) {
      a.collected = false;
      add_reason(describe(u));
    } else if (self_or_parent) {
      a.unavailable = true;
      add_reason(describe(u));
    } else if (child && not_imported) {
      a.not_imported.push_back(u.section + ": " + u.reason);
    } else if (child) {
      a.incomplete.push_back(u.section + ": " + describe(u));
    }
  }
  // A light snapshot read every rule and named set, but not the elements it
  // names: totals over them leave those out, like a part not in the input.
  if (section == "netfilter" || starts_with(section, "netfilter.nftables") || starts_with("netfilter.nftables", section)) {
    for (const auto& left : s.netfilter.collection.nft_left_out) {
      a.not_imported.push_back("netfilter.nftables: left out by snapshot --light: " + left);
    }
  }
  return a;
}

Availability combine(const Availability& a, const Availability& b) {
  Availability c;
  c.collected = a.collected && b.collected;
  c.unavailable = a.unavailable || b.unavailable;
  for (const auto* x : {&a, &b}) {
    if ((x->unavailable || !x->collected) && !x->reason.empty() && c.reason.find(x->reason) == std::string::npos) {
      c.reason += (c.reason.empty() ? "" : "; ") + x->reason;
    }
    for (const auto& i : x->incomplete) {
      if (std::find(c.incomplete.begin(), c.incomplete.end(), i) == c.incomplete.end()) c.incomplete.push_back(i);
    }
    for (const auto& i : x->not_imported) {
      if (std::find(c.not_imported.begin(), c.not_imported.end(), i) == c.not_imported.end()) {
        c.not_imported.push_back(i);
      }
    }
  }
  return c;
}

std::string Availability::gap() const {
  if (unavailable) return "unavailable (" + reason + ")";
  if (!collected) return reason.empty() ? "not collected" : "not collected (" + reason + ")";
  if (incomplete.empty()) return "";
  std::string s = "incomplete (";
  for (size_t i = 0; i < incomplete.size(); ++i) s += (i ? "; " : "") + incomplete[i];
  return s + ")";
}

Availability NetfilterAnalysis::service_ips_av() const {
  if (!availability.usable() || service_ips_visible()) return availability;
  Availability a = availability;
  a.unavailable = true;
  a.reason = "not visible in this source: the KUBE-SERVICES rules of ";
  for (size_t i = 0; i < service_rules_hidden.size(); ++i) a.reason += (i ? ", " : "") + service_rules_hidden[i];
  a.reason += " were counted, not recorded (nft -j does not describe iptables matches; import iptables-save output)";
  return a;
}

const std::vector<std::string_view>& kube_proxy_nft_service_chain_kinds() {
  static const std::vector<std::string_view> kinds = {"service", "local", "external", "endpoint", "firewall"};
  return kinds;
}

namespace {
bool is_base32_hash8(std::string_view s);
}

std::string_view kube_proxy_nft_chain_kind(std::string_view name) {
  for (std::string_view kind : kube_proxy_nft_service_chain_kinds()) {
    if (name.size() > kind.size() && name.substr(0, kind.size()) == kind && name[kind.size()] == '-') {
      std::string_view rest = name.substr(kind.size() + 1);
      // "HASH8-ns/name/proto/port": the hash, then a service port name with its three slashes.
      if (is_base32_hash8(rest) && std::count(rest.begin(), rest.end(), '/') >= 3) return kind;
    }
  }
  return "helper";
}

namespace {

// ---------------------------------------------------------------- netfilter

bool is_base32_hash8(std::string_view s) {
  if (s.size() < 9 || s[8] != '-') return false;
  for (size_t i = 0; i < 8; ++i) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7'))) return false;
  }
  return true;
}

NetfilterAnalysis analyze_netfilter(const model::Snapshot& s) {
  NetfilterAnalysis n;
  n.availability = availability_of(s, "netfilter", s.netfilter.collected);
  n.legacy = availability_of(s, "netfilter.iptables-legacy", s.netfilter.collected);
  n.nf_tables = availability_of(s, "netfilter.nftables", s.netfilter.collected);
  // A generation that moved during every read makes the nf_tables part a best-effort read.
  if (n.nf_tables.usable() && model::is_unavailable(s, "netfilter.consistency")) {
    for (const auto& i : n.availability.incomplete) {
      if (starts_with(i, "netfilter.consistency:")) n.nf_tables.incomplete.push_back(i);
    }
  }
  n.native = combine(n.nf_tables, availability_of(s, "netfilter.nftables-native", s.netfilter.collected));
  std::set<std::string> all_ips;
  std::map<Backend, std::unordered_set<std::string>> frontends_forwarded, frontends_rejected;
  for (const auto& t : s.netfilter.tables) {
    TableStats ts;
    ts.backend = t.backend;
    ts.family = t.family;
    ts.name = t.name;
    ts.chains = t.chains.size();
    bool kube_proxy_nft = t.backend == Backend::Nftables && t.name == "kube-proxy";
    if (kube_proxy_nft) {
      n.kube_proxy_nft.present = true;
      n.kube_proxy_nft.tables.push_back(t.family + " " + t.name);
      std::unordered_set<std::string> forwarded, rejected;
      for (const auto& set : t.sets) {
        if (set.name == "service-ips") n.kube_proxy_nft.services += set.element_count;
        if (set.name == "service-nodeports") n.kube_proxy_nft.nodeports += set.element_count;
        if (set.name == "service-ips" || set.name == "no-endpoint-services") {
          for (const auto& e : set.elements) (set.name == "service-ips" ? forwarded : rejected).insert(e.key);
          // Elements counted, not listed: each one a frontend (no key to merge).
          if (!set.elements_recorded) n.kube_proxy_nft.frontends += set.element_count;
        }
      }
      n.kube_proxy_nft.frontends += forwarded.size();
      for (const auto& k : rejected) {
        if (!forwarded.count(k)) {
          n.kube_proxy_nft.frontends += 1;
          n.kube_proxy_nft.frontends_without_endpoints += 1;
        }
      }
    }
    const std::string nft_owner = t.backend == Backend::Nftables ? nft_table_owner(t.family, t.name) : "";
    std::unordered_set<std::string> table_ips;  // 20k services: no linear search per rule
    for (const auto& c : t.chains) {
      ts.rules += c.rule_count;
      const ChainFamily& fam = family_of(c.name, c.base.has_value());
      if (t.backend != Backend::Nftables) {
        auto& fs = n.families[std::string(fam.id)];
        fs.chains += 1;
        fs.rules += c.rule_count;
        if (starts_with(c.name, "KUBE-")) {
          ts.kube_chains += 1;
          if (fam.owner == "kube-proxy") n.kube_proxy_chains += 1;
          if (fam.owner == "kubelet") n.kubelet_chains += 1;
        }
        if (fam.id == "KUBE-SVC") n.kube_svc_chains += 1;
        if (fam.id == "KUBE-SEP") n.kube_sep_chains += 1;
        if (fam.id == "CILIUM") n.cilium_chains += 1;
        if (fam.id == "cali") n.calico_chains += 1;
      } else if (!nft_owner.empty()) {
        auto& fs = n.families["nft-" + nft_owner];
        fs.chains += 1;
        fs.rules += c.rule_count;
      }
      if (kube_proxy_nft) {
        n.kube_proxy_nft.rules += c.rule_count;
        if (c.base) {
          n.kube_proxy_nft.base_chains += 1;
          n.kube_proxy_nft.rules_by_kind["base"] += c.rule_count;
        } else {
          const std::string kind(kube_proxy_nft_chain_kind(c.name));
          n.kube_proxy_nft.chains_by_kind[kind] += 1;
          n.kube_proxy_nft.rules_by_kind[kind] += c.rule_count;
        }
      }
      if (t.backend != Backend::Nftables && (c.name == "KUBE-SERVICES" || c.name == "KUBE-EXTERNAL-SERVICES")) {
        // Frontends: "ADDR:PORT/PROTO" of a nat jump to a service chain or a filter REJECT / DROP.
        for (const auto& r : c.rules) {
          if (!r.match.destination || r.match.destination->negated || r.match.dport.empty()) continue;
          const bool nat_jump = t.name == "nat" && c.name == "KUBE-SERVICES" && r.verdict_kind == "jump" &&
                                (starts_with(r.target, "KUBE-SVC-") || starts_with(r.target, "KUBE-SVL-") ||
                                 starts_with(r.target, "KUBE-EXT-") || starts_with(r.target, "KUBE-FW-"));
          const bool verdict = t.name == "filter" && (r.target == "REJECT" || r.target == "DROP");
          if (!nat_jump && !verdict) continue;
          auto ip = single_address(r.match.destination->cidr);
          if (!ip) continue;
          (nat_jump ? frontends_forwarded : frontends_rejected)[t.backend].insert(*ip + ":" + r.match.dport + "/" +
                                                                                  r.match.protocol);
        }
      }
      if (c.name == "KUBE-SERVICES") {
        n.kube_services_rules += c.rule_count;
        if (!c.rules_recorded && c.rule_count > 0) n.service_rules_hidden.push_back(ts.key());
        if (t.name == "nat") n.kube_services_walk = std::max<uint64_t>(n.kube_services_walk, c.rule_count);
        for (const auto& r : c.rules) {
          if (!r.match.destination || r.match.destination->negated) continue;
          auto ip = single_address(r.match.destination->cidr);
          if (!ip) continue;
          ts.service_ip_rules += 1;
          if (table_ips.insert(*ip).second) ts.service_ips.push_back(*ip);  // first-seen order
          all_ips.insert(*ip);
        }
      }
    }
    n.rules += ts.rules;
    n.chains += ts.chains;
    n.kube_chains += ts.kube_chains;
    n.service_ip_rules += ts.service_ip_rules;
    switch (t.backend) {
      case Backend::Nftables: n.nftables_rules += ts.rules; break;
      case Backend::IptablesLegacy:
        n.iptables_rules += ts.rules;
        n.legacy_rules += ts.rules;
        break;
      case Backend::IptablesNft:
        n.iptables_rules += ts.rules;
        n.iptables_nft_rules += ts.rules;
        break;
    }
    n.tables.push_back(std::move(ts));
  }
  n.service_ips.assign(all_ips.begin(), all_ips.end());
  for (auto& [backend, keys] : frontends_forwarded) n.service_frontends += keys.size();
  for (auto& [backend, keys] : frontends_rejected) {
    for (const auto& k : keys) {
      if (frontends_forwarded[backend].count(k)) continue;
      n.service_frontends += 1;
      n.service_frontends_without_endpoints += 1;
    }
  }
  return n;
}

}  // namespace

// ---------------------------------------------------------------- eBPF

const std::vector<OwnerRule>& owner_rules() {
  static const std::vector<OwnerRule> kRules = {
      {"cilium", "pin-prefix", "any", "/sys/fs/bpf/tc/globals/cilium_"},
      {"cilium", "pin-prefix", "any", "/sys/fs/bpf/cilium/"},
      {"cilium", "name-prefix", "any", "cilium_"},
      {"cilium", "name-prefix", "program", "cil_"},
      {"calico", "pin-prefix", "any", "/sys/fs/bpf/tc/globals/cali_"},
      {"calico", "pin-prefix", "any", "/sys/fs/bpf/calico/"},
      {"calico", "name-prefix", "any", "cali_"},
      {"calico", "name-prefix", "program", "calico_"},
      // Calico v3.34 felix/bpf/bpfdefs/defs.go: tcx and netkit link pins, connect-time LB pins.
      {"calico", "pin-prefix", "any", "/sys/fs/bpf/tcx/"},
      {"calico", "pin-prefix", "any", "/sys/fs/bpf/netkit/"},
      {"calico", "pin-prefix", "any", "/sys/fs/bpf/ctlb/"},
      // aws-network-policy-agent v1.4 pkg/utils/utils.go, pkg/ebpf/bpf_client.go (names cut to 15).
      {"aws-network-policy-agent", "pin-prefix", "any", "/sys/fs/bpf/globals/aws/"},
      {"aws-network-policy-agent", "name-prefix", "map", "aws_conntrack_m"},
      {"system", "name-prefix", "program", "sd_"},      // systemd: sd_devices, sd_fw_ingress, ...
      {"system", "name-prefix", "map", "sd_"},
      {"system", "pin-prefix", "any", "/sys/fs/bpf/systemd/"},
  };
  return kRules;
}

namespace {

std::string owner_by_rules(std::string_view object, const std::string& name, const std::vector<std::string>& pins) {
  for (const auto& r : owner_rules()) {
    if (r.object != "any" && r.object != object) continue;
    if (r.kind == "name-prefix" && starts_with(name, r.value)) return std::string(r.owner);
    if (r.kind == "pin-prefix") {
      for (const auto& p : pins) {
        if (starts_with(p, r.value)) return std::string(r.owner);
      }
    }
  }
  return "other";
}

}  // namespace

std::string owner_of_map(const model::BpfMap& m) { return owner_by_rules("map", m.name, m.pinned); }

std::string owner_of_program(const model::BpfProgram& p, const std::map<uint32_t, std::string>& map_owner) {
  std::string own = owner_by_rules("program", p.name, p.pinned);
  if (own != "other") return own;
  // Cilium's tail-call programs (tail_handle_ipv4, ...) carry no prefix: they
  // belong to whoever owns the maps they use.
  std::map<std::string, int> votes;
  for (uint32_t id : p.map_ids) {
    auto it = map_owner.find(id);
    if (it != map_owner.end() && it->second != "other") votes[it->second] += 1;
  }
  if (votes.size() == 1) return votes.begin()->first;
  return "other";
}

namespace {

// Service maps by kernel name (15 characters) or pin name: the frontend maps
// of Cilium (services_v2) and Calico (nat_fe).
bool is_service_map(const model::BpfMap& m) {
  for (std::string_view p : {"cilium_lb4_serv", "cilium_lb6_serv", "cali_v4_nat_fe", "cali_v6_nat_fe"}) {
    if (starts_with(m.name, p)) return true;
  }
  return false;
}

// Where socket LB programs act: the cgroup root (Cilium mounts it at
// /run/cilium/cgroupv2) or the cgroup all pods live under is the whole node;
// any other cgroup is only that cgroup's processes.
bool node_wide_cgroup(const std::string& target) {
  for (std::string_view t : {"", "/", "/kubepods", "/kubepods.slice"}) {
    if (target == t) return true;
  }
  return false;
}

EbpfAnalysis analyze_ebpf(const model::Snapshot& s) {
  EbpfAnalysis e;
  e.availability = availability_of(s, "ebpf", s.ebpf.collected);
  e.programs_av = availability_of(s, "ebpf.programs", s.ebpf.collected);
  e.maps_av = availability_of(s, "ebpf.maps", s.ebpf.collected);
  e.memory_av = combine(e.programs_av, e.maps_av);
  e.attachments_av = availability_of(s, "ebpf.attachments", s.ebpf.collected);
  e.services_av = combine(availability_of(s, "ebpf.services", s.ebpf.collected), e.maps_av);
  e.memlock = memlock_band(s.node.kernel, s.node.cgroup_memory_nobpf);
  for (const auto& m : s.ebpf.maps) {
    if (is_service_map(m)) e.service_maps_listed.push_back(m.pinned.empty() ? m.name : m.pinned.front());
  }
  std::map<uint32_t, std::string> map_owner;
  for (const auto& m : s.ebpf.maps) map_owner[m.id] = owner_of_map(m);
  std::map<uint32_t, std::string> prog_owner;
  for (const auto& p : s.ebpf.programs) prog_owner[p.id] = owner_of_program(p, map_owner);
  // A map no rule names (libbpf's .rodata/.bss, per-object maps) belongs to the
  // one owner of the programs using it.
  std::map<uint32_t, std::set<std::string>> users;
  for (const auto& p : s.ebpf.programs) {
    for (uint32_t id : p.map_ids) users[id].insert(prog_owner[p.id]);
  }
  for (auto& [id, own] : map_owner) {
    if (own != "other") continue;
    auto it = users.find(id);
    if (it != users.end() && it->second.size() == 1 && *it->second.begin() != "other") own = *it->second.begin();
  }
  for (const auto& p : s.ebpf.programs) {
    e.programs += 1;
    e.program_memlock_bytes += p.bytes_memlock;
    e.programs_by_type[p.type] += 1;
    auto& o = e.owners[prog_owner[p.id]];
    o.programs += 1;
    o.memlock_bytes += p.bytes_memlock;
    if (!p.loaded_at.empty() && (o.first_loaded_at.empty() || p.loaded_at < o.first_loaded_at)) {
      o.first_loaded_at = p.loaded_at;  // RFC 3339 UTC, one format: ordered as text
    }
  }
  for (const auto& m : s.ebpf.maps) {
    e.maps += 1;
    e.map_memlock_bytes += m.bytes_memlock;
    auto& o = e.owners[map_owner[m.id]];
    o.maps += 1;
    o.memlock_bytes += m.bytes_memlock;
    o.map_memlock_bytes += m.bytes_memlock;
  }
  e.memlock_bytes = e.program_memlock_bytes + e.map_memlock_bytes;
  for (const auto& a : s.ebpf.attachments) {
    e.attachments_by_kind[a.kind] += 1;
    e.attach_points[a.kind + " " + a.target + " " + a.direction] += 1;
    if (a.kind == "cgroup" && starts_with(a.prog_name, "cil_sock")) {
      std::string where = a.target.empty() ? "/" : a.target;
      auto& list = node_wide_cgroup(a.target) ? e.cilium_socket_lb.node_wide : e.cilium_socket_lb.elsewhere;
      if (std::find(list.begin(), list.end(), where) == list.end()) list.push_back(where);
    }
  }
  for (const auto& m : s.ebpf.maps) {
    if (!m.entries || m.max_entries == 0 || !map_fill_is_meaningful(m.type)) continue;
    e.fullest_maps.push_back({m.name, m.type, map_owner[m.id], *m.entries, m.max_entries});
  }
  std::stable_sort(e.fullest_maps.begin(), e.fullest_maps.end(), [](const MapFill& a, const MapFill& b) {
    return a.entries * uint64_t{b.max_entries} > b.entries * uint64_t{a.max_entries};
  });
  for (const auto& svc : s.ebpf.services) {
    LbSummary l;
    l.dataplane = svc.dataplane;
    l.decoded = svc.decoded;
    l.note = svc.note;
    l.frontends = svc.frontends.size();
    l.backends = svc.backends.size();
    std::set<std::string> addrs;
    for (const auto& f : svc.frontends) addrs.insert(f.address);
    l.frontend_addresses.assign(addrs.begin(), addrs.end());
    e.lb.push_back(std::move(l));
  }
  return e;
}

}  // namespace

bool map_fill_is_meaningful(const std::string& type) {
  for (std::string_view t : {"hash", "lru_hash", "percpu_hash", "lru_percpu_hash", "lpm_trie", "hash_of_maps",
                             "sockhash", "devmap_hash"}) {
    if (type == t) return true;
  }
  return false;
}

MemlockBand memlock_band(const std::string& kernel, std::optional<bool> nobpf) {
  MemlockBand b;
  b.kernel = kernel;
  unsigned major = 0, minor = 0;
  char dot = 0;
  bool parsed = !kernel.empty() && std::sscanf(kernel.c_str(), "%u%c%u", &major, &dot, &minor) == 3 && dot == '.';
  if (!parsed) {
    b.id = "unknown";
    b.meaning = std::string("not known, ") +
                (kernel.empty() ? "the kernel is not recorded (an import)" : "kernel \"" + kernel + "\" not understood") +
                ": pages charged to RLIMIT_MEMLOCK before 5.11, an estimate from max_entries on 5.11-6.3, the map's "
                "own accounting from 6.4";
    b.cgroup = "not known without the kernel (a memory cgroup since 5.11, none before)";
    return b;
  }
  const unsigned v = major * 1000 + minor;
  if (v < 5011) {
    b.id = "rlimit-pages";
    b.meaning = "pages charged to RLIMIT_MEMLOCK (kernel " + kernel + " < 5.11)";
    b.cgroup = "charged to no memory cgroup before 5.11: kubectl top does not show it";
    return b;
  }
  if (v < 6004) {
    b.id = "estimate";
    b.meaning = "an estimate from max_entries and key/value sizes (kernel " + kernel +
                ", 5.11-6.3, commit 80ee81e0403c); it can undercount 2-10x";
  } else {
    b.id = "map-mem-usage";
    b.meaning = "the map's own accounting, map_mem_usage (kernel " + kernel +
                " >= 6.4, commit 90a5527d7686); it follows the current entries of BPF_F_NO_PREALLOC maps";
  }
  if (nobpf && *nobpf) {
    b.cgroup = "cgroup.memory=nobpf is set on this node: map memory is charged to no memory cgroup, so kubectl "
               "top does not show it";
  } else {
    b.cgroup = std::string("since 5.11 charged to the memory cgroup of the process that created each map (in that "
                           "container's working set); not the running agent's when an earlier container created "
                           "pinned maps (they survive agent restarts)") +
               (nobpf ? "" : ", nor anyone's with cgroup.memory=nobpf (not recorded here)");
  }
  return b;
}

namespace {

// ---------------------------------------------------------------- mode

std::string plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// kube-proxy's ipvs mode without its chains in the input (an import of
// ipvsadm and ip alone): virtual services, and VIPs on its kube-ipvs0.
bool kube_ipvs0_in_use(const IpvsAnalysis& v) {
  return v.services > 0 &&
         std::find(v.dummy_interfaces.begin(), v.dummy_interfaces.end(), "kube-ipvs0") != v.dummy_interfaces.end();
}

Mode decide_mode(const NetfilterAnalysis& n, const EbpfAnalysis& e, const IpvsAnalysis& v,
                 std::vector<Dataplane> dataplanes) {
  Mode m;
  std::vector<std::string> kube_proxy;  // which kube-proxy modes have evidence
  uint64_t ipvs_chains = n.families.count("KUBE-ipvs") ? n.families.at("KUBE-ipvs").chains : 0;
  if (n.kube_svc_chains + n.kube_sep_chains > 0) {
    kube_proxy.push_back("kube-proxy-iptables");
    m.evidence.push_back(plural(n.kube_svc_chains, "KUBE-SVC chain", "KUBE-SVC chains") + " and " +
                         plural(n.kube_sep_chains, "KUBE-SEP chain", "KUBE-SEP chains") +
                         " (kube-proxy iptables mode programs one KUBE-SVC per service port with endpoints and one KUBE-SEP per "
                         "(service port, endpoint))");
  } else if (ipvs_chains > 0 || !n.kube_proxy_ipvs_ipsets.empty() || kube_ipvs0_in_use(v)) {
    kube_proxy.push_back("kube-proxy-ipvs");
    if (ipvs_chains > 0) {
      m.evidence.push_back(plural(ipvs_chains, "ipvs-mode chain", "ipvs-mode chains") +
                           " (KUBE-LOAD-BALANCER, KUBE-NODE-PORT, ...)");
    }
    if (!n.kube_proxy_ipvs_ipsets.empty()) {
      std::string names;
      for (size_t i = 0; i < n.kube_proxy_ipvs_ipsets.size() && i < 4; ++i) names += (i ? ", " : "") + n.kube_proxy_ipvs_ipsets[i];
      m.evidence.push_back(plural(n.kube_proxy_ipvs_ipsets.size(), "ipvs-mode ipset", "ipvs-mode ipsets") + " (" + names +
                           (n.kube_proxy_ipvs_ipsets.size() > 4 ? ", ..." : "") + ")");
    }
    if (v.visible() && v.loaded) {
      m.evidence.push_back(describe(v) + " (kube-proxy's ipvs mode: one virtual service per Service port and "
                                         "frontend, its ClusterIPs on kube-ipvs0)");
    } else if (v.visible()) {
      m.evidence.push_back("this kernel has no IPVS (ip_vs not loaded): no virtual service serves these Services");
    }
    m.services_hidden = ipvs_hidden(v, "kube-proxy");
  } else if (n.kube_services_rules > 0) {
    kube_proxy.push_back("kube-proxy-iptables");
    m.evidence.push_back(plural(n.kube_services_rules, "rule", "rules") +
                         " in KUBE-SERVICES but no KUBE-SVC/KUBE-SEP chains");
  }
  if (n.kube_proxy_nft.present) {
    kube_proxy.push_back("kube-proxy-nftables");
    m.evidence.push_back("nftables table " + n.kube_proxy_nft.tables.front() + " with " +
                         plural(n.kube_proxy_nft.services, "element", "elements") + " in its service-ips map");
  }
  if (n.availability.whole() && kube_proxy.empty()) {
    std::string kubelet = n.kubelet_chains > 0
                              ? " (the " + plural(n.kubelet_chains, "KUBE-* chain", "KUBE-* chains") +
                                    " present are kubelet's or kube-proxy's housekeeping chains: KUBE-FIREWALL, KUBE-KUBELET-CANARY, "
                                    "KUBE-IPTABLES-HINT)"
                              : "";
    m.evidence.push_back("no KUBE-SVC, KUBE-SEP or KUBE-SERVICES rules and no nftables kube-proxy table" + kubelet);
  }
  const LbSummary* cilium = e.lb_of("cilium");
  const LbSummary* calico = e.lb_of("calico");
  bool cilium_lb = cilium && cilium->frontends > 0;
  bool calico_lb = calico && calico->frontends > 0;
  // Socket LB counts as node-wide only at the cgroup root or the pods' cgroup.
  bool cilium_sock = !e.cilium_socket_lb.node_wide.empty();
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 4; ++i) out += (i ? ", " : "") + v[i];
    if (v.size() > 4) out += ", ... (" + std::to_string(v.size() - 4) + " more)";
    return out;
  };
  if (cilium_lb) {
    m.evidence.push_back("Cilium eBPF service map holds " + plural(cilium->frontends, "frontend", "frontends") +
                         " and " + plural(cilium->backends, "backend", "backends"));
  }
  if (cilium_sock) {
    m.evidence.push_back("Cilium socket-LB programs (cil_sock*) attached node-wide, at cgroup " +
                         list(e.cilium_socket_lb.node_wide));
  }
  if (!e.cilium_socket_lb.elsewhere.empty()) {
    m.evidence.push_back(std::string("Cilium socket-LB programs (cil_sock*) attached ") + (cilium_sock ? "also" : "only") +
                         " to cgroup " +
                         list(e.cilium_socket_lb.elsewhere) +
                         ": not the cgroup root or the pods' cgroup, so not node-wide socket LB");
  }
  if (n.cilium_chains > 0) m.evidence.push_back(plural(n.cilium_chains, "CILIUM_* chain", "CILIUM_* chains"));
  if (calico_lb) {
    m.evidence.push_back("Calico eBPF NAT map holds " + plural(calico->frontends, "frontend", "frontends"));
  }
  // Cilium objects whose service map was listed but not read (an import of
  // `bpftool map show`): Cilium is there, what it programs is not known.
  uint64_t cilium_objects = 0;
  if (auto it = e.owners.find("cilium"); it != e.owners.end()) cilium_objects = it->second.programs + it->second.maps;
  bool cilium_unread = !cilium_lb && !e.services_av.usable() && cilium_objects > 0;
  if (cilium_unread) {
    const auto& o = e.owners.at("cilium");
    m.evidence.push_back(plural(o.programs, "Cilium program", "Cilium programs") + " and " +
                         plural(o.maps, "Cilium map", "Cilium maps") +
                         (e.service_maps_listed.empty() ? "" : ", service map " + list(e.service_maps_listed) + " listed"));
  }
  if (!n.unknown_match_sets.empty()) {
    std::string names;
    for (size_t i = 0; i < n.unknown_match_sets.size() && i < 4; ++i) names += (i ? ", " : "") + n.unknown_match_sets[i];
    m.evidence.push_back("rules match IP sets that do not exist: " + names +
                         (n.unknown_match_sets.size() > 4 ? ", ..." : "") + " (a rule cannot load without its set: "
                         "the ipsets section and the rules were read at different times, or an import mixes nodes)");
  }
  // What could not be seen, so no conclusion rests on it.
  if (!n.availability.usable()) {
    m.evidence.push_back("not seen: netfilter " + n.availability.gap() + ": kube-proxy's rules are not ruled out");
  } else if (!n.availability.complete()) {
    m.evidence.push_back("not seen in full: netfilter " + n.availability.gap());
  }
  for (const auto& part : n.availability.not_imported) m.evidence.push_back("not seen: " + part);
  if (!e.availability.usable()) {
    m.evidence.push_back("not seen: eBPF " + e.availability.gap());
  } else if (!e.services_av.usable()) {
    m.evidence.push_back("not seen: the eBPF service maps' entries " + e.services_av.gap());
  }

  // The other dataplanes' evidence, each under its name.
  // The first that serves Services itself: one dpscope cannot see
  // (services_hidden), or kube-router, whose Services are in IPVS.
  const Dataplane* proxy = nullptr;
  for (const auto& d : dataplanes) {
    for (const auto& ev : d.evidence) m.evidence.push_back(d.label + ": " + ev);
    if (!d.services_hidden.empty()) m.evidence.push_back(d.label + ": " + d.services_hidden);
    if (!proxy && (!d.services_hidden.empty() || (d.id == "kube-router" && d.serves_services))) proxy = &d;
  }
  bool cilium_kpr = cilium_lb || cilium_sock || (n.cilium_chains > 0 && !e.availability.usable());
  bool calico_ebpf = calico_lb;
  if (kube_proxy.size() > 1) {
    m.id = "mixed";
    m.label = "mixed kube-proxy modes";
  } else if (kube_proxy.size() == 1) {
    m.id = kube_proxy.front();
    m.label = m.id == "kube-proxy-iptables" ? "kube-proxy (iptables)"
              : m.id == "kube-proxy-ipvs"   ? "kube-proxy (ipvs)"
                                            : "kube-proxy (nftables)";
    if (cilium_lb || calico_lb) {
      m.evidence.push_back("an eBPF service map is programmed as well: Cilium/Calico without full kube-proxy "
                           "replacement, or services programmed twice");
    }
  } else if (cilium_kpr && calico_ebpf) {
    m.id = "mixed";
    m.label = "Cilium and Calico eBPF";
  } else if ((cilium_kpr || calico_ebpf) && !n.availability.whole()) {
    // A replacement replaces kube-proxy: without (all of) netfilter that is not known.
    m.id = calico_ebpf ? "calico-ebpf-unconfirmed" : "cilium-kpr-unconfirmed";
    m.label = std::string(calico_ebpf ? "Calico eBPF service map" : "Cilium eBPF services") +
              (n.availability.usable() ? " (netfilter not fully seen: kube-proxy not ruled out)"
                                       : " (netfilter not seen: kube-proxy not ruled out)");
  } else if (cilium_kpr) {
    m.id = "cilium-kpr";
    m.label = "Cilium kube-proxy replacement";
    if (!e.availability.usable()) {
      m.label = "Cilium kube-proxy replacement (inferred: eBPF not seen)";
      m.evidence.push_back("eBPF section not collected: the replacement is inferred from the CILIUM_* chains and "
                           "the absence of kube-proxy, the service map itself was not seen");
    }
  } else if (calico_ebpf) {
    m.id = "calico-ebpf";
    m.label = "Calico eBPF dataplane";
  } else if (cilium_unread) {
    m.id = "cilium-unconfirmed";
    m.label = "Cilium eBPF (service map entries not read)";
  } else if (proxy) {
    // Its Services are programmed where dpscope cannot read: say so, never "none".
    m.id = proxy->id == "antrea" ? "antrea-proxy" : proxy->id;
    m.label = proxy->label + (proxy->services_hidden.empty() ? " (services in IPVS)" : " (" + proxy->services_hidden + ")");
    m.services_hidden = proxy->services_hidden;
    if (!n.availability.whole()) {
      m.id += "-unconfirmed";
      m.label += std::string(n.availability.usable() ? " (netfilter not fully seen" : " (netfilter not seen") +
                 ": kube-proxy not ruled out)";
    }
  } else if (n.availability.whole() && e.availability.complete()) {
    m.id = "none";
    m.label = "no service dataplane found";
  } else if (n.availability.usable() || e.availability.usable()) {
    m.id = "unknown";
    m.label = std::string("no service dataplane seen (") +
              (!n.availability.usable() ? "netfilter not seen" : !e.availability.usable() ? "eBPF not seen" : "sections incomplete") +
              ")";
  } else {
    m.id = "unknown";
    m.label = "unknown (netfilter and eBPF not collected)";
  }
  // The dataplanes beside the service proxy, in the label ("kube-proxy (nftables) +
  // Calico nftables dataplane"); Calico markers alone say nothing about a mode.
  for (const auto& d : dataplanes) {
    if (proxy && &d == proxy && m.id.rfind(d.id == "antrea" ? "antrea-proxy" : d.id, 0) == 0) continue;
    if (d.id == "calico") continue;
    m.label += " + " + d.label;
  }
  if (m.services_hidden.empty() && proxy) m.services_hidden = proxy->services_hidden;
  m.dataplanes = std::move(dataplanes);
  return m;
}

}  // namespace

NodeAnalysis analyze(const model::Snapshot& s) {
  NodeAnalysis a;
  a.node = s.node.name;
  a.kernel = s.node.kernel;
  a.source = s.node.source;
  a.netfilter = analyze_netfilter(s);
  std::set<std::string> unknown;
  for (const auto& t : s.netfilter.tables) {
    for (const auto& c : t.chains) {
      for (const auto& r : c.rules) {
        const auto sets = match_sets_of(r);
        if (sets.empty()) continue;
        a.netfilter.match_set_rules += 1;
        for (const auto& name : sets) {
          if (s.ipsets.collected && !model::find_ipset(s.ipsets, name)) unknown.insert(name);
        }
      }
    }
  }
  a.netfilter.unknown_match_sets.assign(unknown.begin(), unknown.end());
  // kubernetes pkg/proxy/ipvs/ipset.go: the sets kube-proxy's ipvs mode matches in its rules.
  for (const auto& set : s.ipsets.sets) {
    for (std::string_view p : {"KUBE-CLUSTER-IP", "KUBE-LOOP-BACK", "KUBE-EXTERNAL-IP", "KUBE-LOAD-BALANCER",
                               "KUBE-NODE-PORT-", "KUBE-HEALTH-CHECK-NODE-PORT", "KUBE-IPVS-IPS"}) {
      if (starts_with(set.name, p)) {
        a.netfilter.kube_proxy_ipvs_ipsets.push_back(set.name);
        break;
      }
    }
  }
  a.ebpf = analyze_ebpf(s);
  a.agents = analyze_agents(s, a.ebpf, availability_of(s, "agents", s.agents.collected));
  a.ipvs = analyze_ipvs(s);
  a.mode = decide_mode(a.netfilter, a.ebpf, a.ipvs, detect_dataplanes(s));
  return a;
}

model::RuleDetail analyze_rule_detail(std::string_view chain) {
  // The service frontends of both chains (and their no-endpoint REJECTs).
  return chain == "KUBE-SERVICES" || chain == "KUBE-EXTERNAL-SERVICES" ? model::RuleDetail::Full
                                                                      : model::RuleDetail::None;
}

std::vector<std::string> match_sets_of(const model::Rule& r) {
  std::vector<std::string> out;
  const std::string_view key = "--match-set ";
  for (size_t at = r.text.find(key); at != std::string::npos; at = r.text.find(key, at + key.size())) {
    const size_t from = at + key.size();
    const size_t end = r.text.find(' ', from);
    out.push_back(r.text.substr(from, end == std::string::npos ? std::string::npos : end - from));
  }
  return out;
}

model::RuleDetail rule_detail_for(std::string_view chain) {
  if (const auto d = analyze_rule_detail(chain); d != model::RuleDetail::None) return d;
  // services_view follows these jumps; fit_scale splits them into per-service
  // and per-endpoint rules.
  for (std::string_view prefix : {"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-"}) {
    if (chain.substr(0, prefix.size()) == prefix) return model::RuleDetail::Verdict;
  }
  // kube-proxy nftables: the per-Service chains a service-ips element leads
  // through (gotos), and the endpoint pick of a service-/local- chain, whose
  // anonymous vmap is in the rule's text.
  std::string_view kind = kube_proxy_nft_chain_kind(chain);
  if (kind == "service" || kind == "local") return model::RuleDetail::Full;
  if (kind == "external" || kind == "firewall") return model::RuleDetail::Verdict;
  return model::RuleDetail::None;
}

}  // namespace dpscope::analysis
