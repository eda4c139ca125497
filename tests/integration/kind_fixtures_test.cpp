// The kind pair loads into a real network namespace with the real
// iptables-restore, on both backends, and iptables-save prints back what the
// fixture holds (counts derived from the text on both sides).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/iptables_counts.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

struct KindCase {
  const char* fixture;
  int rules, kube_chains, kube_svc, kube_sep, cilium, service_ip_rules;  // the seed's headline figures
};

const KindCase kCases[] = {
    {"fixtures/scenarios/kind-kube-proxy.iptables-save.txt", 67, 30, 5, 8, 0, 5},
    {"fixtures/scenarios/kind-cilium-kpr.iptables-save.txt", 41, 5, 0, 0, 10, 0},
};

class KindFixtureLoads : public ::testing::TestWithParam<std::tuple<KindCase, std::string>> {};

TEST_P(KindFixtureLoads, RestoreThenSaveKeepsEveryCount) {
  DPS_REQUIRE_ROOT();
  const auto& [kc, backend] = GetParam();
  std::string text = read_text(source_path(kc.fixture));
  IptablesTextCounts want = count_iptables_save(text);
  // The fixture's own text carries the seed figures (guards the fixture itself).
  EXPECT_EQ(want.rules, kc.rules);
  EXPECT_EQ(want.kube_chains, kc.kube_chains);
  EXPECT_EQ(want.kube_svc_chains, kc.kube_svc);
  EXPECT_EQ(want.kube_sep_chains, kc.kube_sep);
  EXPECT_EQ(want.cilium_chains, kc.cilium);
  EXPECT_EQ(want.service_ip_rules, kc.service_ip_rules);

  Netns ns("kind");
  ns.sh("iptables-" + backend + "-restore", text);
  std::string saved = ns.sh("iptables-" + backend + "-save");
  IptablesTextCounts got = count_iptables_save(saved);
  EXPECT_EQ(got.rules_per_table, want.rules_per_table) << saved;
  EXPECT_EQ(got.chains_per_table, want.chains_per_table);
  EXPECT_EQ(got, want);

  // dpscope's import of what the kernel printed agrees with the text's counts.
  // Every netfilter part in the input (the other backend's save and nft -j),
  // so the totals are the namespace's, not those of one input.
  TempDir dir;
  const std::string other = backend == "nft" ? "legacy" : "nft";
  write_text(dir.file("saved.txt"), saved);
  write_text(dir.file("other.txt"), ns.sh("iptables-" + other + "-save"));
  write_text(dir.file("nft.json"), ns.sh("nft -j list ruleset"));
  // An empty save says nothing of its backend: the option does.
  auto imp = run({dpscope_bin(), "import", "--iptables-save", dir.file("saved.txt"),
                  other == "legacy" ? "--iptables-legacy-save" : "--iptables-save", dir.file("other.txt"),
                  "--nft-json", dir.file("nft.json"), "-o", dir.file("snap.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  auto cmp = run({dpscope_bin(), "compare", dir.file("snap.json"), dir.file("snap.json"), "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  auto report = nlohmann::json::parse(cmp.out);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& r : report["rows"]) rows[r["id"]] = r["values"][0];
  EXPECT_EQ(rows["netfilter.rules"], got.rules);
  EXPECT_EQ(rows["netfilter.chains.kube"], got.kube_chains);
  EXPECT_EQ(rows["netfilter.chains.kube_svc"], got.kube_svc_chains);
  EXPECT_EQ(rows["netfilter.chains.kube_sep"], got.kube_sep_chains);
  EXPECT_EQ(rows["netfilter.chains.cilium"], got.cilium_chains);
  EXPECT_EQ(rows["netfilter.service_ip_rules"], got.service_ip_rules);
  std::string b = backend == "nft" ? "iptables-nft" : "iptables-legacy";
  for (const auto& [table, n] : got.rules_per_table) {
    EXPECT_EQ(rows["netfilter.table." + b + ".ip." + table + ".rules"], n) << table;
  }
}

// The demo snapshots import each kind node's iptables-legacy-save and nft -j
// output beside its iptables-save text (fixtures/snapshots/regenerate.sh):
// those files are what the tools print for the fixture loaded the way the
// fixture header says it was made.
TEST(KindFixtureInputs, LegacySaveAndNftJsonAreWhatTheToolsPrint) {
  DPS_REQUIRE_ROOT();
  for (const std::string node : {"kube-proxy", "cilium-kpr"}) {
    SCOPED_TRACE(node);
    const std::string base = "fixtures/scenarios/kind-" + node;
    Netns ns("kindin");
    ns.sh("iptables-nft-restore", read_text(source_path(base + ".iptables-save.txt")));
    EXPECT_EQ(ns.sh("iptables-legacy-save"), "");
    const std::string legacy = read_text(source_path(base + ".iptables-legacy-save.txt"));
    for (size_t at = 0; at < legacy.size(); at = legacy.find('\n', at) + 1) {
      EXPECT_EQ(legacy[at], '#') << "the legacy input holds only comments";
      if (legacy.find('\n', at) == std::string::npos) break;
    }
    auto printed = nlohmann::json::parse(ns.sh("nft -j list ruleset"));
    auto committed = nlohmann::json::parse(read_text(source_path(base + ".nft.json")));
    EXPECT_EQ(printed, committed);
  }
}

INSTANTIATE_TEST_SUITE_P(Kind, KindFixtureLoads,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values("nft", "legacy")),
                         [](const auto& info) {
                           std::string f = std::get<0>(info.param).fixture;
                           bool kp = f.find("kube-proxy") != std::string::npos;
                           return std::string(kp ? "KubeProxy_" : "CiliumKpr_") + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace dpscope::test
