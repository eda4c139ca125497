// The cluster's intent: the Services and EndpointSlices a node's service
// dataplane is programmed from, as `kubectl get services,endpointslices -A -o
// json` prints them. Only the fields that decide what a node must program are
// kept (docs/intent.md lists them, with the Kubernetes field each comes from).
// Facts, not conclusions: what a node should program from them is analysis
// (src/analysis/verify.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpscope::model {

struct IntentServicePort {
  std::string name;          // "" for an unnamed (single) port
  std::string protocol;      // "tcp" | "udp" | "sctp" (lower case, as dataplanes print it)
  uint16_t port = 0;
  std::string target_port;   // "8080" or a named port ("http"); "" when absent
  uint16_t node_port = 0;    // 0 when none
};

struct IntentService {
  std::string ns;
  std::string name;
  std::string type;                        // "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
  std::vector<std::string> cluster_ips;    // spec.clusterIPs (or clusterIP); empty when headless
  bool headless = false;                   // clusterIP "None": nothing to program
  std::string external_name;               // type ExternalName: nothing to program
  std::vector<IntentServicePort> ports;
  std::vector<std::string> external_ips;
  std::vector<std::string> lb_ingress_ips;        // status.loadBalancer.ingress[].ip with ipMode VIP (or unset)
  std::vector<std::string> lb_proxy_ingress_ips;  // ... with ipMode Proxy: kube-proxy does not program them
  std::vector<std::string> lb_source_ranges;
  std::string external_traffic_policy = "Cluster";  // "Cluster" | "Local"
  std::string internal_traffic_policy = "Cluster";  // "Cluster" | "Local"
  std::string session_affinity = "None";            // "None" | "ClientIP"
  std::string origin;                      // "FILE:/items/3": where it was read
  std::string key() const { return ns + "/" + name; }
};

struct IntentEndpoint {
  std::vector<std::string> addresses;   // kube-proxy uses the first
  // EndpointSlice conditions as written; unset means the API default
  // (ready, serving: true; terminating: false).
  std::optional<bool> ready;
  std::optional<bool> serving;
  std::optional<bool> terminating;
  std::string node_name;                // "" when unset
  bool has_hints = false;               // hints.forZones / forNodes present (topology-aware routing)
};

struct IntentSlicePort {
  std::string name;
  std::string protocol;                 // lower case
  std::optional<uint16_t> port;         // unset: kube-proxy skips the port
};

struct IntentEndpointSlice {
  std::string ns;
  std::string name;
  std::string service;                  // label kubernetes.io/service-name ("" when absent: not a Service's)
  std::string address_type;             // "IPv4" | "IPv6" | "FQDN"
  std::vector<IntentSlicePort> ports;
  std::vector<IntentEndpoint> endpoints;
  std::string origin;
};

struct Intent {
  std::vector<std::string> inputs;      // files, as given
  std::vector<IntentService> services;
  std::vector<IntentEndpointSlice> slices;
  uint64_t ignored_items = 0;           // List items of other kinds (kubectl prints what it is asked for)
};

// Reads one or more files, each a v1 List (kubectl get ... -o json) or one
// Service / EndpointSlice object; plain, gzip or zstd. Throws
// InputError(file, 0, "/items/3/spec/ports/0/port: what is wrong") on bad input:
// invalid JSON, a known kind with a field of the wrong type or value.
Intent load_intent(const std::vector<std::string>& paths);
// The same for text already in memory; `origin` names it in messages.
void parse_intent(const std::string& text, const std::string& origin, Intent& into);

}  // namespace dpscope::model
