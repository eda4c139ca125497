#include "analysis/ipvs.h"

#include <algorithm>
#include <set>

namespace dpscope::analysis {

IpvsAnalysis analyze_ipvs(const model::Snapshot& s) {
  IpvsAnalysis v;
  v.availability = availability_of(s, "ipvs", s.ipvs.collected);
  if (!v.visible()) return v;
  v.loaded = s.ipvs.loaded;
  std::set<std::string> addresses;
  for (const auto& svc : s.ipvs.services) {
    v.services += 1;
    if (svc.fwmark) v.fwmark_services += 1;
    if (svc.address) addresses.insert(*svc.address);
    bool served = false;
    for (const auto& d : svc.destinations) {
      v.real_servers += 1;
      if (d.weight == 0) v.draining += 1;
      served = served || d.weight > 0;
    }
    if (!served) v.without_servers += 1;
  }
  v.addresses.assign(addresses.begin(), addresses.end());
  if (s.ipvs.interface_addresses) {
    std::set<std::string> on_dummy, interfaces;
    for (const auto& a : *s.ipvs.interface_addresses) {
      on_dummy.insert(a.address);
      interfaces.insert(a.interface);
    }
    v.dummy_addresses.emplace(on_dummy.begin(), on_dummy.end());
    v.dummy_interfaces.assign(interfaces.begin(), interfaces.end());
  }
  return v;
}

std::string ipvs_hidden(const IpvsAnalysis& v, const std::string& proxy) {
  if (v.visible()) return {};
  return "services handled by " + proxy + " in IPVS; not visible here (IPVS " + v.availability.gap() +
         (v.availability.collected || v.availability.unavailable
              ? ")"
              : ": a snapshot by dpscope 2.2 or later reads it, an import takes --ipvsadm-save)");
}

std::string describe(const IpvsAnalysis& v) {
  auto n = [](uint64_t k, const char* one, const char* many) { return std::to_string(k) + " " + (k == 1 ? one : many); };
  if (!v.visible()) return "IPVS " + v.availability.gap();
  if (!v.loaded) return "no IPVS in this kernel (ip_vs not loaded)";
  std::string out = n(v.services, "IPVS virtual service", "IPVS virtual services") + ", " +
                    n(v.real_servers, "real server", "real servers");
  if (v.draining > 0) out += " (" + std::to_string(v.draining) + " of weight 0, draining)";
  if (v.dummy_addresses) {
    std::string names;
    for (const auto& i : v.dummy_interfaces) names += (names.empty() ? "" : ", ") + i;
    out += "; " + n(v.dummy_addresses->size(), "address", "addresses") + " on " +
           (names.empty() ? std::string("kube-ipvs0 / kube-dummy-if") : names);
  }
  return out;
}

}  // namespace dpscope::analysis
