// Native nftables rule text from nft's JSON: every rule of real kube-proxy
// v1.30.3 nftables-mode rulesets (300 and 3,000 Services), as `nft -j list
// ruleset` printed it, must print exactly as `nft list ruleset` printed the
// same state (nft v1.0.6, fixtures/upstream/real-kube-proxy/, SOURCES.md),
// rule by rule, in each chain's order.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "decoders/nft_json_text.h"
#include "model/json.h"
#include "tests/support/nft_text.h"
#include "tests/support/process.h"

namespace dpscope::nft_text {
namespace {

using nlohmann::json;
using ChainKey = test::NftChainKey;

void expect_every_rule_printed(const std::string& dir, size_t min_rules) {
  const std::string text = model::read_file(test::source_path(dir + "/nft-ruleset.txt.zst"));
  const json doc = json::parse(model::read_file(test::source_path(dir + "/nft-ruleset.json.zst")));
  const auto want = test::nft_text_rules(text).chains;
  std::map<ChainKey, std::vector<std::string>> got;
  size_t rules = 0, unknown = 0;
  for (const auto& item : doc["nftables"]) {
    if (!item.contains("rule")) continue;
    const json& r = item["rule"];
    const std::string family = r["family"], table = r["table"], chain = r["chain"];
    NftRuleText t = nft_rule_text(r["expr"], family, r.value("comment", ""));
    ++rules;
    if (!t.unknown.empty()) {
      ++unknown;
      ADD_FAILURE() << family << " " << table << " " << chain << ": " << t.unknown << "\n" << r.dump();
      continue;
    }
    got[{family, table, chain}].push_back(t.text);
  }
  EXPECT_GE(rules, min_rules);
  EXPECT_EQ(unknown, 0u);
  size_t compared = 0;
  for (const auto& [key, lines] : want) {
    const auto& [family, table, chain] = key;
    SCOPED_TRACE(family + " " + table + " " + chain);
    const auto it = got.find(key);
    const std::vector<std::string> mine = it == got.end() ? std::vector<std::string>{} : it->second;
    ASSERT_EQ(mine.size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(mine[i], lines[i]) << "rule " << i + 1;
      ++compared;
    }
  }
  EXPECT_EQ(compared, rules);
}

TEST(NftJsonText, RealKubeProxy300IsWhatNftPrinted) {
  expect_every_rule_printed("fixtures/upstream/real-kube-proxy/nftables-300x5", 5000);
}

TEST(NftJsonText, RealKubeProxy3000IsWhatNftPrinted) {
  expect_every_rule_printed("fixtures/upstream/real-kube-proxy/nftables-3000x8", 80000);
}

TEST(NftJsonText, UnknownStatementLeavesTextAbsentAndSaysWhich) {
  const json expr = json::parse(R"([{"xt":{"type":"match","name":"conntrack"}},{"accept":null}])");
  NftRuleText t = nft_rule_text(expr, "ip", "");
  EXPECT_EQ(t.text, "");
  EXPECT_EQ(t.unknown, "statement \"xt\"");
}

TEST(NftJsonText, MarksPrintAsNftPrintsThem) {
  const json expr = json::parse(
      R"([{"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},16384]},"right":0}},{"return":null}])");
  EXPECT_EQ(nft_rule_text(expr, "ip", "").text, "meta mark & 0x00004000 == 0x00000000 return");
  const json ifname = json::parse(R"([{"match":{"op":"!=","left":{"meta":{"key":"iifname"}},"right":"eth*"}},{"drop":null}])");
  EXPECT_EQ(nft_rule_text(ifname, "inet", "no pods").text, "iifname != \"eth*\" drop comment \"no pods\"");
}

// Each case below is a rule of the nftables project's own test dumps or
// tests/py files, as nft 1.0.6 printed it (`nft -j` on the left).
void expect_text(const char* expr_json, const std::string& family, const std::string& want) {
  const NftRuleText t = nft_rule_text(json::parse(expr_json), family, "");
  EXPECT_EQ(t.unknown, "") << want;
  EXPECT_EQ(t.text, want);
}

