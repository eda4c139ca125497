// The streaming snapshot reader (model/snapshot_reader.cpp) builds chains and
// rules from SAX events. It must give exactly what the DOM reader
// (model::from_json) gives, report bad chain-level fields with the same JSON
// pointers, and drop only what LoadOptions asks it to drop.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/json.h"
#include "model/snapshot_writer.h"
#include "tests/support/snapshot_text.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

using nlohmann::json;

Snapshot rich() {
  Snapshot s;
  s.node = {"n1", "6.1.0", "live", "host", "2026-11-30T00:00:00Z", "0.1.0", {"x"}};
  s.netfilter.collected = true;
  s.netfilter.collection.nft_generation = 7;
  Table nat{Backend::IptablesNft, "ip", "nat", {}, {}};
  Chain pre{"PREROUTING", BaseChain{"prerouting", "nat", -100, "ACCEPT"}, Counters{1, 2}, 0, true, {}};
  Chain svcs{"KUBE-SERVICES", std::nullopt, std::nullopt, 0, true, {}};
  Chain svc{"KUBE-SVC-AAAA", std::nullopt, std::nullopt, 0, true, {}};
  Chain sep{"KUBE-SEP-BBBB", std::nullopt, std::nullopt, 0, true, {}};
  for (uint32_t i = 1; i <= 3; ++i) {
    Rule r;
    r.position = i;
    r.match.source = Prefix{"10.0.0.0/8", i == 2};
    r.match.destination = Prefix{"172.30.0." + std::to_string(i) + "/32", false};
    r.match.protocol = "tcp";
    r.match.protocol_negated = i == 3;
    r.match.dport = "80";
    r.match.dport_negated = i == 1;
    r.match.comment = "ns/svc" + std::to_string(i) + ":p80 \"q\" \\ \n";
    r.match.modules = {"comment", "tcp"};
    r.verdict_kind = "jump";
    r.target = "KUBE-SVC-AAAA";
    r.target_args = "--x " + std::to_string(i);
    r.counters = Counters{i, i * 100};
    svcs.rules.push_back(r);
    svc.rules.push_back(r);
    sep.rules.push_back(r);
  }
  Rule odd;
  odd.position = 1;
  odd.undecoded = true;
  odd.raw = "[ ct ]";
  odd.verdict_kind = "verdict";
  odd.target = "DROP";
  pre.rules.push_back(odd);
  for (Chain* c : {&pre, &svcs, &svc, &sep}) c->rule_count = c->rules.size();
  Chain counted{"KUBE-COUNTED", std::nullopt, std::nullopt, 12, false, {}};
  nat.chains = {pre, svcs, counted, sep, svc};
  Table kp{Backend::Nftables, "ip", "kube-proxy", {}, {}};
  NftSet m;
  m.name = "service-ips";
  m.is_map = true;
  m.key_type = {"ipv4_addr"};
  m.data_type = "verdict";
  m.elements = {{"1.2.3.4", "goto x", "c"}};
  m.element_count = 1;
  m.elements_recorded = true;
  kp.sets.push_back(m);
  NftSet dynamic;
  dynamic.name = "affinity-x";
  dynamic.key_type = {"ipv4_addr"};
  dynamic.elements_unread = "dynamic set: runtime state";
  kp.sets.push_back(dynamic);
  kp.chains.push_back(Chain{"services", BaseChain{"prerouting", "nat", -100, "accept"}, std::nullopt, 0, true, {}});
  s.netfilter.tables = {nat, kp, Table{Backend::IptablesLegacy, "ip", "filter", {}, {}}};
  s.unavailable.push_back({"ebpf", "EPERM", 1, "hint"});
  return s;
}

std::string written(const Snapshot& s) { return test::snapshot_text(s); }

