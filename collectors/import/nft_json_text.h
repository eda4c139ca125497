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

namespace dpscope::importer {

struct NftRuleText {
  std::string text;     // "ip daddr 10.96.0.10 udp dport 53 jump mark-for-masquerade"; "" when unknown
  std::string unknown;  // what could not be printed ("statement \"xt\""); "" when text is set
};

// `family` is the table's ("ip", "ip6", "inet", ...): nft omits reject's
// default type, which depends on it. `expr` is the rule's "expr" array and
// `comment` its comment ("" = none).
NftRuleText nft_rule_text(const nlohmann::json& expr, const std::string& family, const std::string& comment);

}  // namespace dpscope::importer
