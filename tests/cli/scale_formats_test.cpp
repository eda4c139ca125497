// dpscope scale --format markdown|html: the tables hold exactly the points of
// the JSON form (which the text-fixture test in scale_test.cpp pins to the
// iptables-save text), and text/json keep their form.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

const std::string kPair = "scale fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json";

TEST(ScaleFormats, MarkdownAndHtmlTablesHoldTheJsonProjection) {
  for (const std::string extra : {"", " --services 20000 --endpoints 90000"}) {
    auto j = dpscope_in_source(kPair + extra + " --format json");
    auto md = dpscope_in_source(kPair + extra + " --format markdown");
    auto html = dpscope_in_source(kPair + extra + " --format html");
    ASSERT_EQ(j.exit_code, 0) << j.err;
    ASSERT_EQ(md.exit_code, 0) << md.err;
    ASSERT_EQ(html.exit_code, 0) << html.err;
    const nlohmann::json report = nlohmann::json::parse(j.out);
    size_t points = 0;
    for (const auto& node : report["nodes"]) {
      EXPECT_NE(md.out.find("## " + node["node"].get<std::string>()), std::string::npos);
      if (!node["fitted"].get<bool>()) {
        EXPECT_NE(md.out.find("not fitted: " + node["why_not"].get<std::string>()), std::string::npos);
        continue;
      }
      for (const auto& p : node["projection"]) {
        ++points;
        const std::string n = std::to_string(p["services"].get<uint64_t>());
        const std::string e = std::to_string(p["endpoints"].get<uint64_t>());
        const std::string rules = std::to_string(p["rules"].get<uint64_t>());
        const std::string walk = std::to_string(p["kube_services_walk_worst"].get<uint64_t>());
        EXPECT_NE(md.out.find("| " + n + " | " + e + " | " + rules + " | " + walk + " |"), std::string::npos)
            << extra << "\n" << md.out;
        EXPECT_NE(html.out.find("<td class=\"n\">" + n + "</td><td class=\"n\">" + e + "</td><td class=\"n\">" +
                                rules + "</td><td class=\"n\">" + walk + "</td>"),
                  std::string::npos)
            << extra;
      }
      if (node.contains("ebpf")) {
        const std::string slots_max = std::to_string(node["ebpf"]["lb_slots_max"].get<uint64_t>());
        EXPECT_NE(md.out.find(" / " + slots_max + " |"), std::string::npos);
      }
    }
    EXPECT_GT(points, 0u);
  }
}

TEST(ScaleFormats, CsvIsRefusedAndTextKeepsItsForm) {
  EXPECT_EQ(dpscope_in_source(kPair + " --format csv").exit_code, 2);
  auto text = dpscope_in_source(kPair);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("kind-worker (fixtures/snapshots/kind-kube-proxy.json)\n  iptables: rules = ", 0), 0u);
}

}  // namespace
}  // namespace dpscope::test
