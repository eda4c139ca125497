#include "cli/version.h"

#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <zlib.h>
#include <zstd.h>

#include <CLI/Version.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "git_commit.h"  // generated at build time by cmake/git_commit.cmake

// pkg-config versions of the libraries without a runtime version call (set by src/cli/CMakeLists.txt).
#ifndef DPSCOPE_LIBNFTNL_VERSION
#define DPSCOPE_LIBNFTNL_VERSION "unknown"
#endif
#ifndef DPSCOPE_LIBMNL_VERSION
#define DPSCOPE_LIBMNL_VERSION "unknown"
#endif
#ifndef DPSCOPE_LIBBPF_VERSION
#define DPSCOPE_LIBBPF_VERSION "unknown"
#endif

namespace dpscope::cli {

namespace {

constexpr long kBpffsMagic = 0xcafe4a11;    // BPF_FS_MAGIC, linux/magic.h
constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
constexpr long kTmpfsMagic = 0x01021994;    // TMPFS_MAGIC

std::string errno_text(int err) { return std::string(strerrorname_np(err)) + " " + std::strerror(err); }

bool exists(const char* path, int* err) {
  struct stat st {};
  if (stat(path, &st) == 0) return true;
  *err = errno;
  return false;
}

KernelFeature btf() {
  KernelFeature f{"btf", "BTF (/sys/kernel/btf/vmlinux)", "yes", ""};
  int err = 0;
  if (exists("/sys/kernel/btf/vmlinux", &err)) return f;
  if (err == ENOENT) {
    f.state = "no";
    f.detail = "no /sys/kernel/btf/vmlinux: a kernel built without CONFIG_DEBUG_INFO_BTF; program names stay cut at 15 "
               "characters when the program has no BTF of its own";
  } else {
    f.state = "unknown";
    f.detail = "stat /sys/kernel/btf/vmlinux: " + errno_text(err);
  }
  return f;
}

// Any bpffs mount (pins live there); /sys/fs/bpf is the usual one.
KernelFeature bpffs() {
  KernelFeature f{"bpffs", "bpffs mounted", "no", ""};
  std::ifstream mounts("/proc/self/mounts");
  if (!mounts) {
    f.state = "unknown";
    f.detail = "cannot read /proc/self/mounts";
    return f;
  }
  std::string paths;
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream w(line);
    std::string dev, dir, type;
    w >> dev >> dir >> type;
    if (type == "bpf") paths += (paths.empty() ? "" : ", ") + dir;
  }
  if (!paths.empty()) {
    f.state = "yes";
    f.detail = paths;
    return f;
  }
  struct statfs sf {};
  if (statfs("/sys/fs/bpf", &sf) == 0 && sf.f_type == kBpffsMagic) {
    f.state = "yes";  // mounted in another mount namespace's view we inherited
    f.detail = "/sys/fs/bpf";
    return f;
  }
  f.detail = "no bpf mount in /proc/self/mounts: pinned maps are not listed by path; mount -t bpf bpf /sys/fs/bpf";
  return f;
}

// A module's presence: /sys/module/NAME is there when it is loaded (or built in with parameters).
KernelFeature module(const std::string& id, const std::string& name, const std::string& mod,
                     const std::string& proc_file, const std::string& absent) {
  KernelFeature f{id, name, "yes", ""};
  int err = 0;
  const std::string sys = "/sys/module/" + mod;
  if (!proc_file.empty() && exists(proc_file.c_str(), &err)) {
    f.detail = proc_file;
    return f;
  }
  if (exists(sys.c_str(), &err)) {
    f.detail = sys;
    return f;
  }
  if (err != ENOENT) {
    f.state = "unknown";
    f.detail = "stat " + sys + ": " + errno_text(err);
    return f;
  }
  f.state = "no";
  f.detail = absent;
  return f;
}

KernelFeature cgroup2() {
  KernelFeature f{"cgroup2", "cgroup v2 (/sys/fs/cgroup)", "yes", "unified hierarchy"};
  struct statfs sf {};
  if (statfs("/sys/fs/cgroup", &sf) != 0) {
    f.state = errno == ENOENT ? "no" : "unknown";
    f.detail = "statfs /sys/fs/cgroup: " + errno_text(errno);
    return f;
  }
  if (sf.f_type == kCgroup2Magic) return f;
  f.state = "no";
  f.detail = sf.f_type == kTmpfsMagic ? "cgroup v1 or hybrid: /sys/fs/cgroup is a tmpfs; agents' memory is read from v1 files"
                                      : "/sys/fs/cgroup is not a cgroup2 mount";
  return f;
}

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

}  // namespace

