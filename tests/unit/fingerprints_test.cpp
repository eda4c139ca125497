// Fingerprints on snapshots built in code, for the objects no upstream test
// data exists for here (eBPF pins and names: Calico tcx/netkit/ctlb, the AWS
// network policy agent) and for the mode rules around them. The names are the
// ones the projects' sources use (analysis/fingerprints.cpp names each file);
// the nftables and iptables fingerprints run on upstream dumps in tests/cli
// (dataplanes_test.cpp) and tests/integration (dataplanes_live_test.cpp).
#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "analysis/check.h"

namespace dpscope::analysis {
namespace {

using model::Backend;

model::Chain chain(const std::string& name, bool base = false) {
  model::Chain c;
  c.name = name;
  if (base) c.base = model::BaseChain{"input", "filter", 0, "accept"};
  return c;
}

model::Table table(Backend b, const std::string& family, const std::string& name, std::vector<model::Chain> chains) {
  model::Table t;
  t.backend = b;
  t.family = family;
  t.name = name;
  t.chains = std::move(chains);
  return t;
}

// Both sections collected and complete: what a live snapshot of such a node holds.
model::Snapshot node(std::vector<model::Table> tables) {
  model::Snapshot s;
  s.netfilter.collected = true;
  s.ebpf.collected = true;
  s.netfilter.tables = std::move(tables);
  return s;
}

model::BpfProgram prog(uint32_t id, const std::string& name, std::vector<uint32_t> maps = {},
                       std::vector<std::string> pins = {}) {
  model::BpfProgram p;
  p.id = id;
  p.type = "sched_cls";
  p.name = name;
  p.map_ids = std::move(maps);
  p.pinned = std::move(pins);
  return p;
}

model::BpfMap map(uint32_t id, const std::string& name, std::vector<std::string> pins = {}) {
  model::BpfMap m;
  m.id = id;
  m.type = "lpm_trie";
  m.name = name;
  m.pinned = std::move(pins);
  return m;
}

TEST(Fingerprints, AwsNetworkPolicyAgentByItsProgramsMapsAndPins) {
  auto s = node({});
  // pkg/ebpf/bpf_client.go: handle_ingress using ingress_map; aws_conntrack_map cut to 15 by the kernel.
  s.ebpf.programs = {prog(10, "handle_ingress", {20, 21}, {"/sys/fs/bpf/globals/aws/programs/veth1_handle_ingress"})};
  s.ebpf.maps = {map(20, "ingress_map"), map(21, "aws_conntrack_m", {"/sys/fs/bpf/globals/aws/maps/global_aws_conntrack_map"})};
  auto a = analyze(s);
  const auto* d = find_dataplane(a.mode.dataplanes, "aws-network-policy-agent");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->label, "AWS VPC CNI network policy agent");
  EXPECT_FALSE(d->serves_services);
  // Memory per owner follows: the agent's objects are not "other".
  EXPECT_EQ(a.ebpf.owners.count("other"), 0u);
  EXPECT_EQ(a.ebpf.owners.at("aws-network-policy-agent").programs, 1u);
  EXPECT_EQ(a.ebpf.owners.at("aws-network-policy-agent").maps, 2u);
  // It serves no Services: no service dataplane on this node, and it says so.
  EXPECT_EQ(a.mode.id, "none");
  EXPECT_NE(a.mode.label.find("AWS VPC CNI network policy agent"), std::string::npos) << a.mode.label;
}

TEST(Fingerprints, AMapNamedIngressMapAloneIsNotTheAwsAgent) {
  auto s = node({});
  s.ebpf.maps = {map(20, "ingress_map")};
  EXPECT_FALSE(find_dataplane(analyze(s).mode.dataplanes, "aws-network-policy-agent"));
}

TEST(Fingerprints, CalicoTcxNetkitAndCtlbPinsAreCalicos) {
  auto s = node({});
  s.ebpf.programs = {prog(1, "cali_tc_preambl", {}, {"/sys/fs/bpf/ctlb/calico_connect_v4"})};
  s.ebpf.maps = {map(5, "v4_ctlb_progs", {"/sys/fs/bpf/ctlb/cali_ctlb_progs"})};
  model::BpfLink l;
  l.id = 7;
  l.type = "tcx";
  l.prog_id = 1;
  l.pinned = {"/sys/fs/bpf/tcx/eth0_ingress"};
  s.ebpf.links = {l};
  auto a = analyze(s);
  const auto* d = find_dataplane(a.mode.dataplanes, "calico-ebpf");
  ASSERT_TRUE(d);
  ASSERT_EQ(d->evidence.size(), 2u);  // tcx, ctlb
  EXPECT_NE(d->evidence[0].find("1 object pinned under /sys/fs/bpf/tcx/"), std::string::npos) << d->evidence[0];
  EXPECT_NE(d->evidence[1].find("2 objects pinned under /sys/fs/bpf/ctlb/"), std::string::npos) << d->evidence[1];
  EXPECT_EQ(a.ebpf.owners.at("calico").maps, 1u);
}

TEST(Fingerprints, CalicoArpTableAloneIsNoMode) {
  // Calico >= 3.32 creates arp calico-arp in iptables mode too.
  auto s = node({table(Backend::Nftables, "arp", "calico-arp", {chain("filter-OUTPUT", true)})});
  auto a = analyze(s);
  EXPECT_FALSE(find_dataplane(a.mode.dataplanes, "calico-nftables"));
  const auto* d = find_dataplane(a.mode.dataplanes, "calico");
  ASSERT_TRUE(d);
  EXPECT_NE(d->evidence[0].find("not of a mode"), std::string::npos) << d->evidence[0];
  EXPECT_EQ(a.netfilter.families.at("nft-calico").chains, 1u);
  EXPECT_EQ(check(s, "calico-nftables").problems.front().id, "calico-nftables-missing");
}

TEST(Fingerprints, KubeRouterProxyChainsMakeAModeWhoseServicesAreHidden) {
  auto s = node({table(Backend::IptablesNft, "ip", "filter",
                       {chain("INPUT", true), chain("KUBE-ROUTER-SERVICES"), chain("KUBE-ROUTER-INPUT"),
                        chain("KUBE-NWPLCY-C23KD7UE4TAT3Y5M")})});
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "kube-router");
  EXPECT_NE(a.mode.label.find("services handled by kube-router in IPVS; not visible here"), std::string::npos)
      << a.mode.label;
  EXPECT_EQ(a.netfilter.families.at("KUBE-NWPLCY").chains, 1u);
  auto r = check(s, "kube-router");
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0].message);
  // kube-proxy-free is not concluded: the replacement's Services cannot be seen.
  auto free = check(s, "kube-proxy-free");
  ASSERT_FALSE(free.ok());
  EXPECT_EQ(free.problems.back().id, "replacement-not-visible");
}

