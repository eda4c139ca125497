// Strings from a node must render inert in every format: a comment holding
// <script>, |, backticks, newlines or ANSI escapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "reports/escape.h"
#include "reports/render.h"

namespace dpscope::reports {
namespace {

const std::string kEvil = "a|b`c`<script>alert(1)</script>\n-A X\x1b[31mred\x1b[0m\r\t\x7f\xc2\x9b" "2J &\"'";

TEST(ReportEscape, TextHasNoControlCharacters) {
  std::string t = escape_text(kEvil);
  for (unsigned char c : t) {
    EXPECT_TRUE(c >= 0x20 && c != 0x7f) << "control byte " << int(c) << " in " << t;
  }
  EXPECT_NE(t.find("\\x1b[31m"), std::string::npos);
  EXPECT_NE(t.find("\\n-A X"), std::string::npos);
  EXPECT_NE(t.find("\\u009b"), std::string::npos);  // 8-bit CSI as UTF-8
  EXPECT_EQ(t.find('\n'), std::string::npos);
}

TEST(ReportEscape, MarkdownCannotBreakATableOrInjectHtml) {
  std::string m = escape_markdown(kEvil);
  EXPECT_EQ(m.find("<script>"), std::string::npos);
  EXPECT_NE(m.find("&lt;script&gt;"), std::string::npos);
  // every | and ` is escaped
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '|' || m[i] == '`') {
      ASSERT_GT(i, 0u);
      EXPECT_EQ(m[i - 1], '\\') << m;
    }
  }
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_EQ(m.find('\x1b'), std::string::npos);
}

TEST(ReportEscape, HtmlEntities) {
  std::string h = escape_html(kEvil);
  EXPECT_EQ(h.find('<'), std::string::npos);
  EXPECT_EQ(h.find('>'), std::string::npos);
  EXPECT_EQ(h.find('"'), std::string::npos);
  EXPECT_EQ(h.find('\''), std::string::npos);
  EXPECT_NE(h.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(h.find("&amp;"), std::string::npos);
  EXPECT_EQ(h.find('\x1b'), std::string::npos);
}

TEST(ReportEscape, CsvOneQuotedField) {
  std::string c = escape_csv(kEvil);
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c.front(), '"');
  EXPECT_EQ(c.back(), '"');
  std::string inner = c.substr(1, c.size() - 2);
  // quotes inside are doubled
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '"') {
      ASSERT_LT(i + 1, inner.size());
      EXPECT_EQ(inner[i + 1], '"');
      ++i;
    }
  }
  EXPECT_EQ(c.find('\n'), std::string::npos);
  EXPECT_EQ(c.find('\r'), std::string::npos);
}

// A node name and a rule comment go through the whole compare pipeline.
model::Snapshot snapshot_named(const std::string& text) {
  model::Snapshot s;
  s.node.name = text;
  s.netfilter.collected = true;
  model::Table t;
  t.family = "ip";
  t.name = "nat";
  model::Chain c;
  c.name = "KUBE-SERVICES";
  model::Rule r;
  r.position = 1;
  r.match.comment = text;
  r.match.destination = model::Prefix{"10.96.0.1/32", false};
  c.rules.push_back(r);
  c.rule_count = 1;
  t.chains.push_back(c);
  s.netfilter.tables.push_back(t);
  return s;
}

TEST(ReportEscape, EveryRendererIsInert) {
  model::Snapshot evil = snapshot_named(kEvil);
  model::Snapshot plain = snapshot_named("plain");
  Comparison cmp = compare({{"", "a.json", &evil}, {"", "b.json", &evil}});
  Comparison benign = compare({{"", "a.json", &plain}, {"", "b.json", &plain}});
  for (Format f : {Format::Text, Format::Markdown, Format::Csv, Format::Json}) {
    std::string out = render(cmp, f);
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << int(f);
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << int(f);
    if (f == Format::Markdown) {
      EXPECT_EQ(out.find("<script>"), std::string::npos);
    }
  }
  // A newline from a node never adds a line: same shape as a benign report.
  for (Format f : {Format::Text, Format::Markdown, Format::Csv}) {
    auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
    EXPECT_EQ(lines(render(cmp, f)), lines(render(benign, f))) << int(f);
  }
  // JSON keeps the exact string as data.
  auto j = nlohmann::json::parse(render_json(cmp));
  EXPECT_EQ(j["sides"][0]["node"], kEvil);
  EXPECT_EQ(j["sides"][0]["label"], kEvil);
}

TEST(ReportCells, UnavailableIsNeverZero) {
  model::Snapshot bad;
  bad.unavailable.push_back({"netfilter", "EPERM reading the ruleset", 1, "run as root"});
  bad.unavailable.push_back({"ebpf", "EPERM on BPF_PROG_GET_NEXT_ID", 1, "needs CAP_SYS_ADMIN"});
  model::Snapshot import_only;
  import_only.netfilter.collected = true;
  Comparison cmp = compare({{"bad", "bad.json", &bad}, {"imp", "imp.json", &import_only}});
  for (const char* id : {"netfilter.rules", "netfilter.chains.kube_svc", "netfilter.service_ip_rules",
                         "nftables.kube_proxy.services", "ebpf.programs", "ebpf.memlock_bytes",
                         "ebpf.cilium.frontends"}) {
    const Row* r = cmp.find(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_EQ(r->values[0].kind, Cell::Kind::Unavailable) << id;
    // The reason is said once per section, not in every cell.
    EXPECT_EQ(r->values[0].shown(), "unavailable") << r->values[0].shown();
  }
  EXPECT_EQ(cmp.find("netfilter.rules")->values[1].kind, Cell::Kind::Number);
  EXPECT_EQ(cmp.find("ebpf.programs")->values[1].kind, Cell::Kind::NotCollected);
  auto j = to_json(cmp);
  for (const auto& row : j["rows"]) {
    if (row["id"] == "ebpf.programs") {
      EXPECT_EQ(row["values"][0]["unavailable"], "EPERM on BPF_PROG_GET_NEXT_ID (needs CAP_SYS_ADMIN)");
      EXPECT_TRUE(row["values"][1].is_null());
    }
  }
  std::string text = render_text(cmp);
  EXPECT_NE(text.find("[1] bad: unavailable: EPERM reading the ruleset (run as root)"), std::string::npos) << text;
}

TEST(ReportCells, IncompleteNumbersAreMarked) {
  model::Snapshot s;
  s.netfilter.collected = true;
  s.unavailable.push_back({"netfilter.iptables-legacy", "no ip_tables", 0, ""});
  Comparison cmp = compare({{"a", "a.json", &s}, {"b", "b.json", &s}});
  const Cell& v = cmp.find("netfilter.rules")->values[0];
  EXPECT_TRUE(v.incomplete);
  EXPECT_EQ(v.shown(), "0 (incomplete)");
  auto j = to_json(cmp);
  bool seen = false;
  for (const auto& row : j["rows"]) {
    if (row["id"] != "netfilter.rules") continue;
    EXPECT_EQ(row["values"][0]["incomplete"], "netfilter.iptables-legacy: no ip_tables");
    EXPECT_EQ(row["values"][0]["value"], 0);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace dpscope::reports
