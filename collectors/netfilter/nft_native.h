// A native nftables rule's netlink expressions read back into nft's own
// statements, in the JSON form `nft -j list ruleset` prints
// (libnftables-json(5)), so that the live collector and the `nft -j` import
// print a rule's text with one printer (src/decoders/nft_json_text.h).
//
// This follows what nft v1.0.6 (Debian 12) does when it lists a rule
// (src/netlink_delinearize.c: registers, payload fields by protocol context,
// dependency removal; src/datatype.c and friends for how values print). It
// reads what it knows exactly and nothing it does not: an expression, a field
// or a value outside it gives `unknown` (a reason), never a guessed statement.
//
// libnftables is not used for this: listing a ruleset through it costs what
// `nft list ruleset` costs (on kube-proxy's 3,000-Service table, 8 s of CPU
// against dpscope's 1 s for the whole snapshot), since the kernel walks every
// earlier rule again for each part of one whole-ruleset dump.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectors/netfilter/nft_elements.h"

namespace dpscope::netfilter {

// The sets of the rule's table, by name ("__set0" for anonymous ones; the
// names are the caller's, alive while rules are read). Hashed: a kube-proxy
// table of 3,000 Services holds 10,000 sets with 60-byte names.
using TableSets = std::unordered_map<std::string_view, const SetShape*>;

// A bound chain (NFT_CHAIN_BINDING: `jump { ... }` inside a rule): nft lists
// it only inside the rule that binds it, so its rules' text is read before
// that rule's. Keyed by the chain's name in its table.
struct ChainBinding {
  bool read = false;               // false: its rules are not read yet
  std::vector<std::string> rules;  // each rule's text, as in a chain
  std::string unknown;             // why a rule of it has no text ("" when all have)
};
using ChainBindings = std::unordered_map<std::string_view, const ChainBinding*>;

// Why a rule binding a chain has no text: that chain's rules were not read
// before it (a binding inside a binding, which nft 1.0.6 cannot write).
inline constexpr const char* kBindingNotRead = "a chain binding whose rules were not read before it";

struct NativeStatements {
  nlohmann::json statements = nlohmann::json::array();  // the rule's "expr", as nft -j prints it
  std::string unknown;  // what could not be read ("expression \"exthdr\""); "" when statements is whole
};

// Why a rule over an anonymous set has no text in a light snapshot (its
// elements are left out by snapshot --light): the reason `raw` then names.
inline constexpr const char* kAnonymousElementsUnread = "its anonymous set's elements are left out by snapshot --light";

// A set element's statements (RawSetElement::statements) as nft -j prints
// them inside the element (json.c set_elem_expr_json: merged into "elem"):
// {"counter": {"packets": 0, "bytes": 0}}. Throws nftval::Unknown.
nlohmann::json element_statements(const nlattr* expressions);

// `family` is the table's NFPROTO_*. `bindings`: the table's bound chains
// (nullptr: not known, and a jump to a "__chain" name is not printed).
NativeStatements native_statements(const nlattr* expressions, uint8_t family, const TableSets& sets,
                                   const ChainBindings* bindings = nullptr);

}  // namespace dpscope::netfilter
