// Compressed snapshots through the real binary: `-o node.json.zst` and
// `-o node.json.gz` from import, and every reader (compare with files and
// cluster folders, check, where, scale, stdin) reading them as it reads plain
// JSON; damaged files are bad input (exit 2, FILE: what is wrong).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The import time differs between two imports of the same input.
std::string without_taken_at(const std::string& json) {
  return std::regex_replace(json, std::regex("\"taken_at\": \"[^\"]*\""), "\"taken_at\": \"T\"");
}

class CompressedCli : public ::testing::Test {
 protected:
  // 2,000 services x 5 endpoints: 12k+ nat chains, so the writer renders in
  // parallel slices and writes import's rule text from where it lies.
  static void SetUpTestSuite() {
    fixture_ = new TempDir;
    RunResult gen = sh(source_path("fixtures/scenarios/gen-kube-proxy.sh") + " iptables 2000 5 > " +
                       fixture_->file("save.txt"));
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    for (const char* name : {"n.json", "n.json.zst", "n.json.gz"}) {
      RunResult im = run({dpscope_bin(), "import", "--iptables-save", fixture_->file("save.txt"), "--node", "n1", "-o",
                          fixture_->file(name)});
      ASSERT_EQ(im.exit_code, 0) << im.err;
    }
  }
  static void TearDownTestSuite() { delete fixture_; }
  static std::string file(const std::string& name) { return fixture_->file(name); }
  static TempDir* fixture_;
  TempDir dir;
};
TempDir* CompressedCli::fixture_ = nullptr;

TEST_F(CompressedCli, ImportWritesFilesThatDecompressToThePlainSnapshot) {
  const std::string plain = without_taken_at(read_text(file("n.json")));
  RunResult zst = run({"zstd", "-q", "-d", "-c", file("n.json.zst")});
  ASSERT_EQ(zst.exit_code, 0) << zst.err;
  EXPECT_TRUE(without_taken_at(zst.out) == plain);
  RunResult gz = run({"gzip", "-d", "-c", file("n.json.gz")});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_TRUE(without_taken_at(gz.out) == plain);
  EXPECT_LT(fs::file_size(file("n.json.zst")) * 8, plain.size());
  EXPECT_LT(fs::file_size(file("n.json.gz")) * 8, plain.size());
  // Import reads a compressed iptables-save dump as well (by its first bytes).
  ASSERT_EQ(sh("gzip -c " + file("save.txt") + " > " + dir.file("save.txt.gz")).exit_code, 0);
  RunResult im = run({dpscope_bin(), "import", "--iptables-save", dir.file("save.txt.gz"), "--node", "n1", "-o",
                      dir.file("from-gz.json")});
  ASSERT_EQ(im.exit_code, 0) << im.err;
  std::string again = without_taken_at(read_text(dir.file("from-gz.json")));
  // Only the recorded input's name differs.
  again = std::regex_replace(again, std::regex("save\\.txt\\.gz"), "save.txt");
  again = std::regex_replace(again, std::regex("\"[^\"]*/save\\.txt\""), "\"save.txt\"");
  EXPECT_TRUE(again == std::regex_replace(plain, std::regex("\"[^\"]*/save\\.txt\""), "\"save.txt\""));
}

