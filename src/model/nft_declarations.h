// What `nft list ruleset` prints of a native nftables table besides its
// rules and set elements: the table's flags and comment, its stateful
// objects and flowtables, each named set's declaration. Plain facts in nft's
// own words (names and times as nft prints them), so that `dpscope export
// --format nft` can give the listing back and `compare` can tell two nodes'
// declarations apart.
//
// The live collector reads them from the kernel (collectors/netfilter/
// nft_dump.cpp). `nft -j` 1.0.6 leaves some of them out (chain comments,
// typeof, the dynamic flag, auto-merge), so an import does not record them:
// Table::declarations_recorded says which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscope::model {

// A named set's or map's declaration (rule.c set_print_declaration).
struct NftSetDeclaration {
  std::string key_typeof;    // "ip saddr . tcp dport" when declared with typeof; "" = by type (NftSet::key_type)
  std::string data_typeof;   // the same for a map's values
  bool data_interval = false;        // "type ipv4_addr : interval ipv4_addr"
  std::vector<std::string> flags;    // nft's names, in its order: "constant", "dynamic", "interval", "timeout"
  std::string policy;        // "memory"; "" = performance, the default nft does not print
  uint32_t size = 0;         // the declared size; 0 = none
  std::string timeout;       // the elements' default timeout as nft prints a time ("1h30m"); "" = none
  std::string gc_interval;   // "" = none
  bool auto_merge = false;
  std::string statements;    // what every element gets ("counter"), as nft prints them
  // Why the declaration is not nft's ("" = it is): a typeof expression the
  // collector cannot print. The fields above then hold what was read.
  std::string undecoded;
  bool operator==(const NftSetDeclaration&) const = default;
};

// A stateful object: `counter c { packets 0 bytes 0 }`, a quota, a limit, a
// ct helper, ... (rule.c obj_print_data).
struct NftObject {
  std::string kind;     // nft's name: "counter", "quota", "limit", "ct helper", "ct timeout", "ct expectation", "secmark", "synproxy"
  std::string name;
  std::string comment;
  // Its body as nft prints it, one line each, without indentation
  // ("packets 0 bytes 0"; "type \"ftp\" protocol tcp", "l3proto ip").
  // A counter's and a quota's use are runtime state, like a rule's counter.
  std::vector<std::string> lines;
  std::string undecoded;  // why `lines` are not nft's ("" = they are)
  uint64_t handle = 0;    // nf_tables' (0 = not recorded), as Chain::handle
  bool operator==(const NftObject&) const = default;
};

struct NftFlowtable {
  std::string name;
  std::string hook;          // "ingress"
  int32_t priority = 0;
  std::vector<std::string> devices;  // by name, as nft lists them
  bool offload = false;      // flags offload
  bool counter = false;
  uint64_t handle = 0;
  bool operator==(const NftFlowtable&) const = default;
};

}  // namespace dpscope::model
