// Rule text against the iptables project's own extension tests
// (fixtures/upstream/netfilter-tests/iptables-extensions/*.t, see SOURCES.md):
// every rule this machine's iptables-restore accepts is loaded into dps-*
// namespaces, on both backends and in both families where the file applies,
// and for every rule
//   live text (dpscope snapshot)  == the line iptables-save prints,
//   import text (dpscope import)  == that line,
// and so live == import. Rules the tools or the kernel refuse are skipped and
// counted by reason; nothing else is skipped.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

struct CorpusRule {
  std::string where;  // FILE:LINE
  std::string table;
  std::vector<std::string> chains;
  std::string rule;
  bool v4 = false, v6 = false;
  bool legacy_only = false, nft_only = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::vector<CorpusRule> read_corpus() {
  const std::string dir = source_path("fixtures/upstream/netfilter-tests/iptables-extensions");
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (d == nullptr) return {};
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 2 && name.substr(name.size() - 2) == ".t") files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  std::vector<CorpusRule> rules;
  for (const auto& name : files) {
    // libxt_ both families, libipt_ IPv4, libip6t_ IPv6; iptables.t tests the core options (both).
    const bool v4 = name.rfind("libip6t_", 0) != 0;
    const bool v6 = name.rfind("libipt_", 0) != 0;
    std::ifstream in(dir + "/" + name);
    std::string line, table = "filter";
    std::vector<std::string> chains;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '*') {
        table = line.substr(1);
        continue;
      }
      if (line[0] == ':') {
        chains = split(line.substr(1), ',');
        continue;
      }
      const auto fields = split(line, ';');
      if (fields.size() < 3 || fields[2] != "OK") continue;  // FAIL lines must be refused: nothing to print
      CorpusRule r;
      r.where = name + ":" + std::to_string(n);
      r.table = table;
      r.chains = chains;
      r.rule = fields[0];
      r.v4 = v4, r.v6 = v6;
      r.legacy_only = fields.size() > 3 && fields[3] == "LEGACY";
      r.nft_only = fields.size() > 3 && fields[3] == "NFT";
      rules.push_back(r);
    }
  }
  return rules;
}

struct Config {
  const char* backend;  // "nft" | "legacy"
  bool v6;
  std::string restore() const { return std::string(v6 ? "ip6tables-" : "iptables-") + backend + "-restore"; }
  std::string save() const { return std::string(v6 ? "ip6tables-" : "iptables-") + backend + "-save"; }
  std::string import_option() const {
    return std::string(v6 ? "--ip6tables" : "--iptables") + (std::string(backend) == "legacy" ? "-legacy" : "") + "-save";
  }
  model::Backend model_backend() const {
    return std::string(backend) == "legacy" ? model::Backend::IptablesLegacy : model::Backend::IptablesNft;
  }
  std::string name() const { return std::string(backend) + (v6 ? " ip6" : " ip"); }
};

struct Line {
  std::string text;   // "-A CHAIN RULE"
  std::string where;
};

// Why iptables-restore refused a rule: its message without line numbers and the rule's own words.
std::string reason_of(const std::string& err) {
  std::string out;
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Error occurred", 0) == 0 || line.rfind("Try `", 0) == 0) continue;
    line = std::regex_replace(line, std::regex("^i?p?6?tables(-nft|-legacy)?-restore v[0-9.]+ \\([a-z_]+\\): ?"), "");
    line = std::regex_replace(line, std::regex("^i?p?6?tables(-nft|-legacy)?-restore: "), "");
    line = std::regex_replace(line, std::regex("line [0-9]+"), "line N");
    line = std::regex_replace(line, std::regex("rule in chain [A-Z]+"), "rule in chain C");
    line = std::regex_replace(line, std::regex("`[^']*'|\"[^\"]*\"|'[^']*'"), "'...'");
    if (line.empty()) continue;
    out += (out.empty() ? "" : " / ") + line;
  }
  return out.empty() ? "(no message)" : out;
}

