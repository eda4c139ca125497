// Compressed snapshot files (model/compression.h): what dpscope writes is what
// the zstd and gzip tools decompress, byte for byte; what those tools write
// dpscope reads; damaged data is an InputError naming the file, never a crash
// or a partial read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "model/compression.h"
#include "model/json.h"
#include "model/snapshot_writer.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run;
using test::sh;
using test::TempDir;
using test::write_text;

// Enough chains that the writer renders the table in parallel slices (over
// 4 x 2048 chains), with rules and text that needs escaping.
Snapshot large_snapshot() {
  Snapshot s;
  s.node.name = "node-z";
  s.node.source = "live";
  s.netfilter.collected = true;
  Table t{Backend::IptablesNft, "ip", "nat", {}, {}};
  for (int i = 0; i < 9000; ++i) {
    Chain c;
    c.name = "KUBE-SVC-" + std::to_string(i);
    for (int k = 1; k <= 3; ++k) {
      Rule r;
      r.position = k;
      r.match.comment = "ns/svc-" + std::to_string(i) + ":p\"80\"\t\xc3\xa9";
      r.match.protocol = "tcp";
      r.target = "KUBE-SEP-" + std::to_string(i * 3 + k);
      r.raw = "-A " + c.name + " -m comment --comment x -j " + r.target;
      c.rules.push_back(r);
    }
    c.rule_count = c.rules.size();
    c.rules_recorded = true;
    t.chains.push_back(std::move(c));
  }
  s.netfilter.tables.push_back(std::move(t));
  return s;
}

std::string dump(const Snapshot& s) { return to_json(s).dump(); }

class Compressed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    snapshot_ = new Snapshot(large_snapshot());
  }
  static void TearDownTestSuite() { delete snapshot_; }
  static const Snapshot& snapshot() { return *snapshot_; }
  static Snapshot* snapshot_;
  TempDir dir;
};
Snapshot* Compressed::snapshot_ = nullptr;

std::string expect_input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(CompressionNames, BySuffixForWritingByMagicForReading) {
  EXPECT_EQ(compression_for_name("a/node.json.zst"), Compression::Zstd);
  EXPECT_EQ(compression_for_name("node.json.gz"), Compression::Gzip);
  EXPECT_EQ(compression_for_name("node.json"), Compression::None);
  EXPECT_EQ(compression_for_name("node.zstd"), Compression::None);
  EXPECT_EQ(unsupported_compression_suffix("node.json.xz"), ".xz");
  EXPECT_EQ(unsupported_compression_suffix("node.json.zst"), "");
  EXPECT_TRUE(is_snapshot_file_name("n.json"));
  EXPECT_TRUE(is_snapshot_file_name("n.json.zst"));
  EXPECT_TRUE(is_snapshot_file_name("n.json.gz"));
  EXPECT_FALSE(is_snapshot_file_name("n.zst"));
  EXPECT_FALSE(is_snapshot_file_name("n.json.tmp.abc"));
  EXPECT_EQ(compression_of(std::string("\x28\xb5\x2f\xfd", 4)), Compression::Zstd);
  EXPECT_EQ(compression_of(std::string("\x1f\x8b\x08\x00", 4)), Compression::Gzip);
  EXPECT_EQ(compression_of("{\n \""), Compression::None);
  EXPECT_EQ(compression_of(std::string("\x28\xb5\x2f", 3)), Compression::None);  // too short to tell
}

