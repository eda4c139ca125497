// Test support: the rules of `nft list ruleset` text, per chain, as nft
// printed them (one line each, indentation removed). Chain bindings (a rule
// whose text opens a block: `jump { ... }`) span lines; they are kept as
// their first line with " {" and counted in `multiline`.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

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
      out.chains[{family, table, chain}].push_back(t);
      if (opens) {
        ++out.multiline;
        stack.push_back('o');
      }
      continue;
    }
    if (opens) stack.push_back('o');  // nested inside another object
  }
  return out;
}

}  // namespace dpscope::test