// Loads `lines` into `table` with as few restores as it takes: a failing rule
// line named by iptables-restore is dropped and the rest retried; a failure at
// COMMIT (the kernel refused) is found by halving. Returns the lines loaded.
std::vector<Line> load_table(const Netns& ns, const Config& c, const std::string& table, std::vector<Line> lines,
                             std::map<std::string, int>& refused, std::vector<std::string>& refused_rules) {
  auto restore = [&](const std::vector<Line>& subset) {
    std::string text = "*" + table + "\n";
    for (const auto& l : subset) text += l.text + "\n";
    text += "COMMIT\n";
    return run(ns.exec({c.restore()}), text);
  };
  std::vector<Line> accepted;
  std::function<void(std::vector<Line>)> take = [&](std::vector<Line> subset) {
    while (!subset.empty()) {
      const RunResult r = restore(subset);
      if (r.exit_code == 0) {
        accepted.insert(accepted.end(), subset.begin(), subset.end());
        return;
      }
      std::smatch m;
      const std::regex failed_line("line ([0-9]+) failed");
      size_t at = 0;
      if (std::regex_search(r.err, m, failed_line)) at = std::stoul(m[1]);
      if (at >= 2 && at - 2 < subset.size()) {  // line 1 is "*table"
        ++refused[reason_of(r.err)];
        refused_rules.push_back(c.name() + " " + subset[at - 2].where + ": " + subset[at - 2].text + ": " + reason_of(r.err));
        subset.erase(subset.begin() + static_cast<long>(at - 2));
        continue;
      }
      if (subset.size() == 1) {
        ++refused[reason_of(r.err)];
        refused_rules.push_back(c.name() + " " + subset[0].where + ": " + subset[0].text + ": " + reason_of(r.err));
        return;
      }
      const auto half = subset.begin() + static_cast<long>(subset.size() / 2);
      take(std::vector<Line>(subset.begin(), half));
      take(std::vector<Line>(half, subset.end()));
      return;
    }
  };
  take(std::move(lines));
  if (!accepted.empty()) {
    const RunResult r = restore(accepted);
    EXPECT_EQ(r.exit_code, 0) << c.name() << " " << table << ": the accepted rules together: " << r.err;
  }
  return accepted;
}

// iptables-save's rule lines per "table chain", in order.
std::map<std::string, std::vector<std::string>> saved_rules(const std::string& save) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '*') table = line.substr(1);
    if (line.rfind("-A ", 0) != 0) continue;
    const size_t end = line.find(' ', 3);
    out[table + " " + line.substr(3, end == std::string::npos ? std::string::npos : end - 3)].push_back(line);
  }
  return out;
}

std::map<std::string, std::vector<std::string>> snapshot_rules(const model::Snapshot& s, const Config& c) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != c.model_backend() || t.family != (c.v6 ? "ip6" : "ip")) continue;
    for (const auto& ch : t.chains) {
      auto& v = out[t.name + " " + ch.name];
      for (const auto& r : ch.rules) v.push_back(r.text.empty() ? "<no text>" : r.text);
      if (v.empty()) out.erase(t.name + " " + ch.name);
    }
  }
  return out;
}

