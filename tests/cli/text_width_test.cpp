// Text output fits the width: --width N, else the terminal, else $COLUMNS.
// On the kind pair, the cluster pair, a 4-side compare, --services, check,
// where and scale, at 60/80/120 columns: every line is at most N code points,
// and every number of the unlimited output is still there (numbers that only
// sit in a row's label or note may go with the "..." that shortens it; a
// shortened text never shows a cut number). Unlimited is the golden form.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

// The tests decide the width themselves: a COLUMNS exported by the calling
// shell must not reach the binary (goldens are the unlimited form).
const bool kColumnsCleared = [] { return unsetenv("COLUMNS") == 0; }();

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::set<std::string> numbers_in(const std::string& text) {
  static const std::regex kNumber("[0-9]+(\\.[0-9]+)?");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kNumber); it != std::sregex_iterator(); ++it) {
    out.insert(it->str());
  }
  return out;
}

struct Case {
  const char* name;
  std::string args;       // after the binary, run from the source root
  bool row_labels_notes;  // a compare table: numbers only in labels/notes may be shortened away
};

const std::string kKind = "fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json";
const std::string kClusters = "fixtures/snapshots/clusters/kind fixtures/snapshots/clusters/dotoryeee-cilium";
const std::string kFour = kKind + " fixtures/snapshots/clusters/kind/kind-control-plane.json"
                                  " fixtures/snapshots/clusters/dotoryeee-cilium/dotoryeee-cilium-worker2.json";

std::vector<Case> cases() {
  return {
      {"kind pair", "compare " + kKind, true},
      {"cluster pair", "compare " + kClusters, true},
      {"4 sides", "compare " + kFour, true},
      {"--services", "compare --services " + kKind, false},
      {"check", "check fixtures/snapshots/kind-kube-proxy.json --expect kube-proxy-free", false},
      {"where", "where 10.96.0.10 " + kKind, false},
      {"scale", "scale " + kKind + " fixtures/snapshots/clusters/kind/kind-worker.json", false},
  };
}

// Numbers that only appear in a row's label or note (the JSON form has them).
std::set<std::string> label_and_note_numbers(const Case& c) {
  std::set<std::string> out;
  if (!c.row_labels_notes) return out;
  auto j = dpscope_in_source(c.args + " --format json");
  EXPECT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out);
  for (const auto& row : report["rows"]) {
    for (const auto& n : numbers_in(row.value("label", "") + " " + row.value("note", ""))) out.insert(n);
  }
  return out;
}

TEST(TextWidth, EveryLineFitsAndEveryNumberStays) {
  ASSERT_TRUE(kColumnsCleared);
  for (const auto& c : cases()) {
    auto full = dpscope_in_source(c.args + " --width 0");
    ASSERT_LE(full.exit_code, 1) << c.name << ": " << full.err;  // check exits 1 with problems
    const std::set<std::string> want = numbers_in(full.out);
    const std::set<std::string> may_go = label_and_note_numbers(c);
    for (size_t width : {60, 80, 120}) {
      auto r = dpscope_in_source(c.args + " --width " + std::to_string(width));
      ASSERT_EQ(r.exit_code, full.exit_code) << c.name << ": " << r.err;
      for (const auto& line : lines_of(r.out)) {
        EXPECT_LE(code_points(line), width) << c.name << " at " << width << ": " << line;
      }
      const std::set<std::string> got = numbers_in(r.out);
      for (const auto& n : want) {
        if (may_go.count(n)) continue;
        EXPECT_TRUE(got.count(n)) << c.name << " at " << width << " lost " << n << "\n" << r.out;
      }
      for (const auto& n : got) {
        EXPECT_TRUE(want.count(n)) << c.name << " at " << width << " shows a number cut short: " << n;
      }
    }
  }
}

// Off a terminal (a pipe, -o FILE) text fits 100 columns: the golden form.
TEST(TextWidth, OffATerminalOneHundredColumnsIsTheGoldenForm) {
  for (const char* args : {"", " --width 100"}) {
    auto kind = dpscope_in_source("compare " + kKind + args);
    EXPECT_EQ(kind.out, read_text(source_path("tests/golden/compare-kind.txt")));
    auto clusters = dpscope_in_source("compare " + kClusters + args);
    EXPECT_EQ(clusters.out, read_text(source_path("tests/golden/compare-clusters.txt")));
    auto services = dpscope_in_source("compare --services " + kKind + args);
    EXPECT_EQ(services.out, read_text(source_path("tests/golden/compare-kind-services.txt")));
  }
}

TEST(TextWidth, ManySidesGoInGroupsOfRows) {
  auto r = dpscope_in_source("compare " + kFour + " --width 80");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The Node section is printed once per group of sides: more than one header
  // line naming sides, each side in exactly one group.
  auto lines = lines_of(r.out);
  size_t node = 0;
  while (node < lines.size() && lines[node] != "Node") ++node;
  ASSERT_LT(node, lines.size());
  // Header lines leave the label column blank; rows start at column 2. The
  // section ends at the next title (a line starting at column 0).
  size_t groups = 0;
  for (size_t i = node + 1; i < lines.size() && (lines[i].empty() || lines[i][0] == ' '); ++i) {
    if (!lines[i].empty() && lines[i].find_first_not_of(' ') > 10) ++groups;
  }
  EXPECT_GE(groups, 2u) << r.out;
  for (const char* label : {"kind-worker", "dotoryeee-cilium-worker", "kind-control-plane"}) {
    EXPECT_NE(r.out.find(label), std::string::npos);
  }
}

TEST(TextWidth, ColumnsIsHonouredWhenNotATerminalAndTheFlagWins) {
  auto env = sh("cd '" + source_path("") + "' && COLUMNS=60 '" + dpscope_bin() + "' compare " + kKind);
  ASSERT_EQ(env.exit_code, 0) << env.err;
  auto flag = dpscope_in_source("compare " + kKind + " --width 60");
  EXPECT_EQ(env.out, flag.out);
  EXPECT_NE(env.out, read_text(source_path("tests/golden/compare-kind.txt")));
  auto wins = sh("cd '" + source_path("") + "' && COLUMNS=60 '" + dpscope_bin() + "' compare " + kKind + " --width 100");
  EXPECT_EQ(wins.out, read_text(source_path("tests/golden/compare-kind.txt")));
  // Not a number: ignored.
  auto junk = sh("cd '" + source_path("") + "' && COLUMNS=wide '" + dpscope_bin() + "' compare " + kKind);
  EXPECT_EQ(junk.out, read_text(source_path("tests/golden/compare-kind.txt")));
  // A file written with -o is not the terminal: COLUMNS does not apply.
  TempDir dir;
  auto file = sh("cd '" + source_path("") + "' && COLUMNS=60 '" + dpscope_bin() + "' compare " + kKind + " -o '" +
                 dir.file("out.txt") + "'");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(read_text(dir.file("out.txt")), read_text(source_path("tests/golden/compare-kind.txt")));
}

TEST(TextWidth, HelpDocumentsTheWidth) {
  for (const char* cmd : {"compare", "check", "where", "scale"}) {
    auto r = run({dpscope_bin(), cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("--width"), std::string::npos) << cmd << r.out;
    EXPECT_NE(r.out.find("COLUMNS"), std::string::npos) << cmd;
  }
  auto bad = run({dpscope_bin(), "compare", source_path("fixtures/snapshots/kind-kube-proxy.json"),
                  source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--width", "wide"});
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace dpscope::test
