// Per-Service view: each service port as one dataplane programs it.
#pragma once

#include <cstdint>
#include <optional>
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
  // frontend's (nftables, a light snapshot: an endpoint chain is named after
  // its service port and endpoint, and the vmap that picks it was not read).
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

// The chains a native rule's anonymous verdict map sends to, read from the
// rule's text as nft prints it: `numgen random mod 3 vmap { 0 : goto A, 1 :
// goto B, 2 : goto C }` -> {A, B, C}. nullopt: no anonymous vmap in the text,
// or no text (a light snapshot leaves those rules without it).
std::optional<std::vector<std::string>> anonymous_vmap_chains(const model::Rule& r);

// The kube-proxy nftables endpoint chains a service-/local- chain sends to:
// its endpoint pick's anonymous vmap and its affinity gotos. `known` false:
// a pick's text was not recorded (a light snapshot, or the chain's rules).
struct ReachedEndpointChains {
  std::vector<std::string> chains;  // sorted, unique
  bool known = true;
};
ReachedEndpointChains endpoint_chains_reached(const model::Chain& policy);

// An endpoint chain of a kube-proxy nftables table that holds rules but that
// no service-/local- chain's verdict map (or affinity goto) reaches: stale.
struct UnreachedEndpointChain {
  std::string table;     // "ip kube-proxy"
  std::string chain;     // "endpoint-HASH-ns/svc/tcp/p80__10.244.1.5/8080"
  std::string service;   // "ns/svc:p80"
  std::string endpoint;  // "10.244.1.5:8080"
  uint64_t rules = 0;
};
// Empty for a table whose picks are not all known (see endpoint_chains_reached).
std::vector<UnreachedEndpointChain> unreached_endpoint_chains(const model::Snapshot& s);

// "ns/svc:port has no endpoints" -> "ns/svc:port"; "ns/svc:port cluster IP" -> "ns/svc:port".
std::string service_name_of_comment(const std::string& comment);

}  // namespace dpscope::analysis