TEST(RuleTextCorpus, LiveAndImportTextEqualIptablesSave) {
  DPS_REQUIRE_ROOT();
  const auto corpus = read_corpus();
  ASSERT_GT(corpus.size(), 700u);  // 766 OK lines in the copied files
  const Config configs[] = {{"nft", false}, {"nft", true}, {"legacy", false}, {"legacy", true}};
  size_t total = 0, loaded = 0, live_equal = 0, import_equal = 0;
  std::map<std::string, int> refused;
  std::vector<std::string> refused_rules, mismatches;
  for (const char* backend : {"nft", "legacy"}) {
    Netns ns(std::string("corpus-") + backend);
    TempDir dir;
    std::vector<std::pair<Config, std::string>> saves;
    for (const auto& c : configs) {
      if (std::string(c.backend) != backend) continue;
      std::map<std::string, std::vector<Line>> by_table;
      for (const auto& r : corpus) {
        if (!(c.v6 ? r.v6 : r.v4)) continue;
        if ((r.legacy_only && std::string(backend) != "legacy") || (r.nft_only && std::string(backend) != "nft")) continue;
        for (const auto& chain : r.chains) by_table[r.table].push_back({"-A " + chain + " " + r.rule, r.where});
      }
      for (auto& [table, lines] : by_table) {
        total += lines.size();
        loaded += load_table(ns, c, table, std::move(lines), refused, refused_rules).size();
      }
      saves.emplace_back(c, ns.sh(c.save()));
    }
    // One snapshot and one import of the whole namespace.
    const std::string live_path = dir.file("live.json");
    const RunResult snap = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "-q", "-o", live_path});
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    const model::Snapshot live = model::load_snapshot(live_path);
    std::vector<std::string> argv = {dpscope_bin(), "import"};
    for (const auto& [c, text] : saves) {
      const std::string f = dir.file(c.save() + ".txt");
      write_text(f, text);
      argv.push_back(c.import_option());
      argv.push_back(f);
    }
    argv.push_back("-o");
    argv.push_back(dir.file("import.json"));
    const RunResult imp = run(argv);
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    const model::Snapshot imported = model::load_snapshot(dir.file("import.json"));
    for (const auto& [c, text] : saves) {
      const auto tool = saved_rules(text);
      const auto lv = snapshot_rules(live, c);
      const auto im = snapshot_rules(imported, c);
      for (const auto& [chain, lines] : tool) {
        const auto l = lv.find(chain);
        const auto i = im.find(chain);
        for (size_t k = 0; k < lines.size(); ++k) {
          const std::string live_text = l != lv.end() && k < l->second.size() ? l->second[k] : "<missing>";
          const std::string import_text = i != im.end() && k < i->second.size() ? i->second[k] : "<missing>";
          live_equal += live_text == lines[k];
          import_equal += import_text == lines[k];
          if (live_text != lines[k]) mismatches.push_back(c.name() + " live:   " + live_text + "\n    tool:   " + lines[k]);
          if (import_text != lines[k]) mismatches.push_back(c.name() + " import: " + import_text + "\n    tool:   " + lines[k]);
        }
      }
      for (const auto& [chain, rules] : lv) {
        if (!tool.count(chain)) mismatches.push_back(c.name() + " live has a chain iptables-save does not: " + chain);
      }
    }
  }
  const size_t saved = live_equal + (mismatches.size() - std::count_if(mismatches.begin(), mismatches.end(), [](const std::string& m) {
                         return m.find(" import: ") != std::string::npos;
                       }));
  std::ostringstream report;
  report << "corpus: " << corpus.size() << " OK rules; " << total << " rule lines over 4 configs (backend x family x chain), "
         << loaded << " loaded, " << (total - loaded) << " refused by iptables-restore / the kernel\n";
  for (const auto& [reason, n] : refused) report << "  refused " << n << ": " << reason << "\n";
  report << "live text == iptables-save: " << live_equal << " of " << loaded << " ("
         << (loaded ? 100.0 * live_equal / loaded : 0) << "%)\n";
  report << "import text == iptables-save: " << import_equal << " of " << loaded << "\n";
  std::cout << report.str();
  if (getenv("DPS_CORPUS_VERBOSE")) {
    for (const auto& r : refused_rules) std::cout << "  refused: " << r << "\n";
  }
  (void)saved;
  for (size_t k = 0; k < mismatches.size() && k < 60; ++k) ADD_FAILURE() << mismatches[k];
  EXPECT_EQ(mismatches.size(), 0u) << report.str();
}

}  // namespace
}  // namespace dpscope::test
