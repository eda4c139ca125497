// The other dataplanes' upstream dumps (fixtures/upstream/dataplanes/) loaded with
// the real tools into dps-* namespaces, snapshotted live and imported from what
// the tools print about the same namespace: the two snapshots are equal table by
// table, rule by rule; the chain counts are the tools' (nft -j, iptables-save);
// and the mode, the dataplane evidence and the `check` verdicts are the same for
// both and name the dataplane.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/check.h"
#include "tests/integration/netfilter_support.h"

namespace dpscope::test {
namespace {

const std::string kDir = "fixtures/upstream/dataplanes/";

// Chains per "family name" table as `nft -j list ruleset` prints them.
std::map<std::string, size_t> nft_chain_counts(const std::string& nft_json) {
  std::map<std::string, size_t> out;
  const auto doc = nlohmann::json::parse(nft_json);  // held: the loop below refers into it
  for (const auto& o : doc.at("nftables")) {
    if (o.contains("chain")) out[o["chain"]["family"].get<std::string>() + " " + o["chain"]["table"].get<std::string>()] += 1;
  }
  return out;
}

// The tools' view of every part, an empty iptables-legacy-save included (tool_view
// leaves an empty one out, and an import without it cannot rule kube-proxy out).
model::Snapshot import_every_part(const nf::ToolView& v, const TempDir& dir) {
  write_text(dir.file("v-nft.txt"), v.nft_save);
  write_text(dir.file("v-legacy.txt"), v.legacy_save);
  write_text(dir.file("v-nft.json"), v.nft_json);
  write_text(dir.file("v-ipset.txt"), v.ipset_save);
  std::vector<std::string> argv{dpscope_bin(), "import"};
  if (v.nft_save.find("COMMIT") != std::string::npos) argv.insert(argv.end(), {"--iptables-save", dir.file("v-nft.txt")});
  argv.insert(argv.end(), {"--iptables-legacy-save", dir.file("v-legacy.txt"), "--nft-json", dir.file("v-nft.json"),
                           "--ipset-save", dir.file("v-ipset.txt"), "-o", dir.file("v.json")});
  const auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model::load_snapshot(dir.file("v.json"));
}

void expect_same_verdicts(const model::Snapshot& live, const nf::ToolView& view, const TempDir& dir) {
  auto a = analysis::analyze(live), b = analysis::analyze(import_every_part(view, dir));
  EXPECT_EQ(a.mode.id, b.mode.id);
  EXPECT_EQ(a.mode.label, b.mode.label);
  ASSERT_EQ(a.mode.dataplanes.size(), b.mode.dataplanes.size());
  for (size_t i = 0; i < a.mode.dataplanes.size(); ++i) {
    EXPECT_EQ(a.mode.dataplanes[i].id, b.mode.dataplanes[i].id);
    EXPECT_EQ(a.mode.dataplanes[i].evidence, b.mode.dataplanes[i].evidence);
  }
}

TEST(DataplanesLive, CalicoNftablesDump) {
  DPS_REQUIRE_ROOT();
  Netns ns("cnft");
  TempDir dir;
  ns.sh("nft -f " + source_path(kDir + "calico-nftables-fv-dump.golden.nft"));
  const auto live = nf::live_snapshot(ns, dir);
  const auto view = nf::tool_view(ns, dir);
  nf::expect_same_netfilter(live, view.imported);
  const auto counts = nft_chain_counts(view.nft_json);
  const auto a = analysis::analyze(live);
  ASSERT_TRUE(a.netfilter.families.count("nft-calico"));
  EXPECT_EQ(a.netfilter.families.at("nft-calico").chains, counts.at("ip calico"));
  const auto* d = analysis::find_dataplane(a.mode.dataplanes, "calico-nftables");
  ASSERT_TRUE(d) << a.mode.label;
  EXPECT_EQ(d->chains, counts.at("ip calico"));
  EXPECT_NE(a.mode.label.find("Calico nftables dataplane"), std::string::npos) << a.mode.label;
  expect_same_verdicts(live, view, dir);
  const auto r = analysis::check(live, "calico-nftables");
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0].message);
  // Calico's tables next to kube-proxy's iptables-mode rules: not a kube-proxy-free node.
  ns.sh("iptables-nft-restore --noflush",
        "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-X - [0:0]\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp --dport 443 -j KUBE-SVC-X\nCOMMIT\n");
  const auto mixed = nf::live_snapshot(ns, dir);
  EXPECT_EQ(analysis::analyze(mixed).mode.id, "kube-proxy-iptables");
  EXPECT_TRUE(analysis::check(mixed, "calico-nftables").ok());
  EXPECT_FALSE(analysis::check(mixed, "kube-proxy-free").ok());
}

