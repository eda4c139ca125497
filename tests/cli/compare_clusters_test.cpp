// compare DIR_A DIR_B: two 3-node clusters, one drifting node each. Totals and
// min/median/max are checked against the per-node reports of the same files;
// the output in every format equals the goldens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const char* kKind = "fixtures/snapshots/clusters/kind";
const char* kCilium = "fixtures/snapshots/clusters/dotoryeee-cilium";

json row(const json& report, const std::string& id) { return report_row(report, id); }

TEST(CompareClusters, FoldersAreCurrent) {
  TempDir dir;
  auto r = run({source_path("fixtures/snapshots/clusters/make.sh"), dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"kind/kind-control-plane.json", "kind/kind-worker.json", "kind/kind-worker2.json",
                        "dotoryeee-cilium/dotoryeee-cilium-control-plane.json",
                        "dotoryeee-cilium/dotoryeee-cilium-worker.json",
                        "dotoryeee-cilium/dotoryeee-cilium-worker2.json"}) {
    EXPECT_EQ(json::parse(read_text(dir.file(f))),
              json::parse(read_text(source_path(std::string("fixtures/snapshots/clusters/") + f))))
        << f << ": run fixtures/snapshots/clusters/make.sh";
  }
}

TEST(CompareClusters, TotalsAndSpreadFromTheNodes) {
  auto r = dpscope_in_source(std::string("compare ") + kKind + " " + kCilium + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  EXPECT_EQ(row(report, "cluster.nodes")["values"], json::array({3, 3}));
  for (int ci = 0; ci < 2; ++ci) {
    std::string dir = ci == 0 ? kKind : kCilium;
    auto nodes = dpscope_in_source("compare " + dir + "/*.json --format json");
    ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
    json per_node = json::parse(nodes.out);
    for (const char* id : {"netfilter.rules.iptables", "netfilter.chains.kube_svc", "netfilter.service_ip_rules",
                           "ebpf.cilium.frontends"}) {
      std::vector<uint64_t> v;
      bool all_numbers = true;
      const json values = row(per_node, id)["values"];  // a named copy: row() returns a temporary
      for (const auto& x : values) {
        if (!x.is_number()) all_numbers = false;
        if (x.is_number()) v.push_back(x.get<uint64_t>());
      }
      std::string base = std::string("cluster.") + id;
      if (!all_numbers) {
        EXPECT_TRUE(row(report, base + ".total")["values"][ci].is_null()) << id;
        continue;
      }
      std::sort(v.begin(), v.end());
      uint64_t total = 0;
      for (auto n : v) total += n;
      EXPECT_EQ(row(report, base + ".total")["values"][ci], total) << id;
      EXPECT_EQ(row(report, base + ".min")["values"][ci], v.front()) << id;
      EXPECT_EQ(row(report, base + ".median")["values"][ci], v[1]) << id;
      EXPECT_EQ(row(report, base + ".max")["values"][ci], v.back()) << id;
    }
  }
  EXPECT_EQ(row(report, "cluster.drifting_nodes")["values"], json::array({1, 1}));
  std::string findings = report["findings"].dump();
  EXPECT_NE(findings.find("kind-worker2"), std::string::npos) << findings;
  EXPECT_NE(findings.find("10.96.218.179"), std::string::npos) << findings;
  EXPECT_NE(findings.find("dotoryeee-cilium-worker2: mode kube-proxy-iptables"), std::string::npos) << findings;
  EXPECT_EQ(report["sides"][1]["mode"], "cilium-kpr");
}

class CompareClustersGolden : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(CompareClustersGolden, MatchesGolden) {
  auto [format, golden] = GetParam();
  auto r = dpscope_in_source(std::string("compare ") + kKind + " " + kCilium + " --format " + format);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(format, golden, r.out);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompareClustersGolden,
                         ::testing::Values(std::make_pair("text", "compare-clusters.txt"),
                                           std::make_pair("markdown", "compare-clusters.md"),
                                           std::make_pair("json", "compare-clusters.json"),
                                           std::make_pair("csv", "compare-clusters.csv"),
                                           std::make_pair("html", "compare-clusters.html")),
                         [](const auto& info) { return std::string(info.param.first); });

TEST(CompareClusters, FoldersAndFilesDoNotMix) {
  auto r = dpscope_in_source(std::string("compare ") + kKind + " fixtures/snapshots/kind-cilium-kpr.json");
  EXPECT_EQ(r.exit_code, 2);
  TempDir empty;
  auto e = dpscope_in_source(std::string("compare ") + kKind + " '" + empty.path() + "'");
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("no node snapshots (*.json, *.json.zst, *.json.gz)"), std::string::npos) << e.err;
}

}  // namespace
}  // namespace dpscope::test
