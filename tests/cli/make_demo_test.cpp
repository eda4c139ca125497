// `make demo` needs only the build dependencies (issue 17): scripts/deps.sh
// has a `build` list and a `test` list, is silent when nothing is missing,
// and the build tree `make demo` configures builds dpscope without gtest and
// without clang (the test suites and the BPF fixtures are off until `make
// build` turns them on).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

// make as a user runs it, not as a sub-make of `make test`.
RunResult user_make(const std::string& args) {
  return sh("cd '" + source_path("") + "' && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS make " + args);
}

TEST(MakeDemoDeps, DepsScriptIsSilentWhenNothingIsMissing) {
  // This machine has every package (make test installed them): both lists
  // are satisfied, nothing is printed, nothing is installed.
  for (const char* list : {"build", "package", "cross", "test"}) {
    SCOPED_TRACE(list);
    const auto r = sh(source_path("scripts/deps.sh") + " " + list);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
  }
  const auto bad = sh(source_path("scripts/deps.sh") + " everything");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("usage: scripts/deps.sh [build|package|cross|test]"), std::string::npos) << bad.err;
}

// make static, image, deb, install (and their arm64 forms) install what
// building needs, never the test tools (`scripts/deps.sh test`).
TEST(MakeDemoDeps, PackagingTargetsNeedNoTestDependencies) {
  for (const char* target : {"static", "image", "deb", "archive", "install", "release", "image-arm64", "deb-arm64"}) {
    SCOPED_TRACE(target);
    const auto r = user_make(std::string("-n ") + target);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("scripts/deps.sh "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("scripts/deps.sh test"), std::string::npos) << r.out;
  }
}

TEST(MakeDemoDeps, DemoTreeNeedsNeitherGtestNorClang) {
  TempDir dir;
  const std::string build = dir.file("b");
  // The configure step of `make demo`, with gtest made unfindable: it must
  // not be asked for.
  const auto r = user_make("BUILD='" + build + "' 'CMAKE_GEN=-G Ninja -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON' '" + build +
                           "/build.ninja'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string cache = read_text(build + "/CMakeCache.txt");
  EXPECT_NE(cache.find("DPSCOPE_TESTS:BOOL=OFF"), std::string::npos);
  EXPECT_NE(cache.find("DPSCOPE_BPF_FIXTURES:BOOL=OFF"), std::string::npos);
  // What building dpscope there runs: the C++ compiler on dpscope's sources only.
  const auto commands = run({"ninja", "-C", build, "-t", "commands", "dpscope"});
  ASSERT_EQ(commands.exit_code, 0) << commands.err;
  EXPECT_NE(commands.out.find("main.cpp"), std::string::npos);
  EXPECT_EQ(commands.out.find("clang"), std::string::npos);
  EXPECT_EQ(commands.out.find("gtest"), std::string::npos);
  EXPECT_EQ(commands.out.find("_test.cpp"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
