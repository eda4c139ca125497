// Analysis: everything a report needs, derived from a Snapshot the same way
// for live and imported ones. Pure functions of the snapshot: no I/O, no
// formatting. Reports (reports/) turn the result into rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/json.h"
#include "model/snapshot.h"
#include "analysis/agents.h"
#include "analysis/availability.h"
#include "analysis/fingerprints.h"
#include "analysis/ipvs.h"

namespace dpscope::analysis {

// ---------------------------------------------------------------- chain families

// One row of the pattern table. `pattern` is an exact chain name, or a prefix
// when it ends in '*'. The first matching row wins, so specific rows come
// before general ones (KUBE-ROUTER-* before KUBE-*).
struct ChainFamily {
  std::string_view id;       // stable key: "KUBE-SVC", "CILIUM", "KUBE-other", ...
  std::string_view pattern;  // "KUBE-SVC-*", "KUBE-SERVICES", ...
  std::string_view owner;    // "kube-proxy", "kubelet", "cilium", "calico", "kube-router", "docker", "kind", ...
  std::string_view what;     // one line for reports
};

const std::vector<ChainFamily>& chain_families();
// The family of a chain; built-in chains (INPUT, PREROUTING, ...) are
// "builtin", anything unmatched "other".
const ChainFamily& family_of(std::string_view chain, bool is_base_chain);

// ---------------------------------------------------------------- netfilter

struct TableStats {
  model::Backend backend = model::Backend::IptablesNft;
  std::string family;
  std::string name;
  uint64_t rules = 0;               // sum of rule_count over chains
  uint64_t chains = 0;
  uint64_t kube_chains = 0;         // chains named KUBE-*
  uint64_t service_ip_rules = 0;    // KUBE-SERVICES rules whose destination is one address
  std::vector<std::string> service_ips;  // those addresses without the /32 or /128, in rule order, unique
  // "iptables-nft ip nat", "nftables ip kube-proxy"
  std::string key() const;
};

struct FamilyStats {
  uint64_t chains = 0;
  uint64_t rules = 0;
};

// kube-proxy's nftables mode: table `kube-proxy` (family ip / ip6) of the
// native nftables backend.
struct KubeProxyNft {
  bool present = false;
  std::vector<std::string> tables;            // "ip kube-proxy"
  uint64_t services = 0;                      // elements of the `service-ips` maps
  // Service frontends (address . protocol . port) with or without endpoints:
  // the keys of `service-ips` and `no-endpoint-services`, each once. Like for
  // like with NetfilterAnalysis::service_frontends.
  uint64_t frontends = 0;
  uint64_t frontends_without_endpoints = 0;   // keys only in `no-endpoint-services` (reject / drop)
  uint64_t nodeports = 0;                     // elements of `service-nodeports`
  uint64_t rules = 0;
  // Regular chains by kube_proxy_nft_chain_kind(): the per-Service kinds and "helper".
  std::map<std::string, uint64_t> chains_by_kind;
  uint64_t base_chains = 0;                   // hooked chains (nat-prerouting, filter-input, ...)
  // Rules by the same kinds, and "base" for the hooked chains' rules.
  std::map<std::string, uint64_t> rules_by_kind;
};

// kube-proxy's per-Service chains in nftables mode are named
// PREFIX-HASH8-ns/name/proto/port (pkg/proxy/nftables/proxier.go): PREFIX one of
// service- (cluster policy), local- (local policy), external-, endpoint-
// (`...__ADDR/PORT`), firewall-; HASH8 is 8 characters of base32 [A-Z2-7].
// Returns that kind ("service", "local", "external", "endpoint", "firewall"),
// or "helper" for kube-proxy's shared chains (services, service-endpoints-check,
// firewall-check, nodeport-endpoints-check, masquerading, reject-chain, ...).
std::string_view kube_proxy_nft_chain_kind(std::string_view name);
// The per-Service kinds, in the order reports list them.
const std::vector<std::string_view>& kube_proxy_nft_service_chain_kinds();

struct NetfilterAnalysis {
  Availability availability;         // the whole section (every part)
  Availability legacy;               // netfilter.iptables-legacy (x_tables)
  Availability nf_tables;            // netfilter.nftables: iptables-nft and native nftables (+ consistency)
  Availability native;               // nf_tables + netfilter.nftables-native (an import without nft -j lacks it)
  // Tables whose KUBE-SERVICES rules were counted but not recorded (an nft -j
  // import of iptables-nft tables: nft does not describe xt matches), so their
  // service addresses are not visible in this source: "iptables-nft ip nat".
  std::vector<std::string> service_rules_hidden;
  bool service_ips_visible() const { return service_rules_hidden.empty(); }
  // The availability of rows built from KUBE-SERVICES rule contents.
  Availability service_ips_av() const;
  uint64_t rules = 0;                // every table of every backend
  uint64_t iptables_rules = 0;       // iptables tables (nft and legacy backends)
  uint64_t nftables_rules = 0;       // native nftables tables
  uint64_t legacy_rules = 0;         // iptables-legacy only
  uint64_t iptables_nft_rules = 0;   // iptables-nft only
  uint64_t chains = 0;
  std::vector<TableStats> tables;    // snapshot order (canonical)
  // By ChainFamily::id, chains counted once per table; a native nftables table
  // a project is known to create counts as that project's family ("nft-calico").
  std::map<std::string, FamilyStats> families;
  uint64_t kube_chains = 0;          // chains named KUBE-*
  uint64_t kube_proxy_chains = 0;    // KUBE-* chains whose family is owned by kube-proxy
  uint64_t kubelet_chains = 0;       // KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT
  uint64_t kube_svc_chains = 0;
  uint64_t kube_sep_chains = 0;
  uint64_t kube_services_rules = 0;  // rules in every KUBE-SERVICES chain
  // Rules a new connection walks in the longest nat KUBE-SERVICES chain before
  // it finds its service (worst case: the last service, then the NodePort
  // rule). Grows with every service port.
  uint64_t kube_services_walk = 0;
  uint64_t cilium_chains = 0;        // CILIUM_*
  uint64_t calico_chains = 0;        // cali-*
  uint64_t service_ip_rules = 0;     // sum over tables
  std::vector<std::string> service_ips;  // unique over tables, sorted
  // kube-proxy iptables mode's service frontends (address:port/protocol) with or
  // without endpoints, each once per backend: nat KUBE-SERVICES jumps to a
  // service chain, and filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES REJECT
  // (no endpoints) or DROP (Local policy, no local endpoint) of one address.
  // The same frontends as KubeProxyNft::frontends of an nftables node.
  uint64_t service_frontends = 0;
  uint64_t service_frontends_without_endpoints = 0;  // only a REJECT / DROP, no nat jump
  KubeProxyNft kube_proxy_nft;
  // Sets of kube-proxy's ipvs mode in the ipsets section (KUBE-CLUSTER-IP, KUBE-NODE-PORT-TCP, ...).
  std::vector<std::string> kube_proxy_ipvs_ipsets;
  // Recorded rules with `-m set --match-set NAME` (from their iptables-save text), and
  // the names they match that the ipsets section does not hold (only when it was read:
  // without it a name is unresolved, not unknown). A lean load counts only the rules it kept.
  uint64_t match_set_rules = 0;
  std::vector<std::string> unknown_match_sets;  // sorted, each once
};

// The IP set names a rule matches (`--match-set NAME`, from Rule::text), in order.
std::vector<std::string> match_sets_of(const model::Rule& r);

// ---------------------------------------------------------------- eBPF

// Owner rules: the first matching row decides. Kinds: "name-prefix" (program or
// map name), "pin-prefix" (any pinned path), "map-shape" (map type + key/value
// size, for maps whose cut name says nothing).
struct OwnerRule {
  std::string_view owner;    // "cilium", "calico", "system"
  std::string_view kind;     // "name-prefix" | "pin-prefix" | "map-shape"
  std::string_view object;   // "program" | "map" | "any"
  std::string_view value;    // prefix, or "type/key/value" for map-shape
};
const std::vector<OwnerRule>& owner_rules();
// Owner of a map ("other" when no rule matches).
std::string owner_of_map(const model::BpfMap& m);
// Owner of a program: by its own name/pins first, then by the owners of the
// maps it uses (a program using Cilium maps is Cilium's); "other" otherwise.
std::string owner_of_program(const model::BpfProgram& p, const std::map<uint32_t, std::string>& map_owner);

struct OwnerStats {
  uint64_t programs = 0;
  uint64_t maps = 0;
  uint64_t memlock_bytes = 0;   // programs + maps
  uint64_t map_memlock_bytes = 0;
  std::string first_loaded_at;  // its oldest program's loaded_at ("" none known)
};

struct LbSummary {
  std::string dataplane;        // "cilium" | "calico"
  bool decoded = true;
  std::string note;
  uint64_t frontends = 0;
  uint64_t backends = 0;
  std::vector<std::string> frontend_addresses;  // unique, sorted
};

// What fdinfo's memlock of a map means on a kernel (it changed twice).
struct MemlockBand {
  std::string id;        // "rlimit-pages" (< 5.11), "estimate" (5.11-6.3), "map-mem-usage" (>= 6.4), "unknown"
  std::string kernel;    // the release it was derived from ("" unknown)
  std::string meaning;   // one sentence: what the figure is on that kernel
  std::string cgroup;    // one sentence: where the memory is charged (kubectl top)
};
// `kernel` is a `uname -r` string ("6.1.0-18-amd64", "5.10.209"); `nobpf` the
// node's cgroup.memory=nobpf (nullopt when not recorded).
MemlockBand memlock_band(const std::string& kernel, std::optional<bool> nobpf = std::nullopt);

// Map types whose entries come and go (hash, LRU, LPM, ...): the only ones
// whose fill level says something. Arrays are full by construction.
bool map_fill_is_meaningful(const std::string& type);

// A program attached to a cgroup, as socket-LB evidence.
struct SocketLb {
  std::vector<std::string> node_wide;   // attach points at the cgroup root or the pods' cgroup
  std::vector<std::string> elsewhere;   // other cgroups: not node-wide
};

struct MapFill {
  std::string name;
  std::string type;
  std::string owner;
  uint64_t entries = 0;
  uint32_t max_entries = 0;
};

struct EbpfAnalysis {
  Availability availability;           // the whole section (every part)
  Availability programs_av;            // ebpf.programs
  Availability maps_av;                // ebpf.maps
  Availability memory_av;              // programs + maps
  Availability attachments_av;         // ebpf.attachments (tc, cgroup)
  Availability services_av;            // ebpf.services: decoded service-map entries (and the maps)
  std::vector<std::string> service_maps_listed;  // Cilium/Calico service maps seen in the map list
  MemlockBand memlock;
  SocketLb cilium_socket_lb;
  uint64_t programs = 0;
  uint64_t maps = 0;
  uint64_t memlock_bytes = 0;          // programs + maps
  uint64_t map_memlock_bytes = 0;
  uint64_t program_memlock_bytes = 0;
  std::map<std::string, OwnerStats> owners;       // "cilium", "calico", "system", "other"
  std::map<std::string, uint64_t> programs_by_type;
  std::map<std::string, uint64_t> attachments_by_kind;   // "tc", "tcx", "xdp", "cgroup", ...
  std::map<std::string, uint64_t> attach_points;         // "tcx eth0 ingress", "cgroup / cgroup_inet4_connect"
  std::vector<MapFill> fullest_maps;   // maps with counted entries, fullest first (entries / max_entries)
  std::vector<LbSummary> lb;           // one per decoded dataplane
  const LbSummary* lb_of(std::string_view dataplane) const;
};

// ---------------------------------------------------------------- mode

struct Mode {
  // "kube-proxy-iptables", "kube-proxy-ipvs", "kube-proxy-nftables",
  // "cilium-kpr", "calico-ebpf", "kube-router", "antrea-proxy", "ovn-kubernetes"
  // (the last three serve Services where dpscope cannot read), "none", "mixed", "unknown"
  std::string id;
  std::string label;                   // "kube-proxy (iptables)", "Cilium kube-proxy replacement", ...
  std::vector<std::string> evidence;   // plain sentences
  // Other dataplanes found (fingerprints.h): CNI / policy dataplanes beside the
  // service proxy, or the proxy itself when it is one dpscope cannot read.
  std::vector<Dataplane> dataplanes;
  // "services handled by X in OVS; not visible here" when the node's Services
  // are programmed where this snapshot cannot show them ("" otherwise).
  std::string services_hidden;
};

// ---------------------------------------------------------------- node

struct NodeAnalysis {
  std::string node;                    // node name from the snapshot ("" unknown)
  std::string kernel;
  std::string source;                  // "live" | "import"
  NetfilterAnalysis netfilter;
  EbpfAnalysis ebpf;
  AgentsAnalysis agents;               // analysis/agents.h
  IpvsAnalysis ipvs;                   // analysis/ipvs.h
  Mode mode;
};

NodeAnalysis analyze(const model::Snapshot& s);

// What analysis (analyze, fit_scale, services_view, check) reads of this
// chain's rules: KUBE-SERVICES in full (service addresses, comments, ports),
// the per-service chains' jump graph, and of every other chain only its
// rule_count. Commands pass it to model::LoadOptions, so a 20k-service
// snapshot's 200k KUBE-SEP rules are counted, not held. (`where` reads all.)
model::RuleDetail rule_detail_for(std::string_view chain);
// What analyze() alone reads: KUBE-SERVICES and KUBE-EXTERNAL-SERVICES in
// full (service frontends), every other chain's rule_count. A plain `compare` needs no more, so two 1M-rule nodes load
// without their 340k per-service jump rules each.
model::RuleDetail analyze_rule_detail(std::string_view chain);

// "10.96.0.1/32" -> "10.96.0.1" when the prefix is one address (/32, /128);
// nullopt otherwise.
std::optional<std::string> single_address(const std::string& cidr);

}  // namespace dpscope::analysis
