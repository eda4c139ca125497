#include "analysis/analysis.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace dpscope::analysis {

using model::Backend;

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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
      {"KUBE-SVC", "KUBE-SVC-*", "kube-proxy", "one chain per service port (load-balancing over endpoints)"},
      {"KUBE-SEP", "KUBE-SEP-*", "kube-proxy", "one chain per endpoint (DNAT)"},
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
      {"KUBE-FIREWALL", "KUBE-FIREWALL", "kubelet", "blocks incoming localnet connections"},
      {"KUBE-KUBELET-CANARY", "KUBE-KUBELET-CANARY", "kubelet", "flush canary"},
      {"KUBE-IPTABLES-HINT", "KUBE-IPTABLES-HINT", "kubelet", "iptables backend hint"},
      {"KUBE-ROUTER", "KUBE-ROUTER-*", "kube-router", "kube-router"},
      {"KUBE-other", "KUBE-*", "kubernetes", "other KUBE-* chains"},
      {"CILIUM", "CILIUM_*", "cilium", "Cilium"},
      {"OLD_CILIUM", "OLD_CILIUM_*", "cilium", "Cilium chains left from a restart"},
      {"cali", "cali-*", "calico", "Calico"},
      {"FLANNEL", "FLANNEL-*", "flannel", "flannel"},
      {"KIND", "KIND-*", "kind", "kind / kindnet"},
      {"DOCKER", "DOCKER*", "docker", "Docker"},
  };
  return kFamilies;
}

