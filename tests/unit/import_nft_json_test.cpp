// The `nft -j list ruleset` importer on small inline documents.
#include <gtest/gtest.h>

#include "collectors/import/import.h"
#include "util/error.h"

namespace dpscope::importer {
namespace {

using model::Backend;

std::string error_of(const std::string& text) {
  try {
    parse_nft_json(text, "n.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kRuleset = R"({"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}},
 {"table": {"family": "ip", "name": "kube-proxy", "handle": 2}},
 {"map": {"family": "ip", "name": "service-ips", "table": "kube-proxy", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 6, "comment": "ClusterIP traffic", "map": "verdict",
   "elem": [[{"concat": ["172.30.0.41", "tcp", 80]}, {"goto": {"target": "service-ULMVA6XW-ns1/svc1/tcp/p80"}}],
            [{"elem": {"val": {"concat": ["172.30.0.46", "tcp", 80]}, "comment": "ns6/svc6:p80"}}, {"drop": null}]]}},
 {"set": {"family": "ip", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv4_addr", "handle": 1, "elem": ["172.30.0.41", {"prefix": {"addr": "10.0.0.0", "len": 8}}, {"range": ["10.1.0.1", "10.1.0.9"]}]}},
 {"set": {"family": "ip", "name": "empty", "table": "kube-proxy", "type": "ipv4_addr", "handle": 3, "flags": ["dynamic", "timeout"]}},
 {"chain": {"family": "ip", "table": "kube-proxy", "name": "nat-prerouting", "handle": 10, "type": "nat", "hook": "prerouting", "prio": -100, "policy": "accept"}},
 {"chain": {"family": "ip", "table": "kube-proxy", "name": "services", "handle": 11}},
 {"chain": {"family": "ip", "table": "kube-proxy", "name": "endpoint-X", "handle": 12}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "nat-prerouting", "handle": 20, "expr": [{"jump": {"target": "services"}}]}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "services", "handle": 21, "expr": [{"match": {"op": "==", "left": {"concat": []}, "right": 1}}, {"vmap": {"key": {"concat": []}, "data": "@service-ips"}}]}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "services", "handle": 22, "comment": "random pick", "expr": [{"vmap": {"key": {"numgen": {}}, "data": {"set": [[0, {"goto": {"target": "endpoint-X"}}]]}}}]}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "endpoint-X", "handle": 23, "expr": [{"counter": {"packets": 0, "bytes": 0}}]}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "endpoint-X", "handle": 24, "expr": [{"dnat": {"addr": "10.0.1.1", "port": 80}}]}},
 {"rule": {"family": "ip", "table": "kube-proxy", "chain": "endpoint-X", "handle": 25, "expr": [{"drop": null}]}}
]})";

TEST(ImportNftJson, TablesChainsRulesSetsMaps) {
  auto tables = parse_nft_json(kRuleset, "n.json");
  ASSERT_EQ(tables.size(), 1u);
  const auto& t = tables[0];
  EXPECT_EQ(t.backend, Backend::Nftables);
  EXPECT_EQ(t.family, "ip");
  EXPECT_EQ(t.name, "kube-proxy");
  ASSERT_EQ(t.chains.size(), 3u);
  const auto* pre = model::find_chain(t, "nat-prerouting");
  ASSERT_TRUE(pre && pre->base);
  EXPECT_EQ(pre->base->hook, "prerouting");
  EXPECT_EQ(pre->base->type, "nat");
  EXPECT_EQ(pre->base->priority, -100);
  EXPECT_EQ(pre->base->policy, "accept");
  EXPECT_EQ(pre->rules[0].verdict_kind, "jump");
  EXPECT_EQ(pre->rules[0].target, "services");

  const auto* services = model::find_chain(t, "services");
  ASSERT_TRUE(services);
  EXPECT_FALSE(services->base);
  ASSERT_EQ(services->rule_count, 2u);
  EXPECT_EQ(services->rules[0].verdict_kind, "vmap");
  EXPECT_EQ(services->rules[0].target, "service-ips");
  EXPECT_EQ(services->rules[1].verdict_kind, "vmap");
  EXPECT_EQ(services->rules[1].target, "");
  EXPECT_EQ(services->rules[1].match.comment, "random pick");
  EXPECT_EQ(services->rules[1].position, 2u);

  const auto* ep = model::find_chain(t, "endpoint-X");
  ASSERT_EQ(ep->rules.size(), 3u);
  EXPECT_EQ(ep->rules[0].verdict_kind, "none");
  EXPECT_EQ(ep->rules[1].verdict_kind, "target");
  EXPECT_EQ(ep->rules[1].target, "dnat");
  EXPECT_EQ(ep->rules[2].verdict_kind, "verdict");
  EXPECT_EQ(ep->rules[2].target, "drop");

  ASSERT_EQ(t.sets.size(), 3u);
  const auto& map = t.sets[0];
  EXPECT_EQ(map.name, "service-ips");
  EXPECT_TRUE(map.is_map);
  EXPECT_EQ(map.key_type, (std::vector<std::string>{"ipv4_addr", "inet_proto", "inet_service"}));
  EXPECT_EQ(map.data_type, "verdict");
  EXPECT_EQ(map.comment, "ClusterIP traffic");
  EXPECT_EQ(map.element_count, 2u);
  EXPECT_TRUE(map.elements_recorded);
  EXPECT_EQ(map.elements[0].key, "172.30.0.41 . tcp . 80");
  EXPECT_EQ(map.elements[0].value, "goto service-ULMVA6XW-ns1/svc1/tcp/p80");
  EXPECT_EQ(map.elements[1].key, "172.30.0.46 . tcp . 80");
  EXPECT_EQ(map.elements[1].value, "drop");
  EXPECT_EQ(map.elements[1].comment, "ns6/svc6:p80");

  const auto& set = t.sets[1];
  EXPECT_FALSE(set.is_map);
  EXPECT_EQ(set.data_type, "");
  ASSERT_EQ(set.element_count, 3u);
  EXPECT_EQ(set.elements[0].key, "172.30.0.41");
  EXPECT_EQ(set.elements[1].key, "10.0.0.0/8");
  EXPECT_EQ(set.elements[2].key, "10.1.0.1-10.1.0.9");
  EXPECT_EQ(t.sets[2].element_count, 0u);
  EXPECT_TRUE(t.sets[2].elements_recorded);
}

// The matches of native rules, as the live collector decodes the same rules
// (tests/unit/netfilter_decode_test.cpp NftRule.NativeMatchesAndDnatArguments).
TEST(ImportNftJson, NativeMatchesAndNatArguments) {
  const char* text = R"({"nftables": [
 {"table": {"family": "inet", "name": "t", "handle": 1}},
 {"chain": {"family": "inet", "table": "t", "name": "c", "handle": 2}},
 {"rule": {"family": "inet", "table": "t", "chain": "c", "handle": 3, "expr": [
   {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "172.30.0.41"}},
   {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": 80}},
   {"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.0.0.0", "len": 8}}}},
   {"jump": {"target": "mark-for-masquerade"}}]}},
 {"rule": {"family": "inet", "table": "t", "chain": "c", "handle": 4, "expr": [
   {"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": "udp"}},
   {"dnat": {"family": "ip6", "addr": "fd00:0:0::1", "port": 53}}]}},
 {"rule": {"family": "inet", "table": "t", "chain": "c", "handle": 5, "expr": [
   {"match": {"op": "!=", "left": {"payload": {"protocol": "th", "field": "dport"}}, "right": {"range": [30000, 32767]}}},
   {"match": {"op": "==", "left": {"payload": {"protocol": "ip6", "field": "daddr"}}, "right": "@cluster-ips"}},
   {"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": "icmp"}},
   {"dnat": {"addr": {"map": {"key": {"numgen": {}}, "data": {"set": []}}}}}]}}
]})";
  auto tables = parse_nft_json(text, "n.json");
  ASSERT_EQ(tables.size(), 1u);
  const auto& rules = tables[0].chains.at(0).rules;
  ASSERT_EQ(rules.size(), 3u);
  ASSERT_TRUE(rules[0].match.destination.has_value());
  EXPECT_EQ(rules[0].match.destination->cidr, "172.30.0.41/32");
  ASSERT_TRUE(rules[0].match.source.has_value());
  EXPECT_EQ(rules[0].match.source->cidr, "10.0.0.0/8");
  EXPECT_TRUE(rules[0].match.source->negated);
  EXPECT_EQ(rules[0].match.protocol, "tcp");
  EXPECT_EQ(rules[0].match.dport, "80");
  EXPECT_EQ(rules[0].target, "mark-for-masquerade");
  EXPECT_EQ(rules[1].match.protocol, "udp");
  EXPECT_EQ(rules[1].target, "dnat");
  EXPECT_EQ(rules[1].target_args, "to [fd00::1]:53");  // inet_ntop's spelling, as live
  EXPECT_EQ(rules[2].match.dport, "30000:32767");
  EXPECT_TRUE(rules[2].match.dport_negated);
  EXPECT_FALSE(rules[2].match.destination.has_value());  // a set reference is not an address
  EXPECT_EQ(rules[2].match.protocol, "");                 // icmp: not recorded
  EXPECT_EQ(rules[2].target, "dnat");
  EXPECT_EQ(rules[2].target_args, "");                    // map-fed address: not spelled
}

