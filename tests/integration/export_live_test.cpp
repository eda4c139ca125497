// dpscope export of a live snapshot == what iptables-save prints for that
// state: real kube-proxy rulesets (v1.30.3, IPv4 and IPv6) and the iptables
// project's CT/TPROXY-style extension rules of kube-proxy's goldens, loaded
// with iptables-nft-restore and iptables-legacy-restore into a dps-* netns,
// snapshotted, exported per backend and family, and compared with
// iptables-nft-save / iptables-legacy-save / ip6tables-*-save of the same
// namespace. Header comments and counters aside; legacy-save's table order
// follows the kernel's module registration order, so legacy tables are
// compared as blocks.
#include <gtest/gtest.h>


#include "tests/support/kernel.h"
#include "tests/support/process.h"
#include "tests/support/save_text.h"

namespace dpscope::test {
namespace {

std::string zcat(const std::string& fixture) {
  RunResult r = sh("zstd -dc " + source_path(fixture));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(ExportLive, EqualsIptablesSaveOnBothBackendsAndFamilies) {
  DPS_REQUIRE_ROOT();
  Netns ns("export");
  const std::string v4 = zcat("fixtures/upstream/real-kube-proxy/iptables-300x5/iptables-save.txt.zst");
  const std::string v6 = zcat("fixtures/upstream/real-kube-proxy/iptables-300x5/ip6tables-save.txt.zst");
  const std::string golden =
      read_text(source_path("fixtures/upstream/kube-proxy-iptables/sort-basic-svl-localpolicy.saved-legacy.txt"));
  ns.sh("iptables-nft-restore", v4);
  ns.sh("ip6tables-nft-restore", v6);
  ns.sh("iptables-legacy-restore", golden);
  ns.sh("ip6tables-legacy-restore", v6);

  TempDir tmp;
  const std::string snap = tmp.file("live.json");
  RunResult s = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "-o", snap});
  ASSERT_EQ(s.exit_code, 0) << s.err;

  struct Want {
    const char* format;
    const char* backend;
    const char* tool;
  };
  for (const Want& w : {Want{"iptables-save", "nft", "iptables-nft-save"}, Want{"ip6tables-save", "nft", "ip6tables-nft-save"},
                        Want{"iptables-save", "legacy", "iptables-legacy-save"},
                        Want{"ip6tables-save", "legacy", "ip6tables-legacy-save"}}) {
    SCOPED_TRACE(std::string(w.tool));
    RunResult e = run({dpscope_bin(), "export", snap, "--format", w.format, "--backend", w.backend});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    const std::string tool = save_text_without_comments(ns.sh(w.tool), true);
    ASSERT_GT(tool.size(), 1000u);
    const std::string ours = save_text_without_comments(e.out, true);
    if (std::string(w.backend) == "nft") {
      EXPECT_EQ(ours, tool);
    } else {
      EXPECT_EQ(save_table_blocks(ours), save_table_blocks(tool));
    }
  }
}

}  // namespace
}  // namespace dpscope::test
