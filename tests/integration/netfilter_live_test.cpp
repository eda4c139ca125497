// Live netfilter snapshot vs the standard tools, on real kernel state in dps-*
// namespaces: what `dpscope snapshot --netns` reads must equal what
// `dpscope import` makes of iptables-save / iptables-legacy-save / nft -j of the
// same namespace, and the counts must match those taken from the save text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <tuple>

#include "tests/integration/netfilter_support.h"
#include "tests/support/kube_proxy_nft.h"
#include "tests/support/nft_text.h"

namespace dpscope::test {
namespace {

using model::Backend;

// Loads `file` with both iptables backends into `ns` (nfacct objects first: kube-proxy's
// KUBE-FORWARD / KUBE-NODEPORTS rules count into them).
void load_both_backends(const Netns& ns, const std::string& file) {
  ns.sh("nfacct add ct_state_invalid_dropped_pkts && nfacct add localhost_nps_accepted_pkts");
  ns.sh("iptables-nft-restore < '" + file + "'");
  ns.sh("iptables-legacy-restore < '" + file + "'");
}

void expect_iptables_counts(const model::Snapshot& live, const nf::ToolView& view) {
  EXPECT_EQ(nf::live_rule_counts(live, Backend::IptablesNft, "ip"), nf::save_rule_counts(view.nft_save));
  EXPECT_EQ(nf::live_rule_counts(live, Backend::IptablesLegacy, "ip"), nf::save_rule_counts(view.legacy_save));
  EXPECT_EQ(nf::live_service_ips(live, Backend::IptablesNft), nf::save_service_ips(view.nft_save));
  EXPECT_EQ(nf::live_service_ips(live, Backend::IptablesLegacy), nf::save_service_ips(view.legacy_save));
}

class IptablesFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(IptablesFixture, LiveEqualsImportOnBothBackends) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-ipt");
  TempDir dir;
  load_both_backends(ns, source_path(GetParam()));
  const model::Snapshot live = nf::live_snapshot(ns, dir);
  const nf::ToolView view = nf::tool_view(ns, dir);
  ASSERT_TRUE(live.netfilter.collected);
  EXPECT_TRUE(live.unavailable.empty());
  // Both backends are present and reported as such.
  EXPECT_NE(view.nft_save.find("COMMIT"), std::string::npos);
  EXPECT_NE(view.legacy_save.find("COMMIT"), std::string::npos);
  nf::expect_same_netfilter(live, view.imported);
  expect_iptables_counts(live, view);
  size_t undecoded = 0;
  for (const auto& t : live.netfilter.tables) {
    for (const auto& c : t.chains) {
      for (const auto& r : c.rules) undecoded += r.undecoded;
    }
  }
  EXPECT_EQ(undecoded, 0u);
}

// Every loadable kube-proxy iptables dump (tracepacket-with-builtin-chains has
// unquoted multi-word comments that iptables-restore rejects; see SOURCES.md),
// the Cilium node replayed through iptables-nft, and the kind pair.
INSTANTIATE_TEST_SUITE_P(
    Upstream, IptablesFixture,
    ::testing::Values("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt",
                      "fixtures/upstream/kube-proxy-iptables/sort-basic-svl-localpolicy.saved-nft.txt",
                      "fixtures/upstream/kube-proxy-iptables/syncrepeated-final-fullresync-with-X.saved-nft.txt",
                      "fixtures/upstream/kube-proxy-iptables/syncrepeated-step1-two-clusterip.saved-nft.txt",
                      "fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.golden.txt",
                      "fixtures/upstream/cilium/gke-dpv2-cilium-kpr.replayed.saved-nft.txt",
                      "fixtures/scenarios/kind-kube-proxy.iptables-save.txt",
                      "fixtures/scenarios/kind-cilium-kpr.iptables-save.txt"));

class NftablesFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(NftablesFixture, LiveEqualsImportOfNftJson) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-nft");
  TempDir dir;
  // kube-proxy's golden file adds rules that goto chains declared later in the
  // file; declare every table/set/map/chain first (as SOURCES.md describes).
  const std::string file = source_path(GetParam());
  ns.sh("{ grep -E '^add (table|set|map|chain) ' '" + file + "'; grep -vE '^add (table|set|map|chain) ' '" + file +
        "'; } | nft -f -");
  const model::Snapshot live = nf::live_snapshot(ns, dir);
  const nf::ToolView view = nf::tool_view(ns, dir);
  ASSERT_TRUE(live.netfilter.collected);
  nf::expect_same_netfilter(live, view.imported);
  // Independent of the importer: tables and element counts straight from nft's JSON.
  const auto json = nlohmann::json::parse(view.nft_json);
  size_t rules = 0, elements = 0, live_rules = 0, live_elements = 0;
  for (const auto& item : json["nftables"]) {
    if (item.contains("rule")) ++rules;
    if (item.contains("set") || item.contains("map")) {
      const auto& s = item.contains("set") ? item["set"] : item["map"];
      if (s.contains("elem")) elements += s["elem"].size();
    }
  }
  for (const auto& t : live.netfilter.tables) {
    EXPECT_EQ(t.backend, Backend::Nftables);
    for (const auto& c : t.chains) live_rules += c.rule_count;
    for (const auto& s : t.sets) live_elements += s.element_count;
  }
  EXPECT_EQ(live_rules, rules);
  EXPECT_EQ(live_elements, elements);
  EXPECT_GT(rules, 20u);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, NftablesFixture,
    ::testing::Values("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.golden.nft",
                      "fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv4-example.golden.nft",
                      "fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv6-example.golden.nft"));

