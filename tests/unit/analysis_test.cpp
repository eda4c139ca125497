// Analysis on snapshots built in code: chain families, counts, service-IP
// rules, kube-proxy nftables objects, mode decisions, eBPF ownership and
// availability. The kind fixtures are covered end to end in tests/cli.
#include <gtest/gtest.h>

#include "analysis/analysis.h"

namespace dpscope::analysis {
namespace {

using model::Backend;

model::Rule rule_to(const std::string& dst, const std::string& target, bool negated = false) {
  model::Rule r;
  r.match.destination = model::Prefix{dst, negated};
  r.verdict_kind = "jump";
  r.target = target;
  return r;
}

model::Chain chain(const std::string& name, std::vector<model::Rule> rules = {}, bool base = false) {
  model::Chain c;
  c.name = name;
  if (base) c.base = model::BaseChain{"prerouting", "nat", -100, "ACCEPT"};
  for (size_t i = 0; i < rules.size(); ++i) rules[i].position = static_cast<uint32_t>(i + 1);
  c.rules = std::move(rules);
  c.rule_count = c.rules.size();
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

model::Snapshot with_tables(std::vector<model::Table> tables) {
  model::Snapshot s;
  s.netfilter.collected = true;
  s.netfilter.tables = std::move(tables);
  return s;
}

TEST(AnalysisChainFamilies, FirstMatchWinsAndBuiltinsAreSeparate) {
  EXPECT_EQ(family_of("KUBE-SVC-NPX46M4PTMTKRN6Y", false).id, "KUBE-SVC");
  EXPECT_EQ(family_of("KUBE-SEP-TZIJFREXNRATSEY2", false).id, "KUBE-SEP");
  EXPECT_EQ(family_of("KUBE-SERVICES", false).id, "KUBE-SERVICES");
  EXPECT_EQ(family_of("KUBE-MARK-MASQ", false).id, "KUBE-MARK");
  EXPECT_EQ(family_of("KUBE-MARK-DROP", false).id, "KUBE-MARK");
  EXPECT_EQ(family_of("KUBE-ROUTER-INPUT", false).id, "KUBE-ROUTER");
  EXPECT_EQ(family_of("KUBE-SOMETHING-NEW", false).id, "KUBE-other");
  EXPECT_EQ(family_of("KUBE-FIREWALL", false).owner, "kubelet");
  EXPECT_EQ(family_of("KUBE-PROXY-FIREWALL", false).owner, "kube-proxy");
  EXPECT_EQ(family_of("KUBE-KUBELET-CANARY", false).owner, "kubelet");
  EXPECT_EQ(family_of("KUBE-PROXY-CANARY", false).owner, "kube-proxy");
  EXPECT_EQ(family_of("CILIUM_POST_nat", false).id, "CILIUM");
  EXPECT_EQ(family_of("OLD_CILIUM_POST_nat", false).id, "OLD_CILIUM");
  EXPECT_EQ(family_of("cali-FORWARD", false).id, "cali");
  EXPECT_EQ(family_of("KUBE-NODE-PORT", false).id, "KUBE-ipvs");
  EXPECT_EQ(family_of("PREROUTING", true).id, "builtin");
  EXPECT_EQ(family_of("IP-MASQ", false).id, "other");
}

TEST(AnalysisSingleAddress, OnlyHostPrefixes) {
  EXPECT_EQ(single_address("10.96.0.1/32"), "10.96.0.1");
  EXPECT_EQ(single_address("fd00:10:96::1/128"), "fd00:10:96::1");
  EXPECT_EQ(single_address("10.96.0.1"), "10.96.0.1");
  EXPECT_EQ(single_address("10.0.0.0/8"), std::nullopt);
  EXPECT_EQ(single_address("fd00::/64"), std::nullopt);
  EXPECT_EQ(single_address("fd00::1/32"), std::nullopt);  // /32 is not one IPv6 address
}

TEST(AnalysisNetfilter, CountsRulesChainsAndServiceIpsPerTable) {
  auto s = with_tables({
      table(Backend::IptablesNft, "ip", "nat",
            {chain("PREROUTING", {rule_to("0.0.0.0/0", "KUBE-SERVICES")}, true),
             chain("KUBE-SERVICES",
                   {rule_to("10.96.0.1/32", "KUBE-SVC-A"), rule_to("10.96.0.10/32", "KUBE-SVC-B"),
                    rule_to("10.96.0.10/32", "KUBE-SVC-C"),  // same address, another port
                    rule_to("10.96.0.0/12", "KUBE-MARK-MASQ"), rule_to("10.96.0.99/32", "X", true)}),
             chain("KUBE-SVC-A"), chain("KUBE-SVC-B"), chain("KUBE-SVC-C"), chain("KUBE-SEP-1"),
             chain("KUBE-KUBELET-CANARY")}),
      table(Backend::IptablesLegacy, "ip6", "nat",
            {chain("KUBE-SERVICES", {rule_to("fd00::1/128", "KUBE-SVC-D")}), chain("KUBE-SVC-D")}),
      table(Backend::IptablesNft, "ip", "filter", {chain("KUBE-FIREWALL", {rule_to("127.0.0.0/8", "DROP")})}),
  });
  auto a = analyze(s);
  const auto& n = a.netfilter;
  EXPECT_EQ(n.rules, 8u);
  EXPECT_EQ(n.iptables_rules, 8u);
  EXPECT_EQ(n.legacy_rules, 1u);
  EXPECT_EQ(n.iptables_nft_rules, 7u);
  EXPECT_EQ(n.kube_svc_chains, 4u);
  EXPECT_EQ(n.kube_sep_chains, 1u);
  EXPECT_EQ(n.kube_chains, 9u);  // counted once per table: 6 in ip nat, 2 in ip6 nat, 1 in filter
  EXPECT_EQ(n.kubelet_chains, 2u);
  EXPECT_EQ(n.kube_proxy_chains, 7u);
  EXPECT_EQ(n.service_ip_rules, 4u);  // /12 and the negated /32 do not count
  ASSERT_EQ(n.tables.size(), 3u);
  EXPECT_EQ(n.tables[0].service_ip_rules, 3u);
  EXPECT_EQ(n.tables[0].service_ips, (std::vector<std::string>{"10.96.0.1", "10.96.0.10"}));
  EXPECT_EQ(n.tables[1].service_ips, (std::vector<std::string>{"fd00::1"}));
  EXPECT_EQ(n.service_ips, (std::vector<std::string>{"10.96.0.1", "10.96.0.10", "fd00::1"}));
  EXPECT_EQ(n.families.at("KUBE-SVC").chains, 4u);
  EXPECT_EQ(n.families.at("builtin").rules, 1u);
  EXPECT_EQ(a.mode.id, "kube-proxy-iptables");
}

TEST(AnalysisNetfilter, CountOnlyChainsUseRuleCount) {
  auto c = chain("KUBE-SERVICES");
  c.rules_recorded = false;
  c.rule_count = 20000;
  auto a = analyze(with_tables({table(Backend::IptablesNft, "ip", "nat", {c})}));
  EXPECT_EQ(a.netfilter.rules, 20000u);
  EXPECT_EQ(a.netfilter.kube_services_rules, 20000u);
  EXPECT_EQ(a.netfilter.service_ip_rules, 0u);  // not recorded: no destinations to look at
  EXPECT_EQ(a.mode.id, "kube-proxy-iptables");
}

TEST(AnalysisMode, KubeletChainsAloneAreNotKubeProxy) {
  auto s = with_tables({
      table(Backend::IptablesNft, "ip", "filter",
            {chain("KUBE-FIREWALL", {rule_to("127.0.0.0/8", "DROP")}), chain("KUBE-KUBELET-CANARY")}),
      table(Backend::IptablesNft, "ip", "mangle", {chain("KUBE-IPTABLES-HINT"), chain("KUBE-KUBELET-CANARY")}),
  });
  auto a = analyze(s);
  EXPECT_EQ(a.netfilter.kube_chains, 4u);
  EXPECT_EQ(a.netfilter.kube_proxy_chains, 0u);
  // No eBPF section: "no service dataplane" is not concluded from netfilter alone.
  EXPECT_EQ(a.mode.id, "unknown");
  EXPECT_EQ(a.mode.label, "no service dataplane seen (eBPF not seen)");
  ASSERT_FALSE(a.mode.evidence.empty());
  EXPECT_NE(a.mode.evidence.front().find("kubelet"), std::string::npos);
  a = analyze([&] {
    auto with_ebpf = s;
    with_ebpf.ebpf.collected = true;
    return with_ebpf;
  }());
  EXPECT_EQ(a.mode.id, "none");
}

TEST(AnalysisMode, CiliumChainsWithoutKubeProxyAndWithoutEbpfAreInferredKpr) {
  auto a = analyze(with_tables({table(Backend::IptablesNft, "ip", "filter",
                                      {chain("CILIUM_INPUT"), chain("KUBE-FIREWALL")})}));
  EXPECT_EQ(a.mode.id, "cilium-kpr");
  EXPECT_NE(a.mode.evidence.back().find("inferred"), std::string::npos);
}

TEST(AnalysisMode, CiliumServiceMapDecides) {
  model::Snapshot s = with_tables({});
  s.ebpf.collected = true;
  model::LbServices lb;
  lb.dataplane = "cilium";
  lb.frontends.push_back({"10.96.0.1", 443, "tcp", "ClusterIP", "external", 1, 1, false, {}});
  lb.backends.push_back({1, "172.19.0.2", 6443, "tcp", "active"});
  s.ebpf.services.push_back(lb);
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "cilium-kpr");
  ASSERT_NE(a.ebpf.lb_of("cilium"), nullptr);
  EXPECT_EQ(a.ebpf.lb_of("cilium")->frontends, 1u);
  EXPECT_EQ(a.ebpf.lb_of("cilium")->frontend_addresses, (std::vector<std::string>{"10.96.0.1"}));
}

TEST(AnalysisMode, KubeProxyNftablesFromTheKubeProxyTable) {
  model::Table t = table(Backend::Nftables, "ip", "kube-proxy",
                         {chain("nat-prerouting", {}, true), chain("services"),
                          chain("service-ULMVA6XW-ns1/svc1/tcp/p80"), chain("service-42NFTM6N-ns2/svc2/tcp/p80"),
                          chain("endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"),
                          chain("external-42NFTM6N-ns2/svc2/tcp/p80"), chain("firewall-HVFWP5L3-ns5/svc5/tcp/p80")});
  model::NftSet ips;
  ips.name = "service-ips";
  ips.is_map = true;
  ips.element_count = 9;
  model::NftSet np;
  np.name = "service-nodeports";
  np.is_map = true;
  np.element_count = 3;
  t.sets = {ips, np};
  auto a = analyze(with_tables({t}));
  const auto& k = a.netfilter.kube_proxy_nft;
  EXPECT_TRUE(k.present);
  EXPECT_EQ(k.services, 9u);
  EXPECT_EQ(k.nodeports, 3u);
  EXPECT_EQ(k.chains_by_kind.at("service"), 2u);
  EXPECT_EQ(k.chains_by_kind.at("endpoint"), 1u);
  EXPECT_EQ(k.chains_by_kind.at("external"), 1u);
  EXPECT_EQ(k.chains_by_kind.at("firewall"), 1u);
  EXPECT_EQ(k.chains_by_kind.at("helper"), 1u);  // "services" dispatch chain
  EXPECT_EQ(k.chains_by_kind.count("other"), 0u);
  EXPECT_EQ(a.netfilter.kube_chains, 0u);       // native nft chains are not iptables KUBE-* chains
  EXPECT_EQ(a.mode.id, "kube-proxy-nftables");
}

// kube-proxy's helper chains share the per-Service prefixes (service-, firewall-,
// ...) but not their PREFIX-HASH8-ns/name/proto/port shape.
TEST(AnalysisKubeProxyNft, ChainKindsByKubeProxysNaming) {
  EXPECT_EQ(kube_proxy_nft_chain_kind("service-ULMVA6XW-ns1/svc1/tcp/p80"), "service");
  EXPECT_EQ(kube_proxy_nft_chain_kind("service-ULMVA6XW-ns1/svc1/tcp/"), "service");  // unnamed port
  EXPECT_EQ(kube_proxy_nft_chain_kind("local-ULMVA6XW-ns1/svc1/udp/dns"), "local");
  EXPECT_EQ(kube_proxy_nft_chain_kind("external-42NFTM6N-ns2/svc2/tcp/p80"), "external");
  EXPECT_EQ(kube_proxy_nft_chain_kind("endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"), "endpoint");
  EXPECT_EQ(kube_proxy_nft_chain_kind("endpoint-ZVRFLKHO-ns1/svc1/tcp/p80__fd00.10.180..1/80"), "endpoint");
  EXPECT_EQ(kube_proxy_nft_chain_kind("firewall-HVFWP5L3-ns5/svc5/tcp/p80"), "firewall");
  for (const char* helper : {"service-endpoints-check", "firewall-check", "nodeport-endpoints-check", "services",
                             "masquerading", "mark-for-masquerade", "reject-chain", "cluster-ips-check",
                             "endpoints-check", "filter-input", "nat-prerouting",
                             "service-ulmva6xw-ns1/svc1/tcp/p80",   // lower case: not base32
                             "service-ULMVA6X1-ns1/svc1/tcp/p80",   // '1' is not base32
                             "service-ULMVA6XW-ns1/svc1"}) {        // no protocol/port
    EXPECT_EQ(kube_proxy_nft_chain_kind(helper), "helper") << helper;
  }
}

TEST(AnalysisMode, IpvsAndMixed) {
  auto ipvs = analyze(with_tables({table(Backend::IptablesNft, "ip", "nat",
                                         {chain("KUBE-SERVICES", {rule_to("0.0.0.0/0", "KUBE-MARK-MASQ")}),
                                          chain("KUBE-LOAD-BALANCER"), chain("KUBE-NODE-PORT")})}));
  EXPECT_EQ(ipvs.mode.id, "kube-proxy-ipvs");
  model::Table kp = table(Backend::Nftables, "ip", "kube-proxy", {chain("services")});
  auto mixed = analyze(
      with_tables({table(Backend::IptablesNft, "ip", "nat", {chain("KUBE-SVC-A"), chain("KUBE-SEP-B")}), kp}));
  EXPECT_EQ(mixed.mode.id, "mixed");
}

TEST(AnalysisMode, NothingCollectedIsUnknown) {
  model::Snapshot s;
  s.unavailable.push_back({"netfilter", "cannot open netlink socket", 1, "run as root"});
  auto a = analyze(s);
  EXPECT_EQ(a.mode.id, "unknown");
  EXPECT_TRUE(a.netfilter.availability.unavailable);
  EXPECT_NE(a.netfilter.availability.reason.find("cannot open netlink socket (run as root)"), std::string::npos);
}

TEST(AnalysisAvailability, ChildSectionMakesParentIncomplete) {
  auto s = with_tables({});
  s.unavailable.push_back({"netfilter.iptables-legacy", "ip_tables module not loaded", 0, ""});
  auto a = analyze(s);
  EXPECT_TRUE(a.netfilter.availability.usable());
  ASSERT_EQ(a.netfilter.availability.incomplete.size(), 1u);
  EXPECT_EQ(a.netfilter.availability.incomplete[0], "netfilter.iptables-legacy: ip_tables module not loaded");
  EXPECT_FALSE(a.ebpf.availability.collected);
  EXPECT_FALSE(a.ebpf.availability.unavailable);
}

TEST(AnalysisEbpf, OwnersByNamePinAndMapUse) {
  model::Snapshot s;
  s.ebpf.collected = true;
  auto map = [](uint32_t id, std::string name, uint64_t mem, std::vector<std::string> pins = {}) {
    model::BpfMap m;
    m.id = id;
    m.name = std::move(name);
    m.bytes_memlock = mem;
    m.pinned = std::move(pins);
    return m;
  };
  s.ebpf.maps = {map(1, "cilium_lb4_serv", 1000), map(2, "bpf_lxc.rodata", 10),
                 map(3, "ct_map", 500, {"/sys/fs/bpf/calico/ct"}), map(4, "cali_v4_nat_fe", 200),
                 map(5, "lonely", 7)};
  auto prog = [](uint32_t id, std::string name, uint64_t mem, std::vector<uint32_t> maps) {
    model::BpfProgram p;
    p.id = id;
    p.type = "sched_cls";
    p.name = std::move(name);
    p.bytes_memlock = mem;
    p.map_ids = std::move(maps);
    return p;
  };
  s.ebpf.programs = {prog(10, "tail_handle_ipv4", 4096, {1, 2}), prog(11, "cil_from_netdev", 4096, {2}),
                     prog(12, "calico_tc_main", 8192, {3, 4}), prog(13, "sd_devices", 100, {}),
                     prog(14, "mystery", 1, {5})};
  auto a = analyze(s);
  EXPECT_EQ(a.ebpf.programs, 5u);
  EXPECT_EQ(a.ebpf.maps, 5u);
  EXPECT_EQ(a.ebpf.memlock_bytes, 1000u + 10 + 500 + 200 + 7 + 4096 + 4096 + 8192 + 100 + 1);
  EXPECT_EQ(a.ebpf.owners.at("cilium").programs, 2u);  // tail_handle_ipv4 by the maps it uses
  EXPECT_EQ(a.ebpf.owners.at("cilium").maps, 2u);      // .rodata used only by Cilium programs
  EXPECT_EQ(a.ebpf.owners.at("cilium").memlock_bytes, 1000u + 10 + 4096 + 4096);
  EXPECT_EQ(a.ebpf.owners.at("calico").maps, 2u);      // by pin path and by name
  EXPECT_EQ(a.ebpf.owners.at("system").programs, 1u);
  EXPECT_EQ(a.ebpf.owners.at("other").programs, 1u);
  EXPECT_EQ(a.ebpf.owners.at("other").maps, 1u);
  EXPECT_EQ(a.ebpf.programs_by_type.at("sched_cls"), 5u);
}

}  // namespace
}  // namespace dpscope::analysis
