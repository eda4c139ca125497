// Per-Service view: each service port as one dataplane programs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

struct ServiceProgramming {
  std::string name;        // "ns/name:port" from kube-proxy's comments / chain names; "" when unknown (eBPF)
  std::string address;     // the service address (ClusterIP, external IP)
  uint16_t port = 0;
  std::string protocol;    // "tcp", "udp", "sctp"
  std::string dataplane;   // "iptables", "nftables", "cilium", "calico"
  // iptables: the KUBE-SERVICES rule, the rules of the chain it jumps to
  // (KUBE-SVC/KUBE-EXT/KUBE-FW) and of the KUBE-SEP chains that one jumps to.
  uint64_t rules = 0;
  uint64_t chains = 0;     // chains this service port owns (SVC/EXT/FW + SEP)
  uint64_t endpoints = 0;  // KUBE-SEP chains / nft endpoint chains / eBPF backends
  std::string key() const; // "10.96.0.1:443/tcp"
};

std::vector<ServiceProgramming> services_of(const model::Snapshot& s);

}  // namespace dpscope::analysis