// The facts a native rule's record carries, read here from the rule as
// `nft list ruleset` prints it: addresses, protocol, destination port, the nat
// statement's arguments and the last statement's verdict.
struct NftTextFacts {
  std::string source, destination, protocol, dport, target, target_args, verdict_kind = "none";
};

NftTextFacts facts_of_nft_text(const std::string& printed) {
  // nft prints a rule's comment last.
  const std::string rule = std::regex_replace(printed, std::regex(R"( comment ".*"$)"), "");
  static const std::regex addr(R"((?:^| )ip6? (saddr|daddr) (!= )?([0-9a-f][0-9a-f:.]*(?:/[0-9]+)?)(?= |$))");
  static const std::regex l4(R"((?:^| )meta l4proto (!= )?(tcp|udp|sctp)(?= |$))");
  static const std::regex port(R"((?:^| )(tcp|udp|sctp|th) dport (!= )?([0-9]+)(?:-([0-9]+))?(?= |$))");
  static const std::regex nat(R"((?:^| )(dnat|snat) (?:ip6? )?(to \S+))");
  NftTextFacts f;
  std::smatch m;
  for (auto it = std::sregex_iterator(rule.begin(), rule.end(), addr); it != std::sregex_iterator(); ++it) {
    std::string cidr = (*it)[3];
    if (cidr.find('/') == std::string::npos) cidr += cidr.find(':') != std::string::npos ? "/128" : "/32";
    ((*it)[1] == "saddr" ? f.source : f.destination) = ((*it)[2].matched ? "!" : "") + cidr;
  }
  if (std::regex_search(rule, m, l4)) f.protocol = std::string(m[1].matched ? "!" : "") + std::string(m[2]);
  if (std::regex_search(rule, m, port)) {
    f.dport = std::string(m[2].matched ? "!" : "") + std::string(m[3]) + (m[4].matched ? ":" + std::string(m[4]) : "");
    if (m[1] != "th") f.protocol = m[1];
  }
  const std::string last = rule.substr(rule.rfind(' ') == std::string::npos ? 0 : rule.rfind(' ') + 1);
  if (std::regex_search(rule, m, nat)) {
    f.verdict_kind = "target", f.target = m[1], f.target_args = m[2];
  } else if (std::regex_search(rule, m, std::regex(R"((?:^| )(jump|goto) (\S+)$)"))) {
    f.verdict_kind = m[1], f.target = m[2];
  } else if (std::regex_search(rule, m, std::regex(R"( vmap @(\S+)$)"))) {
    f.verdict_kind = "vmap", f.target = m[1];
  } else if (rule.find(" vmap {") != std::string::npos) {
    f.verdict_kind = "vmap";
    if (std::regex_search(rule, m, std::regex(R"((?:^| )(numgen (?:random|inc) mod [0-9]+(?: offset [0-9]+)?) vmap \{)"))) {
      f.target_args = m[1];
    }
  } else if (last == "accept" || last == "drop" || last == "return" || last == "continue") {
    f.verdict_kind = "verdict", f.target = last;
  } else if (std::regex_search(rule, std::regex(R"((?:^| )reject(?: with .*)?$)"))) {
    f.verdict_kind = "target", f.target = "reject";
  } else if (std::regex_search(rule, std::regex(R"((?:^| )masquerade(?: [a-z-]+)*$)"))) {
    f.verdict_kind = "target", f.target = "masquerade";
  }
  return f;
}