std::string error_of(const std::string& text, const LoadOptions& options = {}) {
  try {
    from_json_text(text, "t.json", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SnapshotReader, EqualsTheDomReader) {
  const Snapshot s = rich();
  const std::string text = written(s);
  EXPECT_EQ(from_json_text(text, "t.json"), s);
  EXPECT_EQ(from_json_text(text, "t.json"), from_json(json::parse(text), "t.json"));
  // Pretty (dump(1)) and compact (dump()) layouts and any key order read the same.
  EXPECT_EQ(from_json_text(to_json(s).dump(), "t.json"), s);
  EXPECT_EQ(from_json_text(to_json(s).dump(4), "t.json"), s);
}

// Unread elements have no count: a file that gives both is refused.
TEST(SnapshotReader, UnreadSetElementsCarryNoCount) {
  const std::string text = written(rich());
  EXPECT_EQ(text.find("\"element_count\": 0"), std::string::npos);
  const std::string marker = "\"elements_unread\": \"dynamic set: runtime state\"";
  const size_t at = text.find(marker);
  ASSERT_NE(at, std::string::npos) << text;
  std::string both = text;
  both.insert(at, "\"element_count\": 0, ");
  EXPECT_NE(error_of(both).find("elements_unread with elements or an element_count"), std::string::npos) << error_of(both);
}

TEST(SnapshotReader, RulesBeforeTheChainNameAreStillFiltered) {
  // Hand-ordered JSON: "rules" before "name".
  const std::string text = R"({"schema":"dpscope.snapshot/v1","netfilter":{"collected":true,"tables":[
    {"backend":"iptables-nft","chains":[
      {"rules":[{"position":1,"verdict_kind":"jump","target":"X","match":{"comment":"c"}}],"rule_count":1,"name":"KUBE-SEP-1"},
      {"rules":[{"position":1,"verdict_kind":"jump","target":"X","match":{"comment":"c"}}],"name":"KUBE-SVC-1"}],
     "family":"ip","name":"nat"}]}})";
  LoadOptions opt{[](std::string_view c) { return c.substr(0, 9) == "KUBE-SVC-" ? RuleDetail::Verdict : RuleDetail::None; }};
  const Snapshot s = from_json_text(text, "t.json", opt);
  const auto& chains = s.netfilter.tables.at(0).chains;
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_FALSE(chains[0].rules_recorded);
  EXPECT_TRUE(chains[0].rules.empty());
  EXPECT_EQ(chains[0].rule_count, 1u);
  EXPECT_TRUE(chains[1].rules_recorded);
  ASSERT_EQ(chains[1].rules.size(), 1u);
  EXPECT_EQ(chains[1].rules[0].target, "X");
  EXPECT_EQ(chains[1].rules[0].match.comment, "");  // Verdict keeps the jump graph only
}

TEST(SnapshotReader, RuleDetailKeepsCountsAndDropsOnlyWhatItSays) {
  const Snapshot full = rich();
  LoadOptions opt{[](std::string_view c) {
    if (c == "KUBE-SERVICES") return RuleDetail::Full;
    if (c == "KUBE-SVC-AAAA") return RuleDetail::Verdict;
    return RuleDetail::None;
  }};
  const Snapshot s = from_json_text(written(full), "t.json", opt);
  ASSERT_EQ(s.netfilter.tables.size(), full.netfilter.tables.size());
  for (size_t t = 0; t < s.netfilter.tables.size(); ++t) {
    const auto& got = s.netfilter.tables[t];
    const auto& want = full.netfilter.tables[t];
    EXPECT_EQ(got.sets, want.sets);
    ASSERT_EQ(got.chains.size(), want.chains.size());
    for (size_t c = 0; c < got.chains.size(); ++c) {
      const Chain& g = got.chains[c];
      const Chain& w = want.chains[c];
      SCOPED_TRACE(w.name);
      EXPECT_EQ(g.name, w.name);
      EXPECT_EQ(g.base, w.base);
      EXPECT_EQ(g.policy_counters, w.policy_counters);
      EXPECT_EQ(g.rule_count, w.rule_count);
      const RuleDetail d = opt.rule_detail(w.name);
      if (d == RuleDetail::Full) {
        EXPECT_EQ(g.rules, w.rules);
        EXPECT_EQ(g.rules_recorded, w.rules_recorded);
      } else if (d == RuleDetail::Verdict) {
        ASSERT_EQ(g.rules.size(), w.rules.size());
        for (size_t r = 0; r < g.rules.size(); ++r) {
          EXPECT_EQ(g.rules[r].position, w.rules[r].position);
          EXPECT_EQ(g.rules[r].verdict_kind, w.rules[r].verdict_kind);
          EXPECT_EQ(g.rules[r].target, w.rules[r].target);
          EXPECT_EQ(g.rules[r].target_args, w.rules[r].target_args);  // a DNAT's destination (verify)
          EXPECT_EQ(g.rules[r].match, RuleMatch{});
          EXPECT_FALSE(g.rules[r].counters.has_value());
        }
      } else {
        EXPECT_TRUE(g.rules.empty());
        EXPECT_FALSE(g.rules_recorded);
      }
    }
  }
  EXPECT_EQ(s.unavailable, full.unavailable);
  EXPECT_EQ(s.node, full.node);
}

