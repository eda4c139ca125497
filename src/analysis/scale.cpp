#include "analysis/scale.h"

#include <cmath>

#include "analysis/analysis.h"

namespace dpscope::analysis {

namespace {

void fit_nft(const model::Snapshot& s, const NodeAnalysis& a, ScaleModel::Nft& m) {
  const auto& k = a.netfilter.kube_proxy_nft;
  auto kind = [&](const char* name) {
    auto it = k.rules_by_kind.find(name);
    return it == k.rules_by_kind.end() ? uint64_t{0} : it->second;
  };
  auto chains = [&](const char* name) {
    auto it = k.chains_by_kind.find(name);
    return it == k.chains_by_kind.end() ? uint64_t{0} : it->second;
  };
  m.services = chains("service");
  m.endpoints = chains("endpoint");
  m.rules = k.rules;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::Nftables || t.name != "kube-proxy") continue;
    // Dynamic sets (affinity-*) hold clients seen by the packet path, not a
    // function of Services; a live snapshot does not read them by default.
    for (const auto& set : t.sets) {
      if (set.elements_unread.empty()) m.elements += set.element_count;
    }
  }
  const uint64_t per_service = kind("service") + kind("local") + kind("external") + kind("firewall");
  const uint64_t per_endpoint = kind("endpoint");
  if (!a.netfilter.native.complete()) {
    m.why_not = "native nftables " + (a.netfilter.native.gap().empty() ? std::string("not read in full")
                                                                         : a.netfilter.native.gap());
  } else if (m.services == 0 || m.endpoints == 0) {
    m.why_not = "no service-/endpoint- chains to fit from (not kube-proxy nftables mode)";
  } else {
    m.fitted = true;
    m.rules_per_service = static_cast<double>(per_service) / m.services;
    m.rules_per_endpoint = static_cast<double>(per_endpoint) / m.endpoints;
    m.base_rules = static_cast<double>(m.rules) - static_cast<double>(per_service + per_endpoint);
    m.elements_per_service = static_cast<double>(m.elements) / m.services;
  }
}

}  // namespace

ScaleModel fit_scale(const model::Snapshot& s) {
  ScaleModel m;
  NodeAnalysis a = analyze(s);
  m.rules = a.netfilter.iptables_rules;
  m.services = a.netfilter.kube_svc_chains;
  m.endpoints = a.netfilter.kube_sep_chains;
  uint64_t per_service_rules = 0, per_endpoint_rules = 0;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend == model::Backend::Nftables) continue;
    for (const auto& c : t.chains) {
      bool svc = c.name.rfind("KUBE-SVC-", 0) == 0;
      bool sep = c.name.rfind("KUBE-SEP-", 0) == 0;
      if (sep) per_endpoint_rules += c.rule_count;
      if (!svc && c.name != "KUBE-SERVICES") continue;
      for (const auto& r : c.rules) {
        if (r.target.rfind("KUBE-SEP-", 0) == 0) {
          per_endpoint_rules += 1;  // the SVC chain's jump to one endpoint
        } else if (svc || r.target.rfind("KUBE-SVC-", 0) == 0) {
          per_service_rules += 1;   // dispatch rule in KUBE-SERVICES, masquerade rule in KUBE-SVC
        }
      }
    }
  }
  if (!a.netfilter.availability.complete()) {
    // A fit from part of the rules would project a node that does not exist.
    m.why_not = "netfilter " + a.netfilter.availability.gap();
  } else if (m.services == 0 || m.endpoints == 0) {
    m.why_not = "no KUBE-SVC/KUBE-SEP chains to fit from (not kube-proxy iptables mode)";
  } else {
    m.fitted = true;
    m.rules_per_service = static_cast<double>(per_service_rules) / m.services;
    m.rules_per_endpoint = static_cast<double>(per_endpoint_rules) / m.endpoints;
    m.base_rules = static_cast<double>(m.rules) - static_cast<double>(per_service_rules + per_endpoint_rules);
  }
  fit_nft(s, a, m.nft);
  m.map_memlock_known = a.ebpf.maps_av.complete();
  for (const auto& map : s.ebpf.maps) {
    m.map_memlock_bytes += map.bytes_memlock;
    // Cilium's IPv4 service map (services_v2: hash, key 12, value 12).
    if (map.name == "cilium_lb4_serv" && map.key_size == 12 && map.value_size == 12) {
      m.has_lb_map = true;
      m.lb_slots_max = map.max_entries;
      m.lb_slots_known = map.entries.has_value();
      m.lb_slots_used = map.entries.value_or(0);
    }
  }
  return m;
}

uint64_t project_rules(const ScaleModel& m, uint64_t services, uint64_t endpoints) {
  double r = m.base_rules + m.rules_per_service * static_cast<double>(services) +
             m.rules_per_endpoint * static_cast<double>(endpoints);
  return r < 0 ? 0 : static_cast<uint64_t>(std::llround(r));
}

}  // namespace dpscope::analysis

namespace dpscope::analysis {

uint64_t project_nft_rules(const ScaleModel::Nft& m, uint64_t services, uint64_t endpoints) {
  double r = m.base_rules + m.rules_per_service * static_cast<double>(services) +
             m.rules_per_endpoint * static_cast<double>(endpoints);
  return r < 0 ? 0 : static_cast<uint64_t>(std::llround(r));
}

uint64_t project_nft_elements(const ScaleModel::Nft& m, uint64_t services) {
  return static_cast<uint64_t>(std::llround(m.elements_per_service * static_cast<double>(services)));
}

}  // namespace dpscope::analysis