NftTextFacts facts_of_record(const model::Rule& r) {
  NftTextFacts f;
  auto prefix = [](const model::HeapOptional<model::Prefix>& p) {
    return p ? (p->negated ? "!" : "") + p->cidr : std::string();
  };
  f.source = prefix(r.match.source);
  f.destination = prefix(r.match.destination);
  f.protocol = (r.match.protocol_negated ? "!" : "") + r.match.protocol;
  f.dport = r.match.dport.empty() ? "" : (r.match.dport_negated ? "!" : "") + r.match.dport;
  f.verdict_kind = r.verdict_kind;
  f.target = r.target;
  f.target_args = r.target_args;
  return f;
}

// kube-proxy v1.30.3's own nftables ruleset (300 Services, fixtures/upstream/
// real-kube-proxy/), and kube-proxy's goldens, loaded with nft -f: the live
// collector and the nft -j import decode every native rule to the same record
// (addresses, protocol, port, dnat, jump/goto, vmap), and that record says
// what `nft list ruleset` prints, rule by rule.
TEST(NetfilterLive, NativeKubeProxyRulesDecodedAsNftPrintsThem) {
  DPS_REQUIRE_ROOT();
  const std::string reorder = "{ grep -E '^add (table|set|map|chain) ' F; grep -vE '^add (table|set|map|chain) ' F; }";
  const std::vector<std::string> loads = {
      kube_proxy_nft_load("fixtures/upstream/real-kube-proxy/nftables-300x5/nft-ruleset.txt.zst"),
      std::regex_replace(reorder, std::regex("F"),
                         "'" + source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.golden.nft") +
                             "'") + " | nft -f -",
      "nft -f '" + source_path("fixtures/upstream/kube-proxy-nftables/knftables-fake-kubeproxy-ipv6-example.golden.nft") +
          "'"};
  for (const auto& load : loads) {
    SCOPED_TRACE(load);
    Netns ns("nf-kpn");
    TempDir dir;
    ns.sh(load);
    const model::Snapshot live = nf::live_snapshot(ns, dir);
    const nf::ToolView view = nf::tool_view(ns, dir);
    nf::expect_same_netfilter(live, view.imported);
    const NftTextRules text = nft_text_rules(ns.sh("nft list ruleset"));
    size_t rules = 0, destinations = 0, dnats = 0, ports = 0, picks = 0, reported = 0;
    for (const auto& t : live.netfilter.tables) {
      ASSERT_EQ(t.backend, Backend::Nftables);
      for (const auto& c : t.chains) {
        auto it = text.chains.find({t.family, t.name, c.name});
        ASSERT_NE(it, text.chains.end()) << c.name;
        ASSERT_EQ(it->second.size(), c.rules.size()) << c.name;
        for (size_t i = 0; i < c.rules.size(); ++i) {
          const auto& r = c.rules[i];
          ++rules;
          destinations += r.match.destination.has_value();
          dnats += r.target == "dnat" && !r.target_args.empty();
          ports += !r.match.dport.empty();
          picks += r.verdict_kind == "vmap" && r.target_args.rfind("numgen ", 0) == 0;
          const NftTextFacts want = facts_of_nft_text(it->second[i]), got = facts_of_record(r);
          auto same = [](const NftTextFacts& a, const NftTextFacts& b) {
            return std::tie(a.source, a.destination, a.protocol, a.dport, a.target, a.target_args, a.verdict_kind) ==
                   std::tie(b.source, b.destination, b.protocol, b.dport, b.target, b.target_args, b.verdict_kind);
          };
          if (!same(want, got) && reported++ < 20) {
            ADD_FAILURE() << c.name << " #" << i + 1 << ": " << it->second[i] << "\n nft:    " << want.destination
                          << " src " << want.source << " " << want.protocol << " " << want.dport << " "
                          << want.verdict_kind << " " << want.target << " " << want.target_args << "\n record: "
                          << got.destination << " src " << got.source << " " << got.protocol << " " << got.dport
                          << " " << got.verdict_kind << " " << got.target << " " << got.target_args;
          }
        }
      }
    }
    std::printf("native rules: %zu, with a destination %zu, a dport %zu, dnat to %zu, numgen endpoint picks %zu\n", rules,
                destinations, ports, dnats, picks);
    EXPECT_GT(destinations, 0u);
    EXPECT_GT(dnats, 0u);
    EXPECT_GT(picks, 0u);
    // Each rule's text is nft's line: by default for every rule; with
    // --light for every rule but the numgen picks (their anonymous maps unread).
    const model::Snapshot light = nf::live_snapshot(ns, dir, {"--light"});
    size_t exact = 0, exact_light = 0, marked_light = 0;
    reported = 0;
    for (const auto* snap : {&live, &light}) {
      for (const auto& t : snap->netfilter.tables) {
        for (const auto& c : t.chains) {
          const auto& lines = text.chains.at({t.family, t.name, c.name});
          for (size_t i = 0; i < c.rules.size(); ++i) {
            const model::Rule& r = c.rules[i];
            if (snap == &light && nf::text_needs_rules_flag(r)) {
              ++marked_light;
              EXPECT_EQ(r.verdict_kind, "vmap") << lines[i];
              continue;
            }
            if (r.text == lines[i]) {
              ++(snap == &live ? exact : exact_light);
            } else if (reported++ < 20) {
              ADD_FAILURE() << c.name << " #" << i + 1 << "\n nft:  " << lines[i] << "\n live: " << r.text << " " << r.raw;
            }
          }
        }
      }
    }
    std::printf("rule text equal to nft list ruleset: %zu of %zu by default; with --light %zu, and %zu numgen picks marked\n",
                exact, rules, exact_light, marked_light);
    EXPECT_EQ(exact, rules);
    EXPECT_EQ(exact_light + marked_light, rules);
    EXPECT_EQ(marked_light, picks);
  }
}

