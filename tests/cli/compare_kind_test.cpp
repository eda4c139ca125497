// `dpscope compare` on the kind pair (the seed measurement): the committed
// snapshots are what regenerate.sh produces, the seed rows hold the figures
// derived from the fixture text, and the output in every format equals the
// golden files in tests/golden/ (JSON compared as data).
//
// To refresh the goldens after an intended change:
//   DPSCOPE_UPDATE_GOLDEN=1 build/tests/dpscope_cli_tests --gtest_filter='CompareKind*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/iptables_counts.h"
#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const char* kKubeProxy = "fixtures/snapshots/kind-kube-proxy.json";
const char* kCilium = "fixtures/snapshots/kind-cilium-kpr.json";

json row(const json& report, const std::string& id) { return report_row(report, id); }

json without_volatile(json snapshot) {
  snapshot["node"].erase("taken_at");
  return snapshot;
}

TEST(CompareKind, CommittedSnapshotsAreRegenerable) {
  TempDir dir;
  auto r = run({source_path("fixtures/snapshots/regenerate.sh"), dpscope_bin(), dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"kind-kube-proxy.json", "kind-cilium-kpr.json"}) {
    json fresh = json::parse(read_text(dir.file(name)));
    json committed = json::parse(read_text(source_path(std::string("fixtures/snapshots/") + name)));
    EXPECT_EQ(without_volatile(fresh), without_volatile(committed))
        << name << " differs: run fixtures/snapshots/regenerate.sh and commit the result";
  }
}

TEST(CompareKind, SeedRowsMatchTheFixtureText) {
  auto r = dpscope_in_source(std::string("compare ") + kKubeProxy + " " + kCilium + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  auto kp = count_iptables_save(read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt")));
  auto cil = count_iptables_save(read_text(source_path("fixtures/scenarios/kind-cilium-kpr.iptables-save.txt")));
  EXPECT_EQ(row(report, "netfilter.rules.iptables")["values"], json::array({kp.rules, cil.rules}));
  EXPECT_EQ(row(report, "netfilter.rules")["values"], json::array({kp.rules, cil.rules}));
  EXPECT_EQ(row(report, "netfilter.chains.kube")["values"], json::array({kp.kube_chains, cil.kube_chains}));
  EXPECT_EQ(row(report, "netfilter.chains.kube_svc")["values"],
            json::array({kp.kube_svc_chains, cil.kube_svc_chains}));
  EXPECT_EQ(row(report, "netfilter.chains.kube_sep")["values"],
            json::array({kp.kube_sep_chains, cil.kube_sep_chains}));
  EXPECT_EQ(row(report, "netfilter.chains.cilium")["values"], json::array({kp.cilium_chains, cil.cilium_chains}));
  EXPECT_EQ(row(report, "netfilter.service_ip_rules")["values"],
            json::array({kp.service_ip_rules, cil.service_ip_rules}));
  for (const auto& [table, n] : kp.rules_per_table) {
    EXPECT_EQ(row(report, "netfilter.table.iptables-nft.ip." + table + ".rules")["values"][0], n) << table;
  }
  // The seed measurement itself: 5 vs 0, 8 vs 0, 0 vs 10, present vs none.
  EXPECT_EQ(row(report, "netfilter.chains.kube_svc")["values"], json::array({5, 0}));
  EXPECT_EQ(row(report, "netfilter.chains.kube_sep")["values"], json::array({8, 0}));
  EXPECT_EQ(row(report, "netfilter.chains.cilium")["values"], json::array({0, 10}));
  EXPECT_EQ(row(report, "netfilter.rules.iptables")["values"], json::array({67, 41}));
  EXPECT_EQ(row(report, "netfilter.chains.kube")["values"], json::array({30, 5}));
  EXPECT_EQ(report["sides"][0]["mode"], "kube-proxy-iptables");
  EXPECT_EQ(report["sides"][1]["mode"], "cilium-kpr");
  // The ClusterIPs live only in the eBPF service map on the Cilium node.
  EXPECT_EQ(row(report, "ebpf.cilium.frontends")["values"][1], 6);
  EXPECT_TRUE(row(report, "ebpf.programs")["values"][0].is_null());  // not collected, not 0
  auto text = dpscope_in_source(std::string("compare ") + kKubeProxy + " " + kCilium);
  EXPECT_NE(text.out.find("present (5)"), std::string::npos);
  EXPECT_NE(text.out.find("none"), std::string::npos);
}

struct GoldenCase {
  const char* format;
  const char* golden;
};

class CompareKindGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CompareKindGolden, MatchesGolden) {
  const auto& g = GetParam();
  auto r = dpscope_in_source(std::string("compare ") + kKubeProxy + " " + kCilium + " --format " + g.format);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(g.format, g.golden, r.out);
  // -o writes the same bytes, and nothing on stdout.
  TempDir dir;
  auto o = dpscope_in_source(std::string("compare ") + kKubeProxy + " " + kCilium + " --format " + g.format +
                             " -o '" + dir.file("out") + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(read_text(dir.file("out")), r.out);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompareKindGolden,
                         ::testing::Values(GoldenCase{"text", "compare-kind.txt"},
                                           GoldenCase{"markdown", "compare-kind.md"},
                                           GoldenCase{"json", "compare-kind.json"},
                                           GoldenCase{"csv", "compare-kind.csv"},
                                           GoldenCase{"html", "compare-kind.html"}),
                         [](const auto& info) { return std::string(info.param.format); });

TEST(CompareKind, LabelsNameTheSides) {
  auto r = dpscope_in_source(std::string("compare ") + kKubeProxy + " " + kCilium +
                             " --label kube-proxy --label cilium --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  EXPECT_EQ(report["sides"][0]["label"], "kube-proxy");
  EXPECT_EQ(report["sides"][1]["label"], "cilium");
  EXPECT_EQ(report["sides"][0]["node"], "kind-worker");
}

TEST(CompareKind, BadUsageAndInputExitTwoWithoutWritingOutput) {
  TempDir dir;
  std::string out = dir.file("report.txt");
  write_text(dir.file("broken.json"), "{\"schema\": \"dpscope.snapshot/v1\", \"node\": ");
  write_text(dir.file("v9.json"), "{\"schema\": \"dpscope.snapshot/v9\"}");
  struct Case {
    std::string args;
    std::string message;
  };
  std::vector<Case> cases = {
      // One snapshot alone is a one-node report (output_hygiene_test.cpp); the same label twice is not.
      {std::string("compare ") + kKubeProxy + " " + kCilium + " --label a --label a", "given twice"},
      {std::string("compare ") + kKubeProxy + " " + kCilium + " --format yaml", "unknown format"},
      {std::string("compare ") + kKubeProxy + " " + kCilium + " --label a --label b --label c", "--label"},
      {std::string("compare ") + kKubeProxy + " /nonexistent/x.json", "/nonexistent/x.json"},
      {std::string("compare ") + kKubeProxy + " '" + dir.file("broken.json") + "'", "broken.json"},
      {std::string("compare ") + kKubeProxy + " '" + dir.file("v9.json") + "'", "schema"},
  };
  for (const auto& c : cases) {
    auto r = dpscope_in_source(c.args + " -o '" + out + "'");
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(run({"test", "-e", out}).exit_code, 1) << "output written despite: " << c.args;
  }
}

}  // namespace
}  // namespace dpscope::test