const ChainFamily& family_of(std::string_view chain, bool is_base_chain) {
  if (is_base_chain) return kBuiltin;
  for (const auto& f : chain_families()) {
    if (matches(f.pattern, chain)) return f;
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

// `section` itself or a parent listed unavailable -> unavailable; a child listed
// -> incomplete.
Availability availability_of(const model::Snapshot& s, const std::string& section, bool collected) {
  Availability a;
  a.collected = collected;
  for (const auto& u : s.unavailable) {
    bool self_or_parent = u.section == section || starts_with(section, u.section + ".");
    bool child = starts_with(u.section, section + ".");
    if (self_or_parent) {
      a.unavailable = true;
      if (!a.reason.empty()) a.reason += "; ";
      a.reason += describe(u);
    } else if (child) {
      a.incomplete.push_back(u.section + ": " + describe(u));
    }
  }
  return a;
}

// ---------------------------------------------------------------- netfilter

std::string nft_chain_kind(const std::string& name) {
  for (const char* kind : {"service", "endpoint", "external", "firewall"}) {
    if (starts_with(name, std::string(kind) + "-")) return kind;
  }
  return "other";
}

NetfilterAnalysis analyze_netfilter(const model::Snapshot& s) {
  NetfilterAnalysis n;
  n.availability = availability_of(s, "netfilter", s.netfilter.collected);
  std::set<std::string> all_ips;
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
      for (const auto& set : t.sets) {
        if (set.name == "service-ips") n.kube_proxy_nft.services += set.element_count;
        if (set.name == "service-nodeports") n.kube_proxy_nft.nodeports += set.element_count;
      }
    }
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
      }
      if (kube_proxy_nft) {
        n.kube_proxy_nft.rules += c.rule_count;
        if (!c.base) n.kube_proxy_nft.chains_by_kind[nft_chain_kind(c.name)] += 1;
      }
      if (c.name == "KUBE-SERVICES") {
        n.kube_services_rules += c.rule_count;
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

EbpfAnalysis analyze_ebpf(const model::Snapshot& s) {
  EbpfAnalysis e;
  e.availability = availability_of(s, "ebpf", s.ebpf.collected);
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
  }
  for (const auto& m : s.ebpf.maps) {
    if (!m.entries || m.max_entries == 0) continue;
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

// ---------------------------------------------------------------- mode

std::string plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

Mode decide_mode(const NetfilterAnalysis& n, const EbpfAnalysis& e, const model::Snapshot& s) {
  Mode m;
  std::vector<std::string> kube_proxy;  // which kube-proxy modes have evidence
  uint64_t ipvs_chains = n.families.count("KUBE-ipvs") ? n.families.at("KUBE-ipvs").chains : 0;
  if (n.kube_svc_chains + n.kube_sep_chains > 0) {
    kube_proxy.push_back("kube-proxy-iptables");
    m.evidence.push_back(plural(n.kube_svc_chains, "KUBE-SVC chain", "KUBE-SVC chains") + " and " +
                         plural(n.kube_sep_chains, "KUBE-SEP chain", "KUBE-SEP chains") +
                         " (kube-proxy iptables mode programs one per service port and one per endpoint)");
  } else if (ipvs_chains > 0) {
    kube_proxy.push_back("kube-proxy-ipvs");
    m.evidence.push_back(plural(ipvs_chains, "ipvs-mode chain", "ipvs-mode chains") +
                         " (KUBE-LOAD-BALANCER, KUBE-NODE-PORT, ...)");
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
  if (n.availability.usable() && kube_proxy.empty()) {
    std::string kubelet = n.kubelet_chains > 0
                              ? " (the " + plural(n.kubelet_chains, "KUBE-* chain", "KUBE-* chains") +
                                    " present are kubelet's: KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT)"
                              : "";
    m.evidence.push_back("no KUBE-SVC, KUBE-SEP or KUBE-SERVICES rules and no nftables kube-proxy table" + kubelet);
  }
  const LbSummary* cilium = e.lb_of("cilium");
  const LbSummary* calico = e.lb_of("calico");
  bool cilium_lb = cilium && cilium->frontends > 0;
  bool calico_lb = calico && calico->frontends > 0;
  bool cilium_sock = false;
  for (const auto& a : s.ebpf.attachments) {
    if (a.kind == "cgroup" && starts_with(a.prog_name, "cil_sock")) cilium_sock = true;
  }
  if (cilium_lb) {
    m.evidence.push_back("Cilium eBPF service map holds " + plural(cilium->frontends, "frontend", "frontends") +
                         " and " + plural(cilium->backends, "backend", "backends"));
  }
  if (cilium_sock) m.evidence.push_back("Cilium socket-LB programs (cil_sock*) attached to the cgroup root");
  if (n.cilium_chains > 0) m.evidence.push_back(plural(n.cilium_chains, "CILIUM_* chain", "CILIUM_* chains"));
  if (calico_lb) {
    m.evidence.push_back("Calico eBPF NAT map holds " + plural(calico->frontends, "frontend", "frontends"));
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
  } else if (cilium_kpr) {
    m.id = "cilium-kpr";
    m.label = "Cilium kube-proxy replacement";
    if (!e.availability.usable()) {
      m.evidence.push_back("eBPF section not collected: the replacement is inferred from the CILIUM_* chains and "
                           "the absence of kube-proxy, the service map itself was not seen");
    }
  } else if (calico_ebpf) {
    m.id = "calico-ebpf";
    m.label = "Calico eBPF dataplane";
  } else if (n.availability.usable() || e.availability.usable()) {
    m.id = "none";
    m.label = "no service dataplane found";
  } else {
    m.id = "unknown";
    m.label = "unknown (netfilter and eBPF not collected)";
  }
  return m;
}

}  // namespace

NodeAnalysis analyze(const model::Snapshot& s) {
  NodeAnalysis a;
  a.node = s.node.name;
  a.kernel = s.node.kernel;
  a.source = s.node.source;
  a.netfilter = analyze_netfilter(s);
  a.ebpf = analyze_ebpf(s);
  a.agents = analyze_agents(s, a.ebpf, availability_of(s, "agents", s.agents.collected));
  a.mode = decide_mode(a.netfilter, a.ebpf, s);
  return a;
}

model::RuleDetail rule_detail_for(std::string_view chain) {
  if (chain == "KUBE-SERVICES") return model::RuleDetail::Full;
  // services_view follows these jumps; fit_scale splits them into per-service
  // and per-endpoint rules.
  for (std::string_view prefix : {"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-"}) {
    if (chain.substr(0, prefix.size()) == prefix) return model::RuleDetail::Verdict;
  }
  return model::RuleDetail::None;
}

}  // namespace dpscope::analysis
