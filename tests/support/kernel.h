// Test support for the integration tier: kernel state the test owns.
// Every object is named dps-<test>-<pid>-<n> and removed in the destructor,
// so a failing assertion still cleans up.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace dpscope::test {

bool is_root();

// Skip the current test, loudly, when not root.
#define DPS_REQUIRE_ROOT()                                                              \
  do {                                                                                  \
    if (!::dpscope::test::is_root()) {                                                  \
      GTEST_SKIP() << "SKIPPED: needs root (CAP_NET_ADMIN/CAP_SYS_ADMIN) for kernel state"; \
    }                                                                                   \
  } while (0)

// A network namespace created with `ip netns add`, deleted on destruction.
class Netns {
 public:
  explicit Netns(const std::string& tag);
  ~Netns();
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;
  const std::string& name() const { return name_; }
  // argv prefixed with `ip netns exec NAME`.
  std::vector<std::string> exec(std::vector<std::string> argv) const;
  // Runs a shell command line inside the namespace; fails the test on error unless allow_fail.
  std::string sh(const std::string& command, const std::string& input = {}, bool allow_fail = false) const;

 private:
  std::string name_;
};

// A private bpffs mount under a unique temporary directory, unmounted on destruction.
class BpffsDir {
 public:
  explicit BpffsDir(const std::string& tag);
  ~BpffsDir();
  BpffsDir(const BpffsDir&) = delete;
  BpffsDir& operator=(const BpffsDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string unique_name(const std::string& tag);

}  // namespace dpscope::test
