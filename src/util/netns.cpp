#include "util/netns.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "util/error.h"

namespace dpscope {

std::string netns_path(const std::string& spec) {
  if (!spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "/proc/" + spec + "/ns/net";
  }
  if (spec.find('/') != std::string::npos) return spec;
  return "/run/netns/" + spec;
}

UniqueFd open_netns(const std::string& spec) {
  const std::string path = netns_path(spec);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    throw UsageError("--netns " + spec + ": cannot open " + path + ": " + std::strerror(err) +
                     (err == ENOENT ? " (no such network namespace; see `ip netns list`)" : ""));
  }
  const int type = ioctl(fd.get(), NS_GET_NSTYPE);
  const int err = errno;
  if (type >= 0 && type != CLONE_NEWNET) throw UsageError("--netns " + spec + ": " + path + " is not a network namespace");
  if (type < 0 && err == ENOTTY) throw UsageError("--netns " + spec + ": " + path + " is not a namespace file");
  return fd;
}

int run_in_namespace(const UniqueFd& ns, int nstype, const std::function<void()>& work) {
  int err = 0;
  std::exception_ptr thrown;
  std::thread worker([&] {
    if (ns && ::setns(ns.get(), nstype) != 0) {
      err = errno;
      return;
    }
    try {
      work();
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  worker.join();
  if (thrown) std::rethrow_exception(thrown);
  return err;
}

std::string netns_enter_failure(const std::string& spec, int err) {
  return "cannot enter network namespace " + spec + ": " + std::strerror(err);
}

}  // namespace dpscope