// IPv6 on both backends: prefixes, negation, multiport, ipv6-icmp, goto, REJECT/DNAT/MASQUERADE arguments.
TEST(NetfilterLive, Ip6tablesBothBackends) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-ip6");
  TempDir dir;
  write_text(dir.file("v6.txt"), R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
-A INPUT -s fd00::/64 -d fd00:1::5/128 -p tcp -m tcp --dport 443 -m comment --comment "v6 svc" -j ACCEPT
-A INPUT ! -s 2001:db8::/32 -p udp -m multiport --dports 53,5353 -j DROP
-A INPUT -p ipv6-icmp -j ACCEPT
-A INPUT -p tcp -m tcp ! --dport 22 -j REJECT --reject-with icmp6-port-unreachable
-A FORWARD -g KUBE-SERVICES
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d fd00:1::5/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination [fd00:2::7]:8080
-A POSTROUTING -j MASQUERADE --random-fully
COMMIT
)");
  ns.sh("ip6tables-nft-restore < " + dir.file("v6.txt") + " && ip6tables-legacy-restore < " + dir.file("v6.txt"));
  const model::Snapshot live = nf::live_snapshot(ns, dir);
  const nf::ToolView view = nf::tool_view(ns, dir);
  nf::expect_same_netfilter(live, view.imported);
  EXPECT_EQ(nf::live_rule_counts(live, Backend::IptablesNft, "ip6"), nf::save_rule_counts(view.nft6_save));
  EXPECT_EQ(nf::live_rule_counts(live, Backend::IptablesLegacy, "ip6"), nf::save_rule_counts(view.legacy6_save));
  const model::Table* nat = model::find_table(live, Backend::IptablesLegacy, "ip6", "nat");
  ASSERT_NE(nat, nullptr);
  EXPECT_EQ(model::find_chain(*nat, "PREROUTING")->rules.at(0).target_args, "--to-destination [fd00:2::7]:8080");
}