// Written by dpscope, decompressed by the standard tools: the plain file's bytes.
TEST_F(Compressed, WrittenFilesDecompressWithTheStandardToolsToThePlainBytes) {
  save_snapshot(snapshot(), dir.file("n.json"));
  save_snapshot(snapshot(), dir.file("n.json.zst"));
  save_snapshot(snapshot(), dir.file("n.json.gz"));
  const std::string plain = read_text(dir.file("n.json"));
  ASSERT_GT(plain.size(), 2u << 20);
  const auto zst = run({"zstd", "-q", "-d", "-c", dir.file("n.json.zst")});
  ASSERT_EQ(zst.exit_code, 0) << zst.err;
  EXPECT_TRUE(zst.out == plain) << "zstd -d differs from the plain file";
  const auto gz = run({"gzip", "-d", "-c", dir.file("n.json.gz")});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_TRUE(gz.out == plain) << "gzip -d differs from the plain file";
  // Smaller by far (a JSON snapshot compresses 10x or more).
  EXPECT_LT(fs::file_size(dir.file("n.json.zst")) * 8, plain.size());
  EXPECT_LT(fs::file_size(dir.file("n.json.gz")) * 8, plain.size());
  // The checksum flag is set (zstd -lv says so), so a reader detects corruption.
  const auto list = run({"zstd", "-lv", dir.file("n.json.zst")});
  EXPECT_NE(list.out.find("Check: XXH64"), std::string::npos) << list.out;
  // No temporary file left next to them.
  for (const auto& e : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
}

// Read back by every reader: the same snapshot, whatever the file is called.
TEST_F(Compressed, ReadBackEqualsTheSnapshotByMagicNotName) {
  save_snapshot(snapshot(), dir.file("n.json.zst"));
  save_snapshot(snapshot(), dir.file("n.json.gz"));
  const std::string want = dump(snapshot());
  EXPECT_EQ(dump(load_snapshot(dir.file("n.json.zst"))), want);
  EXPECT_EQ(dump(load_snapshot(dir.file("n.json.gz"))), want);
  fs::rename(dir.file("n.json.zst"), dir.file("misnamed.json"));
  EXPECT_EQ(dump(load_snapshot(dir.file("misnamed.json"))), want);
  // The whole-file readers (import's input) decompress too.
  save_snapshot(snapshot(), dir.file("n.json"));
  const std::string plain = read_text(dir.file("n.json"));
  EXPECT_TRUE(read_file(dir.file("misnamed.json")) == plain);
  EXPECT_TRUE(read_file_bytes(dir.file("n.json.gz")).view() == plain);
}

// Files from the standard tools (one frame of known size, several frames or
// gzip members concatenated, the fastest and the strongest levels) read alike.
TEST_F(Compressed, FilesFromTheStandardToolsAreRead) {
  save_snapshot(snapshot(), dir.file("n.json"));
  const std::string want = dump(snapshot());
  const std::string f = dir.file("n.json");
  ASSERT_EQ(sh("zstd -q -12 -T2 " + f + " -o " + dir.file("a.json.zst")).exit_code, 0);
  ASSERT_EQ(sh("zstd -q -1 --no-check < " + f + " > " + dir.file("b.json.zst")).exit_code, 0);  // streamed: no size
  ASSERT_EQ(sh("gzip -9 -c " + f + " > " + dir.file("c.json.gz")).exit_code, 0);
  for (const char* name : {"a.json.zst", "b.json.zst", "c.json.gz"}) {
    EXPECT_EQ(dump(load_snapshot(dir.file(name))), want) << name;
  }
  // Concatenated: decompress() yields both contents, as zstd -d / gzip -d do.
  write_text(dir.file("one"), "{\"a\":");
  write_text(dir.file("two"), "1}\n");
  ASSERT_EQ(sh("cd " + dir.path() + " && zstd -q -c one > cat.zst && zstd -q -c two >> cat.zst && "
               "gzip -c one > cat.gz && gzip -c two >> cat.gz").exit_code, 0);
  const std::string zst = read_text(dir.file("cat.zst")), gz = read_text(dir.file("cat.gz"));
  EXPECT_EQ(decompress(Compression::Zstd, zst, "cat.zst").view(), "{\"a\":1}\n");
  EXPECT_EQ(decompress(Compression::Gzip, gz, "cat.gz").view(), "{\"a\":1}\n");
}

// A copy cut short or damaged is bad input with the file's name: every cut
// point of the trailer and a few inside, a flipped byte, trailing bytes.
TEST_F(Compressed, TruncatedOrCorruptFilesAreInputErrors) {
  save_snapshot(snapshot(), dir.file("n.json.zst"));
  save_snapshot(snapshot(), dir.file("n.json.gz"));
  for (const char* name : {"n.json.zst", "n.json.gz"}) {
    const std::string whole = read_text(dir.file(name));
    const bool is_zstd = std::string(name).ends_with(".zst");
    std::vector<size_t> cuts = {4, 10, whole.size() / 3, whole.size() / 2, whole.size() - 9, whole.size() - 5,
                                whole.size() - 4, whole.size() - 1};
    for (size_t cut : cuts) {
      const std::string path = dir.file(std::string("cut-") + name);
      write_text(path, whole.substr(0, cut));
      const std::string what = expect_input_error([&] { load_snapshot(path); });
      EXPECT_EQ(what.rfind(path + ":", 0), 0u) << what;
      EXPECT_TRUE(what.find(is_zstd ? "zstd data" : "gzip data") != std::string::npos) << cut << ": " << what;
      const std::string again = expect_input_error([&] { read_file_bytes(path); });
      EXPECT_TRUE(again.find(is_zstd ? "zstd data" : "gzip data") != std::string::npos) << cut << ": " << again;
    }
    // One byte flipped in the middle: the data or its checksum no longer match.
    std::string bad = whole;
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x55);
    write_text(dir.file(std::string("bad-") + name), bad);
    const std::string what = expect_input_error([&] { load_snapshot(dir.file(std::string("bad-") + name)); });
    EXPECT_TRUE(what.find(is_zstd ? "corrupt zstd data" : "corrupt gzip data") != std::string::npos) << what;
    // Bytes after the end that are not another frame.
    write_text(dir.file(std::string("tail-") + name), whole + "garbage!");
    const std::string tail = expect_input_error([&] { load_snapshot(dir.file(std::string("tail-") + name)); });
    EXPECT_TRUE(tail.find(is_zstd ? "corrupt zstd data" : "after the end of the gzip data") != std::string::npos)
        << tail;
  }
}

// A write error on the way (a full disk) fails the save and leaves nothing.
TEST_F(Compressed, WriteErrorsAreReported) {
  fs::create_symlink("/dev/full", dir.file("full.json.zst"));
  fs::create_symlink("/dev/full", dir.file("full.json.gz"));
  for (const char* name : {"full.json.zst", "full.json.gz"}) {
    const std::string what = expect_input_error([&] { save_snapshot(snapshot(), dir.file(name)); });
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
  }
  const std::string xz = expect_input_error([&] { save_snapshot(snapshot(), dir.file("n.json.xz")); });
  EXPECT_NE(xz.find("cannot write .xz compression"), std::string::npos) << xz;
  EXPECT_FALSE(fs::exists(dir.file("n.json.xz")));
}

}  // namespace
}  // namespace dpscope::model
