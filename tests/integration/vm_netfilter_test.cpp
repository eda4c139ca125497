// The live netfilter checks on a second kernel: Debian's 6.1 (tests/vm/vm.sh),
// with kube-proxy's own golden rulesets (fixtures/upstream/kube-proxy-iptables,
// kube-proxy-nftables; SOURCES.md) loaded by iptables-nft-restore and nft -f.
// The oracle is what iptables-nft-save and nft -j print about that state in the
// same VM: every rule's text equals the saved line, chain by chain; the live
// snapshot equals the import of the tools' text object by object; the state is
// unchanged afterwards. Also: a kernel without ip_set gives an empty ipsets
// section, not an unavailable one and not a module load; and flowtables,
// which this machine's kernel lacks, export as nft lists them.
// Skips loudly when qemu or the kernel package cannot be had.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "model/json.h"
#include "tests/integration/netfilter_support.h"
#include "tests/integration/vm_support.h"

namespace dpscope::test {
namespace {

// "table chain" -> the -A lines of that chain, in order.
std::map<std::string, std::vector<std::string>> saved_rules(const std::string& save) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    if (line.rfind("-A ", 0) == 0) out[table + " " + line.substr(3, line.find(' ', 3) - 3)].push_back(line);
  }
  return out;
}

TEST(VmNetfilter, KubeProxyRulesetsOnDebianKernelEqualTheTools) {
  DPS_REQUIRE_ROOT();
  for (const char* tool : {"nft", "iptables-nft-restore", "nfacct"}) {
    if (run({"sh", "-c", std::string("command -v ") + tool}).exit_code != 0)
      GTEST_SKIP() << "SKIPPED: netfilter VM tier: no " << tool << " here";
  }
  TempDir dir;
  DPS_RUN_VM("tests/vm/netfilter.sh",
             "VM_MODULES='nf_tables nft_compat nft_chain_nat nft_ct nft_nat nft_masq nft_reject_inet nft_reject_ipv4 "
             "nft_numgen nft_fib_ipv4 nft_fib_inet nft_limit nfnetlink_acct xt_nfacct xt_comment xt_addrtype "
             "xt_conntrack xt_recent xt_mark xt_statistic xt_MASQUERADE xt_nat xt_tcpudp ipt_REJECT "
             "dummy nf_flow_table nf_flow_table_inet nft_flow_offload' "
             "VM_TOOLS='nfacct nft iptables-nft-restore iptables-nft-save ip6tables-nft-save' "
             "VM_FILES='" + source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt") + " " +
                 source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.nft") + "'",
             dir.file("out.txt"));
  auto s = vm::sections(read_text(dir.file("out.txt")));
  ASSERT_EQ(vm::guest_kernel(s).rfind("6.1.", 0), 0u) << read_text(dir.file("out.txt"));
  ASSERT_TRUE(s.count("snapshot") && s.count("iptables-save") && s.count("nft -j")) << read_text(dir.file("out.txt"));
  write_text(dir.file("snap.json"), s["snapshot"]);
  const auto live = model::load_snapshot(dir.file("snap.json"));
  for (const auto& u : live.unavailable) ADD_FAILURE() << u.section << ": " << u.reason;

  // Rule text, chain by chain, against iptables-nft-save.
  const auto want = saved_rules(s["iptables-save"]);
  size_t rules = 0;
  std::map<std::string, std::vector<std::string>> got;
  for (const auto& t : live.netfilter.tables) {
    if (t.backend != model::Backend::IptablesNft || t.family != "ip") continue;
    for (const auto& c : t.chains) {
      for (const auto& r : c.rules) got[t.name + " " + c.name].push_back(r.text);
    }
  }
  EXPECT_EQ(got, want);
  for (const auto& [k, v] : want) rules += v.size();
  EXPECT_EQ(rules, 65u);  // the golden's -A lines (filter 10, nat 55)
  EXPECT_EQ(nf::live_rule_counts(live, model::Backend::IptablesNft, "ip"), nf::save_rule_counts(s["iptables-save"]));

  // The whole snapshot against the import of the tools' text of the same state.
  std::vector<std::string> argv = {dpscope_bin(), "import"};
  write_text(dir.file("save.txt"), s["iptables-save"]);
  argv.insert(argv.end(), {"--iptables-save", dir.file("save.txt")});
  if (s["ip6tables-save"].find("COMMIT") != std::string::npos) {
    write_text(dir.file("save6.txt"), s["ip6tables-save"]);
    argv.insert(argv.end(), {"--ip6tables-save", dir.file("save6.txt")});
  }
  write_text(dir.file("nft.json"), s["nft -j"]);
  argv.insert(argv.end(), {"--nft-json", dir.file("nft.json"), "-o", dir.file("imp.json")});
  const auto r = run(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto imported = model::load_snapshot(dir.file("imp.json"));
  nf::expect_same_netfilter(live, imported);
  const model::Table* kp = model::find_table(live, model::Backend::Nftables, "ip", "kube-proxy");
  ASSERT_NE(kp, nullptr);
  EXPECT_FALSE(kp->chains.empty());

  // No ip_set in this kernel: an empty, complete section.
  EXPECT_TRUE(live.ipsets.collected);
  EXPECT_TRUE(live.ipsets.sets.empty());

  // Read-only: the same ruleset after the snapshot.
  EXPECT_EQ(saved_rules(s["iptables-save after"]), want);

  // Flowtables (their declarations, and `flow add @f` in rules), as nft lists them.
  ASSERT_NE(s["flowtable nft"].find("flowtable f {"), std::string::npos) << read_text(dir.file("out.txt"));
  EXPECT_EQ(s["flowtable export"], s["flowtable nft"]);
}

}  // namespace
}  // namespace dpscope::test