// A generated 1,000-service x 5-endpoint node in all three forms at once.
TEST(NetfilterLive, GeneratedThousandServicesAllBackends) {
  DPS_REQUIRE_ROOT();
  constexpr int kServices = 1000, kEndpoints = 5;
  Netns ns("nf-gen");
  TempDir dir;
  const std::string gen = nf::gen_script();
  const std::string args = std::to_string(kServices) + " " + std::to_string(kEndpoints);
  ns.sh(gen + " iptables " + args + " > " + dir.file("g.ipt"));
  ns.sh("iptables-nft-restore < " + dir.file("g.ipt") + " && iptables-legacy-restore < " + dir.file("g.ipt"));
  ns.sh(gen + " nftables " + args + " | nft -f -");
  const model::Snapshot live = nf::live_snapshot(ns, dir);
  const nf::ToolView view = nf::tool_view(ns, dir);
  nf::expect_same_netfilter(live, view.imported);
  expect_iptables_counts(live, view);
  // One ClusterIP rule per service plus one LoadBalancer rule per 50th.
  EXPECT_EQ(nf::live_service_ips(live, Backend::IptablesNft).size(), size_t{kServices + kServices / 50});
  const model::Table* kp = model::find_table(live, Backend::Nftables, "ip", "kube-proxy");
  ASSERT_NE(kp, nullptr);
  for (const auto& s : kp->sets) {
    if (s.name == "service-ips" || s.name == "cluster-ips") {
      EXPECT_EQ(s.element_count, size_t{kServices}) << s.name;
    }
  }
  size_t endpoint_chains = 0;
  for (const auto& c : kp->chains) endpoint_chains += c.name.rfind("endpoint-", 0) == 0;
  EXPECT_EQ(endpoint_chains, size_t{kServices * kEndpoints});
}

