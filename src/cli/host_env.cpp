#include "cli/host_env.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "util/error.h"
#include "util/fd.h"

namespace dpscope::cli {

namespace fs = std::filesystem;

namespace {

bool is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool same_inode(const std::string& a, const std::string& b, bool* both_readable = nullptr) {
  struct stat sa {}, sb {};
  bool ok = ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0;
  if (both_readable) *both_readable = ok;
  return ok && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  auto begin = s.find_first_not_of(ws);
  if (begin == std::string::npos) return {};
  auto end = s.find_last_not_of(ws);
  return s.substr(begin, end - begin + 1);
}

std::string first_line_of_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return trim(line);
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount_field(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) && std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool at_or_below(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

// Mount points of one file system type at or below `root`, each file system
// (device + subtree) once, the shortest mount path kept: the same bpffs bound
// twice would otherwise list every pin twice.
std::vector<std::string> mounts_below(const std::vector<MountEntry>& mounts, const std::string& root,
                                      const std::string& fs_type) {
  std::vector<MountEntry> found;
  for (const auto& m : mounts) {
    if (m.fs_type == fs_type && at_or_below(m.mount_point, root)) found.push_back(m);
  }
  std::stable_sort(found.begin(), found.end(), [](const MountEntry& a, const MountEntry& b) {
    return a.mount_point.size() < b.mount_point.size();
  });
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> seen;  // (device, fs_root)
  for (const auto& m : found) {
    bool covered = std::any_of(seen.begin(), seen.end(), [&](const auto& s) {
      return s.first == m.device && at_or_below(m.fs_root, s.second);
    });
    if (covered) continue;
    seen.emplace_back(m.device, m.fs_root);
    paths.push_back(m.mount_point);
  }
  return paths;
}

// The host name in PID 1's UTS namespace. setns(CLONE_NEWUTS) only moves the
// calling thread, so a short-lived thread does it and the rest of dpscope never
// leaves its own namespace. Empty when not permitted or not a namespace file.
std::string uts_hostname_of(const std::string& ns_path) {
  std::string name;
  std::thread reader([&] {
    UniqueFd fd(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd || ::setns(fd.get(), CLONE_NEWUTS) != 0) return;
    struct utsname u {};
    if (::uname(&u) == 0) name = u.nodename;
  });
  reader.join();
  return trim(name);
}

}  // namespace

std::vector<MountEntry> read_mountinfo(const std::string& path) {
  std::vector<MountEntry> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string word;
    while (fields >> word) f.push_back(word);
    // id parent major:minor root mount-point options [optional...] - fstype source superopts
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 7 || dash == f.end() || dash + 1 == f.end() || dash - f.begin() < 6) continue;
    MountEntry m;
    m.device = f[2];
    m.fs_root = unescape_mount_field(f[3]);
    m.mount_point = unescape_mount_field(f[4]);
    m.fs_type = *(dash + 1);
    out.push_back(std::move(m));
  }
  return out;
}

PodSignals probe_pod_signals(const HostProbe& probe) {
  PodSignals s;
  s.root_looks_like_rootfs =
      is_dir(probe.root + "/etc") && (is_dir(probe.root + "/usr") || is_dir(probe.root + "/bin"));
  if (s.root_looks_like_rootfs) {
    struct stat st {};
    if (::stat((probe.proc + "/1/root").c_str(), &st) != 0) s.pid1_root_errno = errno;
    s.root_is_pid1_root = same_inode(probe.root, probe.proc + "/1/root");
  }
  std::error_code ec;
  s.we_are_pid1 = fs::read_symlink(probe.proc + "/self", ec).string() == "1";
  s.pid1_other_mount_ns = !same_inode(probe.proc + "/1/ns/mnt", probe.proc + "/self/ns/mnt", &s.pid1_visible);
  if (!s.pid1_visible) s.pid1_other_mount_ns = false;
  bool net_readable = false;
  s.pid1_other_net_ns = !same_inode(probe.proc + "/1/ns/net", probe.proc + "/self/ns/net", &net_readable);
  if (!net_readable) s.pid1_other_net_ns = false;
  return s;
}

bool is_kubectl_debug(const PodSignals& s) {
  return s.root_looks_like_rootfs && !s.we_are_pid1 && s.pid1_visible && s.pid1_other_mount_ns;
}

void resolve_node_name(const HostProbe& probe, HostEnv& env) {
  if (!trim(probe.node_name_env).empty()) {
    env.node_name = trim(probe.node_name_env);
    env.node_name_source = "NODE_NAME";
    return;
  }
  if (std::string uts = uts_hostname_of(probe.proc + "/1/ns/uts"); !uts.empty()) {
    env.node_name = uts;
    env.node_name_source = "host UTS namespace";
    return;
  }
  if (!env.host_root.empty()) {
    std::string file = env.host_root + "/etc/hostname";
    if (std::string name = first_line_of_file(file); !name.empty()) {
      env.node_name = name;
      env.node_name_source = file;
      return;
    }
  }
  struct utsname u {};
  if (::uname(&u) == 0) {
    env.node_name = u.nodename;
    env.node_name_source = "uname";
  }
}