TEST(NftJsonText, MapsTakeTheirKeyAndDataTypes) {
  expect_text(R"([{"mangle":{"key":{"meta":{"key":"mark"}},"value":{"map":{"data":{"set":[["1.1.1.1",2]]},"key":{"payload":{"field":"saddr","protocol":"ip"}}}}}}])",
              "ip", "meta mark set ip saddr map { 1.1.1.1 : 0x00000002 }");
  // JSON calls an anonymous verdict map "map"; nft prints "vmap".
  expect_text(R"([{"vmap":{"data":{"set":[[{"concat":["eth0","tcp",22]},{"accept":null}],[{"concat":["eth1","udp",67]},{"drop":null}]]},"key":{"concat":[{"meta":{"key":"iifname"}},{"payload":{"field":"protocol","protocol":"ip"}},{"payload":{"field":"dport","protocol":"th"}}]}}}])",
              "inet", R"(iifname . ip protocol . th dport vmap { "eth0" . tcp . 22 : accept, "eth1" . udp . 67 : drop })");
  expect_text(R"([{"dnat":{"addr":{"map":{"data":"@z","key":{"concat":[{"payload":{"field":"saddr","protocol":"ip"}},{"payload":{"field":"dport","protocol":"tcp"}}]}}},"family":"ip"}}])",
              "inet", "dnat ip to ip saddr . tcp dport map @z");
  expect_text(R"([{"snat":{"addr":{"map":{"data":{"set":[[{"prefix":{"addr":"10.141.11.0","len":24}},{"prefix":{"addr":"192.168.2.0","len":24}}]]},"key":{"payload":{"field":"saddr","protocol":"ip"}}}},"family":"ip","flags":"netmap","type_flags":"prefix"}}])",
              "ip", "snat ip prefix to ip saddr map { 10.141.11.0/24 : 192.168.2.0/24 }");
}

TEST(NftJsonText, ElementsRawPayloadAndNestedOperations) {
  expect_text(R"([{"set":{"elem":{"elem":{"timeout":600,"val":{"concat":[{"meta":{"key":"iif"}},{"payload":{"field":"saddr","protocol":"ip6"}}]}}},"op":"update","set":"@acct_out","stmt":[{"counter":null}]}}])",
              "ip6", "update @acct_out { iif . ip6 saddr timeout 10m counter }");
  expect_text(R"([{"match":{"left":{"payload":{"base":"th","len":32,"offset":160}},"op":"==","right":41118720}},{"drop":null}])",
              "ip", "@th,160,32 0x2736c00 drop");
  expect_text(R"([{"vmap":{"data":"@sctm_o0","key":{"&":[{">>":[{"meta":{"key":"mark"}},8]},15]}}}])", "ip",
              "meta mark >> 8 & 0x0000000f vmap @sctm_o0");
  expect_text(R"([{"mangle":{"key":{"ct":{"key":"mark"}},"value":{"<<":[{"|":[{"meta":{"key":"mark"}},16]},8]}}}])", "ip",
              "ct mark set (meta mark | 0x00000010) << 8");
  expect_text(R"([{"vmap":{"data":{"set":[["ack",{"jump":{"target":"ack_chain"}}],["urg",{"jump":{"target":"urg_chain"}}]]},"key":{"&":[{"payload":{"field":"flags","protocol":"tcp"}},{"|":["ack","urg"]}]}}}])",
              "inet", "tcp flags & (ack | urg) vmap { ack : jump ack_chain, urg : jump urg_chain }");
  // A flag comparison: the mask is a list.
  expect_text(R"([{"match":{"left":{"&":[{"payload":{"field":"flags","protocol":"tcp"}},["fin","syn","rst","ack"]]},"op":"!=","right":"syn"}},{"drop":null}])",
              "ip", "tcp flags != syn / fin,syn,rst,ack drop");
  expect_text(R"([{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":["established","related"]}},{"accept":null}])", "ip",
              "ct state established,related accept");
}

TEST(NftJsonText, StatementsOfTheirOwnForm) {
  expect_text(R"([{"log":{"flags":["ip options","ether"],"prefix":"NFT REJECT IN "}},{"limit":{"burst":10,"per":"second","rate":5}},{"reject":{"expr":"port-unreachable","type":"icmpx"}}])",
              "inet", R"(log prefix "NFT REJECT IN " flags ip options flags ether limit rate 5/second burst 10 packets reject)");
  expect_text(R"([{"set":{"elem":{"concat":[{"payload":{"field":"dport","protocol":"tcp"}},{"payload":{"field":"saddr","protocol":"ip"}}]},"op":"add","set":"@http1","stmt":[{"limit":{"burst":5,"inv":true,"per":"second","rate":200}}]}}])",
              "ip", "add @http1 { tcp dport . ip saddr limit rate over 200/second }");
  expect_text(R"([{"counter":{"map":{"data":{"set":[["1.1.1.1","user123"],["2.2.2.2","user123"]]},"key":{"payload":{"field":"saddr","protocol":"ip"}}}}}])",
              "ip", R"(counter name ip saddr map { 1.1.1.1 : "user123", 2.2.2.2 : "user123" })");
  expect_text(R"([{"ct expectation":"ctexpect"}])", "ip", R"(ct expectation set "ctexpect")");
  expect_text(R"([{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":80}},{"tproxy":{"port":20000}},{"accept":null}])",
              "ip", "tcp dport 80 tproxy to :20000 accept");
  expect_text(R"([{"match":{"left":{"tcp option":{"base":6,"len":8,"offset":0}},"op":"==","right":true}}])", "ip",
              "tcp option 6 exists");
  // A statement nft has no JSON form for is nft's own text in a string.
  expect_text(R"(["update @mapping { ip saddr : tcp sport }"])", "ip", "update @mapping { ip saddr : tcp sport }");
}