// The default snapshot reads the anonymous maps' elements and prints them in
// their rule's text, as nft does (not as sets of their own); --light leaves
// them out, marks those rules and records what it left out. --rules is the
// default, still accepted.
TEST(NetfilterLive, AnonymousMapsAreInTheirRulesTextLightLeavesThemOut) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-anon");
  TempDir dir;
  ns.sh(nf::gen_script() + " nftables 20 3 | nft -f -");
  const model::Snapshot light = nf::live_snapshot(ns, dir, {"--light"});
  const model::Snapshot full = nf::live_snapshot(ns, dir);
  EXPECT_EQ(nf::live_snapshot(ns, dir, {"--rules"}).netfilter, full.netfilter);
  const model::Table* a = model::find_table(light, Backend::Nftables, "ip", "kube-proxy");
  const model::Table* b = model::find_table(full, Backend::Nftables, "ip", "kube-proxy");
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(full.netfilter.collection.nft_light);
  EXPECT_TRUE(full.netfilter.collection.nft_left_out.empty());
  EXPECT_TRUE(light.netfilter.collection.nft_light);
  ASSERT_EQ(light.netfilter.collection.nft_left_out.size(), 1u);  // no dynamic set in this table
  EXPECT_EQ(light.netfilter.collection.nft_left_out[0].rfind("the elements of 20 anonymous sets and maps: 20 rules over "
                                                             "them have no text",
                                                             0),
            0u)
      << light.netfilter.collection.nft_left_out[0];
  for (const auto* t : {a, b}) {
    for (const auto& s : t->sets) EXPECT_NE(s.name.rfind("__", 0), 0u) << s.name;
  }
  // The rules are the same records, except that a numgen vmap's text needs
  // its anonymous map's elements: printed by default, marked with --light.
  ASSERT_EQ(a->chains.size(), b->chains.size());
  size_t vmaps = 0;
  for (size_t c = 0; c < a->chains.size(); ++c) {
    ASSERT_EQ(a->chains[c].rules.size(), b->chains[c].rules.size()) << a->chains[c].name;
    for (size_t i = 0; i < a->chains[c].rules.size(); ++i) {
      const model::Rule &p = a->chains[c].rules[i], &f = b->chains[c].rules[i];
      if (nf::text_needs_rules_flag(p)) {
        ++vmaps;
        EXPECT_EQ(f.text.rfind("numgen random mod 3 vmap { 0 : goto endpoint-", 0), 0u) << f.text;
        EXPECT_EQ(nf::rule_text_without_text(p), nf::rule_text_without_text(f));
      } else {
        EXPECT_EQ(p, f) << a->chains[c].name << " rule " << i + 1;
        EXPECT_FALSE(p.text.empty()) << a->chains[c].name << " rule " << i + 1 << ": " << p.raw;
      }
    }
  }
  EXPECT_EQ(vmaps, 20u);
}

// A dynamic set (kube-proxy's affinity-*) holds runtime state the packet path
// adds: a light snapshot says its elements were not read (no count: unknown is
// not zero), `where` says it did not search them, and the default reads them as nft
// lists them. A plain named set is read either way.
TEST(NetfilterLive, DynamicSetElementsAreLeftOutOnlyByLight) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-dyn");
  TempDir dir;
  ns.sh("nft -f - <<'EOF'\n"
        "table ip dps {\n"
        "  set affinity-a { type ipv4_addr; flags dynamic; elements = { 10.1.0.7, 10.1.0.8 } }\n"
        "  set plain { type ipv4_addr; elements = { 10.2.0.9 } }\n"
        "}\n"
        "EOF");
  const model::Snapshot plain = nf::live_snapshot(ns, dir, {"--light"});
  const std::string plain_json = read_text(dir.file("live.json"));
  const RunResult where = run({dpscope_bin(), "where", "10.1.0.7", dir.file("live.json"), "--width", "0"});
  const model::Snapshot full = nf::live_snapshot(ns, dir);
  const model::Table* a = model::find_table(plain, Backend::Nftables, "ip", "dps");
  const model::Table* b = model::find_table(full, Backend::Nftables, "ip", "dps");
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->sets.size(), 2u);
  ASSERT_EQ(b->sets.size(), 2u);
  // sets by name: affinity-a, plain
  EXPECT_NE(a->sets[0].elements_unread.find("dynamic set"), std::string::npos) << a->sets[0].elements_unread;
  EXPECT_TRUE(a->sets[0].elements.empty());
  EXPECT_FALSE(a->sets[0].elements_recorded);
  EXPECT_EQ(plain_json.find("\"element_count\": 0"), std::string::npos) << "an unread set must not say 0 elements";
  EXPECT_TRUE(a->sets[1].elements_unread.empty());
  ASSERT_EQ(a->sets[1].elements.size(), 1u);
  EXPECT_EQ(a->sets[1].elements[0].key, "10.2.0.9");
  EXPECT_NE(where.out.find("1 dynamic set (runtime state"), std::string::npos) << where.out << where.err;
  EXPECT_NE(where.out.find("left out by snapshot --light: the elements of 1 dynamic set"), std::string::npos) << where.out;
  // By default: the elements nft lists.
  EXPECT_TRUE(b->sets[0].elements_unread.empty());
  std::multiset<std::string> got, want;
  for (const auto& e : b->sets[0].elements) got.insert(e.key);
  const auto listed = nlohmann::json::parse(ns.sh("nft -j list set ip dps affinity-a"));
  for (const auto& item : listed["nftables"]) {
    if (!item.contains("set")) continue;
    for (const auto& e : item["set"]["elem"]) want.insert(e.get<std::string>());
  }
  EXPECT_EQ(want, (std::multiset<std::string>{"10.1.0.7", "10.1.0.8"}));
  EXPECT_EQ(got, want);
  EXPECT_EQ(b->sets[0].element_count, 2u);
  EXPECT_EQ(a->sets[1], b->sets[1]);
}