// nft -j prints a statement it has no JSON form for as its text: the listing
// is accepted, and that text is the statement's (a chain binding's rules on
// their own lines, as nft list ruleset prints them), unless nft may have cut
// it (json.c stmt_print_json prints it into 1,024 bytes).
TEST(ImportNftJson, StatementsNftPrintsAsTextAreAccepted) {
  const std::string head = R"({"nftables": [
 {"table": {"family": "ip", "name": "t", "handle": 1}},
 {"chain": {"family": "ip", "table": "t", "name": "c", "handle": 2}},
 {"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 3, "expr": [)";
  auto tables = parse_nft_json(head + R"("update @m { ip saddr : 0x00000002 }"]}}]})", "n.json");
  ASSERT_EQ(tables.at(0).chains.at(0).rules.size(), 1u);
  EXPECT_EQ(tables[0].chains[0].rules[0].verdict_kind, "none");
  EXPECT_EQ(tables[0].chains[0].rules[0].text, "update @m { ip saddr : 0x00000002 }");
  tables = parse_nft_json(head + R"("jump {\n\t\t\taccept\n\t\t}"]}}]})", "n.json");
  ASSERT_EQ(tables.at(0).chains.at(0).rules.size(), 1u);
  const auto& bound = tables[0].chains[0].rules[0];
  EXPECT_EQ(bound.text, "jump {\n\t\t\taccept\n\t\t}");
  EXPECT_FALSE(bound.undecoded);
  tables = parse_nft_json(head + "\"jump {" + std::string(1017, 'x') + "\"]}}]}", "n.json");  // 1,023 bytes
  const auto& long_binding = tables.at(0).chains.at(0).rules.at(0);
  EXPECT_TRUE(long_binding.text.empty());
  EXPECT_TRUE(long_binding.undecoded);
  EXPECT_NE(long_binding.raw.find("jump {"), std::string::npos);
}

// A table named like iptables' is iptables-nft's only while iptables-nft
// can list every rule of it (iptables 1.8.9 nft.c nft_is_table_compatible):
// a snat map is an expression it never writes, and iptables-nft-save prints
// "# Table `nat' is incompatible, use 'nft' tool." for the first table; it
// lists the second. Both documents are what nft 1.0.6 printed of the
// nftables project's tests/shell dumps maps/dumps/anonymous_snat_map_0.nft
// and transactions/dumps/0040set_0.nft.
TEST(ImportNftJson, TableIptablesNftCannotListIsNative) {
  auto tables = parse_nft_json(R"({"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}, {"table": {"family": "ip", "name": "nat", "handle": 1}}, {"chain": {"family": "ip", "table": "nat", "name": "postrouting", "handle": 1}}, {"rule": {"family": "ip", "table": "nat", "chain": "postrouting", "handle": 3, "expr": [{"snat": {"addr": {"map": {"key": {"payload": {"protocol": "ip", "field": "saddr"}}, "data": {"set": [["1.1.1.1", "2.2.2.2"]]}}}}}]}}]})",
                               "n.json");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].backend, Backend::Nftables);
  ASSERT_EQ(tables[0].chains.size(), 1u);  // no iptables built-in chains added
  ASSERT_EQ(tables[0].chains[0].rules.size(), 1u);
  EXPECT_EQ(tables[0].chains[0].rules[0].text, "snat to ip saddr map { 1.1.1.1 : 2.2.2.2 }");

  tables = parse_nft_json(R"({"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}, {"table": {"family": "ip", "name": "filter", "handle": 2}}, {"map": {"family": "ip", "name": "client_to_any", "table": "filter", "type": "ipv4_addr", "handle": 3, "map": "verdict"}}, {"chain": {"family": "ip", "table": "filter", "name": "FORWARD", "handle": 1, "type": "filter", "hook": "forward", "prio": 0, "policy": "accept"}}, {"chain": {"family": "ip", "table": "filter", "name": "client_to_any", "handle": 2}}, {"rule": {"family": "ip", "table": "filter", "chain": "FORWARD", "handle": 4, "expr": [{"goto": {"target": "client_to_any"}}]}}, {"rule": {"family": "ip", "table": "filter", "chain": "client_to_any", "handle": 5, "expr": [{"vmap": {"key": {"payload": {"protocol": "ip", "field": "saddr"}}, "data": "@client_to_any"}}]}}]})",
                          "n.json");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].backend, Backend::IptablesNft);
}

