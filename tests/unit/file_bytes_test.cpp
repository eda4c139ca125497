// model::read_file_bytes on a large input: the file is mapped, parts handed
// back with release() leave the process's memory but keep their bytes, and a
// file cut short while mapped ends the process with exit 2 and its name, not
// a crash.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>

#include "model/json.h"
#include "tests/support/process.h"

namespace dpscope::model {
namespace {

// 12 MiB of numbered lines: larger than the mapping threshold (8 MiB).
std::string large_text() {
  std::string text;
  text.reserve(12 << 20);
  for (int i = 0; text.size() < (12u << 20); ++i) text += "-A KUBE-SEP-" + std::to_string(i) + " -j DNAT\n";
  return text;
}

// Resident KiB of the mapping that starts at `address` (/proc/self/smaps).
long mapping_rss_kb(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  char head[32];
  std::snprintf(head, sizeof head, "%lx-", reinterpret_cast<unsigned long>(address));
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(' ') > line.find('-')) {
      in = line.rfind(head, 0) == 0;
    } else if (in && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

TEST(FileBytes, LargeFileIsMappedAndReleasedPartsLeaveMemoryButKeepTheirBytes) {
  test::TempDir dir;
  const std::string text = large_text();
  test::write_text(dir.file("save.txt"), text);
  const FileBytes bytes = read_file_bytes(dir.file("save.txt"));
  ASSERT_NE(bytes.mapping, nullptr) << "a 12 MiB regular file is mapped";
  ASSERT_EQ(bytes.view().size(), text.size());
  EXPECT_TRUE(bytes.view() == text);  // every page touched
  const long before = mapping_rss_kb(bytes.mapping->address);
  ASSERT_GE(before, 11 << 10) << "the whole file is resident once read";
  bytes.release(bytes.view().substr(1 << 20, 8 << 20));
  bytes.release(bytes.view().substr(0, 4097));  // smaller than its pages: nothing whole to drop
  const long after = mapping_rss_kb(bytes.mapping->address);
  EXPECT_LE(after, before - (7 << 10)) << "8 MiB released: " << before << " KiB -> " << after << " KiB";
  EXPECT_TRUE(bytes.view() == text) << "released pages read back from the file unchanged";
}

TEST(FileBytes, SmallFileIsReadIntoMemoryWhereReleaseDoesNothing) {
  test::TempDir dir;
  const std::string text = "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n";
  test::write_text(dir.file("small.txt"), text);
  const FileBytes bytes = read_file_bytes(dir.file("small.txt"));
  EXPECT_EQ(bytes.mapping, nullptr);
  bytes.release(bytes.view());
  EXPECT_TRUE(bytes.view() == text);
}

TEST(FileBytesDeathTest, FileCutShortWhileMappedIsExitTwoWithItsName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  const std::string path = dir.file("shrinking.txt");
  test::write_text(path, large_text());
  EXPECT_EXIT(
      {
        const FileBytes bytes = read_file_bytes(path);
        if (::truncate(path.c_str(), 4096) != 0) std::_Exit(10);
        volatile char sink = bytes.view()[bytes.view().size() - 1];  // past the new end: SIGBUS
        (void)sink;
        std::_Exit(11);
      },
      ::testing::ExitedWithCode(2), "shrinking.txt: file shrank while it was being read");
}

}  // namespace
}  // namespace dpscope::model