// Counters removed: the rulesets before and after must be byte-identical.
std::string strip_counters(const Netns& ns) {
  return ns.sh(
      "{ iptables-nft-save; iptables-legacy-save; nft list ruleset; } | sed -e 's/\\[[0-9]*:[0-9]*\\]/[]/' "
      "-e 's/counter packets [0-9]* bytes [0-9]*/counter/' | grep -v '^#'");
}

TEST(NetfilterLive, TwentySnapshotsChangeNothing) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-ro");
  TempDir dir;
  const std::string gen = nf::gen_script();
  ns.sh(gen + " iptables 100 3 > " + dir.file("g.ipt"));
  ns.sh("iptables-nft-restore < " + dir.file("g.ipt") + " && iptables-legacy-restore < " + dir.file("g.ipt"));
  ns.sh(gen + " nftables 100 3 | nft -f -");
  const std::string before = strip_counters(ns);
  const model::Snapshot first = nf::live_snapshot(ns, dir);
  for (int i = 0; i < 19; ++i) {
    const model::Snapshot s = nf::live_snapshot(ns, dir, i % 2 ? std::vector<std::string>{"--light"}
                                                              : std::vector<std::string>{});
    EXPECT_EQ(s.netfilter.collection.nft_generation, first.netfilter.collection.nft_generation);
  }
  EXPECT_EQ(strip_counters(ns), before);
  const model::Snapshot last = nf::live_snapshot(ns, dir);
  EXPECT_EQ(last.netfilter.collection.nft_generation, first.netfilter.collection.nft_generation);
  EXPECT_EQ(last.netfilter.collection.nft_retries, 0u);
}