HostEnv resolve_host_env(const HostProbe& probe) {
  PodSignals s = probe_pod_signals(probe);
  HostEnv env;
  if (s.we_are_pid1) {
    throw UsageError(
        "--host: dpscope is PID 1 of its own PID namespace, so the node's namespaces are out of reach; "
        "run it in the host PID namespace (kubectl debug node/NAME --profile=sysadmin, or hostPID: true)");
  }
  if (!s.pid1_visible) {
    throw UsageError("--host: cannot read " + probe.proc +
                     "/1/ns/mnt (PID 1's namespaces): run as root (CAP_SYS_PTRACE is needed to look at "
                     "another process's namespaces) in the host PID namespace");
  }
  const std::string pid1_net = probe.proc + "/1/ns/net";
  if (is_kubectl_debug(s)) {
    env.environment = "kubectl-debug";
    env.node_mounts_elsewhere = true;
    env.host_root = probe.root;
    env.netns = pid1_net;
    env.evidence.push_back(probe.root + " holds a root file system (etc/, usr/)");
    env.evidence.push_back("PID 1 is another process, in another mount namespace: host PID namespace");
    if (s.root_is_pid1_root) {
      env.evidence.push_back(probe.root + " is PID 1's root directory");
    } else if (s.pid1_root_errno != 0) {
      env.notes.push_back("cannot check that " + probe.root + " is PID 1's root directory (" + probe.proc +
                          "/1/root: " + std::strerror(s.pid1_root_errno) + "); using it as the node's root");
    } else {
      env.notes.push_back(probe.root + " is not the same directory as PID 1's root (" + probe.proc +
                          "/1/root); the node's pins and host name are read from it anyway");
    }
    env.evidence.push_back(s.pid1_other_net_ns ? "PID 1 is in another network namespace: entering it"
                                               : "PID 1 shares our network namespace (hostNetwork)");
    auto mounts = read_mountinfo(probe.proc + "/self/mountinfo");
    env.bpffs_roots = mounts_below(mounts, probe.root, "bpf");
    if (env.bpffs_roots.empty()) {
      env.notes.push_back("no bpf file system is mounted under " + probe.root +
                          " (the node pins nothing, or the host root was not mounted recursively): "
                          "pinned paths will be missing");
    }
    auto cgroups = mounts_below(mounts, probe.root, "cgroup2");
    auto preferred = std::find(cgroups.begin(), cgroups.end(), probe.root + "/sys/fs/cgroup");
    if (preferred != cgroups.end()) {
      env.cgroup_root = *preferred;
    } else if (!cgroups.empty()) {
      env.cgroup_root = cgroups.front();
    }
  } else {
    // Not a debug pod: on the node itself, or a hostPID container without the
    // host root. PID 1's network namespace is still the node's.
    env.environment = "host";
    if (s.pid1_other_net_ns) {
      env.netns = pid1_net;
      env.evidence.push_back("PID 1 is in another network namespace: entering it");
    }
    if (s.pid1_other_mount_ns) {
      env.node_mounts_elsewhere = true;
      env.notes.push_back("PID 1 is in another mount namespace but " + probe.root +
                          " does not hold the node's root file system: bpffs pins are read from this "
                          "container's mounts only");
    }
  }
  resolve_node_name(probe, env);
  return env;
}

void apply_host_env(const HostEnv& env, netfilter::Options& nf, bpf::Options& bpf) {
  nf.netns = env.netns;
  bpf.netns = env.netns;
  if (!env.bpffs_roots.empty()) bpf.bpffs_roots = env.bpffs_roots;
  bpf.pins_of_other_mount_namespace = env.node_mounts_elsewhere;
  if (!env.cgroup_root.empty()) bpf.cgroup_root = env.cgroup_root;
}

void finish_host_snapshot(const HostEnv& env, model::Snapshot& snapshot) {
  snapshot.node.environment = env.environment;
  if (!env.node_name.empty()) snapshot.node.name = env.node_name;
  if (env.host_root.empty() || env.host_root == "/") return;
  auto strip = [&](std::vector<std::string>& paths) {
    for (auto& p : paths) {
      if (p.size() > env.host_root.size() && at_or_below(p, env.host_root)) p.erase(0, env.host_root.size());
    }
  };
  for (auto& p : snapshot.ebpf.programs) strip(p.pinned);
  for (auto& m : snapshot.ebpf.maps) strip(m.pinned);
  for (auto& l : snapshot.ebpf.links) strip(l.pinned);
}

}  // namespace dpscope::cli
