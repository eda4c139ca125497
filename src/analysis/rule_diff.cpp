#include "analysis/rule_diff.h"

#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>

namespace dpscope::analysis {

bool ChainRules::compared() const {
  for (const auto& why : not_compared) {
    if (!why.empty()) return false;
  }
  return true;
}

namespace {

using ChainKey = std::tuple<int, std::string, std::string, std::string>;  // backend, family, table, chain

// Why a side's chain cannot be compared by text ("" = it can).
std::string untextable(const model::Table& t, const model::Chain& c) {
  if (!c.rules_recorded) return "rules counted, not recorded";
  for (const auto& r : c.rules) {
    if (!r.text.empty()) continue;
    if (t.backend == model::Backend::Nftables) {
      // A live rule says why in its raw text: "text not printed (WHY): ...".
      const std::string_view raw = r.raw, lead = "text not printed (";
      const size_t end = raw.find("): ");
      const std::string why = raw.substr(0, lead.size()) == lead && end != std::string_view::npos
                                  ? std::string(raw.substr(lead.size(), end - lead.size()))
                                  : "a statement dpscope's printer does not know";
      return "rule " + std::to_string(r.position) + " has no text (" + why + ")";
    }
    return "rule " + std::to_string(r.position) + " has no text (a dpscope.snapshot/v1 file?)";
  }
  return "";
}

// Why side `s` did not read `backend`'s tables ("" = it did).
std::string backend_gap(const model::Snapshot& s, model::Backend backend) {
  if (!s.netfilter.collected) return "netfilter not collected";
  for (const auto& u : s.unavailable) {
    const bool hit = u.section == "netfilter" ||
                     (u.section == "netfilter.iptables-legacy" && backend == model::Backend::IptablesLegacy) ||
                     ((u.section == "netfilter.nftables" || u.section == "netfilter.consistency") &&
                      backend != model::Backend::IptablesLegacy) ||
                     (u.section == "netfilter.nftables-native" && backend == model::Backend::Nftables);
    if (hit) return u.section + ": " + u.reason;
  }
  return "";
}

// Every netfilter part side `s` did not read, said once per side.
std::string side_gaps(const model::Snapshot& s) {
  if (!s.netfilter.collected) return "netfilter not collected";
  std::string out;
  for (const auto& u : s.unavailable) {
    if (u.section == "netfilter" || u.section.rfind("netfilter.", 0) == 0) {
      out += (out.empty() ? "" : "; ") + u.section + ": " + u.reason;
    }
  }
  return out;
}

// A native rule's text without its counter's values ("counter packets 3
// bytes 180" -> "counter"): counters are state, not ruleset; "" when the
// text has none (the common case: the text is compared as it is).
std::string without_counter_values(std::string_view text) {
  static constexpr std::string_view kCounter = "counter packets ";
  size_t at = text.find(kCounter);
  if (at == std::string_view::npos) return "";
  std::string out;
  size_t from = 0;
  auto digits = [&](size_t i) {
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i;
  };
  while (at != std::string_view::npos) {
    const size_t packets_end = digits(at + kCounter.size());
    const std::string_view bytes = " bytes ";
    if (packets_end == at + kCounter.size() || text.substr(packets_end, bytes.size()) != bytes) {
      at = text.find(kCounter, at + 1);
      continue;
    }
    const size_t end = digits(packets_end + bytes.size());
    out.append(text.substr(from, at - from)).append("counter");
    from = end;
    at = text.find(kCounter, end);
  }
  if (from == 0) return "";
  out.append(text.substr(from));
  return out;
}

}  // namespace

RuleDiff diff_rules(const std::vector<const model::Snapshot*>& sides) {
  RuleDiff d;
  d.sides = sides.size();
  const size_t n = sides.size();
  for (const auto* s : sides) d.side_not_read.push_back(side_gaps(*s));

  struct Entry {
    ChainRules chain;
    std::vector<const model::Chain*> per_side;
  };
  std::map<ChainKey, Entry> chains;  // sorted: output order is stable across runs
  for (size_t i = 0; i < n; ++i) {
    for (const auto& t : sides[i]->netfilter.tables) {
      for (const auto& c : t.chains) {
        Entry& e = chains[{static_cast<int>(t.backend), t.family, t.name, c.name}];
        if (e.per_side.empty()) {
          e.chain.backend = t.backend;
          e.chain.family = t.family;
          e.chain.table = t.name;
          e.chain.chain = c.name;
          e.chain.present.assign(n, false);
          e.chain.rules.assign(n, 0);
          e.chain.not_compared.assign(n, "");
          e.per_side.assign(n, nullptr);
        }
        e.per_side[i] = &c;
        e.chain.present[i] = true;
        e.chain.rules[i] = c.rule_count;
        e.chain.not_compared[i] = untextable(t, c);
      }
    }
  }
  // A chain's absence on a side that did not read its backend is not a difference.
  std::vector<ChainRules> not_compared;
  for (auto& [key, e] : chains) {
    for (size_t i = 0; i < n; ++i) {
      const std::string gap = backend_gap(*sides[i], e.chain.backend);
      if (!gap.empty()) e.chain.not_compared[i] = gap;
    }
    if (!e.chain.compared()) {
      not_compared.push_back(std::move(e.chain));
      continue;
    }
    ++d.chains_compared;
    // Count each text per side, keeping first-seen order.
    std::unordered_map<std::string_view, size_t> index;
    std::vector<RuleDifference> rules;
    std::deque<std::string> normalized;  // texts with counter values taken out, kept for `index`
    for (size_t i = 0; i < n; ++i) {
      if (!e.per_side[i]) continue;
      for (const auto& r : e.per_side[i]->rules) {
        std::string_view text = r.text;
        if (e.chain.backend == model::Backend::Nftables) {
          if (std::string plain = without_counter_values(text); !plain.empty()) text = normalized.emplace_back(std::move(plain));
        }
        auto [it, fresh] = index.try_emplace(text, rules.size());
        if (fresh) rules.push_back({std::string(text), std::vector<uint32_t>(n, 0)});
        ++rules[it->second].count[i];
      }
    }
    for (auto& r : rules) {
      bool same = true;
      for (size_t i = 1; i < n; ++i) same &= r.count[i] == r.count[0];
      if (!same) e.chain.differences.push_back(std::move(r));
    }
    if (e.chain.differences.empty() && e.chain.present == std::vector<bool>(n, true)) {
      ++d.chains_identical;
    } else {
      d.chains.push_back(std::move(e.chain));
    }
  }
  for (auto& c : not_compared) d.chains.push_back(std::move(c));
  return d;
}

}  // namespace dpscope::analysis
