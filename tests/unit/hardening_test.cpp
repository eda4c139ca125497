// Issue 18 in the parsers: hostile or broken input is bad input (InputError,
// exit 2), never a crash, an internal error, a truncated number or a file
// one loader accepts and the other refuses.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "collectors/import/bpftool.h"
#include "collectors/import/import.h"
#include "model/intent.h"
#include "model/json.h"
#include "model/json_input.h"
#include "model/output_file.h"
#include "model/snapshot_writer.h"
#include "reports/escape.h"
#include "tests/support/process.h"
#include "tests/support/snapshot_text.h"
#include "util/error.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

// What a parser threw, or "" when it accepted the text.
std::string refusal(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The issue's generator: a bpftool-shaped document with a 70,000-level id.
std::string deep_bpftool(size_t depth) { return "[{\"id\":" + nested(depth) + ",\"type\":\"xdp\"}]"; }

const model::LoadOptions kLean{[](std::string_view) { return model::RuleDetail::None; }, nullptr};
const model::LoadOptions kFull{};

// Every JSON input of dpscope, by name.
std::vector<std::pair<std::string, std::function<void(const std::string&)>>> json_inputs() {
  return {
      {"bpftool-prog", [](const std::string& t) { importer::parse_bpftool_progs(t, "in.json"); }},
      {"bpftool-map", [](const std::string& t) { importer::parse_bpftool_maps(t, "in.json"); }},
      {"bpftool-net", [](const std::string& t) { importer::parse_bpftool_net(t, "in.json"); }},
      {"bpftool-map-dump", [](const std::string& t) { importer::parse_bpftool_map_dump(t, "in.json"); }},
      {"nft-json", [](const std::string& t) { importer::parse_nft_json(t, "in.json"); }},
      {"snapshot (full)", [](const std::string& t) { model::from_json_text(t, "in.json", kFull); }},
      {"snapshot (lean)", [](const std::string& t) { model::from_json_text(t, "in.json", kLean); }},
      {"intent", [](const std::string& t) {
         model::Intent into;
         model::parse_intent(t, "in.json", into);
       }},
  };
}

// ---- case 1: 70,000 levels end in SIGSEGV today.
TEST(Hardening, DeepNestingIsRefusedByEveryJsonInput) {
  for (const auto& [name, parse] : json_inputs()) {
    SCOPED_TRACE(name);
    for (const std::string& text : {deep_bpftool(70000), nested(70000), "{\"nftables\":" + nested(70000) + "}"}) {
      const std::string what = refusal([&] { parse(text); });
      EXPECT_NE(what.find("in.json"), std::string::npos) << what;
      EXPECT_NE(what.find("too deeply nested (limit " + std::to_string(model::kJsonDepthLimit) + ")"),
                std::string::npos)
          << what.substr(0, 200);
    }
  }
}

TEST(Hardening, NestingAtTheLimitIsNotRefusedForDepth) {
  // At the limit the parse goes on (and fails on the content, not the depth).
  const std::string what = refusal([&] { importer::parse_bpftool_progs(nested(model::kJsonDepthLimit), "in.json"); });
  EXPECT_EQ(what.find("too deeply"), std::string::npos) << what;
  const std::string over = refusal([&] { importer::parse_bpftool_progs(nested(model::kJsonDepthLimit + 1), "in.json"); });
  EXPECT_NE(over.find("too deeply"), std::string::npos) << over;
}

// A snapshot whose rules the lean loader skips: deep nesting inside them.
std::string snapshot_with_rules(const std::string& rules) {
  return R"({"schema":"dpscope.snapshot/v1","netfilter":{"collected":true,"tables":[{"backend":"iptables-nft","family":"ip","name":"nat",)"
         R"("chains":[{"name":"KUBE-SEP-X","rules":)" + rules + R"(}]}]}})";
}

TEST(Hardening, DeepNestingInsideSkippedRulesIsRefused) {
  const std::string text = snapshot_with_rules("[{\"position\":1,\"x\":" + nested(70000) + "}]");
  for (const auto* options : {&kLean, &kFull}) {
    const std::string what = refusal([&] { model::from_json_text(text, "in.json", *options); });
    EXPECT_NE(what.find("too deeply nested"), std::string::npos) << what.substr(0, 200);
  }
}

// ---- case 2: 1e999 escaped as json::out_of_range -> exit 4.
TEST(Hardening, NumberOutOfRangeIsBadInputInEveryJsonInput) {
  for (const auto& [name, parse] : json_inputs()) {
    SCOPED_TRACE(name);
    for (const std::string& text : std::vector<std::string>{"1e999", "[{\"id\": 1e999}]", "\n[-1e400]",
                                                             "[1" + std::string(400, '0') + "]"}) {
      std::string what;
      try {
        parse(text);
      } catch (const InputError& e) {
        what = e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not an InputError: " << e.what();
      }
      EXPECT_NE(what.find("number out of range"), std::string::npos) << text << ": " << what;
      EXPECT_EQ(what.find("json.exception"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(refusal([] { importer::parse_bpftool_progs("\n\n[1e999]", "in.json"); }).substr(0, 10), "in.json:3:");
}

// Found by fuzz_intent: a port above INT64_MAX was read as a negative number.
TEST(Hardening, IntentNumbersBeyondInt64AreOutOfRangeAsWritten) {
  const std::string service = R"({"kind":"Service","metadata":{"name":"a"},"spec":{"ports":[{"port":18446744073709551615}]}})";
  model::Intent into;
  const std::string what = refusal([&] { model::parse_intent(service, "in.json", into); });
  EXPECT_NE(what.find("/spec/ports/0/port: port 18446744073709551615 out of range 1-65535"), std::string::npos) << what;
  const std::string target = R"({"kind":"Service","metadata":{"name":"a"},"spec":{"ports":[{"port":80,"targetPort":18446744073709551615}]}})";
  EXPECT_NE(refusal([&] { model::parse_intent(target, "in.json", into); })
                .find("/spec/ports/0/targetPort: port 18446744073709551615 out of range 1-65535"),
            std::string::npos);
  // The fuzzer's input: -1e400 ahead of the object (json::out_of_range escaped, exit 4).
  const std::string found = read_text(source_path("tests/fuzz/regressions/intent/number-overflow-1e400.json"));
  const std::string overflow = refusal([&] { model::parse_intent(found, "in.json", into); });
  EXPECT_EQ(overflow.rfind("in.json:1:", 0), 0u) << overflow;  // FILE:LINE:COLUMN since the column landed
  EXPECT_NE(overflow.find(": number out of range: -1e400"), std::string::npos) << overflow;
}

// ---- case 3: a region the lean loader skipped was not checked as JSON.
TEST(Hardening, LeanAndFullLoadersRefuseTheSameBrokenRules) {
  const std::vector<std::string> broken = {
      "[{\"position\":1 \"target\":\"x\"}]",         // missing comma
      "[{\"position\":1,}]",                         // trailing comma
      "[{\"position\":1,\"x\":tru}]",                // bad literal
      "[{\"position\":01}]",                         // leading zero
      "[{\"position\":1,\"x\":1e999}]",              // out of range
      "[{\"position\":1,\"x\":\"a\\qb\"}]",          // bad escape
      "[{\"position\":1,\"x\":\"\\ud800\"}]",        // lone surrogate
      "[{\"position\":1,\"x\":\"\xff\"}]",           // invalid UTF-8
      "[{\"position\":1,\"x\":\"a\x01" "b\"}]",      // raw control character
      "[{\"position\":1]",                           // ] for }
      "[{\"position\":1,\"x\":[1,2}]}]",             // } for ]
      "[{\"position\" 1}]",                          // missing colon
      "[{1:2}]",                                     // key not a string
  };
  for (const auto& rules : broken) {
    SCOPED_TRACE(rules);
    const std::string text = snapshot_with_rules(rules);
    EXPECT_FALSE(json::accept(text));
    EXPECT_NE(refusal([&] { model::from_json_text(text, "in.json", kFull); }), "");
    const std::string lean = refusal([&] { model::from_json_text(text, "in.json", kLean); });
    EXPECT_NE(lean.find("in.json"), std::string::npos) << lean;
  }
  // JSON, but a rule that is not an object: refused by both as well.
  const std::string scalar_rule = snapshot_with_rules("[{\"position\":1}, 7]");
  EXPECT_NE(refusal([&] { model::from_json_text(scalar_rule, "in.json", kFull); }), "");
  EXPECT_NE(refusal([&] { model::from_json_text(scalar_rule, "in.json", kLean); }).find("not an object"), std::string::npos);
  // Valid but unusual JSON in skipped rules is still accepted, by both.
  const std::string fine = snapshot_with_rules(
      "[{\"position\":1,\"x\":[true,false,null,-0.5e+3,\"\\u00e9\\ud83d\\ude00 ] } [ {\",{}, [], \"\xc3\xa9\"]}]");
  ASSERT_TRUE(json::accept(fine));
  EXPECT_EQ(refusal([&] { model::from_json_text(fine, "in.json", kFull); }), "");
  EXPECT_EQ(refusal([&] { model::from_json_text(fine, "in.json", kLean); }), "");
  EXPECT_EQ(model::from_json_text(fine, "in.json", kLean).netfilter.tables.at(0).chains.at(0).rule_count, 1u);
}

TEST(Hardening, LeanLoaderErrorNamesTheLine) {
  const std::string text = snapshot_with_rules("[\n{\"position\":1},\n{\"position\":2 \"x\":1}\n]");
  const std::string what = refusal([&] { model::from_json_text(text, "in.json", kLean); });
  EXPECT_EQ(what.substr(0, 10), "in.json:3:") << what;
}

// ---- case 8: numbers out of their field's range were truncated.
TEST(Hardening, BpftoolIdsAndTimesOutOfRangeAreRefused) {
  const std::string prog = R"([{"id": 7, "type": "xdp", "map_ids": [4294967297]}])";
  EXPECT_NE(refusal([&] { importer::parse_bpftool_progs(prog, "p.json"); }).find("map_ids"), std::string::npos);
  const std::string late = R"([{"id": 7, "type": "xdp", "loaded_at": 99999999999999999}])";
  EXPECT_NE(refusal([&] { importer::parse_bpftool_progs(late, "p.json"); }).find("loaded_at"), std::string::npos);
  const std::string id = R"([{"id": 4294967296, "type": "xdp"}])";
  EXPECT_NE(refusal([&] { importer::parse_bpftool_progs(id, "p.json"); }).find("out of range"), std::string::npos);
  // In range: kept exactly.
  const auto ok = importer::parse_bpftool_progs(R"([{"id": 7, "type": "xdp", "map_ids": [4294967295], "loaded_at": 253402300799}])", "p.json");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].map_ids, std::vector<uint32_t>{4294967295u});
  EXPECT_EQ(ok[0].loaded_at, "9999-12-31T23:59:59Z");
}

std::string nft_chain_with_prio(const std::string& prio) {
  return R"({"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}},
    {"chain": {"family": "ip", "table": "t", "name": "c", "handle": 2, "type": "filter", "hook": "input", "prio": )" +
         prio + R"(, "policy": "accept"}}]})";
}

TEST(Hardening, NftPrioOutOfRangeIsRefused) {
  for (const char* bad : {"4294967296", "2147483648", "-2147483649", "18446744073709551615"}) {
    const std::string what = refusal([&] { importer::parse_nft_json(nft_chain_with_prio(bad), "n.json"); });
    EXPECT_NE(what.find("\"prio\" is out of range"), std::string::npos) << bad << ": " << what;
  }
  for (const auto& [text, want] : std::vector<std::pair<std::string, int32_t>>{{"-2147483648", INT32_MIN}, {"2147483647", INT32_MAX}, {"-300", -300}}) {
    const auto tables = importer::parse_nft_json(nft_chain_with_prio(text), "n.json");
    EXPECT_EQ(tables.at(0).chains.at(0).base->priority, want);
  }
}

TEST(Hardening, SnapshotIntegersOutOfRangeAreRefused) {
  const std::string big_prio = R"({"schema":"dpscope.snapshot/v1","netfilter":{"collected":true,"tables":[{"backend":"nftables","family":"ip","name":"t",)"
                               R"("chains":[{"name":"c","base":{"hook":"input","type":"filter","priority":4294967296,"policy":"accept"},"rules":[]}]}]}})";
  for (const auto* options : {&kLean, &kFull}) {
    EXPECT_NE(refusal([&] { model::from_json_text(big_prio, "s.json", *options); }).find("out of range"), std::string::npos);
  }
}

// ---- case 4: -I was O(rules) per line; the order must stay iptables-restore's.
std::vector<std::string> targets_of(const std::string& restore, const std::string& chain) {
  const auto tables = importer::parse_iptables_save(restore, "r.txt", {});
  std::vector<std::string> out;
  for (const auto& c : tables.at(0).chains) {
    if (c.name != chain) continue;
    for (const auto& r : c.rules) out.push_back(r.match.comment);
  }
  return out;
}

TEST(Hardening, RestoreInsertsLandWhereIptablesRestorePutsThem) {
  // Simulated with a plain vector: the definition of -I N.
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment a0 -j ACCEPT\n";
  std::vector<std::string> want = {"a0"};
  uint32_t seed = 12345;
  for (int i = 1; i < 400; ++i) {
    seed = seed * 1103515245u + 12345u;
    const std::string c = "r" + std::to_string(i);
    if (seed % 5 == 0) {
      text += "-A INPUT -m comment --comment " + c + " -j ACCEPT\n";
      want.push_back(c);
    } else if (seed % 5 == 1) {
      text += "-I INPUT -m comment --comment " + c + " -j ACCEPT\n";  // no number: position 1
      want.insert(want.begin(), c);
    } else {
      const size_t pos = 1 + (seed >> 8) % (want.size() + 1);
      text += "-I INPUT " + std::to_string(pos) + " -m comment --comment " + c + " -j ACCEPT\n";
      want.insert(want.begin() + static_cast<long>(pos - 1), c);
    }
    if (i == 200) {  // a flush in the middle forgets what came before
      text += "-F INPUT\n";
      want.clear();
    }
  }
  text += "COMMIT\n";
  EXPECT_EQ(targets_of(text, "INPUT"), want);
  const auto tables = importer::parse_iptables_save(text, "r.txt", {});
  for (const auto& c : tables.at(0).chains) {
    for (size_t i = 0; i < c.rules.size(); ++i) EXPECT_EQ(c.rules[i].position, i + 1);
  }
}

TEST(Hardening, RestoreInsertPositionIsCheckedAgainstPendingInserts) {
  const std::string text = "*filter\n:INPUT ACCEPT [0:0]\n-I INPUT -j ACCEPT\n-I INPUT 2 -j DROP\n-I INPUT 4 -j DROP\nCOMMIT\n";
  const std::string what = refusal([&] { importer::parse_iptables_save(text, "r.txt", {}); });
  EXPECT_NE(what.find("r.txt:5: -I position 4 out of range (chain has 2 rules)"), std::string::npos) << what;
}

TEST(Hardening, ManyRestoreCommandsGiveTheRightState) {
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n";
  for (int i = 0; i < 20000; ++i) text += "-I INPUT 1 -m comment --comment c" + std::to_string(i) + " -j ACCEPT\n";
  for (int i = 0; i < 5000; ++i) text += "-N X" + std::to_string(i) + "\n";
  for (int i = 0; i < 5000; ++i) text += "-A X" + std::to_string(i) + " -j ACCEPT\n";
  for (int i = 0; i < 5000; ++i) text += "-F X" + std::to_string(i) + "\n";
  for (int i = 0; i < 4999; ++i) text += "-X X" + std::to_string(i) + "\n";
  text += "COMMIT\n";
  const auto tables = importer::parse_iptables_save(text, "r.txt", {});
  ASSERT_EQ(tables.at(0).chains.size(), 2u);
  const auto& input = tables[0].chains[0];
  ASSERT_EQ(input.rules.size(), 20000u);
  EXPECT_EQ(input.rules.front().match.comment, "c19999");
  EXPECT_EQ(input.rules.back().match.comment, "c0");
  EXPECT_EQ(tables[0].chains[1].name, "X4999");
  EXPECT_EQ(tables[0].chains[1].rules.size(), 0u);
}

// ---- cases 5 and 9: terminal, bidi and spreadsheet injection.
TEST(Hardening, BidiControlsAreShownEscaped) {
  for (const auto& [raw, shown] : std::vector<std::pair<std::string, std::string>>{
           {"a\u202eb", "a\\u202eb"}, {"\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"},
           {"\u2066x\u2067y\u2068z\u2069", "\\u2066x\\u2067y\\u2068z\\u2069"}, {"\u200e\u200f", "\\u200e\\u200f"},
           {"\u061c", "\\u061c"}, {"\u2028\u2029", "\\u2028\\u2029"}, {"caf\u00e9 \u2014 ok", "caf\u00e9 \u2014 ok"}}) {
    EXPECT_EQ(reports::escape_text(raw), shown);
    EXPECT_EQ(reports::escape_markdown(raw).find("\u202e"), std::string::npos);
    EXPECT_EQ(reports::escape_csv(raw), "\"" + shown + "\"");
    EXPECT_EQ(reports::escape_html(raw).find("\u202e"), std::string::npos);
  }
  EXPECT_EQ(reports::escape_markdown("a\u202eb"), "a\\\\u202eb");
}

TEST(Hardening, CsvFormulaCellsAreNeutralised) {
  EXPECT_EQ(reports::escape_csv("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(reports::escape_csv("+1+2"), "\"'+1+2\"");
  EXPECT_EQ(reports::escape_csv("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(reports::escape_csv("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(reports::escape_csv("\t=1"), "\"'\\t=1\"");
  EXPECT_EQ(reports::escape_csv("\r=1"), "\"'\\r=1\"");
  // Kept: a lone "-" (no value), negative numbers, ordinary text.
  EXPECT_EQ(reports::escape_csv("-"), "\"-\"");
  EXPECT_EQ(reports::escape_csv("-12"), "\"-12\"");
  EXPECT_EQ(reports::escape_csv("-0.5"), "\"-0.5\"");
  EXPECT_EQ(reports::escape_csv("a=b"), "\"a=b\"");
  EXPECT_EQ(reports::escape_csv(""), "\"\"");
}

TEST(Hardening, ErrorMessagesAreInert) {
  const InputError e("f.txt", 3, "chain 'X\x1b]0;pwned\x07\u202e' listed twice");
  EXPECT_EQ(std::string(e.what()), "f.txt:3: chain 'X\\x1b]0;pwned\\x07\\u202e' listed twice");
  EXPECT_EQ(std::string(UsageError("bad \x1b[2J").what()), "bad \\x1b[2J");
  const std::string what = refusal([] {
    importer::parse_nft_json(R"({"nftables": [{"table": {"family": "ip", "name": "t\u001b[31m"}}, {"table": {"family": "ip", "name": "t\u001b[31m"}}]})", "n.json");
  });
  EXPECT_NE(what.find("t\\x1b[31m listed twice"), std::string::npos) << what;
  EXPECT_EQ(what.find('\x1b'), std::string::npos);
}

// ---- case 7: modes of output files.
TEST(Hardening, OutputFilesHonourUmaskAndKeepTheModeOfAFileReplaced) {
  TempDir dir;
  const mode_t old = ::umask(077);
  const std::string a = dir.file("a.txt");
  model::write_file_atomically(a, "x");
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // was always 0644
  ::umask(027);
  model::write_file_atomically(dir.file("b.txt"), "x");
  ASSERT_EQ(::stat(dir.file("b.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ::umask(old);
  ASSERT_EQ(::chmod(a.c_str(), 0600), 0);
  model::write_file_atomically(a, "y");
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_text(a), "y");
  ASSERT_EQ(::chmod(a.c_str(), 0640), 0);
  model::Snapshot s;
  model::save_snapshot(s, a);
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(Hardening, AFailedWriteLeavesNoTemporaryFile) {
  TempDir dir;
  {
    model::TempOutput out(dir.file("x.json"));
    EXPECT_EQ(::access(out.temp_path().c_str(), F_OK), 0);
    EXPECT_EQ(out.temp_path().rfind(dir.file("x.json.tmp."), 0), 0u);
  }  // not committed
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  EXPECT_NE(model::errno_text(ENOSPC).find("(ENOSPC)"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