// RuleDetail::Verdict rules are read by the byte scan, not the lexer: the same
// values (escapes undone) and the same messages as the SAX reader's.
TEST(SnapshotReader, VerdictScanReadsWhatTheLexerReadsAndNamesBadRules) {
  auto file = [](const std::string& rules) {
    return R"({"schema":"dpscope.snapshot/v1","netfilter":{"collected":true,"tables":[{"backend":"iptables-nft",)"
           R"("family":"ip","name":"nat","chains":[{"name":"KUBE-SEP-1","rules":)" + rules + "}]}]}}";
  };
  const LoadOptions verdict{[](std::string_view) { return RuleDetail::Verdict; }};
  const LoadOptions full{[](std::string_view) { return RuleDetail::Full; }};
  const std::string good = file(
      R"([{"position":1,"verdict_kind":"jump","target":"KUBE-MARK-MASQ","match":{"source":{"cidr":"10.0.0.1/32"},)"
      R"("modules":["comment"],"comment":"x \"y\""},"counters":{"packets":1,"bytes":2}},)"
      R"({"target_args":"--to-destination 10.0.0.1:80 \u0041\"\\","target":"DNAT","verdict_kind":"target",)"
      R"("position":2,"raw":null,"undecoded":false,"extra":{"a":[1,{"b":"target"}]}}])");
  const Snapshot v = from_json_text(good, "t.json", verdict);
  const Snapshot f = from_json_text(good, "t.json", full);
  const auto& got = v.netfilter.tables.at(0).chains.at(0);
  const auto& want = f.netfilter.tables.at(0).chains.at(0);
  EXPECT_TRUE(got.rules_recorded);
  EXPECT_EQ(got.rule_count, 2u);
  ASSERT_EQ(got.rules.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(got.rules[r].position, want.rules[r].position);
    EXPECT_EQ(got.rules[r].verdict_kind, want.rules[r].verdict_kind);
    EXPECT_EQ(got.rules[r].target, want.rules[r].target);
    EXPECT_EQ(got.rules[r].target_args, want.rules[r].target_args);
  }
  EXPECT_EQ(got.rules[1].target_args, "--to-destination 10.0.0.1:80 A\"\\");
  const std::string at = "/netfilter/tables/0/chains/0/rules/";
  struct Case {
    std::string rules, expect;
  } cases[] = {
      {R"([{"verdict_kind":"jump"}])", at + "0: missing key 'position'"},
      {R"([{"position":1},{"position":"2"}])", at + "1/position: expected an integer"},
      {R"([{"position":1.5}])", at + "0/position: expected an integer"},
      {R"([{"position":-3}])", at + "0/position: integer out of range"},
      {R"([{"position":4294967296}])", at + "0/position: integer out of range"},
      {R"([{"position":1},{"position":2,"verdict_kind":"bogus"}])", at + "1/verdict_kind: unknown verdict_kind 'bogus'"},
      {R"([{"position":1,"target":5}])", at + "0/target: expected a string"},
      {R"([{"position":1,"target_args":true}])", at + "0/target_args: expected a string"},
  };
  for (const auto& c : cases) {
    const std::string v_error = error_of(file(c.rules), verdict);
    EXPECT_NE(v_error.find(c.expect), std::string::npos) << c.rules << ": " << v_error;
    EXPECT_EQ(v_error, error_of(file(c.rules), full)) << c.rules;  // the lexer's path says the same
  }
  // Nulls are absent fields, as for the lexer.
  const Snapshot n = from_json_text(file(R"([{"position":1,"target":null,"verdict_kind":null}])"), "t.json", verdict);
  EXPECT_EQ(n.netfilter.tables.at(0).chains.at(0).rules.at(0).verdict_kind, "none");
}

