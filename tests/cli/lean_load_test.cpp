// Reports load snapshots with analysis::rule_detail_for, keeping only the
// rules analysis reads (KUBE-SERVICES in full, the per-service chains' jumps).
// If analysis ever reads a rule field the filter drops, these reports would
// differ from the ones made from a fully loaded snapshot: that is the test.
#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "analysis/check.h"
#include "analysis/scale.h"
#include "inputs/inputs.h"
#include "model/json.h"
#include "reports/comparison.h"
#include "reports/render.h"
#include "reports/services_view.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

const model::LoadOptions kLean{analysis::rule_detail_for};

// A kube-proxy node of `services` services x `endpoints` endpoints in
// kube-proxy's own structure (KUBE-SVC/SEP/EXT/FW/SVL, NodePorts), imported.
std::string generated_node(TempDir& dir, int services, int endpoints) {
  const std::string save = dir.file("node-" + std::to_string(services) + ".txt");
  const std::string out = dir.file("node-" + std::to_string(services) + ".json");
  auto g = sh("sh " + source_path("fixtures/scenarios/gen-kube-proxy.sh") + " iptables " + std::to_string(services) +
              " " + std::to_string(endpoints) + " > " + save);
  EXPECT_EQ(g.exit_code, 0) << g.err;
  auto r = run({dpscope_bin(), "import", "--iptables-save", save, "--node", "gen-" + std::to_string(services), "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

void expect_same_reports(const std::vector<std::string>& paths) {
  std::vector<model::Snapshot> full, lean = inputs::load_snapshots(paths, kLean);
  for (const auto& p : paths) full.push_back(model::load_snapshot(p));
  size_t dropped = 0;
  for (const auto& s : lean) {
    for (const auto& t : s.netfilter.tables) {
      for (const auto& c : t.chains) dropped += c.rules_recorded ? 0 : c.rule_count;
    }
  }
  std::vector<reports::SideInput> full_sides, lean_sides;
  for (size_t i = 0; i < paths.size(); ++i) {
    full_sides.push_back({"", paths[i], &full[i]});
    lean_sides.push_back({"", paths[i], &lean[i]});
  }
  for (auto f : {reports::Format::Text, reports::Format::Json, reports::Format::Html}) {
    EXPECT_EQ(reports::render(reports::compare(lean_sides), f), reports::render(reports::compare(full_sides), f));
  }
  EXPECT_EQ(reports::render_services(reports::services_view(lean_sides), reports::Format::Json),
            reports::render_services(reports::services_view(full_sides), reports::Format::Json));
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto a = analysis::fit_scale(lean[i]), b = analysis::fit_scale(full[i]);
    EXPECT_EQ(a.fitted, b.fitted);
    EXPECT_EQ(a.rules_per_service, b.rules_per_service);
    EXPECT_EQ(a.rules_per_endpoint, b.rules_per_endpoint);
    EXPECT_EQ(a.base_rules, b.base_rules);
    for (const auto& expect : analysis::check_expectations()) {
      const auto x = analysis::check(lean[i], expect), y = analysis::check(full[i], expect);
      ASSERT_EQ(x.problems.size(), y.problems.size()) << expect;
      for (size_t k = 0; k < x.problems.size(); ++k) EXPECT_EQ(x.problems[k].message, y.problems[k].message);
    }
  }
  EXPECT_GT(dropped, 0u);  // the lean load left something out, so the comparison means something
}

TEST(LeanLoad, GeneratedKubeProxyNodesGiveTheSameReports) {
  TempDir dir;
  const std::string a = generated_node(dir, 300, 3), b = generated_node(dir, 120, 5);
  // The lean load really drops most rules (the KUBE-SEP chains' DNAT/masquerade pairs).
  const model::Snapshot lean = model::load_snapshot(a, kLean);
  uint64_t held = 0, total = 0;
  for (const auto& t : lean.netfilter.tables) {
    for (const auto& c : t.chains) {
      held += c.rules.size();
      total += c.rule_count;
    }
  }
  EXPECT_LT(held * 2, total) << held << " of " << total;
  expect_same_reports({a, b});
  expect_same_reports({a, source_path("fixtures/snapshots/kind-cilium-kpr.json")});
}

TEST(LeanLoad, KindPairAndClustersGiveTheSameReports) {
  expect_same_reports({source_path("fixtures/snapshots/kind-kube-proxy.json"),
                       source_path("fixtures/snapshots/kind-cilium-kpr.json")});
  const std::string c = "fixtures/snapshots/clusters/";
  expect_same_reports({source_path(c + "kind/kind-control-plane.json"), source_path(c + "kind/kind-worker.json"),
                       source_path(c + "kind/kind-worker2.json"),
                       source_path(c + "dotoryeee-cilium/dotoryeee-cilium-worker.json")});
}

}  // namespace
}  // namespace dpscope::test
