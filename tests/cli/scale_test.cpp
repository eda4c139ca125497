// dpscope scale: the fitted model reproduces the snapshot at its own size, and
// doubling services and endpoints adds exactly the service rules counted in
// the fixture text; the eBPF side's slots come from the eBPF fixture.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/iptables_counts.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

json scale(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {dpscope_bin(), "scale", source_path("fixtures/snapshots/kind-kube-proxy.json"),
                                   source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--format", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(ScaleProjection, ReproducesTheSnapshotAndGrowsByItsServiceRules) {
  std::string text = read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt"));
  auto counts = count_iptables_save(text);
  // Rules that exist because of services: dispatch rules to KUBE-SVC, and every KUBE-SVC / KUBE-SEP rule.
  int service_rules = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if ((line.rfind("-A KUBE-SERVICES ", 0) == 0 && line.find("-j KUBE-SVC-") != std::string::npos) ||
        line.rfind("-A KUBE-SVC-", 0) == 0 || line.rfind("-A KUBE-SEP-", 0) == 0) {
      ++service_rules;
    }
  }
  json same = scale({"--services", "5", "--endpoints", "8"});
  EXPECT_EQ(same["nodes"][0]["projection"][0]["rules"], counts.rules);
  json twice = scale({"--services", "10", "--endpoints", "16"});
  EXPECT_EQ(twice["nodes"][0]["projection"][0]["rules"].get<int>(), counts.rules + service_rules);
  EXPECT_FALSE(twice["nodes"][1]["fitted"]);
  json ebpf = json::parse(read_text(source_path("fixtures/scenarios/kind-cilium-kpr.ebpf.json")));
  size_t slots = ebpf["ebpf"]["services"][0]["frontends"].size() + ebpf["ebpf"]["services"][0]["backends"].size();
  EXPECT_EQ(twice["nodes"][1]["ebpf"]["lb_slots_used"], slots);
  EXPECT_EQ(twice["nodes"][1]["ebpf"]["lb_slots_max"], 65536);
}

TEST(ScaleProjection, UsageErrors) {
  auto r = run({dpscope_bin(), "scale", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--services", "10"});
  EXPECT_EQ(r.exit_code, 2);
  auto f = run({dpscope_bin(), "scale", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--format", "xml"});
  EXPECT_EQ(f.exit_code, 2);
}

}  // namespace
}  // namespace dpscope::test