TEST(SnapshotReader, ChainErrorsNameTheirPointer) {
  const std::string head = R"({"schema":"dpscope.snapshot/v1","netfilter":{"tables":[{"backend":"nftables","family":"ip","name":"t"},
    {"backend":"nftables","family":"ip","name":"u","chains":[{"name":"ok","rule_count":0,"rules":[]},)";
  const std::string tail = "]}]}}";
  struct Case {
    std::string chain;
    std::string expect;
  } cases[] = {
      {R"({"name":7})", "/netfilter/tables/1/chains/1/name: expected a string"},
      {R"({"rules":[]})", "/netfilter/tables/1/chains/1: missing key 'name'"},
      {R"({"name":"c","rule_count":-1})", "/netfilter/tables/1/chains/1/rule_count: integer out of range"},
      {R"({"name":"c","rule_count":3,"rules":[]})", "/netfilter/tables/1/chains/1/rule_count: rule_count 3 but 0 rules recorded"},
      {R"({"name":"c","rules":{}})", "/netfilter/tables/1/chains/1/rules: expected an array"},
      {R"({"name":"c","base":{"priority":"x"}})", "/netfilter/tables/1/chains/1/base/priority: expected an integer"},
      {R"({"name":"c","policy_counters":{"packets":1}})", "/netfilter/tables/1/chains/1/policy_counters: missing key 'bytes'"},
      {R"({"name":"c","rules":[{"verdict_kind":"jump"}]})", "/netfilter/tables/1/chains/1/rules/0: missing key 'position'"},
      {R"({"name":"c","rules":[{"position":1},{"position":4294967296}]})",
       "/netfilter/tables/1/chains/1/rules/1/position: integer out of range"},
      {R"({"name":"c","rules":[{"position":1,"verdict_kind":"teleport"}]})",
       "/netfilter/tables/1/chains/1/rules/0/verdict_kind: unknown verdict_kind 'teleport'"},
      {R"({"name":"c","rules":[{"position":1,"match":{"destination":{"negated":true}}}]})",
       "/netfilter/tables/1/chains/1/rules/0/match/destination: missing key 'cidr'"},
      {R"({"name":"c","rules":[{"position":1,"match":{"source":{"cidr":1}}}]})",
       "/netfilter/tables/1/chains/1/rules/0/match/source/cidr: expected a string"},
      {R"({"name":"c","rules":[{"position":1,"match":{"modules":["a",2]}}]})",
       "/netfilter/tables/1/chains/1/rules/0/match/modules: expected a string"},
      {R"({"name":"c","rules":[{"position":1,"counters":{"packets":1,"bytes":true}}]})",
       "/netfilter/tables/1/chains/1/rules/0/counters/bytes: expected an integer"},
      {R"("c")", "/netfilter/tables/1/chains/1: expected an object"},
  };
  for (const auto& c : cases) {
    const std::string what = error_of(head + c.chain + tail);
    EXPECT_NE(what.find("t.json: " + c.expect), std::string::npos) << c.chain << "\n -> " << what;
  }
  // The same checks hold when the rules are counted rather than kept.
  LoadOptions none{[](std::string_view) { return RuleDetail::None; }};
  EXPECT_NE(error_of(head + cases[3].chain + tail, none).find("rule_count 3 but 0 rules recorded"), std::string::npos);
}

TEST(SnapshotReader, UnknownKeysAndNullsAreIgnored) {
  const std::string text = R"({"schema":"dpscope.snapshot/v1.3","netfilter":{"tables":[{"backend":"nftables","family":"ip","name":"t",
    "chains":[{"name":"c","future":{"a":[1,{"b":2}]},"base":null,"rules":[{"position":1,"later":[[]],"target":null}]}]}]}})";
  const Snapshot s = from_json_text(text, "t.json");
  const Chain& c = s.netfilter.tables.at(0).chains.at(0);
  EXPECT_EQ(c.name, "c");
  EXPECT_FALSE(c.base.has_value());
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(c.rules[0].target, "");
  EXPECT_EQ(c.rule_count, 1u);
}

