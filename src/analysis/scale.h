// Rules as a function of services and endpoints, fitted from a snapshot's own
// composition, beside the eBPF side (fixed map memory, LB map capacity).
#pragma once

#include <cstdint>
#include <string>

#include "model/snapshot.h"

namespace dpscope::analysis {

struct ScaleModel {
  // iptables (kube-proxy iptables mode)
  bool fitted = false;
  std::string why_not;           // when not fitted
  uint64_t services = 0;         // service ports: KUBE-SVC chains
  uint64_t endpoints = 0;        // KUBE-SEP chains
  uint64_t rules = 0;            // iptables rules now
  double rules_per_service = 0;  // KUBE-SERVICES dispatch rule + the SVC chain's own rules
  double rules_per_endpoint = 0; // the SVC chain's jump + the SEP chain's rules
  double base_rules = 0;         // everything else (kubelet, CNI, Docker, kube-proxy's fixed chains)
  // nftables (kube-proxy nftables mode), fitted from the kube-proxy tables' own
  // composition: service ports are its service- chains (as KUBE-SVC), endpoints
  // its endpoint- chains (as KUBE-SEP).
  struct Nft {
    bool fitted = false;
    std::string why_not;
    uint64_t services = 0, endpoints = 0, rules = 0, elements = 0;
    double rules_per_service = 0;    // rules of the service-/local-/external-/firewall- chains
    double rules_per_endpoint = 0;   // rules of the endpoint- chains
    double base_rules = 0;           // helper and base chains
    double elements_per_service = 0; // map and set elements (service-ips, service-nodeports, no-endpoint-*, ...)
  } nft;
  // eBPF (Cilium LB map)
  bool has_lb_map = false;
  uint64_t lb_slots_used = 0;    // service map entries: one per frontend + one per backend slot
  bool lb_slots_known = false;   // false: the map's entries were not counted (lb_slots_used means nothing)
  uint64_t lb_slots_max = 0;     // the map's max_entries
  uint64_t map_memlock_bytes = 0;  // all maps: fixed by max_entries, not by the number of services
  bool map_memlock_known = false;  // the map list was read in full
};

ScaleModel fit_scale(const model::Snapshot& s);
uint64_t project_rules(const ScaleModel& m, uint64_t services, uint64_t endpoints);
uint64_t project_nft_rules(const ScaleModel::Nft& m, uint64_t services, uint64_t endpoints);
uint64_t project_nft_elements(const ScaleModel::Nft& m, uint64_t services);

}  // namespace dpscope::analysis
