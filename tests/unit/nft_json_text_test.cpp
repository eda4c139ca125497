// Native nftables rule text from nft's JSON: every rule of real kube-proxy
// v1.30.3 nftables-mode rulesets (300 and 3,000 Services), as `nft -j list
// ruleset` printed it, must print exactly as `nft list ruleset` printed the
// same state (nft v1.0.6, fixtures/upstream/real-kube-proxy/, SOURCES.md),
// rule by rule, in each chain's order.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "collectors/import/nft_json_text.h"
#include "model/json.h"
#include "tests/support/nft_text.h"
#include "tests/support/process.h"

namespace dpscope::importer {
namespace {

using nlohmann::json;
using ChainKey = test::NftChainKey;

void expect_every_rule_printed(const std::string& dir, size_t min_rules) {
  const std::string text = model::read_file(test::source_path(dir + "/nft-ruleset.txt.zst"));
  const json doc = json::parse(model::read_file(test::source_path(dir + "/nft-ruleset.json.zst")));
  const auto want = test::nft_text_rules(text).chains;
  std::map<ChainKey, std::vector<std::string>> got;
  size_t rules = 0, unknown = 0;
  for (const auto& item : doc["nftables"]) {
    if (!item.contains("rule")) continue;
    const json& r = item["rule"];
    const std::string family = r["family"], table = r["table"], chain = r["chain"];
    NftRuleText t = nft_rule_text(r["expr"], family, r.value("comment", ""));
    ++rules;
    if (!t.unknown.empty()) {
      ++unknown;
      ADD_FAILURE() << family << " " << table << " " << chain << ": " << t.unknown << "\n" << r.dump();
      continue;
    }
    got[{family, table, chain}].push_back(t.text);
  }
  EXPECT_GE(rules, min_rules);
  EXPECT_EQ(unknown, 0u);
  size_t compared = 0;
  for (const auto& [key, lines] : want) {
    const auto& [family, table, chain] = key;
    SCOPED_TRACE(family + " " + table + " " + chain);
    const auto it = got.find(key);
    const std::vector<std::string> mine = it == got.end() ? std::vector<std::string>{} : it->second;
    ASSERT_EQ(mine.size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(mine[i], lines[i]) << "rule " << i + 1;
      ++compared;
    }
  }
  EXPECT_EQ(compared, rules);
}

TEST(NftJsonText, RealKubeProxy300IsWhatNftPrinted) {
  expect_every_rule_printed("fixtures/upstream/real-kube-proxy/nftables-300x5", 5000);
}

TEST(NftJsonText, RealKubeProxy3000IsWhatNftPrinted) {
  expect_every_rule_printed("fixtures/upstream/real-kube-proxy/nftables-3000x8", 80000);
}

TEST(NftJsonText, UnknownStatementLeavesTextAbsentAndSaysWhich) {
  const json expr = json::parse(R"([{"xt":{"type":"match","name":"conntrack"}},{"accept":null}])");
  NftRuleText t = nft_rule_text(expr, "ip", "");
  EXPECT_EQ(t.text, "");
  EXPECT_EQ(t.unknown, "statement \"xt\"");
}

TEST(NftJsonText, MarksPrintAsNftPrintsThem) {
  const json expr = json::parse(
      R"([{"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},16384]},"right":0}},{"return":null}])");
  EXPECT_EQ(nft_rule_text(expr, "ip", "").text, "meta mark & 0x00004000 == 0x00000000 return");
  const json ifname = json::parse(R"([{"match":{"op":"!=","left":{"meta":{"key":"iifname"}},"right":"eth*"}},{"drop":null}])");
  EXPECT_EQ(nft_rule_text(ifname, "inet", "no pods").text, "iifname != \"eth*\" drop comment \"no pods\"");
}

}  // namespace
}  // namespace dpscope::importer