// Every reader gives the same answer for the plain and the compressed file.
TEST_F(CompressedCli, EveryCommandReadsCompressedSnapshots) {
  struct Command {
    std::vector<std::string> before, after;
  };
  const std::vector<Command> commands = {
      {{"compare"}, {"--format", "csv"}},
      {{"check", "--expect", "kube-proxy-iptables"}, {"--format", "json"}},
      {{"where", "172.16.0.10"}, {"--format", "json"}},
      {{"scale"}, {"--format", "json"}},
  };
  auto replace_all = [](std::string s, const std::string& from, const std::string& to) {
    for (size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
    return s;
  };
  for (const auto& c : commands) {
    auto args_for = [&](const std::string& f) {
      std::vector<std::string> a = {dpscope_bin()};
      a.insert(a.end(), c.before.begin(), c.before.end());
      a.push_back(f);
      if (c.before[0] == "compare") a.push_back(f);
      a.insert(a.end(), c.after.begin(), c.after.end());
      return a;
    };
    RunResult plain = run(args_for(file("n.json")));
    ASSERT_TRUE(plain.exit_code == 0 || plain.exit_code == 1) << c.before[0] << ": " << plain.err;
    for (const char* name : {"n.json.zst", "n.json.gz"}) {
      RunResult r = run(args_for(file(name)));
      EXPECT_EQ(r.exit_code, plain.exit_code) << c.before[0] << " " << name << ": " << r.err;
      // The file's name may be in the output; the rest is the same.
      EXPECT_EQ(replace_all(r.out, name, "n.json"), plain.out) << c.before[0] << " " << name;
    }
  }
  // From stdin, and under a name that does not say it is compressed.
  RunResult piped = sh("cat " + file("n.json.gz") + " | " + dpscope_bin() + " where 172.16.0.10 - --format json");
  EXPECT_EQ(piped.exit_code, run({dpscope_bin(), "where", "172.16.0.10", file("n.json"), "--format", "json"}).exit_code)
      << piped.err;
  EXPECT_TRUE(contains(piped.out, "172.16.0.10")) << piped.out;
  fs::copy_file(file("n.json.zst"), dir.file("misnamed.json"));
  RunResult misnamed = run({dpscope_bin(), "compare", dir.file("misnamed.json"), file("n.json"), "--format", "csv"});
  EXPECT_EQ(misnamed.exit_code, 0) << misnamed.err;
}

// A cluster folder may mix plain and compressed node snapshots.
TEST_F(CompressedCli, CompareReadsAFolderOfMixedCompressedSnapshots) {
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  fs::copy_file(file("n.json"), dir.file("a/n1.json"));
  fs::copy_file(file("n.json.zst"), dir.file("a/n2.json.zst"));
  fs::copy_file(file("n.json.gz"), dir.file("a/n3.json.gz"));
  write_text(dir.file("a/notes.txt"), "not a snapshot");
  for (const char* n : {"n1.json.gz", "n2.json.zst", "n3.json"}) {
    fs::copy_file(std::string(n).ends_with(".gz") ? file("n.json.gz") : std::string(n).ends_with(".zst") ? file("n.json.zst") : file("n.json"),
                  dir.file(std::string("b/") + n));
  }
  RunResult r = run({dpscope_bin(), "compare", dir.file("a"), dir.file("b"), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["rows"][0]["id"], "cluster.nodes");
  EXPECT_EQ(doc["rows"][0]["values"], nlohmann::json::parse("[3, 3]"));
  // The same report as for an all-plain pair of folders.
  fs::create_directories(dir.file("p"));
  for (const char* n : {"n1.json", "n2.json", "n3.json"}) fs::copy_file(file("n.json"), dir.file(std::string("p/") + n));
  RunResult plain = run({dpscope_bin(), "compare", dir.file("p"), dir.file("p"), "--label", "a", "--label", "b",
                         "--format", "csv"});
  RunResult mixed = run({dpscope_bin(), "compare", dir.file("a"), dir.file("b"), "--format", "csv"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(mixed.out, plain.out);
}

// Cut short or damaged: exit 2 and the file's name with what is wrong, from
// every reader; never a crash or a report from part of the file.
TEST_F(CompressedCli, TruncatedOrCorruptFilesAreBadInput) {
  for (const char* name : {"n.json.zst", "n.json.gz"}) {
    const std::string whole = read_text(file(name));
    const bool zstd = std::string(name).ends_with(".zst");
    const std::string cut = dir.file(std::string("cut-") + name);
    write_text(cut, whole.substr(0, whole.size() * 2 / 3));
    std::string bad_bytes = whole;
    bad_bytes[whole.size() / 2] = static_cast<char>(bad_bytes[whole.size() / 2] ^ 0x20);
    const std::string bad = dir.file(std::string("bad-") + name);
    write_text(bad, bad_bytes);
    for (const auto& [path, what] :
         std::vector<std::pair<std::string, std::string>>{{cut, zstd ? "truncated zstd data" : "truncated gzip data"},
                                                          {bad, zstd ? "corrupt zstd data" : "corrupt gzip data"}}) {
      for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
               {"compare", path, file("n.json")},
               {"check", path, "--expect", "kube-proxy-iptables"},
               {"where", "172.16.0.10", path},
               {"scale", path}}) {
        std::vector<std::string> argv = {dpscope_bin()};
        argv.insert(argv.end(), args.begin(), args.end());
        RunResult r = run(argv);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << path << ": " << r.err;
        EXPECT_TRUE(contains(r.err, path + ": " + what)) << args[0] << ": " << r.err;
        EXPECT_EQ(r.out, "") << args[0];
      }
    }
    // In a cluster folder as well.
    fs::create_directories(dir.file(std::string("cl-") + name));
    fs::copy_file(cut, dir.file(std::string("cl-") + name + "/x" + (zstd ? ".json.zst" : ".json.gz")));
    RunResult r = run({dpscope_bin(), "compare", dir.file(std::string("cl-") + name), dir.file(std::string("cl-") + name)});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, zstd ? "truncated zstd data" : "truncated gzip data")) << r.err;
  }
}

TEST_F(CompressedCli, AnUnsupportedCompressionNameIsRefusedAndLeavesNoFile) {
  RunResult r = run({dpscope_bin(), "import", "--iptables-save", file("save.txt"), "-o", dir.file("n.json.xz")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "cannot write .xz compression: name the file .json.zst (zstd) or .json.gz (gzip)"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir.file("n.json.xz")));
}

}  // namespace
}  // namespace dpscope::test
