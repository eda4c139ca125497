#include "collectors/netfilter/xt_save.h"

#include <dlfcn.h>
#include <getopt.h>
#include <locale.h>
#include <sys/socket.h>
#include <xtables.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "collectors/netfilter/xt.h"

namespace dpscope::netfilter {

namespace {

// libxtables keeps one address family per process: an extension registers
// only its structs of the family set when it is loaded (a libxt_NAT.so read
// for IPv4 has no IPv6 DNAT). iptables and ip6tables are two processes; in
// dpscope each family gets its own copy of libxtables in its own link-map
// namespace (dlmopen), with its own extension objects and its own stdio.
//
// save() prints with printf to that namespace's `stdout`: the call runs
// under the namespace's mutex with its `stdout` pointed at a memory stream.
// That is a pointer swap inside a libc only this file calls, so dpscope's own
// stdout and its file descriptors are never touched (redirecting fd 1 would
// catch, or lose, whatever another thread writes meanwhile).
class Xtables {
 public:
  explicit Xtables(int family) : family_(family) { load(); }

  const std::string& problem() const { return problem_; }

  bool match(std::string& out, const xt_entry_match* m, const XtIpHeader& ip) {
    if (!problem_.empty()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string name(m->u.user.name, strnlen(m->u.user.name, sizeof m->u.user.name));
    const auto [base, exact] = find_match(name, m->u.user.revision);
    if (base == nullptr) return false;
    const xtables_match* shown = exact ? exact : base;
    out += " -m ";
    out += shown->alias ? shown->alias(m) : name.c_str();
    if (exact && exact->save) {
      out += capture([&] { exact->save(&ip, m); });
    } else if (base->save) {
      out += " [unsupported revision]";
    }
    return true;
  }

  bool target(const xt_entry_target* t, const XtIpHeader& ip, std::string& name, std::string& options) {
    if (!problem_.empty()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string tname(t->u.user.name, strnlen(t->u.user.name, sizeof t->u.user.name));
    const auto [base, exact] = find_target(tname, t->u.user.revision);
    if (base == nullptr) return false;
    const xtables_target* shown = exact ? exact : base;
    name = shown->alias ? shown->alias(t) : tname;
    options.clear();
    if (exact && exact->save) {
      options = capture([&] { exact->save(&ip, t); });
    } else if (base->save) {
      options = " [unsupported revision]";
    }
    if (!options.empty() && options.front() == ' ') options.erase(0, 1);
    return true;
  }

 private:
  using FindMatch = xtables_match* (*)(const char*, xtables_tryload, xtables_rule_match**);
  using FindMatchRevision = xtables_match* (*)(const char*, xtables_tryload, xtables_match*, int);
  using FindTarget = xtables_target* (*)(const char*, xtables_tryload);
  using FindTargetRevision = xtables_target* (*)(const char*, xtables_tryload, xtables_target*, int);

  template <typename F>
  bool sym(void* handle, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    if (f == nullptr) problem_ = std::string("libxtables has no ") + name;
    return f != nullptr;
  }

  void load() {
#if defined(__SANITIZE_ADDRESS__)
    // A second C library in a link-map namespace is outside what ASan
    // intercepts: sanitizer builds (the unit tier) print no rule text.
    problem_ = "rule text is not printed in AddressSanitizer builds (libxtables runs in a dlmopen namespace)";
    return;
#endif
    handle_ = dlmopen(LM_ID_NEWLM, DPSCOPE_XTABLES_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* e = dlerror();
      problem_ = std::string("cannot load " DPSCOPE_XTABLES_SONAME ": ") + (e ? e : "unknown error");
      return;
    }
    Lmid_t lmid = 0;
    void* libc = nullptr;
    if (dlinfo(handle_, RTLD_DI_LMID, &lmid) == 0) libc = dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (libc == nullptr) {
      problem_ = "cannot reach the C library of libxtables' namespace";
      return;
    }
    using InitAll = int (*)(xtables_globals*, uint8_t);
    InitAll init_all = nullptr;
    FILE* (*memstream)(char**, size_t*) = nullptr;
    if (!sym(handle_, "xtables_init_all", init_all) || !sym(handle_, "xtables_find_match", find_match_) ||
        !sym(handle_, "xtables_find_match_revision", find_match_revision_) ||
        !sym(handle_, "xtables_find_target", find_target_) ||
        !sym(handle_, "xtables_find_target_revision", find_target_revision_) || !sym(libc, "fflush", fflush_) ||
        !sym(libc, "fseek", fseek_) || !sym(libc, "ftell", ftell_) || !sym(libc, "open_memstream", memstream) ||
        !sym(libc, "uselocale", uselocale_)) {
      return;
    }
    stdout_ = reinterpret_cast<FILE**>(dlsym(libc, "stdout"));
    if (stdout_ == nullptr) {
      problem_ = "libxtables' C library has no stdout";
      return;
    }
    globals_.program_name = family_ == AF_INET6 ? "ip6tables" : "iptables";
    globals_.program_version = "1.8.9";
    globals_.orig_opts = no_options_;
    globals_.exit_err = exit_err;
    globals_.compat_rev = any_revision;
    if (init_all(&globals_, family_ == AF_INET6 ? NFPROTO_IPV6 : NFPROTO_IPV4) < 0) {
      problem_ = "xtables_init_all failed";
      return;
    }
    capture_ = memstream(&buffer_, &buffer_size_);
    if (capture_ == nullptr) problem_ = "open_memstream failed";
  }

  // Runs `save` with the namespace's stdout on the memory stream; what it printed.
  template <typename F>
  std::string capture(F&& save) {
    // That libc's per-thread locale is unset in threads it did not start (a
    // glibc dlmopen limitation): printf("%f") would crash without this.
    uselocale_(LC_GLOBAL_LOCALE);
    fseek_(capture_, 0, SEEK_SET);
    FILE* saved = *stdout_;
    *stdout_ = capture_;
    try {
      save();
    } catch (...) {
      *stdout_ = saved;
      throw;
    }
    *stdout_ = saved;
    fflush_(capture_);
    const long n = ftell_(capture_);
    return n > 0 ? std::string(buffer_, static_cast<size_t>(n)) : std::string();
  }

  std::pair<xtables_match*, xtables_match*> find_match(const std::string& name, uint8_t revision) {
    auto key = std::make_pair(name, revision);
    auto it = matches_.find(key);
    if (it != matches_.end()) return it->second;
    xtables_match* base = find_match_(name.c_str(), XTF_TRY_LOAD, nullptr);
    xtables_match* exact = base ? find_match_revision_(name.c_str(), XTF_TRY_LOAD, base, revision) : nullptr;
    return matches_[key] = {base, exact};
  }

  std::pair<xtables_target*, xtables_target*> find_target(const std::string& name, uint8_t revision) {
    auto key = std::make_pair(name, revision);
    auto it = targets_.find(key);
    if (it != targets_.end()) return it->second;
    xtables_target* base = find_target_(name.c_str(), XTF_TRY_LOAD);
    xtables_target* exact = base ? find_target_revision_(name.c_str(), XTF_TRY_LOAD, base, revision) : nullptr;
    return targets_[key] = {base, exact};
  }

  // libxtables calls this on errors it would exit the process for.
  [[noreturn]] static void exit_err(xtables_exittype, const char* format, ...) {
    char message[256];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    throw std::runtime_error(std::string("libxtables: ") + message);
  }
  // Every revision is "supported": dpscope prints what the kernel holds, and
  // asking the kernel (IPT_SO_GET_REVISION_*) could load modules.
  static int any_revision(const char*, uint8_t, int) { return 1; }

  int family_;
  std::string problem_;
  std::mutex mutex_;
  void* handle_ = nullptr;
  FindMatch find_match_ = nullptr;
  FindMatchRevision find_match_revision_ = nullptr;
  FindTarget find_target_ = nullptr;
  FindTargetRevision find_target_revision_ = nullptr;
  int (*fflush_)(FILE*) = nullptr;
  int (*fseek_)(FILE*, long, int) = nullptr;
  long (*ftell_)(FILE*) = nullptr;
  locale_t (*uselocale_)(locale_t) = nullptr;
  FILE** stdout_ = nullptr;
  FILE* capture_ = nullptr;
  char* buffer_ = nullptr;
  size_t buffer_size_ = 0;
  xtables_globals globals_{};
  option no_options_[1] = {{nullptr, 0, nullptr, 0}};
  std::map<std::pair<std::string, uint8_t>, std::pair<xtables_match*, xtables_match*>> matches_;
  std::map<std::pair<std::string, uint8_t>, std::pair<xtables_target*, xtables_target*>> targets_;
};

Xtables& xtables(int family) {
  // Loaded on first use, never unloaded (extensions keep pointers into it).
  if (family == AF_INET6) {
    static Xtables* v6 = new Xtables(AF_INET6);
    return *v6;
  }
  static Xtables* v4 = new Xtables(AF_INET);
  return *v4;
}

// xshared.c save_iface.
void append_iface(std::string& out, char letter, const char* iface, const unsigned char* mask, bool invert) {
  if (mask[0] == 0) return;
  out += invert ? " ! -" : " -";
  out += letter;
  out += ' ';
  for (unsigned i = 0; i < IFNAMSIZ; ++i) {
    if (mask[i] != 0) {
      if (iface[i] != '\0') out += iface[i];
    } else {
      if (iface[i - 1] != '\0') out += '+';
      break;
    }
  }
}

void append_address(std::string& out, char letter, int family, const void* addr, const void* mask, bool invert) {
  const size_t len = family == AF_INET6 ? 16 : 4;
  static const uint8_t zero[16] = {};
  if (family == AF_INET6) {
    if (!invert && std::memcmp(mask, zero, len) == 0) return;  // save_ipv6_addr: a /0 is not printed
  } else if (!invert && std::memcmp(mask, zero, len) == 0 && std::memcmp(addr, zero, len) == 0) {
    return;
  }
  out += invert ? " ! -" : " -";
  out += letter;
  out += ' ';
  out += cidr_text(family, static_cast<const uint8_t*>(addr), static_cast<const uint8_t*>(mask));
}

template <typename Header>
std::vector<uint8_t> blob(std::string_view name, uint8_t revision, const void* data, size_t len) {
  std::vector<uint8_t> b(XT_ALIGN(sizeof(Header)) + XT_ALIGN(len), 0);
  auto* h = reinterpret_cast<Header*>(b.data());
  h->u.user.revision = revision;
  std::memcpy(h->u.user.name, name.data(), std::min(name.size(), sizeof h->u.user.name - 1));
  if (len) std::memcpy(b.data() + XT_ALIGN(sizeof(Header)), data, len);
  return b;
}

}  // namespace

void append_ip_header(std::string& out, int family, const XtIpHeader& ip) {
  const char* iniface;
  const unsigned char *iniface_mask, *outiface_mask;
  const char* outiface;
  uint16_t proto;
  uint8_t invflags;
  bool frag = false;
  if (family == AF_INET6) {
    const ip6t_ip6& h = ip.v6;
    append_address(out, 's', family, &h.src, &h.smsk, h.invflags & IP6T_INV_SRCIP);
    append_address(out, 'd', family, &h.dst, &h.dmsk, h.invflags & IP6T_INV_DSTIP);
    iniface = h.iniface, iniface_mask = h.iniface_mask, outiface = h.outiface, outiface_mask = h.outiface_mask;
    proto = h.proto, invflags = h.invflags;
  } else {
    const ipt_ip& h = ip.v4;
    append_address(out, 's', family, &h.src, &h.smsk, h.invflags & IPT_INV_SRCIP);
    append_address(out, 'd', family, &h.dst, &h.dmsk, h.invflags & IPT_INV_DSTIP);
    iniface = h.iniface, iniface_mask = h.iniface_mask, outiface = h.outiface, outiface_mask = h.outiface_mask;
    proto = h.proto, invflags = h.invflags;
    frag = h.flags & IPT_F_FRAG;
  }
  append_iface(out, 'i', iniface, iniface_mask, invflags & IPT_INV_VIA_IN);
  append_iface(out, 'o', outiface, outiface_mask, invflags & IPT_INV_VIA_OUT);
  if (proto > 0) {
    if (invflags & XT_INV_PROTO) out += " !";
    out += " -p ";
    out += protocol_name(static_cast<uint8_t>(proto));
  }
  if (frag) out += invflags & IPT_INV_FRAG ? " ! -f" : " -f";
}

bool append_match_text(std::string& out, int family, const xt_entry_match* match, const XtIpHeader& ip) {
  return xtables(family).match(out, match, ip);
}

bool target_text(int family, const xt_entry_target* target, const XtIpHeader& ip, std::string& name,
                 std::string& options) {
  return xtables(family).target(target, ip, name, options);
}

std::vector<uint8_t> xt_match_blob(std::string_view name, uint8_t revision, const void* data, size_t len) {
  auto b = blob<xt_entry_match>(name, revision, data, len);
  reinterpret_cast<xt_entry_match*>(b.data())->u.match_size = static_cast<uint16_t>(b.size());
  return b;
}

std::vector<uint8_t> xt_target_blob(std::string_view name, uint8_t revision, const void* data, size_t len) {
  auto b = blob<xt_entry_target>(name, revision, data, len);
  reinterpret_cast<xt_entry_target*>(b.data())->u.target_size = static_cast<uint16_t>(b.size());
  return b;
}

std::string xtables_problem(int family) { return xtables(family).problem(); }

std::string rule_text_problem() {
  const std::string v4 = xtables_problem(AF_INET);
  return v4.empty() ? xtables_problem(AF_INET6) : v4;
}

}  // namespace dpscope::netfilter
