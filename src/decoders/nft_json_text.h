// A native nftables rule as `nft list ruleset` prints it, from the rule's
// statements in nft's JSON form (libnftables-json(5): what `nft -j list
// ruleset` prints). nft has no library call that prints a rule it did not
// read from the kernel, so this is hand-written, after nft v1.0.6's printer
// (src/expression.c, src/statement.c, src/json.c of that release: the
// version Debian 12 ships, whose output the tests compare with).
//
// It prints what it knows exactly and nothing it does not: a statement or an
// expression outside what it knows leaves the text absent and names the
// part, so the caller keeps the rule and marks it (never a guessed text).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dpscope::nft_text {

struct NftRuleText {
  std::string text;     // "ip daddr 10.96.0.10 udp dport 53 jump mark-for-masquerade"; "" when unknown
  std::string unknown;  // what could not be printed ("statement \"xt\""); "" when text is set
};

// `family` is the table's ("ip", "ip6", "inet", ...): nft omits reject's
// default type, which depends on it. `expr` is the rule's "expr" array and
// `comment` its comment ("" = none).
NftRuleText nft_rule_text(const nlohmann::json& expr, const std::string& family, const std::string& comment);

// One element of a named set or map as `nft list set` prints it.
struct NftElementText {
  std::string key;      // "10.0.0.0/8", "172.30.0.41 . tcp . 80", "\"eth*\"", "*"
  std::string value;    // a map's value or verdict ("goto svc-1"); "" for a set
  std::string comment;  // the element's comment, unquoted
  std::string timeout;  // its own timeout as nft prints it ("1h30m"); "" for none
  std::string statements;  // its statement ("counter packets 0 bytes 0"); "" for none
  std::string unknown;  // what could not be printed; "" when the rest is set
};

// `element` is one entry of the set's "elem" as `nft -j` lists it (a key, or
// [key, value] in a map; {"elem": {...}} around a key with attributes),
// typed by the set's "type" and "map" names (["ipv4_addr",
// "inet_service"], "verdict", "counter"). An element's `expires` is runtime
// state, like a counter, and is left out.
// nft -j names every integer "integer"; nft prints a raw payload's
// (@nh,32,32) in hex and others' in decimal. A caller that knows which (the
// live collector, from the set's typeof) names the field one of these.
inline constexpr const char* kIntegerHex = "integer (hex)";
inline constexpr const char* kIntegerDecimal = "integer (decimal)";

NftElementText nft_set_element_text(const nlohmann::json& element, const std::vector<std::string>& key_type,
                                     const std::string& data_type);

}  // namespace dpscope::nft_text
