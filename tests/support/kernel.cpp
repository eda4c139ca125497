#include "tests/support/kernel.h"

#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "tests/support/process.h"

namespace dpscope::test {

bool is_root() { return geteuid() == 0; }

std::string unique_name(const std::string& tag) {
  static std::atomic<int> counter{0};
  // netns names are file names under /run/netns; keep them short and plain.
  return "dps-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

Netns::Netns(const std::string& tag) : name_(unique_name(tag)) {
  auto r = run({"ip", "netns", "add", name_});
  if (r.exit_code != 0) throw std::runtime_error("ip netns add " + name_ + ": " + r.err);
  // Loopback up, so tests that need an address have one.
  run({"ip", "-n", name_, "link", "set", "lo", "up"});
}

Netns::~Netns() { run({"ip", "netns", "del", name_}); }

std::vector<std::string> Netns::exec(std::vector<std::string> argv) const {
  std::vector<std::string> full = {"ip", "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::string Netns::sh(const std::string& command, const std::string& input, bool allow_fail) const {
  auto r = run({"ip", "netns", "exec", name_, "/bin/sh", "-c", command}, input);
  if (!allow_fail && r.exit_code != 0) {
    ADD_FAILURE() << "in netns " << name_ << ": `" << command << "` exited " << r.exit_code << ": " << r.err;
  }
  return r.out;
}

BpffsDir::BpffsDir(const std::string& tag) {
  path_ = "/tmp/" + unique_name(tag);
  std::filesystem::create_directories(path_);
  if (mount("bpf", path_.c_str(), "bpf", 0, nullptr) != 0) {
    int err = errno;
    std::filesystem::remove(path_);
    throw std::runtime_error("mount bpffs at " + path_ + ": " + strerror(err));
  }
}

BpffsDir::~BpffsDir() {
  umount2(path_.c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace dpscope::test
