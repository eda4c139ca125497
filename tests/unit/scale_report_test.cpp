// The scale report and chart: every projected number is the one
// analysis::fit_scale / project_rules give for the kind fixtures (computed
// here, not typed), in every format; sides without a fit get a sentence.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/analysis.h"
#include "analysis/scale.h"
#include "model/json.h"
#include "reports/scale_report.h"
#include "tests/support/process.h"

namespace dpscope::reports {
namespace {

using test::source_path;

struct Fixture {
  model::Snapshot kube_proxy = model::load_snapshot(source_path("fixtures/snapshots/kind-kube-proxy.json"));
  model::Snapshot cilium = model::load_snapshot(source_path("fixtures/snapshots/kind-cilium-kpr.json"));
  std::vector<ScaleSide> sides = {scale_side(kube_proxy, "kp", "kp.json"), scale_side(cilium, "kpr", "kpr.json")};
};

TEST(ScaleReport, ChartPointsAreTheFitProjected) {
  Fixture f;
  const analysis::ScaleModel m = analysis::fit_scale(f.kube_proxy);
  ASSERT_TRUE(m.fitted);
  ASSERT_FALSE(f.sides[1].model.fitted);
  auto points = chart_points(f.sides[0], 0, 0);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(points[0].services, m.services);
  EXPECT_EQ(rules_at(f.sides[0], points[0]), m.rules);
  std::string page = scale_charts_html(f.sides, legend_of(f.sides));
  for (size_t i = 1; i < points.size(); ++i) {
    const uint64_t n = points[i].services;
    const uint64_t e = n * m.endpoints / m.services;
    EXPECT_EQ(points[i].endpoints, e);
    const uint64_t rules = analysis::project_rules(m, n, e);
    EXPECT_EQ(rules_at(f.sides[0], points[i]), rules);
    EXPECT_NE(page.find(">" + std::to_string(rules) + " iptables rules</span>"), std::string::npos) << n;
  }
  EXPECT_EQ(points[1].services, 1000u);
  EXPECT_EQ(points[4].services, 20000u);
  // The side without a fit says why, in words.
  EXPECT_NE(page.find("no iptables projection: " + f.sides[1].model.why_not), std::string::npos);
}

TEST(ScaleReport, EbpfSlotsFollowTheServiceMapsOwnBackendsPerFrontend) {
  Fixture f;
  const analysis::ScaleModel m = analysis::fit_scale(f.cilium);
  ASSERT_TRUE(m.has_lb_map);
  const analysis::NodeAnalysis node = analysis::analyze(f.cilium);
  const analysis::LbSummary* lb = node.ebpf.lb_of("cilium");
  ASSERT_NE(lb, nullptr);
  ASSERT_GT(lb->frontends, 0u);
  std::string page = scale_charts_html(f.sides, legend_of(f.sides));
  EXPECT_NE(page.find(">" + std::to_string(m.lb_slots_used) + " slots</span>"), std::string::npos);
  EXPECT_NE(page.find(">" + std::to_string(m.lb_slots_max) + " slots</span>"), std::string::npos);
  for (uint64_t n : {1000, 5000, 10000, 20000}) {
    uint64_t backends = static_cast<uint64_t>(std::llround(static_cast<double>(n * lb->backends) / lb->frontends));
    uint64_t slots = n + backends;
    std::string text = std::to_string(slots) + (slots > m.lb_slots_max ? " slots: exceeds" : " slots");
    EXPECT_NE(page.find(">" + text + "</span>"), std::string::npos) << n << " " << text;
  }
}

TEST(ScaleReport, MarkdownAndHtmlTablesHoldTheProjection) {
  Fixture f;
  const analysis::ScaleModel m = analysis::fit_scale(f.kube_proxy);
  const std::string md = render_scale(f.sides, 0, 0, Format::Markdown);
  const std::string html = render_scale(f.sides, 0, 0, Format::Html);
  for (uint64_t n : {100, 1000, 10000}) {
    uint64_t e = n * m.endpoints / m.services;
    uint64_t rules = analysis::project_rules(m, n, e);
    EXPECT_NE(md.find("| " + std::to_string(n) + " | " + std::to_string(e) + " | " + std::to_string(rules) + " | " +
                      std::to_string(n + 1) + " |"),
              std::string::npos)
        << md;
    EXPECT_NE(html.find("<td class=\"n\">" + std::to_string(rules) + "</td>"), std::string::npos);
  }
  // An asked point goes into the tables of both sides and into the chart.
  const std::string asked = render_scale(f.sides, 30000, 70000, Format::Html);
  EXPECT_NE(asked.find("<td class=\"n\">" + std::to_string(analysis::project_rules(m, 30000, 70000)) + "</td>"),
            std::string::npos);
  EXPECT_NE(asked.find("<td class=\"n\">100000 / 65536</td><td class=\"n\">exceeds the map</td>"), std::string::npos);
  EXPECT_NE(asked.find(">30000 services, 70000 endpoints</th>"), std::string::npos);
}

TEST(ScaleReport, NoFitAndNoServiceMapIsASentence) {
  model::Snapshot empty;
  std::vector<ScaleSide> sides = {scale_side(empty, "bare", "bare.json")};
  std::string page = scale_charts_html(sides, legend_of(sides));
  EXPECT_EQ(page.find("<table class=\"chart\""), std::string::npos);
  EXPECT_NE(page.find("no iptables projection: " + sides[0].model.why_not), std::string::npos);
  EXPECT_NE(page.find("no Cilium eBPF service map"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::reports
