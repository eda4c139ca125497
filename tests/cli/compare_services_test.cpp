// compare --services: each service port's rules on the iptables side counted
// independently from the fixture text (lines carrying its kube-proxy comment),
// and its frontend / backends on the eBPF side from the eBPF fixture.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

// "-A" lines whose comment is exactly NAME or starts with "NAME " (so
// kube-dns:dns does not count kube-dns:dns-tcp).
int comment_lines(const std::string& text, const std::string& name, const std::string& must_contain = "") {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("-A ", 0) != 0) continue;
    auto at = line.find("--comment \"" + name);
    if (at == std::string::npos) continue;
    char next = line[at + 11 + name.size()];
    if (next != ' ' && next != '"') continue;
    if (!must_contain.empty() && line.find(must_contain) == std::string::npos) continue;
    ++n;
  }
  return n;
}

TEST(CompareServices, RulesAndBackendsPerServicePort) {
  auto r = run({dpscope_bin(), "compare", source_path("fixtures/snapshots/kind-kube-proxy.json"),
                source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--services", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  std::string text = read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt"));
  json ebpf = json::parse(read_text(source_path("fixtures/scenarios/kind-cilium-kpr.ebpf.json")));
  int named = 0, total_rules = 0;
  for (const auto& s : j["services"]) {
    std::string name = s["service"];
    if (!name.empty()) {
      ++named;
      ASSERT_EQ(s["sides"][0].size(), 1u) << name;
      const auto& ipt = s["sides"][0][0];
      EXPECT_EQ(ipt["dataplane"], "iptables");
      EXPECT_EQ(ipt["rules"], comment_lines(text, name)) << name;
      EXPECT_EQ(ipt["endpoints"], comment_lines(text, name, "-j DNAT")) << name;
      total_rules += ipt["rules"].get<int>();
    }
    // eBPF side: the frontend with its backend count, or nothing.
    std::string addr = s["address"];
    int backends = -1;
    for (const auto& f : ebpf["ebpf"]["services"][0]["frontends"]) {
      std::string key = f["address"].get<std::string>() + ":" + std::to_string(f["port"].get<int>()) + "/" +
                        f["protocol"].get<std::string>();
      if (key == addr) backends = f["backends"];
    }
    if (backends < 0) {
      EXPECT_TRUE(s["sides"][1].empty()) << addr;
    } else {
      ASSERT_EQ(s["sides"][1].size(), 1u) << addr;
      EXPECT_EQ(s["sides"][1][0]["dataplane"], "cilium");
      EXPECT_EQ(s["sides"][1][0]["endpoints"], backends) << addr;
    }
  }
  EXPECT_EQ(named, 5);  // the seed's 5 service ports (KUBE-SVC chains)
  // Every KUBE-SERVICES service rule, KUBE-SVC and KUBE-SEP rule belongs to exactly one service port.
  EXPECT_EQ(total_rules, 5 + 13 + 16);
  EXPECT_EQ(j["services"].size(), 7u);  // + hubble-peer and the demo backend's own ClusterIP on the Cilium cluster
}

TEST(CompareServices, TextGolden) {
  auto r = sh("cd '" + source_path("") + "' && '" + dpscope_bin() +
              "' compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --services");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string path = source_path("tests/golden/compare-kind-services.txt");
  if (std::getenv("DPSCOPE_UPDATE_GOLDEN")) write_text(path, r.out);
  EXPECT_EQ(r.out, read_text(path));
}

}  // namespace
}  // namespace dpscope::test