TEST(ImportNftJson, EmptyRulesetIsValid) {
  auto tables = parse_nft_json(R"({"nftables": [{"metainfo": {"version": "1.0.6"}}]})", "n.json");
  EXPECT_TRUE(tables.empty());
}

TEST(ImportNftJson, ErrorsNameTheLine) {
  EXPECT_EQ(error_of(""), "n.json:1: empty file");
  EXPECT_EQ(error_of("\n\n{\"nftables\": [}\n").substr(0, 25), "n.json:3:15: invalid JSON");  // the "}"
  // Cut short: where the input ended.
  EXPECT_EQ(error_of("{\"nftables\": [\n{\"table\": {\"family\": \"ip\", \"name\": \"x\"}}\n").substr(0, 24),
            "n.json:3:1: invalid JSON");
  EXPECT_EQ(error_of("{\"hello\": 1}"),
            "n.json:1: not `nft -j list ruleset` output: expected an object with an \"nftables\" array");
  EXPECT_EQ(error_of("[1, 2]"),
            "n.json:1: not `nft -j list ruleset` output: expected an object with an \"nftables\" array");
  EXPECT_EQ(error_of("{\"nftables\": [{\"chain\": {\"family\": \"ip\", \"table\": \"t\", \"name\": \"c\"}}]}"),
            "n.json:1: nftables[0] (chain): table ip t is not declared before its objects");
  EXPECT_EQ(error_of("{\"nftables\": [{\"table\": {\"family\": \"ip\"}}]}"),
            "n.json:1: nftables[0] (table): missing \"name\"");
  EXPECT_EQ(error_of("{\"nftables\": [{\"table\": {\"family\": \"ip\", \"name\": \"t\"}}, {\"rule\": {\"family\": "
                     "\"ip\", \"table\": \"t\", \"chain\": \"nope\", \"expr\": []}}]}"),
            "n.json:1: nftables[1] (rule): rule of chain nope which is not listed");
  EXPECT_EQ(error_of(std::string("{\"nftables\": [\0]}", 17)), "n.json:1: NUL byte: binary data, not a text dump");
}

}  // namespace
}  // namespace dpscope::importer
