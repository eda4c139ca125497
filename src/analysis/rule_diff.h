// Rule-level comparison (`dpscope compare --rules`): per table and chain, the
// rules one side has and another has not, by their exact text (Rule::text,
// as iptables-save prints it), so counters, handles and positions do not
// count. A rule held twice on one side and once on the other is a difference.
// A chain whose rules have no text on some side (a v1 snapshot, native
// nftables rules, rules only counted) is listed as not compared, with why —
// never as equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

struct RuleDifference {
  std::string text;              // "-A KUBE-SERVICES -d 10.96.0.1/32 ..."
  std::vector<uint32_t> count;   // times the rule is in the chain, per side
};

struct ChainRules {
  model::Backend backend = model::Backend::IptablesNft;
  std::string family;
  std::string table;
  std::string chain;
  std::vector<bool> present;       // the chain exists on that side
  std::vector<uint64_t> rules;     // its rule count per side (0 when absent)
  std::vector<RuleDifference> differences;  // in the first side's order, then the others'
  // Set when the chain could not be compared by text: per side, why ("" = that side is fine).
  std::vector<std::string> not_compared;
  bool compared() const;
};

struct RuleDiff {
  size_t sides = 0;
  uint64_t chains_compared = 0;    // chains compared by text on every side
  uint64_t chains_identical = 0;   // of those, the same rules everywhere
  std::vector<ChainRules> chains;  // chains that differ, then chains not compared
  // Per side, the netfilter parts it did not read ("" = none): their chains are not compared.
  std::vector<std::string> side_not_read;
};

RuleDiff diff_rules(const std::vector<const model::Snapshot*>& sides);

}  // namespace dpscope::analysis
