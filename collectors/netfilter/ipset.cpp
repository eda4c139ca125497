#include "collectors/netfilter/ipset.h"

extern "C" {
#include <libipset/ipset.h>
#include <libipset/session.h>
#include <libipset/types.h>
}

#include <sched.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "util/error.h"
#include "util/netns.h"

namespace dpscope::netfilter {

namespace {

struct Output {
  std::string text;   // what `ipset save` would print
  std::string error;  // libipset's message when a command failed
};

int print_out(struct ipset_session*, void* p, const char* fmt, ...) {
  auto* out = static_cast<Output*>(p);
  va_list ap, copy;
  va_start(ap, fmt);
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n > 0) {
    const size_t at = out->text.size();
    out->text.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out->text.data() + at, static_cast<size_t>(n) + 1, fmt, ap);
    out->text.resize(at + static_cast<size_t>(n));
  }
  va_end(ap);
  return n < 0 ? -1 : n;
}

int custom_error(struct ipset*, void* p, int, const char* fmt, ...) {
  auto* out = static_cast<Output*>(p);
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out->error += buf;
  return -1;
}

int standard_error(struct ipset* ipset, void* p) {
  auto* out = static_cast<Output*>(p);
  struct ipset_session* session = ipset_session(ipset);
  if (const char* msg = ipset_session_report_msg(session)) out->error += msg;
  // A warning (IPSET_WARNING) is not a failure; an error is.
  const bool is_error = ipset_session_report_type(session) == IPSET_ERROR;
  ipset_session_report_reset(session);
  return is_error ? -1 : 0;
}

// libipset prints its own errors; map the common ones to the errno they stand for.
int errno_of(const std::string& msg) {
  if (msg.find("Operation not permitted") != std::string::npos) return EPERM;
  if (msg.find("Permission denied") != std::string::npos) return EACCES;
  if (msg.find("not supported") != std::string::npos || msg.find("protocol") != std::string::npos) return EPROTONOSUPPORT;
  return EIO;
}

// `ipset save` through libipset, in the calling thread's network namespace.
Output save_here() {
  static std::once_flag types;
  std::call_once(types, [] { ipset_load_types(); });
  Output out;
  struct ipset* ipset = ipset_init();
  if (ipset == nullptr) {
    out.error = "libipset: cannot initialise a session";
    return out;
  }
  ipset_custom_printf(ipset, custom_error, standard_error, print_out, &out);
  char prog[] = "ipset", cmd[] = "save";
  char* argv[] = {prog, cmd, nullptr};
  const int rc = ipset_parse_argv(ipset, 2, argv);
  ipset_fini(ipset);
  if (rc != 0 && out.error.empty()) out.error = "libipset: save failed";
  if (rc == 0) out.error.clear();
  return out;
}

}  // namespace

void collect_ipsets(model::Snapshot& snapshot, const std::string& netns) {
  // nfnetlink loads a missing subsystem's module on first use (request_module
  // "nfnetlink-subsys-6"), so asking a kernel without ip_set would load it:
  // not a read. ip_set has a module parameter (max_sets), so /sys/module/ip_set
  // is there whenever it is loaded or built in; without it the kernel holds no
  // set, which is a complete, empty section. Modules are kernel-wide: any
  // network namespace's answer.
  std::error_code ec;
  if (!std::filesystem::exists("/sys/module/ip_set", ec)) {
    if (std::filesystem::exists("/sys/module", ec)) {
      snapshot.ipsets = {};
      snapshot.ipsets.collected = true;
      return;
    }
    snapshot.unavailable.push_back({"ipsets", "no /sys/module to tell whether the kernel has ip_set (asking it would load the module)",
                                    ENOENT, "mount sysfs at /sys"});
    return;
  }
  UniqueFd ns;
  if (!netns.empty()) ns = open_netns(netns);
  Output out;
  if (const int err = run_in_namespace(ns, CLONE_NEWNET, [&] { out = save_here(); })) {
    snapshot.unavailable.push_back({"ipsets", netns_enter_failure(netns, err), err, kNetnsEnterHint});
    return;
  }
  if (!out.error.empty()) {
    while (!out.error.empty() && (out.error.back() == '\n' || out.error.back() == ' ')) out.error.pop_back();
    snapshot.unavailable.push_back({"ipsets", "ipset netlink: " + out.error, errno_of(out.error),
                                    "reading IP sets needs CAP_NET_ADMIN and the ip_set module"});
    return;
  }
  // The same parser as `dpscope import --ipset-save`: live and imported text are one format.
  snapshot.ipsets = model::parse_ipset_save(out.text, "ipset netlink");
}

}  // namespace dpscope::netfilter
