// Intent vs datapath: does a node program every Service frontend the cluster
// asks for, with the endpoints kube-proxy's own rules select for that node?
//
// Expected state follows kube-proxy (pkg/proxy, v1.30-v1.34 read):
// endpointslicecache (ready/serving default true, terminating default false,
// the first address, ports matched by name and protocol, endpoints without a
// port skipped), topology.go CategorizeEndpoints (ready endpoints; serving and
// terminating ones only when none is ready; Local policy -> this node's),
// and the proxiers' frontend rules (no endpoints -> reject; Local policy with
// endpoints elsewhere only -> drop). docs/verify.md lists every rule and
// finding id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/services.h"
#include "model/intent.h"
#include "model/snapshot.h"

namespace dpscope::analysis {

struct ExpectedFrontend {
  std::string service;       // kube-proxy's svcPortName: "ns/name:port", "ns/name" for an unnamed port
  std::string service_key;   // "ns/name"
  std::string family;        // "ipv4" | "ipv6"
  std::string kind;          // "ClusterIP" | "ExternalIP" | "LoadBalancer" | "NodePort"
  std::string address;       // "" for a NodePort
  uint16_t port = 0;
  std::string protocol;
  std::string action;        // "forward" | "reject" (no endpoints) | "drop" (Local policy, none on this node)
  std::string policy;        // "cluster" | "local": the chain the frontend forwards to
  std::vector<std::string> endpoints;   // this frontend's, sorted ("10.244.1.5:8080")
  std::vector<std::string> reachable;   // the service port's endpoints reachable from the node (all frontends)
  std::vector<std::string> known;       // every endpoint of the service port in its slices (any condition)
  std::string key() const;   // as FrontendProgramming::key()
};

// The intent indexed once for many nodes.
class IntentIndex {
 public:
  explicit IntentIndex(const model::Intent& intent);
  // What a node named `node` must program, for every Service port and frontend.
  std::vector<ExpectedFrontend> expected_for(const std::string& node) const;
  const model::Intent& intent() const { return intent_; }
  bool has_service(const std::string& service_key) const;
  uint64_t services_to_program() const { return to_program_; }   // not headless / ExternalName, with ports
  uint64_t services_nothing_to_program() const { return nothing_; }
  // Endpoints with topology hints: expectations ignore hints (stated in the report).
  uint64_t hinted_endpoints() const { return hinted_; }

 private:
  const model::Intent& intent_;
  std::vector<std::vector<const model::IntentEndpointSlice*>> slices_of_;  // by service index
  std::vector<std::string> service_keys_;  // sorted "ns/name"
  uint64_t to_program_ = 0, nothing_ = 0, hinted_ = 0;
};

struct Finding {
  // missing-frontend, wrong-port, wrong-protocol, wrong-action, wrong-policy,
  // missing-endpoint, extra-endpoint, stale-endpoint, endpoint-count,
  // extra-frontend, stale-service, stale-endpoint-chain, no-dataplane,
  // not-verified (docs/verify.md)
  std::string id;
  std::string node;
  std::string dataplane;     // "iptables-nft", "nftables", "cilium", ...; "" for the node as a whole
  std::string service;       // "ns/name:port" ("" when the dataplane does not name it)
  std::string frontend;      // "10.96.0.10:53/udp ClusterIP", ":30080/tcp NodePort"
  std::string endpoint;      // "10.244.1.5:8080" for endpoint findings
  std::string expected;
  std::string actual;
  std::string where;         // the rule / map element the dataplane holds ("" when missing)
};

struct DataplaneVerification {
  std::string dataplane;
  uint64_t frontends_expected = 0;
  uint64_t frontends_ok = 0;
  uint64_t frontends_programmed = 0;
  uint64_t services_ok = 0;       // every frontend of every port matched
  uint64_t endpoints_checked = 0; // frontend-endpoint pairs compared
};

struct NodeVerification {
  std::string node;          // the name the expectations were computed for
  std::string source;        // snapshot file
  uint64_t services_expected = 0;
  std::vector<DataplaneVerification> dataplanes;
  std::vector<Finding> findings;
  std::vector<std::string> not_verified;  // why part of the node could not be verified
  bool ok() const { return findings.empty(); }
};

// What verify reads of a node's snapshot: what could not be read, the
// dataplanes it compares, and their frontends. Small beside the snapshot, so
// a caller can drop the snapshot before the comparison makes its own objects.
struct NodeProgramming {
  std::vector<std::string> not_verified;       // why part of the node cannot be verified
  bool any_dataplane = false;                  // a service dataplane is there, compared or not
  std::vector<std::string> planes;             // the ones compared
  std::vector<FrontendProgramming> programmed;  // their frontends, one entry per dataplane and key
  std::vector<UnreachedEndpointChain> unreached;  // nftables endpoint chains no pick reaches
};
NodeProgramming programming_of(const model::Snapshot& s);

// One node. `node_name` overrides the snapshot's (the eTP/iTP Local rules need it).
NodeVerification verify_node(const IntentIndex& intent, const NodeProgramming& node, const std::string& node_name,
                             const std::string& source);
// The same, from the snapshot.
NodeVerification verify_node(const IntentIndex& intent, const model::Snapshot& s, const std::string& node_name,
                             const std::string& source);

// The node name the Local policies are evaluated for: the snapshot's, else
// the file name up to its first dot.
std::string node_name_of(const model::Snapshot& s, const std::string& path);

// The chains verify_node reads (model::LoadOptions::rule_detail).
model::RuleDetail verify_rule_detail(std::string_view chain);

struct ClusterVerification {
  std::vector<NodeVerification> nodes;
  uint64_t services_expected = 0;
  uint64_t services_nothing_to_program = 0;
  uint64_t services_ok_everywhere = 0;   // fully programmed in every verified dataplane of every node
  uint64_t hinted_endpoints = 0;
  std::vector<std::string> intent_inputs;
  bool ok() const;
};

// Sums the nodes (their findings stay per node).
ClusterVerification summarize(const IntentIndex& intent, std::vector<NodeVerification> nodes);

}  // namespace dpscope::analysis
