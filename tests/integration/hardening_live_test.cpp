// Issue 18 on the real kernel: hostile names loaded into a namespace with
// `nft -j -f` render inert, and a gate whose section could not be read
// (a snapshot taken with CAP_NET_ADMIN only) does not pass.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/bpf_scenario.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

class HardeningLive : public ::testing::Test {
 protected:
  void SetUp() override { DPS_REQUIRE_ROOT(); }
};

bool raw_control(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) continue;
    if (c < 0x20 || c == 0x7f) return true;
  }
  return s.find("\u202e") != std::string::npos;
}

// ---- case 5: ESC and BEL in nft table, chain, set names and comments.
TEST_F(HardeningLive, HostileNftNamesAreInertInEveryReport) {
  Netns ns("hard");
  const std::string table = "t\\u001b]0;owned\\u0007";
  const std::string ruleset = R"({"nftables": [
    {"add": {"table": {"family": "inet", "name": ")" + table + R"("}}},
    {"add": {"chain": {"family": "inet", "table": ")" + table + R"(", "name": "c\u001b[2J\u202e", "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}},
    {"add": {"set": {"family": "inet", "table": ")" + table + R"(", "name": "s\u0007", "type": "ipv4_addr", "comment": "=HYPERLINK(\"http://x/\")\u001b[31m"}}},
    {"add": {"element": {"family": "inet", "table": ")" + table + R"(", "name": "s\u0007", "elem": ["10.96.0.10"]}}},
    {"add": {"rule": {"family": "inet", "table": ")" + table + R"(", "chain": "c\u001b[2J\u202e", "comment": "\u001b]0;x\u0007\u202eevil", "expr": [{"accept": null}]}}}
  ]})";
  ns.sh("nft -j -f -", ruleset);
  // The oracle: the kernel holds the control characters (nft prints them back).
  const std::string listed = ns.sh("nft -j list ruleset");
  ASSERT_NE(listed.find("\\u001B]0;owned\\u0007"), std::string::npos) << listed;

  TempDir dir;
  auto snap = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "-q", "-o", dir.file("node.json")});
  ASSERT_TRUE(snap.exit_code == 0 || snap.exit_code == 3) << snap.err;
  EXPECT_FALSE(raw_control(snap.err)) << snap.err;
  const std::string node = dir.file("node.json");
  const std::string other = source_path("fixtures/snapshots/kind-cilium-kpr.json");
  std::vector<std::vector<std::string>> commands;
  for (const char* f : {"text", "markdown", "csv", "html"}) {
    commands.push_back({dpscope_bin(), "compare", node, other, "--format", f});
    commands.push_back({dpscope_bin(), "compare", node, other, "--services", "--format", f});
  }
  for (const char* f : {"text", "markdown", "csv"}) {
    commands.push_back({dpscope_bin(), "check", node, "--expect", "kube-proxy-nftables", "--format", f});
    commands.push_back({dpscope_bin(), "where", "10.96.0.10", node, "--format", f});
  }
  commands.push_back({dpscope_bin(), "scale", node});
  bool shown = false;
  for (const auto& argv : commands) {
    SCOPED_TRACE(argv[1] + " " + argv.back());
    const auto r = run(argv);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    EXPECT_FALSE(raw_control(r.out)) << r.out.substr(0, 600);
    EXPECT_FALSE(raw_control(r.err)) << r.err;
    shown = shown || r.out.find("\\x1b]0;owned\\x07") != std::string::npos;
  }
  EXPECT_TRUE(shown) << "the hostile table name reached no report";
}

// ---- case 6: a ClusterIP in iptables and in Cilium's LB map; root sees the
// double programming, a CAP_NET_ADMIN-only snapshot cannot see eBPF.
TEST_F(HardeningLive, KubeProxyFreeGateDoesNotPassWithoutEbpf) {
  bpffix::Scenario sc;
  bpffix::load_double_programmed_cluster_ip(sc);
  TempDir dir;
  auto gate = [&](const std::string& file) {
    return run({dpscope_bin(), "check", dir.file(file), "--expect", "kube-proxy-free", "--format", "json"});
  };
  // Everything dpscope runs as: the bounding set keeps CAP_NET_ADMIN only.
  auto net_admin_only = [&](const std::string& file) {
    auto r = run(sc.ns.exec({"setpriv", "--bounding-set=-all,+net_admin", "--inh-caps=-all", dpscope_bin(), "snapshot",
                             "-q", "-o", "-"}));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    write_text(dir.file(file), r.out);
    const json s = json::parse(r.out);
    bool ebpf_unavailable = false;
    for (const auto& u : s["unavailable"]) {
      ebpf_unavailable = ebpf_unavailable || u["section"].get<std::string>().rfind("ebpf", 0) == 0;
    }
    EXPECT_TRUE(ebpf_unavailable) << s["unavailable"].dump(1);
  };
  auto root = run(sc.ns.exec({dpscope_bin(), "snapshot", "-q", "-o", dir.file("root.json")}));
  ASSERT_TRUE(root.exit_code == 0 || root.exit_code == 3) << root.err;
  auto full = gate("root.json");
  EXPECT_EQ(full.exit_code, 1) << full.out;
  EXPECT_NE(full.out.find("double-programmed"), std::string::npos) << full.out;
  net_admin_only("net_admin.json");
  auto limited = gate("net_admin.json");
  EXPECT_EQ(limited.exit_code, 1) << limited.out;
  EXPECT_NE(limited.out.find("section-unavailable"), std::string::npos) << limited.out;

  // kube-proxy's rules gone: root passes (the map alone replaces kube-proxy),
  // and the CAP_NET_ADMIN-only snapshot, which cannot see that map, must not.
  sc.ns.sh("iptables-nft -t nat -F && iptables-nft -t nat -X");
  root = run(sc.ns.exec({dpscope_bin(), "snapshot", "-q", "-o", dir.file("root2.json")}));
  ASSERT_TRUE(root.exit_code == 0 || root.exit_code == 3) << root.err;
  full = gate("root2.json");
  EXPECT_EQ(full.exit_code, 0) << full.out;
  net_admin_only("net_admin2.json");
  for (const char* format : {"text", "json"}) {
    auto r = run({dpscope_bin(), "check", dir.file("net_admin2.json"), "--expect", "kube-proxy-free", "--format", format});
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("section-unavailable"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace dpscope::test
