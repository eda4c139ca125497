// `dpscope import` on every file in fixtures/bad-input: exit 2, the message
// starts with "FILE:LINE:" ("FILE:LINE:COLUMN:" for JSON), and no output file appears (or an existing one
// keeps its content).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;

struct BadInput {
  const char* file;
  const char* option;  // "--iptables-S" takes nat=FILE
  int line;
  const char* what;    // start of the message after "FILE:LINE: " (or "FILE:LINE:COLUMN: ")
  int column = 0;      // JSON inputs: where the parser stopped, as nlohmann and compilers count (1-based bytes)
};

const BadInput kCases[] = {
    {"truncated.iptables-save.txt", "--iptables-save", 7, "missing COMMIT for table 'filter' opened at line 2"},
    {"missing-commit.iptables-save.txt", "--iptables-save", 8, "table 'nat' starts before COMMIT of table 'filter'"},
    {"rule-before-table.iptables-save.txt", "--iptables-save", 2, "rule before any table"},
    {"unknown-table.iptables-save.txt", "--iptables-save", 2, "unknown table 'filtre'"},
    {"unknown-option.iptables-save.txt", "--iptables-save", 4, "unknown option '-Z'"},
    {"unterminated-quote.iptables-save.txt", "--iptables-save", 4, "unterminated quote"},
    {"unquoted-multiword-comment.iptables-save.txt", "--iptables-save", 5, "unexpected 'health'"},
    {"nul-bytes.iptables-save.txt", "--iptables-save", 4, "NUL byte"},
    {"non-utf8.iptables-save.txt", "--iptables-save", 4, "invalid UTF-8"},
    // It starts with a gzip header, so it is read as gzip (compressed dumps are
    // accepted) and fails as such: no line, the data is not text.
    {"binary-garbage.iptables-save.bin", "--iptables-save", 0, "corrupt gzip data: invalid literal/length code"},
    {"dash-S-given-save-text.iptables-S.txt", "--iptables-S", 3, "this is iptables-save output"},
    {"invalid.nft.json", "--nft-json", 3, "invalid JSON", 34},
    {"truncated.nft.json", "--nft-json", 3, "invalid JSON", 33},
    {"not-nft.nft.json", "--nft-json", 1, "not `nft -j list ruleset` output"},
    {"empty.nft.json", "--nft-json", 1, "empty file"},
};

RunResult import_file(const BadInput& c, const std::string& output) {
  const std::string path = source_path(std::string("fixtures/bad-input/") + c.file);
  const std::string arg = std::string(c.option) == "--iptables-S" ? "nat=" + path : path;
  return run({dpscope_bin(), "import", c.option, arg, "-o", output});
}

TEST(ImportBadInput, EveryCaseExitsTwoWithFileLineAndWritesNothing) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.file);
    TempDir dir;
    const auto out = dir.file("out.json");
    const auto r = import_file(c, out);
    EXPECT_EQ(r.exit_code, 2);
    const std::string prefix = "dpscope: " + source_path(std::string("fixtures/bad-input/") + c.file) + ":" +
                               (c.line ? std::to_string(c.line) + ":" : "") + (c.column ? std::to_string(c.column) + ":" : "") + " " +
                               c.what;
    EXPECT_EQ(r.err.substr(0, prefix.size()), prefix) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(out));
    // Nothing left behind either (no temporary file).
    EXPECT_TRUE(fs::is_empty(dir.path()));
  }
}

// Written to stdout, a bad input writes nothing there either (iptables-save
// rules are parsed as the snapshot is written: they are checked first).
TEST(ImportBadInput, ToStdoutNothingIsWritten) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.file);
    const auto r = import_file(c, "-");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.what), std::string::npos) << r.err;
  }
}

TEST(ImportBadInput, EveryFileInTheDirectoryHasACase) {
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(source_path("fixtures/bad-input"))) {
    const auto name = e.path().filename().string();
    if (name == "README.md") continue;
    ++files;
    bool listed = false;
    for (const auto& c : kCases) listed = listed || name == c.file;
    EXPECT_TRUE(listed) << name << " has no case in this test";
  }
  EXPECT_EQ(files, std::size(kCases));
}

TEST(ImportBadInput, AnExistingOutputFileKeepsItsContent) {
  TempDir dir;
  const auto out = dir.file("node.json");
  write_text(out, "previous snapshot\n");
  for (const auto& c : kCases) {
    const auto r = import_file(c, out);
    EXPECT_EQ(r.exit_code, 2) << c.file;
    EXPECT_EQ(read_text(out), "previous snapshot\n") << c.file;
  }
  // A bad file after a good one: the good one is not written alone.
  const auto r = run({dpscope_bin(), "import", "--iptables-save",
                      source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt"),
                      "--nft-json", source_path("fixtures/bad-input/invalid.nft.json"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_text(out), "previous snapshot\n");
}

TEST(ImportBadInput, UsageErrors) {
  TempDir dir;
  const auto out = dir.file("out.json");
  auto r = run({dpscope_bin(), "import", "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least one input"), std::string::npos) << r.err;
  r = run({dpscope_bin(), "import", "--iptables-S",
           source_path("fixtures/upstream/cilium/gke-dpv2-cilium-kpr-nat.iptables-S.txt"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected TABLE=FILE"), std::string::npos) << r.err;
  r = run({dpscope_bin(), "import", "--iptables-save", dir.file("missing.txt"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.substr(0, 9 + dir.file("missing.txt").size() + 2), "dpscope: " + dir.file("missing.txt") + ": ");
  r = run({dpscope_bin(), "import", "--iptables-save", source_path("fixtures/scenarios/empty.iptables-save.txt"),
           "--backend", "bogus", "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace dpscope::test