BuildInfo build_info() {
  BuildInfo b;
  b.version = DPSCOPE_VERSION;
  b.commit = DPSCOPE_GIT_COMMIT;
  // libnftnl and libmnl have no version call: the version of the headers and
  // pkg-config file the binary was built with (Debian keeps the ABI per soname).
  b.libraries.push_back({"libnftnl", DPSCOPE_LIBNFTNL_VERSION, "build", ""});
  b.libraries.push_back({"libmnl", DPSCOPE_LIBMNL_VERSION, "build", ""});
  b.libraries.push_back({"libbpf",
                         std::to_string(libbpf_major_version()) + "." + std::to_string(libbpf_minor_version()),
                         "runtime", std::string("libbpf_version_string() ") + libbpf_version_string() +
                                        ", built against " + DPSCOPE_LIBBPF_VERSION});
  b.libraries.push_back({"libzstd", ZSTD_versionString(), "runtime", std::string("built against ") + ZSTD_VERSION_STRING});
  b.libraries.push_back({"zlib", zlibVersion(), "runtime", std::string("built against ") + ZLIB_VERSION});
  b.libraries.push_back({"CLI11", CLI11_VERSION, "header-only", ""});
  b.libraries.push_back({"nlohmann-json",
                         std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." + std::to_string(NLOHMANN_JSON_VERSION_MINOR) +
                             "." + std::to_string(NLOHMANN_JSON_VERSION_PATCH),
                         "header-only", ""});
  return b;
}

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

std::vector<KernelFeature> kernel_features() {
  return {
      btf(),
      bpffs(),
      module("nf_tables", "nf_tables", "nf_tables", "",
             "not loaded: no /sys/module/nf_tables; the first nft or iptables-nft command loads it"),
      module("ip_tables", "legacy ip_tables", "ip_tables", "/proc/net/ip_tables_names",
             "not loaded: no /proc/net/ip_tables_names, so no legacy iptables table exists"),
      cgroup2(),
  };
}

std::string version_text() {
  const BuildInfo b = build_info();
  std::string out = "dpscope " + b.version + " (commit " + b.commit + ")\n";
  out += "libraries:\n";
  for (const auto& l : b.libraries) {
    out += "  " + pad(l.name, 15) + pad(l.version, 9) + "(" + l.source + (l.note.empty() ? "" : "; " + l.note) + ")\n";
  }
  out += "kernel " + kernel_release() + ", features found on this machine:\n";
  for (const auto& f : kernel_features()) {
    out += "  " + pad(f.name, 31) + f.state + (f.detail.empty() ? "" : " (" + f.detail + ")") + "\n";
  }
  return out;
}

nlohmann::json version_json() {
  const BuildInfo b = build_info();
  nlohmann::json libs = nlohmann::json::array();
  for (const auto& l : b.libraries) {
    libs.push_back({{"name", l.name}, {"version", l.version}, {"source", l.source}, {"note", l.note}});
  }
  nlohmann::json features = nlohmann::json::array();
  for (const auto& f : kernel_features()) {
    features.push_back({{"id", f.id}, {"name", f.name}, {"state", f.state}, {"detail", f.detail}});
  }
  return {{"schema", "dpscope.version/v1"},
          {"version", b.version},
          {"commit", b.commit},
          {"libraries", libs},
          {"kernel", {{"release", kernel_release()}, {"features", features}}}};
}

}  // namespace dpscope::cli
