// An independent, deliberately simple reading of iptables-save text for tests:
// plain string searches, none of the importer's code, so the two can be
// compared. It knows only what iptables-save prints: "*table", ":CHAIN",
// "[p:b] -A CHAIN ...", "-X CHAIN", COMMIT; the target is the word after the
// last " -j " or " -g ", the destination the word after " -d ", the comment
// the quoted (or single) word after "--comment ".
#pragma once

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dpscope::test {

struct ScannedRule {
  std::string chain;
  std::string target;       // "" without -j/-g
  std::string destination;  // as written ("" none)
  std::string comment;      // unquoted ("" none)
};

struct ScannedTable {
  std::string name;
  std::vector<std::string> chains;  // declared, minus those deleted with -X
  std::vector<ScannedRule> rules;   // in file order

  size_t rules_in(const std::string& chain) const {
    return static_cast<size_t>(std::count_if(rules.begin(), rules.end(), [&](const ScannedRule& r) { return r.chain == chain; }));
  }
};

inline std::string scan_word_after(const std::string& line, size_t pos) {
  const size_t end = line.find(' ', pos);
  return line.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

inline std::vector<ScannedTable> scan_iptables_save(const std::string& text) {
  std::vector<ScannedTable> tables;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '*') {
      tables.push_back({line.substr(1), {}, {}});
      continue;
    }
    if (tables.empty() || line == "COMMIT") continue;
    auto& t = tables.back();
    if (line[0] == ':') {
      t.chains.push_back(line.substr(1, line.find(' ') - 1));
      continue;
    }
    if (line.rfind("-X ", 0) == 0) {
      const std::string name = line.substr(3);
      t.chains.erase(std::remove(t.chains.begin(), t.chains.end(), name), t.chains.end());
      continue;
    }
    if (line[0] == '[') line = line.substr(line.find(']') + 2);
    if (line.rfind("-A ", 0) != 0) continue;
    ScannedRule r;
    r.chain = scan_word_after(line, 3);
    const size_t j = line.rfind(" -j ");
    const size_t g = line.rfind(" -g ");
    const size_t last = j == std::string::npos ? g : (g == std::string::npos ? j : std::max(j, g));
    if (last != std::string::npos) r.target = scan_word_after(line, last + 4);
    if (size_t d = line.find(" -d "); d != std::string::npos) r.destination = scan_word_after(line, d + 4);
    if (size_t c = line.find("--comment "); c != std::string::npos) {
      c += 10;
      if (line[c] == '"') {
        r.comment = line.substr(c + 1, line.find('"', c + 1) - c - 1);
      } else {
        r.comment = scan_word_after(line, c);
      }
    }
    t.rules.push_back(std::move(r));
  }
  return tables;
}

inline bool scan_starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// `nft list ruleset` text read by indentation and braces: chains ("\tchain X {"),
// hooked chains (a "type ... hook ..." line), rules (other lines inside a
// chain but its "comment"), and elements per set or map (commas outside
// quotes inside "elements = { ... }", plus one).
struct NftTextCounts {
  long chains = 0, hooked = 0, rules = 0;
  std::map<std::string, long> elements;  // per set / map
};

// Counts from `nft list ruleset` text, by indentation and braces.
inline NftTextCounts scan_nft_listing(const std::string& text) {
  NftTextCounts c;
  std::istringstream in(text);
  std::string line;
  enum { None, Chain, Set } block = None;
  std::string set_name;
  bool in_elements = false;
  while (std::getline(in, line)) {
    if (scan_starts_with(line, "\tchain ")) {
      block = Chain;
      ++c.chains;
      continue;
    }
    if (scan_starts_with(line, "\tset ") || scan_starts_with(line, "\tmap ")) {
      block = Set;
      set_name = line.substr(5, line.find(' ', 5) - 5);
      c.elements[set_name] = 0;
      continue;
    }
    if (line == "\t}") {
      block = None;
      continue;
    }
    if (block == Chain && scan_starts_with(line, "\t\t")) {
      const std::string body = line.substr(2);
      if (scan_starts_with(body, "type ")) {
        if (body.find(" hook ") != std::string::npos) ++c.hooked;
      } else if (!scan_starts_with(body, "comment ")) {
        ++c.rules;
      }
    }
    if (block == Set) {
      size_t from = 0;
      if (line.find("elements = {") != std::string::npos) {
        in_elements = true;
        from = line.find('{') + 1;
        ++c.elements[set_name];
      }
      if (!in_elements) continue;
      bool quoted = false;
      for (size_t i = from; i < line.size(); ++i) {
        if (line[i] == '"') quoted = !quoted;
        if (!quoted && line[i] == ',') ++c.elements[set_name];
        if (!quoted && line[i] == '}') in_elements = false;
      }
    }
  }
  return c;
}

}  // namespace dpscope::test
