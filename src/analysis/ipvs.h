// The IPVS section as the views use it: how many virtual services and real
// servers a node's kernel holds, which addresses they serve, and which of
// those addresses are bound to a proxy's dummy interface (kube-proxy's
// kube-ipvs0, kube-router's kube-dummy-if). Counted only from what was read:
// `availability` says when the section is absent or could not be read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/availability.h"
#include "model/snapshot.h"

namespace dpscope::analysis {

struct IpvsAnalysis {
  Availability availability;  // section "ipvs"
  bool loaded = false;        // the kernel has IPVS (ip_vs loaded)
  uint64_t services = 0;      // virtual services, fwmark ones included
  uint64_t fwmark_services = 0;
  uint64_t real_servers = 0;  // over all virtual services
  uint64_t draining = 0;      // real servers of weight 0 (kube-proxy's terminating endpoints)
  uint64_t without_servers = 0;  // virtual services no real server of weight > 0 serves
  std::vector<std::string> addresses;  // the virtual services' addresses, sorted, unique
  // Addresses on kube-ipvs0 / kube-dummy-if; unset when they were not read.
  std::optional<std::vector<std::string>> dummy_addresses;
  std::vector<std::string> dummy_interfaces;  // which of the two hold addresses
  // The section is there and says what the kernel's IPVS table holds.
  bool visible() const { return availability.usable(); }
};

IpvsAnalysis analyze_ipvs(const model::Snapshot& s);

// When `proxy`'s Services live in IPVS and this snapshot cannot show them:
// "services handled by kube-router in IPVS; not visible here (IPVS not
// collected ...)". "" when the IPVS table was read (even when empty).
std::string ipvs_hidden(const IpvsAnalysis& v, const std::string& proxy);

// "12 IPVS virtual services, 30 real servers (2 draining); 12 addresses on kube-ipvs0"
std::string describe(const IpvsAnalysis& v);

}  // namespace dpscope::analysis
