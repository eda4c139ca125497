// Importers against the real tools on a real kernel: each upstream dump is
// loaded into its own dps-* netns with iptables-nft-restore, then
// iptables-legacy-restore (or nft -f), saved with the real iptables-save /
// nft, imported with the dpscope binary, and compared chain by chain with
// what this test reads from the saved text itself (tests/support/save_scan.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/json.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"
#include "tests/support/save_scan.h"

namespace dpscope::test {
namespace {

using model::Backend;

model::Snapshot import_text(const std::vector<std::pair<std::string, std::string>>& inputs) {
  TempDir dir;
  std::vector<std::string> argv{dpscope_bin(), "import"};
  int n = 0;
  for (const auto& [option, text] : inputs) {
    const auto path = dir.file("input-" + std::to_string(n++));
    write_text(path, text);
    argv.push_back(option);
    argv.push_back(path);
  }
  argv.insert(argv.end(), {"-o", dir.file("out.json")});
  const auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  return model::load_snapshot(dir.file("out.json"));
}

// Chain names, rule counts, and each rule's target, destination (the
// service IPs in KUBE-SERVICES) and comment, as the plain scan reads them.
void expect_snapshot_matches_save(const model::Snapshot& s, const std::string& save, Backend backend,
                                  const std::string& family, size_t other_tables = 0) {
  const auto scanned = scan_iptables_save(save);
  ASSERT_FALSE(scanned.empty());
  size_t tables = 0;
  for (const auto& st : scanned) {
    SCOPED_TRACE("table " + st.name);
    const auto* t = model::find_table(s, backend, family, st.name);
    ASSERT_TRUE(t) << "missing table " << st.name;
    ++tables;
    std::vector<std::string> names, expected = st.chains;
    for (const auto& c : t->chains) names.push_back(c.name);
    std::sort(names.begin(), names.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(names, expected);
    for (const auto& c : t->chains) {
      ASSERT_EQ(c.rule_count, st.rules_in(c.name)) << c.name;
      size_t k = 0;
      for (const auto& r : st.rules) {
        if (r.chain != c.name) continue;
        const auto& rule = c.rules.at(k++);
        EXPECT_EQ(rule.target, r.target) << c.name << " #" << k;
        EXPECT_EQ(rule.match.comment, r.comment) << c.name << " #" << k;
        EXPECT_EQ(rule.match.destination ? rule.match.destination->cidr : "", r.destination) << c.name << " #" << k;
      }
    }
  }
  EXPECT_EQ(tables + other_tables, s.netfilter.tables.size());
}

struct IptablesDump {
  const char* stem;
  // sort-basic jumps to nat KUBE-MARK-DROP without declaring it (SOURCES.md).
  bool needs_mark_drop;
};

const IptablesDump kDumps[] = {
    {"overall-iptables-rules", false},
    {"syncrepeated-step1-two-clusterip", false},
    {"syncrepeated-final-fullresync-with-X", false},
    {"sort-basic-svl-localpolicy", true},
};

TEST(ImportNetns, KubeProxyIptablesDumpsThroughBothBackends) {
  DPS_REQUIRE_ROOT();
  for (const auto& dump : kDumps) {
    const auto golden = read_text(source_path(std::string("fixtures/upstream/kube-proxy-iptables/") + dump.stem + ".golden.txt"));
    model::Snapshot per_backend[2];
    int i = 0;
    for (const std::string backend : {"nft", "legacy"}) {
      SCOPED_TRACE(std::string(dump.stem) + " via iptables-" + backend);
      Netns ns("imp");
      // kube-proxy's nfacct matches need their objects first.
      ns.sh("nfacct add ct_state_invalid_dropped_pkts && nfacct add localhost_nps_accepted_pkts");
      std::string noflush;
      if (dump.needs_mark_drop) {
        ns.sh("iptables-" + backend + "-restore",
              "*nat\n:KUBE-MARK-DROP - [0:0]\n-A KUBE-MARK-DROP -j MARK --or-mark 0x8000\nCOMMIT\n");
        noflush = " --noflush";
      }
      ns.sh("iptables-" + backend + "-restore" + noflush, golden);
      const std::string save = ns.sh("iptables-" + backend + "-save");
      ASSERT_NE(save.find("*nat"), std::string::npos) << save;
      const Backend b = backend == "nft" ? Backend::IptablesNft : Backend::IptablesLegacy;
      const auto s = import_text({{"--iptables-save", save}});
      expect_snapshot_matches_save(s, save, b, "ip");
      per_backend[i++] = s;
    }
    // The two backends hold the same rules: equal tables apart from the backend.
    auto a = per_backend[0].netfilter.tables;
    auto b = per_backend[1].netfilter.tables;
    ASSERT_EQ(a.size(), b.size()) << dump.stem;
    for (auto& t : b) t.backend = Backend::IptablesNft;
    auto by_name = [](const model::Table& x, const model::Table& y) { return x.name < y.name; };
    std::sort(a.begin(), a.end(), by_name);
    std::sort(b.begin(), b.end(), by_name);
    for (size_t k = 0; k < a.size(); ++k) {
      for (auto* t : {&a[k], &b[k]}) {
        for (auto& c : t->chains) c.policy_counters.reset();
      }
      EXPECT_EQ(a[k], b[k]) << dump.stem << " table " << a[k].name;
    }
  }
}

TEST(ImportNetns, Ip6tablesSaveWithCounters) {
  DPS_REQUIRE_ROOT();
  Netns ns("imp6");
  ns.sh("ip6tables-nft-restore", R"(*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-A - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d fd00:10:96::1/128 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-A
-A KUBE-SVC-A -p tcp -m comment --comment "default/kubernetes:https -> [fc00:f853:ccd:e793::3]:6443" -m tcp -j DNAT --to-destination [fc00:f853:ccd:e793::3]:6443
COMMIT
*filter
:KUBE-FIREWALL - [0:0]
-A INPUT -j KUBE-FIREWALL
-A KUBE-FIREWALL ! -s ::1/128 -d ::1/128 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
COMMIT
)");
  const std::string save = ns.sh("ip6tables-nft-save -c");
  ASSERT_NE(save.find("[0:0] -A"), std::string::npos) << save;
  const auto s = import_text({{"--ip6tables-save", save}});
  expect_snapshot_matches_save(s, save, Backend::IptablesNft, "ip6");
  const auto* nat = model::find_table(s, Backend::IptablesNft, "ip6", "nat");
  ASSERT_TRUE(nat);
  const auto& rule = model::find_chain(*nat, "KUBE-SVC-A")->rules.at(0);
  EXPECT_EQ(rule.verdict_kind, "target");
  EXPECT_EQ(rule.target_args, "--to-destination [fc00:f853:ccd:e793::3]:6443");
  EXPECT_TRUE(rule.counters.has_value());
  // The same text as IPv4 is refused with its line.
  TempDir dir;
  write_text(dir.file("v6.txt"), save);
  const auto r = run({dpscope_bin(), "import", "--iptables-save", dir.file("v6.txt"), "-o", dir.file("o.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("dpscope: " + dir.file("v6.txt") + ":1: this is ip6tables-save output", 0), 0u) << r.err;
}

TEST(ImportNetns, NftJsonOfIptablesNftTablesIsNotCountedTwice) {
  DPS_REQUIRE_ROOT();
  Netns ns("impx");
  ns.sh("nfacct add ct_state_invalid_dropped_pkts && nfacct add localhost_nps_accepted_pkts");
  ns.sh("iptables-nft-restore",
        read_text(source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.golden.txt")));
  ns.sh("nft -f " + source_path("fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv4-example.golden.nft"));
  const std::string save = ns.sh("iptables-nft-save");
  const std::string json = ns.sh("nft -j list ruleset");
  const auto scanned = scan_iptables_save(save);

  // nft -j alone: iptables-nft tables with the rule counts of iptables-save, not recorded.
  const auto alone = import_text({{"--nft-json", json}});
  for (const auto& st : scanned) {
    const auto* t = model::find_table(alone, Backend::IptablesNft, "ip", st.name);
    ASSERT_TRUE(t) << st.name;
    for (const auto& c : t->chains) {
      EXPECT_FALSE(c.rules_recorded);
      EXPECT_EQ(c.rule_count, st.rules_in(c.name)) << st.name << " " << c.name;
    }
  }
  ASSERT_TRUE(model::find_table(alone, Backend::Nftables, "ip", "kube-proxy"));

  // Together with iptables-save: each table once, the iptables ones from iptables-save.
  const auto both = import_text({{"--iptables-save", save}, {"--nft-json", json}});
  EXPECT_EQ(both.netfilter.tables.size(), scanned.size() + 1);
  expect_snapshot_matches_save(both, save, Backend::IptablesNft, "ip", /*other_tables=*/1);
  for (const auto& t : both.netfilter.tables) {
    if (t.backend != Backend::IptablesNft) continue;
    for (const auto& c : t.chains) EXPECT_TRUE(c.rules_recorded) << t.name << " " << c.name;
  }
}

TEST(ImportNetns, KubeProxyNftablesFixturesThroughNft) {
  DPS_REQUIRE_ROOT();
  for (const std::string file : {"fixtures/loadable/overall-nftables-rules.reordered.nft",
                                 "fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv4-example.golden.nft",
                                 "fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv6-example.golden.nft"}) {
    SCOPED_TRACE(file);
    Netns ns("impn");
    ns.sh("nft -f " + source_path(file));
    const std::string listing = ns.sh("nft list ruleset");
    const std::string json = ns.sh("nft -j list ruleset");
    if (file.find("overall") != std::string::npos) {
      // The reordered copy loads to exactly what SOURCES.md recorded.
      EXPECT_EQ(listing, read_text(source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.nft")));
    }
    const auto s = import_text({{"--nft-json", json}});
    ASSERT_EQ(s.netfilter.tables.size(), 1u);
    const auto& t = s.netfilter.tables[0];
    EXPECT_EQ(t.backend, Backend::Nftables);
    EXPECT_EQ(t.name, "kube-proxy");
    EXPECT_EQ(t.family, file.find("ipv6") != std::string::npos ? "ip6" : "ip");
    const auto c = scan_nft_listing(listing);
    long chains = 0, hooked = 0, rules = 0;
    for (const auto& ch : t.chains) {
      ++chains;
      hooked += ch.base.has_value();
      rules += static_cast<long>(ch.rule_count);
    }
    EXPECT_EQ(chains, c.chains);
    EXPECT_EQ(hooked, c.hooked);
    EXPECT_EQ(rules, c.rules);
    ASSERT_EQ(t.sets.size(), c.elements.size());
    for (const auto& set : t.sets) {
      EXPECT_EQ(static_cast<long>(set.element_count), c.elements.at(set.name)) << set.name;
      for (const auto& e : set.elements) EXPECT_NE(listing.find(e.key), std::string::npos) << e.key;
    }
  }
}

// fixtures/scenarios/save-text.sh stands in for iptables-save in the import
// benchmark (bench/compare.sh: a 20k-Service node's text without loading it):
// its output must be what both backends' iptables-save print for the same
// state, table by table and line for line, the header and trailer comments
// aside (legacy lists the tables in the kernel's order).
TEST(ImportNetns, SaveTextIsWhatIptablesSavePrints) {
  DPS_REQUIRE_ROOT();
  const std::string restore_input =
      run({"sh", source_path("fixtures/scenarios/gen-kube-proxy.sh"), "iptables", "120", "5"}).out;
  ASSERT_NE(restore_input.find("--probability"), std::string::npos);
  // Table name -> its lines from "*name" to COMMIT, comment lines left out.
  auto tables_of = [](const std::string& text) {
    std::map<std::string, std::string> tables;
    std::string* current = nullptr;
    for (size_t at = 0; at < text.size();) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      const std::string line = text.substr(at, nl - at);
      at = nl + 1;
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '*') current = &tables[line.substr(1)];
      if (current) current->append(line).push_back('\n');
    }
    return tables;
  };
  TempDir dir;
  write_text(dir.file("restore.txt"), restore_input);
  const auto converted = run({"sh", "-c", "sh '" + source_path("fixtures/scenarios/save-text.sh") + "' < '" +
                                              dir.file("restore.txt") + "'"});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const auto expected = tables_of(converted.out);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_NE(expected, tables_of(restore_input)) << "the generator already writes save text: nothing is checked";
  for (const std::string backend : {"nft", "legacy"}) {
    SCOPED_TRACE("iptables-" + backend);
    Netns ns("stxt");
    ns.sh("iptables-" + backend + "-restore", restore_input);
    const auto saved = tables_of(ns.sh("iptables-" + backend + "-save"));
    ASSERT_EQ(saved.size(), expected.size());
    for (const auto& [name, text] : expected) {
      const auto it = saved.find(name);
      ASSERT_NE(it, saved.end()) << name;
      const auto [x, y] = std::mismatch(it->second.begin(), it->second.end(), text.begin(), text.end());
      EXPECT_TRUE(x == it->second.end() && y == text.end())
          << "table " << name << ": iptables-save and save-text.sh differ from byte " << (x - it->second.begin())
          << ":\n  saved:     " << it->second.substr(x - it->second.begin(), 160)
          << "\n  converted: " << text.substr(y - text.begin(), 160);
    }
  }
}

}  // namespace
}  // namespace dpscope::test
