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


#include "model/json.h"
#include "tests/support/kernel.h"
#include "tests/support/nft_text.h"
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

// export --format nft == nft list ruleset: kube-proxy's nftables mode (the
// knftables examples and a run's own listing, fixtures/upstream/
// kube-proxy-nftables), in one namespace beside iptables-nft tables (left
// out, said on stderr), plus the declarations kube-proxy does not use: a
// table's comment and flags, objects, typeof and dynamic sets, chain
// comments, an ingress chain's device, priorities by name and number.
// (Flowtables: this kernel has no nf_flow_table; the corpus test counts
// the dumps it refuses.)
TEST(ExportLive, NftFormatEqualsNftListRuleset) {
  DPS_REQUIRE_ROOT();
  Netns ns("exportnft");
  ns.sh("ip link add dps0 type veth peer name dps1");
  for (const char* fixture : {"fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv4-example.golden.nft",
                              "fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv6-example.golden.nft"}) {
    ns.sh("nft -f " + source_path(fixture));
  }
  ns.sh("iptables-nft-restore", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j ACCEPT\nCOMMIT\n");
  ns.sh("nft -f -", R"(table inet dps-extras {
	comment "not kube-proxy's"
	counter hits { comment "every packet" }
	quota q { over 25 mbytes }
	limit l { rate 400/minute }
	ct helper ftp { type "ftp" protocol tcp; l3proto inet; }
	set seen { typeof ip saddr . tcp dport; flags dynamic,timeout; timeout 5m; size 65535; }
	map marks { type mark : ipv4_addr; elements = { 0x00000001 : 10.0.0.1, 0x00000002 : 10.0.0.2 } }
	set nets { type ipv4_addr; flags interval; auto-merge; elements = { 10.0.0.0/8, 192.168.0.0/16 } }
	chain in { comment "the way in"; type filter hook input priority -150; policy drop;
		ct state established,related accept
		tcp dport 22 update @seen { ip saddr . tcp dport } counter name "hits" accept
	}
	chain odd { type filter hook output priority 7; }
}
table netdev dps-ingress {
	chain ingress { type filter hook ingress device "dps0" priority -500; }
}
table ip dps-dormant {
	flags dormant
	chain c {
	}
}
)");
  TempDir tmp;
  const std::string snap = tmp.file("live.json");
  RunResult s = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--rules", "--no-ebpf", "-q", "-o", snap});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  RunResult e = run({dpscope_bin(), "export", snap, "--format", "nft"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.err.find("left out the iptables-nft tables (ip filter)"), std::string::npos) << e.err;
  const std::string nft = nft_ruleset_without_expires(ns.sh("nft list ruleset"), {"ip filter"});
  ASSERT_NE(nft.find("table ip kube-proxy"), std::string::npos);
  EXPECT_EQ(e.out, nft) << first_difference(nft, e.out);
  // What the text says loads back as the same ruleset.
  Netns again("exportnft2");
  again.sh("ip link add dps0 type veth peer name dps1");
  again.sh("nft -f -", e.out);
  EXPECT_EQ(nft_ruleset_without_expires(again.sh("nft list ruleset"), {}), nft);
}

// Chain bindings (`jump { ... }`): nft lists a bound chain's rules inside the
// rule that binds it, and so does the snapshot (no "__chainN" chain in a
// native table; the rule's text spans lines as nft prints it), live and
// imported; iptables-nft-save lists one as a chain of its own, and so does
// export. And a table named like iptables' holding a rule iptables-nft
// cannot list is nft's (iptables-nft-save: "Table `nat' is incompatible").
TEST(ExportLive, ChainBindingsAndTablesIptablesNftCannotList) {
  DPS_REQUIRE_ROOT();
  Netns ns("binding");
  ns.sh("nft -f -", R"(table inet dps-bind {
	set allowed { type ipv4_addr; elements = { 10.0.0.1, 10.0.0.2 } }
	chain input { type filter hook input priority filter; policy accept;
		tcp dport 22 jump {
			ip saddr @allowed counter accept
			udp dport { 53, 5353 } accept comment "dns"
			log prefix "ssh " drop
		}
		meta l4proto icmp goto {
			counter drop
		}
		iifname "lo" accept
	}
}
table ip filter {
	chain INPUT { type filter hook input priority filter; policy accept;
		tcp dport 80 jump {
			accept
		}
	}
}
table ip nat {
	chain postrouting {
		snat to ip saddr map { 1.1.1.1 : 2.2.2.2 }
	}
}
)");
  TempDir tmp;
  const std::string snap = tmp.file("live.json"), nft_json = tmp.file("nft.json"), imported = tmp.file("import.json");
  RunResult s = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--rules", "--no-ebpf", "-q", "-o", snap});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  write_text(nft_json, ns.sh("nft -j list ruleset"));
  RunResult i = run({dpscope_bin(), "import", "--nft-json", nft_json, "-o", imported});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const std::string nft = ns.sh("nft list ruleset");
  const NftTextRules want = nft_text_rules(nft);
  EXPECT_EQ(want.multiline, 3u);
  EXPECT_NE(ns.sh("iptables-nft-save").find("# Table `nat' is incompatible, use 'nft' tool."), std::string::npos);
  for (const std::string& file : {snap, imported}) {
    SCOPED_TRACE(file);
    const model::Snapshot snapshot = model::load_snapshot(file);
    size_t native_rules = 0;
    for (const model::Table& t : snapshot.netfilter.tables) {
      const bool iptables = t.family == "ip" && t.name == "filter";
      EXPECT_EQ(t.backend, iptables ? model::Backend::IptablesNft : model::Backend::Nftables) << t.name;
      if (iptables) continue;
      for (const model::Chain& c : t.chains) {
        EXPECT_NE(c.name.rfind("__chain", 0), 0u) << t.name << ": a bound chain listed as a chain";
        const auto& lines = want.chains.at({t.family, t.name, c.name});
        ASSERT_EQ(c.rules.size(), lines.size()) << c.name;
        for (size_t r = 0; r < lines.size(); ++r, ++native_rules) EXPECT_EQ(c.rules[r].text, lines[r]);
      }
    }
    EXPECT_EQ(native_rules, 4u);
  }
  RunResult e = run({dpscope_bin(), "export", snap, "--format", "nft"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out, nft_ruleset_without_expires(nft, {"ip filter"})) << first_difference(nft, e.out);
  RunResult x = run({dpscope_bin(), "export", snap, "--format", "iptables-save"});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  const std::string saved = save_text_without_comments(ns.sh("iptables-nft-save"), true);
  EXPECT_NE(saved.find(":__chain"), std::string::npos) << saved;
  EXPECT_EQ(save_text_without_comments(x.out, true), saved);
}

// An import cannot give nft's listing back: nft -j 1.0.6 leaves declarations out.
TEST(ExportLive, NftFormatOfAnImportIsRefusedNamingWhy) {
  TempDir tmp;
  const std::string snap = tmp.file("import.json");
  RunResult imp = run({dpscope_bin(), "import", "--nft-json",
                       source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.json"),
                       "-o", snap});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  RunResult r = run({dpscope_bin(), "export", snap, "--format", "nft"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("its declarations (chain comments, set flags and typeof, objects, flowtables) are not recorded: "
                       "an import of nft -j cannot hold them"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace dpscope::test