TEST(DataplanesLive, AntreaRestoreDump) {
  DPS_REQUIRE_ROOT();
  Netns ns("antr");
  TempDir dir;
  // The sets its rules match, with the types Antrea's route_linux.go creates (SOURCES.md).
  ns.sh("ipset create CLUSTER-NODE-IP hash:ip && ipset create ANTREA-EXTERNAL-IP hash:ip && "
        "ipset create ANTREA-NODEPORT-IP hash:ip,port && ipset create ANTREA-POD-IP hash:net");
  ns.sh("iptables-nft-restore", read_text(source_path(kDir + "antrea-route-linux-test-ipv4.golden.iptables-restore")));
  const auto live = nf::live_snapshot(ns, dir);
  const auto view = nf::tool_view(ns, dir);
  nf::expect_same_netfilter(live, view.imported);
  // ANTREA-* chains as iptables-save declares them, over every table.
  size_t declared = 0;
  std::istringstream in(view.nft_save);
  for (std::string line; std::getline(in, line);) declared += line.rfind(":ANTREA-", 0) == 0 ? 1 : 0;
  const auto a = analysis::analyze(live);
  EXPECT_EQ(a.netfilter.families.at("ANTREA").chains, declared);
  EXPECT_EQ(declared, 15u);  // SOURCES.md
  // Rules matching an IP set resolve to the live sets; iptables-save's count of them is the oracle.
  size_t set_rules = 0;
  std::istringstream again(view.nft_save);
  for (std::string line; std::getline(again, line);) {
    set_rules += line.rfind("-A ", 0) == 0 && line.find("--match-set ") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(a.netfilter.match_set_rules, set_rules);
  EXPECT_GT(set_rules, 5u);
  EXPECT_TRUE(a.netfilter.unknown_match_sets.empty());
  auto without = view.imported;  // the same node, its CLUSTER-NODE-IP set left out: that name is marked
  auto& sets = without.ipsets.sets;
  sets.erase(std::remove_if(sets.begin(), sets.end(), [](const auto& x) { return x.name == "CLUSTER-NODE-IP"; }), sets.end());
  const auto b = analysis::analyze(without);
  EXPECT_EQ(b.netfilter.unknown_match_sets, std::vector<std::string>{"CLUSTER-NODE-IP"});
  bool marked = false;
  for (const auto& e : b.mode.evidence) marked = marked || e.find("rules match IP sets that do not exist: CLUSTER-NODE-IP") == 0;
  EXPECT_TRUE(marked);
  EXPECT_EQ(a.mode.id, "antrea-proxy");
  EXPECT_EQ(a.mode.services_hidden, "services handled by AntreaProxy in OVS; not visible here");
  expect_same_verdicts(live, view, dir);
  EXPECT_TRUE(analysis::check(live, "antrea-proxy").ok());
  const auto free = analysis::check(live, "kube-proxy-free");
  ASSERT_FALSE(free.ok());
  EXPECT_EQ(free.problems.back().id, "replacement-not-visible");
}

TEST(DataplanesLive, OvnKubernetesNftablesDump) {
  DPS_REQUIRE_ROOT();
  Netns ns("ovnk");
  TempDir dir;
  ns.sh("nft -f " + source_path("fixtures/loadable/ovn-kubernetes-gateway-init-base.reordered.nft"));
  const auto live = nf::live_snapshot(ns, dir);
  const auto view = nf::tool_view(ns, dir);
  nf::expect_same_netfilter(live, view.imported);
  const auto a = analysis::analyze(live);
  EXPECT_EQ(a.netfilter.families.at("nft-ovn-kubernetes").chains, nft_chain_counts(view.nft_json).at("inet ovn-kubernetes"));
  EXPECT_EQ(a.mode.id, "ovn-kubernetes");
  EXPECT_NE(a.mode.label.find("services handled by OVN load balancers in OVS; not visible here"), std::string::npos);
  expect_same_verdicts(live, view, dir);
  EXPECT_TRUE(analysis::check(live, "ovn-kubernetes").ok());
  EXPECT_EQ(analysis::check(live, "kube-router").problems.back().id, "kube-router-missing");
}

}  // namespace
}  // namespace dpscope::test