TEST(NftJsonText, TypesDecideHowValuesPrint) {
  expect_text(R"([{"match":{"left":{"ct":{"key":"expiration"}},"op":"!=","right":233}}])", "ip", "ct expiration != 3m53s");
  // Ranges print numerically: times in seconds.
  expect_text(R"([{"match":{"left":{"ct":{"key":"expiration"}},"op":"==","right":{"range":[60,3600]}}}])", "ip",
              "ct expiration 60s-3600s");
  expect_text(R"([{"match":{"left":{"meta":{"key":"time"}},"op":"<","right":"2022-07-01 11:00:00"}},{"accept":null}])", "ip",
              R"(meta time < "2022-07-01 11:00:00" accept)");
  expect_text(R"([{"match":{"left":{"fib":{"flags":["saddr","iif"],"result":"oif"}},"op":"==","right":"0"}},{"drop":null}])", "ip",
              "fib saddr . iif oif 0 drop");
  expect_text(R"([{"match":{"left":{"payload":{"field":"flags","protocol":"comp"}},"op":"!=","right":35}}])", "ip6",
              "comp flags != 0x23");
}

TEST(NftJsonText, WhatJsonDoesNotKeepStaysUnknown) {
  // A range's symbols print as numbers, which JSON does not give.
  const json range = json::parse(
      R"([{"match":{"left":{"payload":{"field":"code","protocol":"icmpv6"}},"op":"==","right":{"range":["addr-unreachable",66]}}}])");
  EXPECT_NE(nft_rule_text(range, "ip6", "").unknown, "");
  // A chain binding spans lines, and JSON has it as nft's text: printed as given.
  const json binding = json::parse(R"([{"match":{"left":{"meta":{"key":"l4proto"}},"op":"==","right":"ipv6-icmp"}},"jump {\n\t\t\tcounter packets 0 bytes 0 accept\n\t\t}"])");
  EXPECT_EQ(nft_rule_text(binding, "inet", "").text,
            "meta l4proto ipv6-icmp jump {\n\t\t\tcounter packets 0 bytes 0 accept\n\t\t}");
  // ct's address with a direction: JSON drops the family nft prints.
  const json ct = json::parse(R"([{"match":{"left":{"ct":{"dir":"original","key":"saddr"}},"op":"==","right":"1.2.3.4"}}])");
  EXPECT_NE(nft_rule_text(ct, "inet", "").unknown, "");
}

// The live decoder's form of an element's several statements ("stmt", a
// list nft -j does not have: it merges them into one object, losing their
// order): printed in their order, stateful, in a rule's set and a set's listing.
TEST(NftJsonText, SeveralElementStatementsInTheirOrder) {
  const json stmts = json::parse(R"([{"limit":{"rate":1,"burst":5,"per":"second"}},{"counter":{"packets":1,"bytes":2}}])");
  const json elem = {{"elem", {{"val", "1.1.1.1"}, {"stmt", stmts}}}};
  const NftElementText t = nft_set_element_text(elem, {"ipv4_addr"}, "");
  EXPECT_EQ(t.unknown, "");
  EXPECT_EQ(t.key, "1.1.1.1");
  EXPECT_EQ(t.statements, "limit rate 1/second counter packets 1 bytes 2");
  const json rule = {{{"match", {{"op", "=="}, {"left", {{"payload", {{"protocol", "ip"}, {"field", "daddr"}}}}},
                                 {"right", {{"set", json::array({elem})}}}}}}};
  EXPECT_EQ(nft_rule_text(rule, "ip", "").text, "ip daddr { 1.1.1.1 limit rate 1/second counter packets 1 bytes 2 }");
}

}  // namespace
}  // namespace dpscope::nft_text
