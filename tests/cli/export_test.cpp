// dpscope export: a snapshot's iptables tables back as iptables-save prints
// them. The oracle is the tools' own output: real kube-proxy v1.30.3 rulesets
// (iptables-save / ip6tables-save of a node) and kube-proxy's goldens as
// iptables-nft-save and iptables-legacy-save printed them; imported, then
// exported, each must come back line for line (header comments aside).
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/process.h"
#include "tests/support/save_text.h"

namespace dpscope::test {
namespace {

struct Case {
  std::string file;     // fixture, as the tool printed it
  std::string flag;     // import flag
  std::string format;   // export format
};

class ExportRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ExportRoundTrip, IsWhatTheToolPrinted) {
  const Case& c = GetParam();
  TempDir tmp;
  const std::string snap = tmp.file("node.json");
  RunResult imp = run({dpscope_bin(), "import", c.flag, source_path(c.file), "-o", snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  RunResult exp = run({dpscope_bin(), "export", snap, "--format", c.format});
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  // The tool's text (decompressed by zstd when the fixture is .zst).
  RunResult tool = sh((c.file.size() > 4 && c.file.substr(c.file.size() - 4) == ".zst" ? "zstd -dc " : "cat ") +
                      source_path(c.file));
  ASSERT_EQ(tool.exit_code, 0) << tool.err;
  const std::string want = save_text_without_comments(tool.out);
  ASSERT_GT(want.size(), 1000u);
  if (c.file.find("legacy") != std::string::npos) {
    EXPECT_EQ(save_table_blocks(save_text_without_comments(exp.out)), save_table_blocks(want));
  } else {
    EXPECT_EQ(save_text_without_comments(exp.out), want);
  }
  // The export says its backend the way iptables-save does, so it imports back
  // as the same snapshot's tables.
  const std::string again = tmp.file("again.json");
  write_text(tmp.file("exported.txt"), exp.out);
  RunResult reimp = run({dpscope_bin(), "import", c.flag, tmp.file("exported.txt"), "-o", again});
  ASSERT_EQ(reimp.exit_code, 0) << reimp.err;
  RunResult exp2 = run({dpscope_bin(), "export", again, "--format", c.format});
  ASSERT_EQ(exp2.exit_code, 0) << exp2.err;
  EXPECT_EQ(save_text_without_comments(exp2.out), save_text_without_comments(exp.out));
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, ExportRoundTrip,
    ::testing::Values(
        Case{"fixtures/upstream/real-kube-proxy/iptables-300x5/iptables-save.txt.zst", "--iptables-save", "iptables-save"},
        Case{"fixtures/upstream/real-kube-proxy/iptables-300x5/ip6tables-save.txt.zst", "--ip6tables-save",
             "ip6tables-save"},
        Case{"fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt", "--iptables-save",
             "iptables-save"},
        Case{"fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-legacy.txt", "--iptables-save",
             "iptables-save"},
        Case{"fixtures/upstream/kube-proxy-iptables/sort-basic-svl-localpolicy.saved-nft.txt", "--iptables-save",
             "iptables-save"}),
    [](const ::testing::TestParamInfo<Case>& info) { return "case" + std::to_string(info.index); });

TEST(Export, BothBackendsNeedBackend) {
  TempDir tmp;
  const std::string snap = tmp.file("both.json");
  const std::string dir = "fixtures/upstream/kube-proxy-iptables/";
  RunResult imp = run({dpscope_bin(), "import", "--iptables-save", source_path(dir + "overall-iptables-rules.saved-nft.txt"),
                       "--iptables-save", source_path(dir + "sort-basic-svl-localpolicy.saved-legacy.txt"), "-o", snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  RunResult r = run({dpscope_bin(), "export", snap});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("both iptables backends: choose one with --backend nft or --backend legacy"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
  for (auto [backend, fixture] : {std::pair{"nft", "overall-iptables-rules.saved-nft.txt"},
                                  std::pair{"legacy", "sort-basic-svl-localpolicy.saved-legacy.txt"}}) {
    RunResult one = run({dpscope_bin(), "export", snap, "--backend", backend});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(save_table_blocks(save_text_without_comments(one.out)), save_table_blocks(save_text_without_comments(read_text(source_path(dir + fixture)))))
        << backend;
  }
}

TEST(Export, NoTablesIsNothingAndSaysSo) {
  TempDir tmp;
  const std::string snap = tmp.file("v4.json");
  RunResult imp = run({dpscope_bin(), "import", "--iptables-save",
                       source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt"), "-o",
                       snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  RunResult r = run({dpscope_bin(), "export", snap, "--format", "ip6tables-save"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no iptables-nft ip6 tables"), std::string::npos) << r.err;
}

// Text that is not there is an error, never a shorter ruleset.
TEST(Export, RuleWithoutTextIsAnError) {
  TempDir tmp;
  const std::string snap = tmp.file("node.json");
  RunResult imp = run({dpscope_bin(), "import", "--iptables-save",
                       source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt"), "-o",
                       snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  // The same snapshot as a v1 file: rules without text.
  RunResult v1 = sh("jq -c '.schema = \"dpscope.snapshot/v1\" | del(.. | .text?)' " + snap + " > " + tmp.file("v1.json"));
  ASSERT_EQ(v1.exit_code, 0) << v1.err;
  ASSERT_EQ(read_text(tmp.file("v1.json")).find("\"text\":"), std::string::npos);
  RunResult r = run({dpscope_bin(), "export", tmp.file("v1.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no text (a dpscope.snapshot/v1 file"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Export, UnreadNetfilterIsAnError) {
  TempDir tmp;
  // An eBPF-only import: the netfilter section was not collected.
  const std::string snap = tmp.file("ebpf.json");
  RunResult imp = run({dpscope_bin(), "import", "--bpftool-prog",
                       source_path("fixtures/upstream/bpftool/cilium-prog_show.json"), "-o", snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  RunResult r = run({dpscope_bin(), "export", snap});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("netfilter"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Export, BadFormatIsUsage) {
  RunResult r = run({dpscope_bin(), "export", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--format", "nft-json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  r = run({dpscope_bin(), "export", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--format", "nft", "--backend", "nft"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format nft exports the native nftables tables"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpscope::test
