// Per-Service view: each service port as one dataplane programs it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/json.h"
#include "model/snapshot.h"

namespace dpscope::analysis {

struct ServiceProgramming {
  std::string name;        // "ns/name:port" from kube-proxy's comments / chain names; "" when unknown (eBPF)
  std::string address;     // the service address (ClusterIP, external IP)
  uint16_t port = 0;
  std::string protocol;    // "tcp", "udp", "sctp"
  std::string dataplane;   // "iptables", "nftables", "ipvs", "cilium", "calico"
  // iptables: the KUBE-SERVICES rule, the rules of the chain it jumps to
  // (KUBE-SVC/KUBE-EXT/KUBE-FW) and of the KUBE-SEP chains that one jumps to.
  uint64_t rules = 0;
  uint64_t chains = 0;     // chains this service port owns (SVC/EXT/FW + SEP)
  uint64_t endpoints = 0;  // KUBE-SEP chains / nft endpoint chains / IPVS real servers of weight > 0 / eBPF backends
  std::string key() const; // "10.96.0.1:443/tcp"
};

std::vector<ServiceProgramming> services_of(const model::Snapshot& s);

// ---------------------------------------------------------------- frontends

// What one dataplane of a node does with traffic to one service frontend, and
// which endpoints it sends it to: the per-dataplane resolution `verify` reads
// (docs/verify.md says, per dataplane, which objects it follows).
struct FrontendProgramming {
  // "iptables-nft" | "iptables-legacy" | "nftables" | "ipvs" | "cilium" | "calico"
  std::string dataplane;
  std::string family;        // "ipv4" | "ipv6"
  // "ClusterIP" | "ExternalIP" | "LoadBalancer" | "NodePort"; "external" when the
  // dataplane does not say which of ExternalIP / LoadBalancer (a reject rule, an
  // nft map element); "" when not told at all.
  std::string kind;
  std::string address;       // "" for a NodePort (any local address of the node)
  uint16_t port = 0;
  std::string protocol;      // "tcp" | "udp" | "sctp"
  std::string service;       // "ns/name:port" as kube-proxy names it ("ns/name" unnamed); "" when not named
  std::string action;        // "forward" | "reject" | "drop"
  // The traffic policy of the chain the frontend forwards to: "cluster"
  // (KUBE-SVC / service-), "local" (KUBE-SVL / local-), "" when not told.
  std::string policy;
  std::vector<std::string> endpoints;   // "10.244.1.5:8080", "[fd00::5]:8080"; sorted, unique
  // true: `endpoints` are the service port's endpoints as a whole, not this
  // frontend's (nftables: an endpoint chain is named after its service port and
  // endpoint, and the vmap that picks it is not kept in the snapshot).
  bool endpoints_of_service_port = false;
  // false: which endpoints is not known (eBPF maps: backend slots are counted,
  // not linked), only `endpoint_count`.
  bool endpoints_known = true;
  uint32_t endpoint_count = 0;
  std::string where;         // "ip nat KUBE-SERVICES #12 -> KUBE-SVC-X", "ip kube-proxy map service-ips"
  // "10.96.0.1:443/tcp", ":30080/tcp" for a NodePort
  std::string key() const;
};

// Every frontend a node's service dataplanes program, dataplane by dataplane.
std::vector<FrontendProgramming> frontends_of(const model::Snapshot& s);

// What frontends_of() reads of a chain's rules (model::LoadOptions): the
// kube-proxy chains a frontend is resolved through, in full.
model::RuleDetail frontend_rule_detail(std::string_view chain);

// "ns/svc:port has no endpoints" -> "ns/svc:port"; "ns/svc:port cluster IP" -> "ns/svc:port".
std::string service_name_of_comment(const std::string& comment);

}  // namespace dpscope::analysis
