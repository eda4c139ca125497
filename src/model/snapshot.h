// The snapshot model: plain facts about one node's packet dataplane.
//
// This is the only language collectors, analysis and renderers share. It holds
// facts, not conclusions (no "mode", no "owner": those are analysis). Its JSON
// form is "dpscope.snapshot/v2", documented field by field in
// docs/snapshot-schema.md. Keep the two in step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/agents.h"
#include "model/heap_optional.h"
#include "model/ipset.h"
#include "model/ipvs.h"
#include "model/nft_declarations.h"

namespace dpscope::model {

inline constexpr const char* kSchema = "dpscope.snapshot/v2";
inline constexpr int kSchemaMajor = 2;
// v1 files still load: v2 only added fields (Rule::text), so a v1 rule reads
// with its text absent.
inline constexpr int kSchemaOldestMajor = 1;
inline constexpr const char* kSchemaV1 = "dpscope.snapshot/v1";
// v2.1 adds the optional "ipsets" section. A snapshot is written as v2.1 only
// when it holds one, so files without it stay byte-identical v2 files.
inline constexpr const char* kSchemaV2_1 = "dpscope.snapshot/v2.1";
// v2.2 adds the optional "ipvs" section, written as v2.2 only when it holds one.
inline constexpr const char* kSchemaV2_2 = "dpscope.snapshot/v2.2";
// v2.3 adds nftables declarations (Table::declarations_recorded and what it
// covers), written as v2.3 only when a table holds them.
inline constexpr const char* kSchemaV2_3 = "dpscope.snapshot/v2.3";

// ---------------------------------------------------------------- node

struct NodeInfo {
  std::string name;         // node / host name ("" when unknown)
  std::string kernel;       // uname -r of the collecting host ("" for imports)
  std::string source;       // "live" | "import"
  std::string environment;  // "host" | "netns:<name>" | "kubectl-debug" | "import"
  std::string taken_at;     // RFC 3339 UTC
  std::string tool_version; // dpscope version that wrote it
  std::vector<std::string> inputs;  // imported files, as given on the command line
  // `cgroup.memory=nobpf` on the kernel command line (/proc/cmdline): BPF map
  // memory is then charged to no memory cgroup. Unset when not read (imports).
  std::optional<bool> cgroup_memory_nobpf;
  bool operator==(const NodeInfo&) const = default;
};

// ---------------------------------------------------------------- netfilter

enum class Backend { IptablesNft, IptablesLegacy, Nftables };

// Address prefix as written by iptables-save: "10.0.0.1/32", "fd00::/64".
struct Prefix {
  std::string cidr;
  bool negated = false;
  bool operator==(const Prefix&) const = default;
};

struct Counters {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  bool operator==(const Counters&) const = default;
};

// What a rule matches, summarised to the fields reports need.
struct RuleMatch {
  HeapOptional<Prefix> source;        // on the heap: most rules match no address
  HeapOptional<Prefix> destination;
  std::string protocol;       // "tcp", "udp", "sctp", "" = any
  std::string dport;          // "80", "30000:30100", "" = any
  std::string comment;        // comment match / nft rule comment, unescaped
  std::vector<std::string> modules;  // -m modules in order ("comment", "tcp", "statistic", ...)
  // The flags after the strings: a 20k-Service node holds ~350k rules, and
  // each flag between two strings costs a padded word.
  bool protocol_negated = false;
  bool dport_negated = false;  // "! --dport 80" / "! --dports 80,443"
  bool operator==(const RuleMatch&) const = default;
};

// Verdict kinds:
//   "jump"    -j CHAIN            target = chain name
//   "goto"    -g CHAIN            target = chain name
//   "verdict" ACCEPT/DROP/RETURN/QUEUE   target = verdict name (upper case)
//   "target"  an extension target (DNAT, MASQUERADE, REJECT, MARK, ...)  target = name
//   "vmap"    nftables verdict map lookup  target = map name or "" for anonymous
//   "none"    no -j (counting / comment-only rule)
struct Rule {
  uint32_t position = 0;      // 1-based within its chain
  // A live rule holding an expression dpscope cannot decode is kept and
  // marked, never dropped. `raw` holds what could be rendered of it.
  bool undecoded = false;
  RuleMatch match;
  std::string verdict_kind = "none";
  std::string target;
  std::string target_args;    // e.g. "--to-destination 10.1.2.3:80" ("" when not decoded)
  std::optional<Counters> counters;  // inline: a live rule always has them
  // The rule exactly as the backend's own tool prints it, without counters:
  // iptables tables as iptables-save / iptables-legacy-save ("-A CHAIN ...").
  // "" = absent (a v1 file, a native nftables rule, an undecoded rule).
  std::string text;
  std::string raw;
  bool operator==(const Rule&) const = default;
};

struct BaseChain {
  std::string hook;        // "prerouting", "input", "forward", "output", "postrouting", "ingress", ...
  std::string type;        // nft chain type: "filter", "nat", "route" ("" for iptables import)
  int32_t priority = 0;
  std::string policy;      // "ACCEPT" | "DROP" (iptables case) / "accept" | "drop" (nft)
  std::vector<std::string> devices;  // a netdev / inet ingress chain's devices (nft), by name as nft lists them
  bool offload = false;    // nft "flags offload"
  bool operator==(const BaseChain&) const = default;
};

struct Chain {
  std::string name;
  HeapOptional<BaseChain> base;   // set for built-in / base chains (on the heap: most chains are user chains)
  std::optional<Counters> policy_counters;
  // Number of rules in the chain. Always set. Equal to rules.size() unless the
  // collector counted rules without recording them (rules_recorded == false).
  uint64_t rule_count = 0;
  bool rules_recorded = true;
  std::vector<Rule> rules;
  // An nft chain's comment (live: nft -j 1.0.6 does not print it). On the
  // heap: a big node has 150k chains and none of them has one.
  HeapOptional<std::string> comment;
  // nf_tables' handle (0 = not recorded): the table's handles grow as its
  // chains, sets and objects are added, and nft lists them in that order,
  // while the snapshot keeps chains in canonical order.
  uint64_t handle = 0;
  bool operator==(const Chain&) const = default;
};

// An element as `nft list set` prints it: KEY [STATEMENTS] [timeout T] [comment "C"] [: VALUE].
struct SetElement {
  std::string key;      // rendered as nft prints it: "172.30.0.41 . tcp . 80"
  std::string value;    // map data / verdict ("goto service-ULMVA6XW-ns1/svc1/tcp/p80"), "" for sets
  std::string comment;
  std::string timeout;  // the element's own timeout as nft prints it ("1h"), "" for none
  std::string statements;  // its statement as nft prints it ("counter packets 0 bytes 0"), "" for none
  bool operator==(const SetElement&) const = default;
};

// A named nftables set or map. Anonymous sets ("__set%d", bound to one rule)
// are not listed: nft -j prints them inline in their rule, not as objects.
struct NftSet {
  std::string name;
  bool is_map = false;
  std::vector<std::string> key_type;  // ["ipv4_addr", "inet_proto", "inet_service"]
  std::string data_type;            // "verdict", "ipv4_addr", ... ("" for plain sets)
  std::string comment;
  uint64_t element_count = 0;       // meaningless when elements_unread is set
  bool elements_recorded = false;   // false when only the count is known
  // Why neither the elements nor their number were read ("" = they were):
  // a dynamic set's elements are runtime state, added by the packet path.
  std::string elements_unread;
  // Why the elements' text is not nft's ("" = it is): then each key and
  // value holds what the source gave (the kernel's bytes in hex, or nft -j's JSON).
  std::string elements_undecoded;
  std::vector<SetElement> elements;
  // What nft prints above the elements; absent when not recorded (see
  // Table::declarations_recorded).
  std::optional<NftSetDeclaration> declaration;
  uint64_t handle = 0;  // nf_tables' (0 = not recorded), as Chain::handle
  bool operator==(const NftSet&) const = default;
};

struct Table {
  Backend backend = Backend::IptablesNft;
  std::string family;   // "ip", "ip6", "inet", "arp", "bridge", "netdev"
  std::string name;     // "filter", "nat", "mangle", "raw", "security", "kube-proxy", ...
  std::vector<Chain> chains;
  std::vector<NftSet> sets;   // nftables backend only
  // nf_tables' own declarations (model/nft_declarations.h): the table's
  // flags and comment, its objects and flowtables, chain comments and
  // devices, set declarations. Recorded by the live collector; false for an
  // import (nft -j 1.0.6 leaves some out), iptables-legacy, older snapshots.
  bool declarations_recorded = false;
  uint64_t handle = 0;                // nf_tables' (0 = not recorded): nft lists tables in its order
  std::vector<std::string> flags;     // "dormant", "owner"
  std::string comment;
  std::vector<NftObject> objects;     // in the kernel's order, as nft lists them
  std::vector<NftFlowtable> flowtables;
  bool operator==(const Table&) const = default;
};

struct NetfilterCollection {
  // nftables ruleset generation the snapshot was read at (live only).
  std::optional<uint32_t> nft_generation;
  uint32_t nft_retries = 0;    // dumps repeated because the generation moved / DUMP_INTR
  uint32_t nft_set_rereads = 0;  // set element dumps repeated: one gave an element twice (a hash set resized under it)
  // `snapshot --light` (live): the elements of anonymous and dynamic sets
  // were not read. nft_left_out says what that left out on this node, one
  // sentence each ("the elements of 4698 anonymous sets and maps: ..."); a
  // complete snapshot has none.
  bool nft_light = false;
  std::vector<std::string> nft_left_out;
  bool operator==(const NetfilterCollection&) const = default;
};

struct Netfilter {
  bool collected = false;      // false: section absent (see Snapshot::unavailable)
  NetfilterCollection collection;
  std::vector<Table> tables;
  bool operator==(const Netfilter&) const = default;
};

// ---------------------------------------------------------------- eBPF

struct BpfProgram {
  uint32_t id = 0;
  std::string type;          // libbpf's name: "sched_cls", "xdp", "cgroup_sock_addr", ...
  std::string name;          // full name (from BTF func info when the kernel's is cut)
  std::string tag;           // 16 hex chars
  std::string loaded_at;     // RFC 3339 UTC ("" unknown)
  uint32_t bytes_xlated = 0;
  uint32_t bytes_jited = 0;
  uint64_t bytes_memlock = 0;
  std::vector<uint32_t> map_ids;
  uint32_t btf_id = 0;
  std::optional<uint64_t> run_time_ns;   // only when stats were already on
  std::optional<uint64_t> run_cnt;
  std::vector<std::string> pinned;
  bool operator==(const BpfProgram&) const = default;
};

struct BpfMap {
  uint32_t id = 0;
  std::string type;          // "hash", "lru_hash", "array", "percpu_hash", ...
  std::string name;          // kernel name (max 15 chars)
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t flags = 0;
  uint64_t bytes_memlock = 0;
  uint32_t btf_id = 0;
  std::vector<std::string> pinned;
  std::optional<uint64_t> entries;   // current entries when counted
  std::string entries_note;          // why not counted / "truncated" ("" when counted)
  bool operator==(const BpfMap&) const = default;
};

struct BpfLink {
  uint32_t id = 0;
  std::string type;          // "tcx", "xdp", "cgroup", "netns", "netkit", "tracing", ...
  uint32_t prog_id = 0;
  std::string attach_type;   // "tcx_ingress", "cgroup_inet4_connect", ...
  uint32_t ifindex = 0;      // tcx / xdp / netkit
  std::string interface;     // resolved in the target netns ("" unknown)
  uint64_t cgroup_id = 0;
  std::vector<std::string> pinned;
  bool operator==(const BpfLink&) const = default;
};

// One program attached somewhere, however it was attached.
struct BpfAttachment {
  std::string kind;          // "tc" | "tcx" | "xdp" | "cgroup" | "netkit" | "netfilter"
  std::string target;        // interface name, or cgroup path relative to the cgroup2 root
  std::string direction;     // "ingress"/"egress" (tc, tcx), XDP mode, or cgroup attach type
  uint32_t prog_id = 0;
  std::string prog_name;     // tc filter label or program name
  uint32_t priority = 0;     // tc filter priority
  uint32_t handle = 0;       // tc filter handle
  bool direct_action = false;
  std::optional<uint32_t> link_id;
  bool operator==(const BpfAttachment&) const = default;
};

// A load-balancer frontend as programmed in an eBPF service map.
struct LbFrontend {
  std::string address;
  uint16_t port = 0;
  std::string protocol;      // "tcp" | "udp" | "sctp" | "any"
  std::string type;          // "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalIP" | "HostPort" | ...
  std::string scope;         // "external" | "internal"
  uint32_t backends = 0;
  uint32_t service_id = 0;   // rev-NAT id (Cilium) / service id (Calico)
  bool surrogate = false;    // NodePort surrogate (0.0.0.0 / node IP expansion)
  // Cilium: the LbBackend::id in each backend slot 1..backends, in slot order
  // (0 where the slot entry is missing). Empty when not linked (Calico: its
  // backends carry their frontend's service_id; snapshots before the link).
  std::vector<uint32_t> backend_ids;
  bool operator==(const LbFrontend&) const = default;
};

struct LbBackend {
  uint32_t id = 0;
  std::string address;
  uint16_t port = 0;
  std::string protocol;
  std::string state;         // "active" | "terminating" | "quarantined" | "maintenance" | ""
  bool operator==(const LbBackend&) const = default;
};

// Decoded service maps of one dataplane (Cilium or Calico).
struct LbServices {
  std::string dataplane;     // "cilium" | "calico"
  std::string layout;        // which versions' layout was read, e.g. "cilium 1.16-1.20 services_v2/backends_v3"
  std::vector<std::string> maps;   // map names decoded
  bool decoded = true;             // false: sizes did not match a known layout
  std::string note;                // why not decoded
  uint64_t wildcard_skipped = 0;
  // Frontends name their backends: Cilium's LbFrontend::backend_ids, Calico's
  // LbBackend::id == service_id. False in snapshots written before the link.
  bool backends_linked = false;
  std::vector<LbFrontend> frontends;
  std::vector<LbBackend> backends;
  bool operator==(const LbServices&) const = default;
};

struct Ebpf {
  bool collected = false;
  std::vector<BpfProgram> programs;
  std::vector<BpfMap> maps;
  std::vector<BpfLink> links;
  std::vector<BpfAttachment> attachments;
  std::vector<LbServices> services;
  bool operator==(const Ebpf&) const = default;
};

// ---------------------------------------------------------------- snapshot

// A section that could not be collected. Reports show it as "unavailable
// (reason)", never as zero.
struct Unavailable {
  std::string section;   // "netfilter", "netfilter.iptables-legacy", "ebpf", "ebpf.attachments.tc", ...
  std::string reason;    // human sentence
  int error = 0;         // errno, 0 when not a syscall failure
  std::string hint;      // how to fix it ("run as root or with CAP_NET_ADMIN")
  bool operator==(const Unavailable&) const = default;
};

struct Snapshot {
  std::string schema = kSchema;
  NodeInfo node;
  Netfilter netfilter;
  Ebpf ebpf;
  Agents agents;   // model/agents.h; absent from snapshots written before it
  Ipsets ipsets;   // model/ipset.h; absent when not read (v2.1)
  Ipvs ipvs;       // model/ipvs.h; absent when not read (v2.2)
  std::vector<Unavailable> unavailable;
  bool operator==(const Snapshot&) const = default;
};

// ---------------------------------------------------------------- helpers

const char* to_string(Backend b);
// Throws std::invalid_argument on an unknown name.
Backend backend_from_string(const std::string& s);

// Sorts everything into canonical order so two snapshots of the same state
// are equal and diff cleanly: tables by (backend, family, name); chains with
// base chains first in hook order, then by name; rules keep their position;
// sets by name; eBPF objects by id; frontends by (address, port, protocol).
void canonicalize(Snapshot& s);
// The chain order canonicalize() gives a table: base chains in hook order, then by name.
bool chain_order_less(const Chain& a, const Chain& b);
// The table order it gives a snapshot: by (backend, family, name).
bool table_order_less(const Table& a, const Table& b);

// Fills Chain::rule_count from rules where rules_recorded.
void refresh_counts(Snapshot& s);

Table* find_table(Snapshot& s, Backend b, const std::string& family, const std::string& name);
const Table* find_table(const Snapshot& s, Backend b, const std::string& family,
                        const std::string& name);
Chain* find_chain(Table& t, const std::string& name);
const Chain* find_chain(const Table& t, const std::string& name);

bool is_unavailable(const Snapshot& s, const std::string& section);

}  // namespace dpscope::model