TEST(Fingerprints, KubeRouterNetworkPolicyAloneIsNotAServiceProxy) {
  auto s = node({table(Backend::Nftables, "ip", "kube-router-filter-ipv4", {chain("KUBE-ROUTER-INPUT", true)})});
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "none");
  ASSERT_TRUE(find_dataplane(a.mode.dataplanes, "kube-router"));
  auto r = check(s, "kube-router");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.problems[0].id, "kube-router-missing");
}

TEST(Fingerprints, KubeProxyIpvsGate) {
  auto s = node({table(Backend::IptablesNft, "ip", "nat",
                       {chain("PREROUTING", true), chain("KUBE-SERVICES"), chain("KUBE-NODE-PORT"),
                        chain("KUBE-LOAD-BALANCER")})});
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "kube-proxy-ipvs");
  // A snapshot without an IPVS section (older, or an import without ipvsadm input).
  EXPECT_EQ(a.mode.services_hidden,
            "services handled by kube-proxy in IPVS; not visible here (IPVS not collected: a snapshot by dpscope 2.2 "
            "or later reads it, an import takes --ipvsadm-save)");
  EXPECT_TRUE(check(s, "kube-proxy-ipvs").ok());
  auto sep = s;
  sep.netfilter.tables[0].chains.push_back(chain("KUBE-SEP-TZIJFREXNRATSEY2"));
  auto r = check(sep, "kube-proxy-ipvs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.problems[0].id, "stale-kube-proxy-iptables");
  auto none = node({table(Backend::IptablesNft, "ip", "nat", {chain("PREROUTING", true)})});
  EXPECT_EQ(check(none, "kube-proxy-ipvs").problems[0].id, "kube-proxy-missing");
}

