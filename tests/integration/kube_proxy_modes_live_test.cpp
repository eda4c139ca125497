// One cluster state, programmed by an unmodified kube-proxy v1.30.3 in iptables
// mode and in nftables mode (fixtures/upstream/real-kube-proxy/, SOURCES.md:
// 300 and 3,000 Services with Services without endpoints, externalTrafficPolicy
// and internalTrafficPolicy Local, only-terminating endpoints, unnamed ports,
// session affinity, NodePorts, LoadBalancers), loaded into two dps-* namespaces
// with iptables-nft-restore / ip6tables-nft-restore and nft -f. The two live
// snapshots show every Service with the same label and the same endpoints, and
// the per-Service rows of the live pair are the rows of the imported pair (the
// tools' text of the same state).
//
// Real kube-proxy output rather than a generated pair: a generator here would be
// our own model of kube-proxy, which is what the test is meant to check.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/kernel.h"
#include "tests/support/kube_proxy_nft.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

std::string zcat(const std::string& fixture) {
  RunResult r = sh("zstd -dc '" + source_path(fixture) + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::string live_snapshot(const Netns& ns, const TempDir& dir, const std::string& node) {
  const std::string out = dir.file(node + ".json");
  RunResult r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--node", node, "--no-ebpf", "--no-agents", "-q",
                     "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

json service_rows(const std::string& a, const std::string& b) {
  RunResult r = run({dpscope_bin(), "compare", a, b, "--services", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["services"];
}

class KubeProxyModesLive : public ::testing::TestWithParam<std::pair<const char*, size_t>> {};

TEST_P(KubeProxyModesLive, EveryServiceRowEqualAcrossTheTwoLiveNodes) {
  DPS_REQUIRE_ROOT();
  const auto [size, rows] = GetParam();
  const std::string up = "fixtures/upstream/real-kube-proxy/";
  const std::string v4 = zcat(up + "iptables-" + size + "/iptables-save.txt.zst");
  const std::string v6 = zcat(up + "iptables-" + size + "/ip6tables-save.txt.zst");
  Netns ipt_ns("kpm-ipt"), nft_ns("kpm-nft");
  ipt_ns.sh("iptables-nft-restore", v4);
  ipt_ns.sh("ip6tables-nft-restore", v6);
  load_kube_proxy_nft(nft_ns, up + "nftables-" + size + "/nft-ruleset.txt.zst");

  TempDir dir;
  const std::string ipt_live = live_snapshot(ipt_ns, dir, "iptables-node");
  const std::string nft_live = live_snapshot(nft_ns, dir, "nftables-node");
  const std::string ipt_import = dir.file("ipt-import.json"), nft_import = dir.file("nft-import.json");
  write_text(dir.file("v4.txt"), v4);
  write_text(dir.file("v6.txt"), v6);
  ASSERT_EQ(run({dpscope_bin(), "import", "--iptables-save", dir.file("v4.txt"), "--ip6tables-save", dir.file("v6.txt"),
                 "-o", ipt_import})
                .exit_code,
            0);
  ASSERT_EQ(run({dpscope_bin(), "import", "--nft-json", source_path(up + "nftables-" + size + "/nft-ruleset.json.zst"),
                 "-o", nft_import})
                .exit_code,
            0);

  const json live = service_rows(ipt_live, nft_live);
  ASSERT_EQ(live.size(), rows);
  size_t differing = 0, endpoints = 0, unnamed = 0;
  for (const auto& r : live) {
    ASSERT_EQ(r["sides"].size(), 2u) << r.dump();
    // Every row is told, not just the first: which Services a node lacks says why.
    if (r["sides"][0].size() != 1 || r["sides"][1].size() != 1) {
      if (differing++ < 10) ADD_FAILURE() << "not one programming per node: " << r.dump();
      continue;
    }
    EXPECT_EQ(r["sides"][0][0]["dataplane"], "iptables");
    EXPECT_EQ(r["sides"][1][0]["dataplane"], "nftables");
    endpoints += r["sides"][0][0]["endpoints"].get<size_t>();
    unnamed += r["service"].get<std::string>().find(':') == std::string::npos;
    if (r["sides"][0][0]["endpoints"] != r["sides"][1][0]["endpoints"] && differing++ < 10) {
      ADD_FAILURE() << "endpoints differ between the live nodes: " << r.dump();
    }
  }
  // Rows from the live namespaces are the rows from the tools' text of the same state.
  EXPECT_EQ(live, service_rows(ipt_import, nft_import));
  std::printf("%s: %zu Service rows equal across the live iptables-mode and nftables-mode nodes (%zu endpoints, "
              "%zu unnamed ports)\n",
              size, live.size(), endpoints, unnamed);
  EXPECT_GT(endpoints, live.size());
  EXPECT_GT(unnamed, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealKubeProxy, KubeProxyModesLive,
                         ::testing::Values(std::pair<const char*, size_t>{"300x5", 612},
                                           std::pair<const char*, size_t>{"3000x8", 5935}),
                         [](const auto& info) { return std::string("S") + (info.index == 0 ? "300x5" : "3000x8"); });

}  // namespace
}  // namespace dpscope::test