TEST(NetfilterLive, MissingNamespaceExitsTwo) {
  DPS_REQUIRE_ROOT();
  TempDir dir;
  const RunResult r = run({dpscope_bin(), "snapshot", "--netns", "dps-no-such-netns-" + std::to_string(getpid()),
                           "--no-ebpf", "-o", dir.file("x.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such network namespace"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(dir.file("x.json")).good());
}

// Without CAP_NET_ADMIN: the sections are unavailable with EPERM and a hint, never zeros; with
// --no-ebpf nothing at all could be read, so exit 5 (not 3) and the reason once.
TEST(NetfilterLive, WithoutCapabilitiesSectionIsUnavailable) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-caps");
  ns.sh("iptables-legacy -N DPS-TEST && iptables-nft -N DPS-TEST");
  // --no-agents: the agents section reads the host's processes (a kube-proxy
  // the test did not start would be an agent whose figures it cannot read);
  // what this test expects comes from the namespace it made.
  for (const std::string& drop : {std::string("setpriv --inh-caps=-all --bounding-set=-all"),
                                  std::string("setpriv --reuid=65534 --regid=65534 --clear-groups")}) {
    const RunResult r = run({"ip", "netns", "exec", ns.name(), "/bin/sh", "-c",
                             drop + " " + dpscope_bin() + " snapshot --no-ebpf --no-agents -o -"});
    EXPECT_EQ(r.exit_code, 5) << drop << ": " << r.err;
    const model::Snapshot s = model::from_json_text(r.out, "stdout");
    EXPECT_FALSE(s.netfilter.collected) << drop;
    EXPECT_TRUE(s.netfilter.tables.empty()) << drop;
    ASSERT_TRUE(model::is_unavailable(s, "netfilter")) << drop;
    for (const auto& u : s.unavailable) {
      EXPECT_TRUE(u.error == EPERM || u.error == EACCES) << drop << " " << u.section << ": " << u.reason;
      EXPECT_NE(u.hint.find("CAP_NET_ADMIN"), std::string::npos) << u.hint;
    }
    // Every part is named, in section order (the IP sets are read with the same capability).
    EXPECT_EQ(r.err.rfind("dpscope: nothing could be read (ipsets: ipset netlink: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; netfilter: "), std::string::npos) << r.err;
    ASSERT_TRUE(model::is_unavailable(s, "ipsets")) << drop;
  }
}

// Which `ip filter` tables are iptables-nft's: the ones iptables-nft-save
// lists. One rule at a time, each a form iptables-nft does or does not
// write (its limit and log only in the forms it writes them); the oracle is
// iptables-nft-save's "# Table `filter' is incompatible, use 'nft' tool.",
// and the live snapshot and the import of nft -j must both agree with it.
TEST(NetfilterLive, TablesIptablesNftCannotListAreNative) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-compat");
  TempDir tmp;
  size_t incompatible = 0;
  for (const char* rule : {"limit rate 10/second accept", "limit rate over 10/second accept",
                           "limit rate 10 kbytes/second accept", "log group 2 accept", "log prefix \"x \" accept",
                           "log group 2 prefix \"x \" accept", "ct state established accept",
                           "limit rate over 1 mbytes/second burst 2 mbytes drop", "ip saddr 10.0.0.1 counter accept",
                           "tcp dport 22 reject",
                           "ip saddr { 10.0.0.1, 10.0.0.2 } drop", "notrack"}) {
    SCOPED_TRACE(rule);
    ns.sh("nft flush ruleset");
    ns.sh(std::string("nft 'add table ip filter; add chain ip filter INPUT { type filter hook input priority 0; }; "
                      "add rule ip filter INPUT ") + rule + "'");
    const bool listed = ns.sh("iptables-nft-save").find("# Table `filter' is incompatible") == std::string::npos;
    incompatible += !listed;
    const std::string live = tmp.file("live.json"), nft_json = tmp.file("nft.json"), imported = tmp.file("import.json");
    RunResult s = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "-q", "-o", live});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    write_text(nft_json, ns.sh("nft -j list ruleset"));
    RunResult i = run({dpscope_bin(), "import", "--nft-json", nft_json, "-o", imported});
    ASSERT_EQ(i.exit_code, 0) << i.err;
    const auto want = listed ? model::Backend::IptablesNft : model::Backend::Nftables;
    for (const std::string& file : {live, imported}) {
      const model::Snapshot snap = model::load_snapshot(file);
      ASSERT_EQ(snap.netfilter.tables.size(), 1u) << file;
      EXPECT_EQ(snap.netfilter.tables[0].backend, want) << file;
      if (!listed) {  // nft's text, and no iptables built-in chains made up
        ASSERT_EQ(snap.netfilter.tables[0].chains.size(), 1u) << file;
        EXPECT_EQ(snap.netfilter.tables[0].chains[0].rules.at(0).text,
                  nft_text_rules(ns.sh("nft list ruleset")).chains.at({"ip", "filter", "INPUT"}).at(0))
            << file;
      }
    }
  }
  EXPECT_EQ(incompatible, 7u);
}

}  // namespace
}  // namespace dpscope::test