// The IPVS table read: its virtual services are the mode's evidence and what
// the gate checks; empty, not loaded or unreadable each say so, and on a
// node meant to run Cilium the same virtual services are leftovers.
TEST(Fingerprints, KubeProxyIpvsWithItsTable) {
  auto s = node({table(Backend::IptablesNft, "ip", "nat", {chain("PREROUTING", true), chain("KUBE-SERVICES"),
                                                           chain("KUBE-NODE-PORT")})});
  s.ipvs.collected = true;
  s.ipvs.loaded = true;
  model::IpvsService api;
  api.family = "inet";
  api.protocol = "tcp";
  api.address = "10.96.0.1";
  api.port = 443;
  api.scheduler = "rr";
  api.destinations.push_back({"192.168.0.1", 6443, "masq", 1, {}, {}, "", {}, {}, {}});
  api.destinations.push_back({"192.168.0.2", 6443, "masq", 0, {}, {}, "", {}, {}, {}});
  s.ipvs.services.push_back(api);
  s.ipvs.interface_addresses = std::vector<model::IpvsInterfaceAddress>{{"kube-ipvs0", "10.96.0.1", 32}};
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "kube-proxy-ipvs");
  EXPECT_TRUE(a.mode.services_hidden.empty()) << a.mode.services_hidden;
  EXPECT_EQ(a.ipvs.services, 1u);
  EXPECT_EQ(a.ipvs.real_servers, 2u);
  EXPECT_EQ(a.ipvs.draining, 1u);
  auto r = check(s, "kube-proxy-ipvs");
  EXPECT_TRUE(r.ok());
  EXPECT_NE(std::find(r.passed.begin(), r.passed.end(),
                      "1 IPVS virtual service, 2 real servers (1 of weight 0, draining); 1 address on kube-ipvs0"),
            r.passed.end());

  auto cilium = check(s, "cilium");
  bool stale = false;
  for (const auto& p : cilium.problems) stale = stale || p.id == "stale-ipvs";
  EXPECT_TRUE(stale);

  // The ipvs mode's chains alone are gone, the table and kube-ipvs0 remain: still the ipvs mode.
  auto only_table = s;
  only_table.netfilter = {};
  EXPECT_EQ(analyze(only_table).mode.id, "kube-proxy-ipvs");

  auto empty = s;
  empty.ipvs.services.clear();
  EXPECT_EQ(check(empty, "kube-proxy-ipvs").problems.at(0).id, "ipvs-empty");
  auto unloaded = s;
  unloaded.ipvs.loaded = false;
  unloaded.ipvs.services.clear();
  EXPECT_EQ(check(unloaded, "kube-proxy-ipvs").problems.at(0).id, "ipvs-not-loaded");
  // Could not be read: nothing concluded from it, and it says why.
  auto unread = s;
  unread.ipvs = {};
  unread.unavailable.push_back({"ipvs", "generic netlink: Operation not permitted", 1, "needs CAP_NET_ADMIN"});
  auto u = check(unread, "kube-proxy-ipvs");
  EXPECT_TRUE(u.ok());
  bool named = false;
  for (const auto& p : u.passed) named = named || p.find("Operation not permitted") != std::string::npos;
  EXPECT_TRUE(named);
  for (const auto& p : check(unread, "cilium").problems) EXPECT_NE(p.id, "stale-ipvs");
}

TEST(Fingerprints, EveryExpectationIsAccepted) {
  auto s = node({});
  for (const auto& e : check_expectations()) EXPECT_NO_THROW(check(s, e)) << e;
  EXPECT_THROW(check(s, "weave"), std::invalid_argument);
}

}  // namespace
}  // namespace dpscope::analysis