TEST(SnapshotReader, SchemaIsCheckedBeforeChains) {
  // A future major version with a different chain layout is "unsupported", not a chain error.
  const std::string what = error_of(R"({"netfilter":{"tables":[{"chains":[{"name":1}]}]},"schema":"dpscope.snapshot/v3"})");
  EXPECT_NE(what.find("unsupported schema version"), std::string::npos) << what;
}

// "LINE:COLUMN" of byte `at` (1-based; the column in bytes), counted here
// independently of the reader.
std::string line_column(const std::string& text, size_t at) {
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  const size_t newline = text.rfind('\n', at);
  const size_t column = newline == std::string::npos ? at + 1 : at - newline;
  return std::to_string(line) + ":" + std::to_string(column);
}

TEST(SnapshotReader, SyntaxErrorsNameTheLineAndColumn) {
  const std::string text = written(rich());
  std::string broken = text;
  const size_t at = broken.find("\"KUBE-SVC-AAAA\"");
  broken.insert(at, ",");
  const std::string what = error_of(broken);
  EXPECT_NE(what.find("t.json:" + line_column(broken, at) + ": invalid JSON"), std::string::npos) << what;
  EXPECT_NE(error_of(text.substr(0, text.size() / 2)).find("invalid JSON"), std::string::npos);
}

TEST(SnapshotReader, SkippedRulesStillCountAndKeepErrorLines) {
  // Rules of chains read as RuleDetail::None are skipped by a byte scan: the
  // count must stay exact (brackets and braces inside strings included), and
  // a syntax error after a skipped region must still name its line.
  const LoadOptions none{[](std::string_view) { return RuleDetail::None; }};
  Snapshot s = rich();
  Chain& sep = s.netfilter.tables[0].chains[3];
  ASSERT_EQ(sep.name, "KUBE-SEP-BBBB");
  sep.rules[0].match.comment = "tricky ] } [ { \\\" \\";
  sep.rules[1].match.modules = {"[", "{"};
  const std::string text = written(s);
  const Snapshot got = from_json_text(text, "t.json", none);
  for (size_t c = 0; c < got.netfilter.tables[0].chains.size(); ++c) {
    EXPECT_EQ(got.netfilter.tables[0].chains[c].rule_count, s.netfilter.tables[0].chains[c].rule_count);
    EXPECT_FALSE(got.netfilter.tables[0].chains[c].rules_recorded);
  }
  // rule_count disagreeing with the skipped rules is still an error.
  std::string wrong = text;
  const size_t rc = wrong.find("\"rule_count\": 3", wrong.find("KUBE-SEP-BBBB"));
  ASSERT_NE(rc, std::string::npos);
  wrong.replace(rc, 15, "\"rule_count\": 4");
  EXPECT_NE(error_of(wrong, none).find("rule_count 4 but 3 rules recorded"), std::string::npos) << error_of(wrong, none);
  // A syntax error after the skipped KUBE-SEP rules names its own line.
  std::string broken = text;
  const size_t at = broken.find("\"name\": \"KUBE-SVC-AAAA\"", broken.find("KUBE-SEP-BBBB"));
  broken.insert(at, ",");
  EXPECT_NE(error_of(broken, none).find("t.json:" + line_column(broken, at) + ": invalid JSON"), std::string::npos)
      << error_of(broken, none);
  // A file cut inside a skipped region is an error, not a short count.
  const size_t cut = text.find("tricky");
  EXPECT_NE(error_of(text.substr(0, cut), none).find("invalid JSON"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::model
