// Native nftables rule text against the nftables project's own test dumps
// (fixtures/upstream/netfilter-tests/nftables-dumps/, SOURCES.md): each
// `.nft` ruleset this machine's `nft -f` loads goes into a dps-* netns; what
// `nft -j list ruleset` prints of it is printed rule by rule by dpscope's
// printer (collectors/import/nft_json_text.h) and must equal what
// `nft list ruleset` prints of the same state. A rule the printer does not
// know keeps no text (counted by reason); a printed text is never wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "collectors/import/nft_json_text.h"
#include "tests/support/kernel.h"
#include "tests/support/nft_text.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

TEST(NftTextCorpus, PrintedTextIsNftsOwnAndCoverageHolds) {
  DPS_REQUIRE_ROOT();
  std::vector<std::string> dumps;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(source_path("fixtures/upstream/netfilter-tests/nftables-dumps"))) {
    if (e.path().extension() == ".nft") dumps.push_back(e.path().string());
  }
  std::sort(dumps.begin(), dumps.end());
  ASSERT_GE(dumps.size(), 400u);

  Netns ns("nfttext");
  std::map<std::string, size_t> refused, unknown_by_reason;
  size_t loaded = 0, rules = 0, printed = 0, wrong = 0, multiline = 0;
  std::vector<std::string> wrong_examples;
  for (const auto& path : dumps) {
    const std::string name = path.substr(path.find("nftables-dumps/") + 15);
    // One shell per dump: flush, load, then both listings of the same state.
    RunResult r = run(ns.exec({"sh", "-c",
                               "nft flush ruleset && nft -f \"$1\" && nft list ruleset && echo @@json@@ && "
                               "nft -j list ruleset",
                               "sh", path}));
    if (r.exit_code != 0) {
      std::string why = r.err.substr(0, r.err.find('\n'));
      // "FILE:LINE:COL-COL: Error: what": keep the what.
      const auto e = why.find("Error: ");
      refused[e == std::string::npos ? why : why.substr(e + 7, 60)]++;
      continue;
    }
    ++loaded;
    const auto sep = r.out.find("@@json@@\n");
    ASSERT_NE(sep, std::string::npos) << name;
    const std::string text = r.out.substr(0, sep);
    const json doc = json::parse(r.out.substr(sep + 9));
    const NftTextRules want = nft_text_rules(text);
    multiline += want.multiline;
    std::map<NftChainKey, size_t> next;  // each chain's next rule
    for (const auto& item : doc.at("nftables")) {
      if (!item.contains("rule")) continue;
      const json& r = item["rule"];
      const NftChainKey key{r["family"], r["table"], r["chain"]};
      const size_t i = next[key]++;
      ++rules;
      const auto& lines = want.chains.count(key) ? want.chains.at(key) : std::vector<std::string>{};
      ASSERT_LT(i, lines.size()) << name << ": nft -j lists more rules than nft list in " << r["chain"];
      importer::NftRuleText t = importer::nft_rule_text(r["expr"], r["family"], r.value("comment", ""));
      if (!t.unknown.empty()) {
        unknown_by_reason[t.unknown.substr(0, 60)]++;
        continue;
      }
      ++printed;
      if (t.text != lines[i]) {
        ++wrong;
        if (wrong_examples.size() < 25) wrong_examples.push_back(name + ": nft: " + lines[i] + "\n      ours: " + t.text);
      }
    }
  }
  ns.sh("nft flush ruleset");

  std::string report = "nftables-dumps: " + std::to_string(dumps.size()) + " dumps, " + std::to_string(loaded) +
                       " loaded by this nft; " + std::to_string(rules) + " rules, " + std::to_string(printed) +
                       " printed (" + std::to_string(rules ? printed * 100 / rules : 0) + "%), " + std::to_string(wrong) +
                       " wrong; " + std::to_string(multiline) + " chain-binding rules\n";
  report += "refused by nft -f here:\n";
  for (const auto& [why, n] : refused) report += "  " + std::to_string(n) + "  " + why + "\n";
  report += "not printed (the printer does not know them yet):\n";
  for (const auto& [why, n] : unknown_by_reason) report += "  " + std::to_string(n) + "  " + why + "\n";
  std::cout << report;
  for (const auto& w : wrong_examples) ADD_FAILURE() << w;

  EXPECT_EQ(wrong, 0u) << "a printed rule text must be nft's own";
  EXPECT_GE(loaded, 300u);
  EXPECT_GE(rules, 500u);
  // A ratchet, not the goal (100%): raise it as the printer learns statements.
  EXPECT_GE(printed * 100, rules * 98) << report;
}

}  // namespace
}  // namespace dpscope::test
