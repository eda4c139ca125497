// The second-kernel tier's test side (tests/vm/vm.sh): fetch the kernel once,
// boot it with a guest program, split what the program wrote into its
// "=== NAME" sections. A run that cannot happen here (no qemu, no kernel
// package) skips loudly with vm.sh's reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test::vm {

// "=== NAME" sections of a guest's output, by NAME.
inline std::map<std::string, std::string> sections(const std::string& out) {
  std::map<std::string, std::string> s;
  std::string current;
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\n', at);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(at, end - at);
    if (line.rfind("=== ", 0) == 0) {
      current = line.substr(4);
      s[current];
    } else if (!current.empty()) {
      s[current] += line + "\n";
    }
    at = end + 1;
  }
  return s;
}

// The kernel's version from the guest's "=== kernel X" line, "" without one.
inline std::string guest_kernel(const std::map<std::string, std::string>& s) {
  for (const auto& [name, body] : s) {
    if (name.rfind("kernel ", 0) == 0) return name.substr(7);
  }
  return {};
}

inline std::string kernel_cache() {
  const char* env = std::getenv("DPSCOPE_VM_CACHE");
  return env ? env : (std::filesystem::path(dpscope_bin()).parent_path() / "vm-kernel").string();
}

// Boots the guest program `prog` (a path under the source tree) with `env`
// ("VM_MODULES=... VM_TOOLS=..." assignments, shell-quoted by the caller);
// its output lands in `out`. Skips the calling test when the tier cannot run.
#define DPS_RUN_VM(prog, env, out)                                                             \
  do {                                                                                         \
    const std::string vm_sh_ = ::dpscope::test::source_path("tests/vm/vm.sh");                 \
    const std::string cache_ = ::dpscope::test::vm::kernel_cache();                            \
    auto k_ = ::dpscope::test::run({vm_sh_, "kernel", cache_});                                \
    if (k_.exit_code == 77) GTEST_SKIP() << "SKIPPED: second-kernel VM tier: " << k_.err;      \
    ASSERT_EQ(k_.exit_code, 0) << k_.err;                                                      \
    auto r_ = ::dpscope::test::sh(std::string(env) + " '" + vm_sh_ + "' run '" + cache_ + "' '" + \
                                  ::dpscope::test::dpscope_bin() + "' '" +                     \
                                  ::dpscope::test::source_path(prog) + "' '" + (out) + "'");   \
    if (r_.exit_code == 77) GTEST_SKIP() << "SKIPPED: second-kernel VM tier: " << r_.err;      \
    ASSERT_EQ(r_.exit_code, 0) << r_.err << ::dpscope::test::read_text(out)                    \
                               << ::dpscope::test::read_text(std::string(out) + ".console");   \
  } while (0)

}  // namespace dpscope::test::vm
