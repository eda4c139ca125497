// `dpscope snapshot` command-line conventions on a real kernel (issue 17):
// --node names a netns snapshot (it was named after the host, so two netns
// snapshots read "vm vs vm"), and the progress line appears only when stderr
// is a terminal (script(1) gives it a pty).
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

constexpr const char* kRuleset = R"(table inet dps_cli {
  chain input { type filter hook input priority 0; policy accept; tcp dport 22 accept; }
}
)";

TEST(SnapshotCli, NodeNamesANetnsSnapshot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  Netns ns("cli");
  ns.sh("nft -f -", kRuleset);
  TempDir dir;
  auto r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--node", "worker-7", "--no-ebpf", "--no-agents",
                "-o", dir.file("n.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = json::parse(read_text(dir.file("n.json")));
  EXPECT_EQ(s["node"]["name"], "worker-7");
  EXPECT_EQ(s["node"]["environment"], "netns:" + ns.name());
  // Without --node: the host's name, as before.
  auto host = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "--no-agents", "-q", "-o",
                   dir.file("h.json")});
  ASSERT_EQ(host.exit_code, 0) << host.err;
  utsname u{};
  uname(&u);
  EXPECT_EQ(json::parse(read_text(dir.file("h.json")))["node"]["name"], u.nodename);
  // Two netns snapshots with their own names compare as two nodes.
  auto cmp = run({dpscope_bin(), "compare", dir.file("h.json"), dir.file("n.json"), "--width", "0"});
  EXPECT_NE(cmp.out.find(std::string(u.nodename) + " vs worker-7"), std::string::npos) << cmp.out.substr(0, 300);
}

TEST(SnapshotCli, ProgressOnlyOnATerminal) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  if (run({"sh", "-c", "command -v script"}).exit_code != 0) GTEST_SKIP() << "script(1) not installed";
  Netns ns("progress");
  ns.sh("nft -f -", kRuleset);
  TempDir dir;
  const std::string cmd = dpscope_bin() + " snapshot --netns " + ns.name() + " --no-ebpf --no-agents -o " +
                          dir.file("n.json");
  auto tty = sh("script -qec \"" + cmd + "\" /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("dpscope: reading netfilter in netns " + ns.name()), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("dpscope: writing " + dir.file("n.json")), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("dpscope: netfilter: "), std::string::npos) << "the summary stays: " << tty.out;
  auto no_progress = sh("script -qec \"" + cmd + " --no-progress\" /dev/null");
  EXPECT_EQ(no_progress.out.find("dpscope: reading"), std::string::npos) << no_progress.out;
  EXPECT_NE(no_progress.out.find("dpscope: netfilter: "), std::string::npos) << no_progress.out;
  auto quiet = sh("script -qec \"" + cmd + " -q\" /dev/null");
  EXPECT_EQ(quiet.out.find("dpscope: "), std::string::npos) << quiet.out;
  auto pipe = run({"sh", "-c", cmd});
  EXPECT_EQ(pipe.exit_code, 0);
  EXPECT_EQ(pipe.err.find("reading"), std::string::npos) << pipe.err;
  EXPECT_EQ(pipe.err.find('\r'), std::string::npos) << pipe.err;
}

}  // namespace
}  // namespace dpscope::test
