// dpscope compare --rules: the rules one side has and the other has not, by
// text. The expected differences are computed here from the two
// iptables-save files themselves (kube-proxy's goldens as iptables-nft-save
// printed them, one of them edited the way a node drifts: a rule gone, a rule
// added, a rule doubled, an endpoint's DNAT port changed).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;
using Counts = std::map<std::string, int>;                     // rule text -> times
using Chains = std::map<std::pair<std::string, std::string>, Counts>;  // (table, chain) -> rules

Chains rules_of(const std::string& save) {
  Chains out;
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    if (line.rfind(":", 0) == 0) out[{table, line.substr(1, line.find(' ') - 1)}];
    if (line.rfind("-A ", 0) != 0) continue;
    const std::string chain = line.substr(3, line.find(' ', 3) - 3);
    ++out[{table, chain}][line];
  }
  return out;
}

struct Fixture {
  TempDir tmp;
  std::string a_text, b_text;
  std::string a, b;  // snapshots
};

void make(Fixture& f) {
  f.a_text = read_text(source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt"));
  // The drift, by line edits on the tool's text.
  std::istringstream in(f.a_text);
  std::string line;
  int sep_dnat = 0;
  bool dropped = false, doubled = false;
  std::string table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    if (!dropped && line.rfind("-A KUBE-SERVICES ", 0) == 0) {
      dropped = true;  // a Service's rule gone
      continue;
    }
    if (line.rfind("-A KUBE-SEP-", 0) == 0 && line.find("--to-destination") != std::string::npos && ++sep_dnat == 2) {
      line = line.substr(0, line.rfind(':') + 1) + "8443";  // an endpoint's port changed
    }
    if (table == "nat" && line == "COMMIT") f.b_text += "-A KUBE-EXTRA -j RETURN\n";  // a chain only B has
    f.b_text += line + "\n";
    if (!doubled && line.rfind("-A KUBE-MARK-MASQ ", 0) == 0) {
      doubled = true;
      f.b_text += line + "\n";  // the same rule twice
    }
    if (table == "nat" && line == ":KUBE-SERVICES - [0:0]") f.b_text += ":KUBE-EXTRA - [0:0]\n";
  }
  ASSERT_TRUE(dropped && doubled && sep_dnat >= 2);
  write_text(f.tmp.file("a.txt"), f.a_text);
  write_text(f.tmp.file("b.txt"), f.b_text);
  f.a = f.tmp.file("a.json");
  f.b = f.tmp.file("b.json");
  for (auto [in, out] : {std::pair{f.tmp.file("a.txt"), f.a}, std::pair{f.tmp.file("b.txt"), f.b}}) {
    RunResult r = run({dpscope_bin(), "import", "--iptables-save", in, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
}

TEST(CompareRules, JsonListsExactlyTheDifferencesOfTheTwoTexts) {
  Fixture f;
  make(f);
  if (HasFatalFailure()) return;
  RunResult r = run({dpscope_bin(), "compare", f.a, f.b, "--rules", "--label", "A", "--label", "B", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "dpscope.rule-diff/v1");

  // What the two texts say, chain by chain.
  Chains ca = rules_of(f.a_text), cb = rules_of(f.b_text);
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, int>> want;
  size_t identical = 0, chains = 0;
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& [k, v] : ca) keys.insert(k);
  for (const auto& [k, v] : cb) keys.insert(k);
  std::set<std::pair<std::string, std::string>> differing_chains;
  for (const auto& k : keys) {
    ++chains;
    const Counts& ra = ca[k];
    const Counts& rb = cb[k];
    bool same = ca.count(k) && cb.count(k) && ra == rb;
    if (same) ++identical;
    std::set<std::string> texts;
    for (const auto& [t, n] : ra) texts.insert(t);
    for (const auto& [t, n] : rb) texts.insert(t);
    for (const auto& t : texts) {
      int na = ra.count(t) ? ra.at(t) : 0, nb = rb.count(t) ? rb.at(t) : 0;
      if (na != nb) want[{k.first, k.second, t}] = {na, nb};
    }
    if (!same) differing_chains.insert(k);
  }
  // The dropped rule, the old and the new DNAT line, the doubled rule, the new chain's rule.
  ASSERT_EQ(want.size(), 5u);
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, int>> got;
  std::set<std::pair<std::string, std::string>> got_chains;
  for (const auto& c : j["chains"]) {
    EXPECT_EQ(c["backend"], "iptables-nft");
    EXPECT_EQ(c["family"], "ip");
    ASSERT_TRUE(c.contains("differences")) << c.dump();
    const std::string table = c["table"].get<std::string>(), chain = c["chain"].get<std::string>();
    got_chains.insert({table, chain});
    for (const auto& d : c["differences"]) {
      got[{table, chain, d["text"].get<std::string>()}] = {d["count"][0].get<int>(), d["count"][1].get<int>()};
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_chains, differing_chains);
  EXPECT_EQ(j["summary"]["chains_compared"].get<size_t>(), chains);
  EXPECT_EQ(j["summary"]["chains_identical"].get<size_t>(), identical);
  EXPECT_EQ(j["summary"]["chains_not_compared"], 0);
}

TEST(CompareRules, EveryFormatShowsTheDifferences) {
  Fixture f;
  make(f);
  if (HasFatalFailure()) return;
  auto out = [&](const std::string& format) {
    RunResult r = run({dpscope_bin(), "compare", f.a, f.b, "--rules", "--label", "A", "--label", "B", "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string text = out("text");
  EXPECT_NE(text.find("A only: -A KUBE-SERVICES "), std::string::npos) << text;
  EXPECT_NE(text.find("B only: -A KUBE-EXTRA -j RETURN"), std::string::npos) << text;
  EXPECT_NE(text.find("A 1, B 2: -A KUBE-MARK-MASQ "), std::string::npos) << text;
  EXPECT_NE(text.find("iptables-nft ip nat KUBE-EXTRA (A absent, B 1 rules)"), std::string::npos) << text;
  const std::string md = out("markdown");
  EXPECT_NE(md.find("| iptables-nft ip nat | KUBE-EXTRA | -A KUBE-EXTRA -j RETURN | 0 | 1 |"), std::string::npos) << md;
  const std::string csv = out("csv");
  EXPECT_NE(csv.find("\"'-A KUBE-EXTRA -j RETURN\",\"differs\",0,1"), std::string::npos) << csv;
  const std::string html = out("html");
  EXPECT_NE(html.find("<code>-A KUBE-EXTRA -j RETURN</code></td><td class=\"n\">0</td><td class=\"n\">1</td>"),
            std::string::npos);
}

TEST(CompareRules, SameNodeHasNoDifferences) {
  Fixture f;
  make(f);
  if (HasFatalFailure()) return;
  RunResult r = run({dpscope_bin(), "compare", f.a, f.a, "--rules", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["chains"].empty());
  EXPECT_EQ(j["summary"]["chains_compared"], j["summary"]["chains_identical"]);
  EXPECT_GT(j["summary"]["chains_identical"].get<int>(), 10);
}

// Text that is not there is "not compared", never "equal".
TEST(CompareRules, RulesWithoutTextAreNotCompared) {
  Fixture f;
  make(f);
  if (HasFatalFailure()) return;
  RunResult v1 = sh("jq -c '.schema = \"dpscope.snapshot/v1\" | del(.. | .text?)' " + f.b + " > " + f.tmp.file("v1.json"));
  ASSERT_EQ(v1.exit_code, 0);
  RunResult r = run({dpscope_bin(), "compare", f.a, f.tmp.file("v1.json"), "--rules", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  // Every chain holding rules on the v1 side is listed as not compared, with why;
  // only chains empty on both sides compare (there is no text to miss).
  size_t b_chains_with_rules = 0;
  for (const auto& [k, rules] : rules_of(f.b_text)) b_chains_with_rules += !rules.empty();
  size_t listed = 0;
  for (const auto& c : j["chains"]) {
    if (c["rules"][1].get<int>() == 0) continue;
    ++listed;
    ASSERT_TRUE(c.contains("not_compared")) << c.dump();
    EXPECT_NE(c["not_compared"][1].get<std::string>().find("has no text"), std::string::npos) << c.dump();
  }
  EXPECT_EQ(listed, b_chains_with_rules);
  EXPECT_EQ(j["summary"]["chains_not_compared"].get<size_t>(), b_chains_with_rules);
}

// Native nftables: two imports of `nft -j` (kube-proxy v1.30.3's own
// 300-Service ruleset) that differ by one endpoint's dnat port and by counter
// values: the port is the one difference; counters are state, not ruleset.
TEST(CompareRules, NativeNftablesRulesByTextWithoutCounters) {
  TempDir tmp;
  const RunResult plain = sh("zstd -dc " + source_path("fixtures/upstream/real-kube-proxy/nftables-300x5/nft-ruleset.json.zst"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const json a = json::parse(plain.out);
  json b = a;
  std::string changed_chain, before;
  size_t counters = 0;
  for (auto& item : b["nftables"]) {
    if (!item.contains("rule")) continue;
    json& r = item["rule"];
    for (auto& st : r["expr"]) {
      if (changed_chain.empty() && st.contains("dnat") && st["dnat"].contains("port")) {
        changed_chain = r["chain"];
        st["dnat"]["port"] = 9999;
      }
    }
    // A counter on every rule of one chain, with other values on each side.
    if (r["chain"] == "mark-for-masquerade") {
      ++counters;
      r["expr"].insert(r["expr"].begin(), json{{"counter", {{"packets", 7}, {"bytes", 420}}}});
    }
  }
  json a2 = a;
  for (auto& item : a2["nftables"]) {
    if (item.contains("rule") && item["rule"]["chain"] == "mark-for-masquerade") {
      item["rule"]["expr"].insert(item["rule"]["expr"].begin(), json{{"counter", {{"packets", 0}, {"bytes", 0}}}});
    }
  }
  ASSERT_FALSE(changed_chain.empty());
  ASSERT_GT(counters, 0u);
  write_text(tmp.file("a.nft.json"), a2.dump());
  write_text(tmp.file("b.nft.json"), b.dump());
  for (const char* side : {"a", "b"}) {
    RunResult r = run({dpscope_bin(), "import", "--nft-json", tmp.file(std::string(side) + ".nft.json"), "-o",
                       tmp.file(std::string(side) + ".json")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  RunResult r = run({dpscope_bin(), "compare", tmp.file("a.json"), tmp.file("b.json"), "--rules", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["chains"].size(), 1u) << r.out;
  const json& c = j["chains"][0];
  EXPECT_EQ(c["backend"], "nftables");
  EXPECT_EQ(c["chain"], changed_chain);
  ASSERT_EQ(c["differences"].size(), 2u) << c.dump();
  for (const auto& d : c["differences"]) {
    const std::string text = d["text"];
    const bool only_b = d["count"] == json::array({0, 1});
    EXPECT_TRUE(only_b || d["count"] == json::array({1, 0})) << d.dump();
    EXPECT_EQ(text.rfind("meta l4proto ", 0), 0u) << text;
    EXPECT_EQ(text.find(":9999") != std::string::npos, only_b) << text;
  }
  EXPECT_EQ(j["summary"]["chains_not_compared"], 0);
}

TEST(CompareRules, RefusedWithFoldersServicesOrIntent) {
  TempDir tmp;
  const std::string snap = source_path("fixtures/snapshots/kind-kube-proxy.json");
  EXPECT_EQ(run({dpscope_bin(), "compare", snap, snap, "--rules", "--services"}).exit_code, 2);
  EXPECT_EQ(run({dpscope_bin(), "compare", tmp.path(), tmp.path(), "--rules"}).exit_code, 2);
}

}  // namespace
}  // namespace dpscope::test
