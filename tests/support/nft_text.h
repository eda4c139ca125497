// Test support: the rules of `nft list ruleset` text, per chain, as nft
// printed them (one line each, indentation removed). Chain bindings (a rule
// whose text opens a block: `jump { ... }`) span lines: their first line,
// then the block's lines as nft printed them (its tabs kept), joined by
// "\n", and counted in `multiline`. And the elements of its named sets and
// maps, one text each, as nft printed them.
#pragma once

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::test {

using NftChainKey = std::tuple<std::string, std::string, std::string>;  // family, table, chain

struct NftTextRules {
  std::map<NftChainKey, std::vector<std::string>> chains;
  size_t multiline = 0;
};

inline NftTextRules nft_text_rules(const std::string& text) {
  NftTextRules out;
  std::istringstream in(text);
  std::string line, family, table, chain;
  // Block kinds on the stack: 't' table, 'c' chain, 'o' any other object or a rule's block.
  std::vector<char> stack;
  auto trim = [](const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b);
  };
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t == "}") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    const bool opens = t.size() >= 2 && t.compare(t.size() - 2, 2, " {") == 0;
    if (stack.empty()) {
      if (t.rfind("table ", 0) == 0 && opens) {
        std::istringstream w(t.substr(6));
        w >> family >> table;
        stack.push_back('t');
      }
      continue;
    }
    if (stack.back() == 't') {
      if (t.rfind("chain ", 0) == 0 && opens) {
        chain = t.substr(6, t.size() - 8);
        out.chains[{family, table, chain}];
        stack.push_back('c');
      } else if (opens) {
        stack.push_back('o');
      }
      continue;
    }
    if (stack.back() == 'c') {
      if (t.rfind("type ", 0) == 0 || t.rfind("policy ", 0) == 0 || t.rfind("comment ", 0) == 0 ||
          t.rfind("devices ", 0) == 0) {
        continue;  // the chain's own properties, not rules
      }
      std::string rule = t;
      if (opens) {
        ++out.multiline;
        for (int depth = 1; depth > 0 && std::getline(in, line);) {
          const std::string inner = trim(line);
          if (inner == "}") --depth;
          if (inner.size() >= 2 && inner.compare(inner.size() - 2, 2, " {") == 0) ++depth;
          rule += "\n" + line;
        }
      }
      out.chains[{family, table, chain}].push_back(std::move(rule));
      continue;
    }
    if (opens) stack.push_back('o');  // nested inside another object
  }
  return out;
}

// An element's text as nft prints it, from the snapshot's fields.
inline std::string nft_element_text(const model::SetElement& e) {
  std::string out = e.key;
  if (!e.statements.empty()) out += " " + e.statements;
  if (!e.timeout.empty()) out += " timeout " + e.timeout;
  if (!e.comment.empty()) out += " comment \"" + e.comment + "\"";
  if (!e.value.empty()) out += " : " + e.value;
  return out;
}

// nft's element text without its " expires 59m58s": runtime state.
inline std::string without_expires(const std::string& element) {
  const auto at = element.find(" expires ");
  if (at == std::string::npos) return element;
  auto end = element.find(' ', at + 9);
  return element.substr(0, at) + (end == std::string::npos ? "" : element.substr(end));
}

using NftSetKey = std::tuple<std::string, std::string, std::string>;  // family, table, set

// The `elements = { ... }` of each named set and map (set_expr_print: ", "
// between elements, lines wrapped after a comma), split at the commas
// outside quotes, each element trimmed. A set without elements has an
// empty list.
inline std::map<NftSetKey, std::vector<std::string>> nft_text_set_elements(const std::string& text) {
  std::map<NftSetKey, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line, family, table;
  std::vector<std::string>* current = nullptr;  // the set being read
  int depth = 0;                                // braces open at the start of the line
  auto trim = [](const std::string& s) {
    const auto b = s.find_first_not_of(" \t\n");
    if (b == std::string::npos) return std::string();
    return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
  };
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (depth == 0 && t.rfind("table ", 0) == 0) {
      std::istringstream w(t.substr(6));
      w >> family >> table;
    }
    if (depth == 1 && (t.rfind("set ", 0) == 0 || t.rfind("map ", 0) == 0)) {
      const std::string name = t.substr(4, t.find(' ', 4) - 4);
      current = &out[{family, table, name}];
    }
    if (depth == 2 && current && t.rfind("elements = {", 0) == 0) {
      // The list runs to its closing brace, over lines.
      std::string list = t.substr(12), more;
      auto closed = [](const std::string& s) {
        bool quote = false;
        for (char c : s) {
          if (c == '"') quote = !quote;
          if (c == '}' && !quote) return true;
        }
        return false;
      };
      while (!closed(list) && std::getline(in, more)) list += "\n" + more;
      std::string item;
      bool quote = false;
      for (char c : list) {
        if (c == '"') quote = !quote;
        if (!quote && (c == ',' || c == '}')) {
          if (!trim(item).empty()) current->push_back(trim(item));
          item.clear();
          if (c == '}') break;
          continue;
        }
        item += c;
      }
      continue;
    }
    bool quote = false;
    for (char c : t) {
      if (c == '"') quote = !quote;
      if (quote) continue;
      if (c == '{') ++depth;
      if (c == '}') --depth;
    }
    if (depth <= 1) current = nullptr;
  }
  return out;
}

// The `table F N` blocks of a snapshot's iptables-nft tables: what
// `export --format nft` leaves out.
inline std::vector<std::string> nft_iptables_tables(const model::Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend == model::Backend::IptablesNft) out.push_back(t.family + " " + t.name);
  }
  return out;
}

// `nft list ruleset` text without the tables named ("ip filter") and
// without each element's " expires 59m58s" (runtime state).
inline std::string nft_ruleset_without_expires(const std::string& text, const std::vector<std::string>& left_out) {
  std::istringstream in(text);
  std::string line, out;
  bool skipping = false;
  while (std::getline(in, line)) {
    if (line.rfind("table ", 0) == 0) {
      const std::string name = line.substr(6, line.rfind(" {") - 6);
      skipping = std::find(left_out.begin(), left_out.end(), name) != left_out.end();
    }
    if (!skipping) {
      for (auto at = line.find(" expires "); at != std::string::npos; at = line.find(" expires ", at)) {
        auto end = line.find_first_not_of("0123456789dhms", at + 9);
        line.erase(at, (end == std::string::npos ? line.size() : end) - at);
      }
      out += line + "\n";
    }
    if (line == "}") skipping = false;
  }
  return out;
}

// Where two texts first differ, a few lines of each around it.
inline std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (size_t n = 1;; ++n) {
    const bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "(equal)";
    if (!ha || !hb || la != lb) {
      return "  line " + std::to_string(n) + "\n    nft:    " + (ha ? la : "(end)") + "\n    export: " + (hb ? lb : "(end)");
    }
  }
}

}  // namespace dpscope::test
