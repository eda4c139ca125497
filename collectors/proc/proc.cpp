#include "collectors/proc/proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "collectors/proc/agent_table.h"
#include "collectors/proc/cgroup_path.h"
#include "util/fd.h"
#include "util/netns.h"

namespace dpscope::proc {

namespace {

struct FileRead {
  bool ok = false;
  std::string text;
  int err = 0;
};

// A /proc or cgroupfs file (they have no size: read until EOF).
FileRead read_small(const std::string& path) {
  FileRead r;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    r.err = errno;
    return r;
  }
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.err = errno;
      return r;
    }
    if (n == 0) break;
    r.text.append(buf, static_cast<size_t>(n));
    if (r.text.size() > (4u << 20)) break;  // no file read here is this large; a bound against a strange fs
  }
  r.ok = true;
  return r;
}

std::string failure(const std::string& path, int err) { return path + ": " + std::strerror(err); }

// "Key:   123 kB" lines (status, smaps_rollup); the number and its unit factor.
std::optional<uint64_t> keyed_value(const std::string& text, const std::string& key, bool kilobytes) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size(), key) == 0 && at + key.size() < end && text[at + key.size()] == ':') {
      std::istringstream in(text.substr(at + key.size() + 1, end - at - key.size() - 1));
      uint64_t v = 0;
      if (in >> v) return kilobytes ? v * 1024 : v;
      return std::nullopt;
    }
    at = end + 1;
  }
  return std::nullopt;
}

// memory.stat: "anon 123\nfile 456\n..."
std::map<std::string, uint64_t> stat_lines(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string key;
  uint64_t v = 0;
  while (in >> key >> v) out[key] = v;
  return out;
}

std::string rfc3339(time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// hidepid=2 / invisible: another user's processes are not even listed, so an
// empty list would mean nothing.
bool processes_hidden(const std::string& proc) {
  if (::geteuid() == 0) return false;
  std::istringstream in(read_small(proc + "/self/mountinfo").text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::vector<std::string> w;
    std::string word;
    while (f >> word) w.push_back(word);
    auto dash = std::find(w.begin(), w.end(), "-");
    if (w.size() < 5 || dash == w.end() || w.end() - dash < 4 || w[4] != proc || *(dash + 1) != "proc") continue;
    const std::string& opts = *(dash + 3);
    if (opts.find("hidepid=2") != std::string::npos || opts.find("hidepid=invisible") != std::string::npos) return true;
  }
  return false;
}

// ---- the memory hierarchy

struct Hierarchy {
  std::string version;  // "v2" | "v1" | "" none
  std::string dir;      // its mount
  std::string reason;   // why none
  int err = 0;
};

Hierarchy find_memory_hierarchy(const std::string& cg) {
  Hierarchy h;
  struct stat st {};
  if (::stat(cg.c_str(), &st) != 0) {
    h.err = errno;
    h.reason = failure(cg, errno) + " (in a kubectl-debug pod the node's /sys/fs/cgroup must be visible under the host root)";
    return h;
  }
  auto has_memory = [](const FileRead& r) {
    std::istringstream in(r.text);
    std::string c;
    while (in >> c) {
      if (c == "memory") return true;
    }
    return false;
  };
  const FileRead unified = read_small(cg + "/cgroup.controllers");
  if (unified.ok) {
    if (has_memory(unified)) return {"v2", cg, "", 0};
    h.reason = "cgroup v2 at " + cg + " without the memory controller (cgroup.controllers: " + unified.text + ")";
    while (!h.reason.empty() && (h.reason.back() == '\n')) h.reason.pop_back();
    return h;
  }
  if (has_memory(read_small(cg + "/unified/cgroup.controllers"))) return {"v2", cg + "/unified", "", 0};
  if (::access((cg + "/memory/memory.usage_in_bytes").c_str(), R_OK) == 0) return {"v1", cg + "/memory", "", 0};
  h.reason = "no memory controller under " + cg + " (neither cgroup v2 with memory nor a v1 memory hierarchy)";
  return h;
}

// The process's cgroup in the memory hierarchy, from /proc/PID/cgroup.
std::string cgroup_of(const std::string& text, const std::string& version) {
  std::istringstream in(text);
  std::string line, unified;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      unified = path;
      continue;
    }
    std::istringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ',')) {
      if (c == "memory" && version != "v2") return path;
    }
  }
  return unified;
}

// Reads every pid's /proc/PID/cgroup, from inside `ns` when it is another
// cgroup namespace (paths are printed relative to the reader's namespace).
std::vector<FileRead> read_cgroup_files(const std::string& proc, const std::vector<uint32_t>& pids,
                                        const std::string& ns, std::string* ns_failure) {
  std::vector<FileRead> out(pids.size());
  auto read_all = [&] {
    for (size_t i = 0; i < pids.size(); ++i) out[i] = read_small(proc + "/" + std::to_string(pids[i]) + "/cgroup");
  };
  if (ns.empty() || same_file(ns, proc + "/self/ns/cgroup")) {
    read_all();
    return out;
  }
  const UniqueFd fd(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
  const int err = fd ? run_in_namespace(fd, CLONE_NEWCGROUP, read_all) : errno;
  if (err != 0) {
    // Read from our own cgroup namespace instead, and say so.
    *ns_failure = "entering " + ns + ": " + std::strerror(err);
    read_all();
  }
  return out;
}

// ---- one process

void read_process(const std::string& dir, uint64_t btime, bool have_btime, model::AgentProcess& p) {
  auto missing = [&p](const std::string& field, const std::string& reason, int err) {
    p.unavailable.push_back({field, reason, err});
  };
  const std::string status_path = dir + "/status";
  const FileRead status = read_small(status_path);
  if (!status.ok) {
    missing("rss_bytes", failure(status_path, status.err), status.err);
    missing("threads", failure(status_path, status.err), status.err);
  } else {
    p.rss_bytes = keyed_value(status.text, "VmRSS", true);
    if (!p.rss_bytes) missing("rss_bytes", status_path + " has no VmRSS line (a zombie or a kernel thread)", 0);
    auto threads = keyed_value(status.text, "Threads", false);
    if (threads) p.threads = static_cast<uint32_t>(*threads);
    else missing("threads", status_path + " has no Threads line", 0);
  }
  const std::string rollup_path = dir + "/smaps_rollup";
  const FileRead rollup = read_small(rollup_path);
  if (!rollup.ok) {
    missing("pss_bytes", failure(rollup_path, rollup.err) +
                             (rollup.err == EACCES || rollup.err == EPERM ? " (needs ptrace access: run as root)" : ""),
            rollup.err);
  } else {
    p.pss_bytes = keyed_value(rollup.text, "Pss", true);
    if (!p.pss_bytes) missing("pss_bytes", rollup_path + " has no Pss line (no mappings: a zombie or a kernel thread)", 0);
  }
  const std::string stat_path = dir + "/stat";
  const FileRead stat = read_small(stat_path);
  const size_t paren = stat.text.rfind(')');
  if (stat.ok && paren != std::string::npos && have_btime) {
    std::istringstream in(stat.text.substr(paren + 1));
    std::string field;
    uint64_t start = 0;
    bool got = false;
    for (int i = 3; in >> field; ++i) {  // field 3 is the state; 22 is starttime (clock ticks after boot)
      if (i == 22) {
        got = std::sscanf(field.c_str(), "%lu", &start) == 1;
        break;
      }
    }
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (got && hz > 0) p.started_at = rfc3339(static_cast<time_t>(btime + start / static_cast<uint64_t>(hz)));
  }
  if (p.started_at.empty()) {
    missing("started_at", stat.ok ? stat_path + " or the boot time (btime of /proc/stat) could not be parsed"
                                  : failure(stat_path, stat.err),
            stat.err);
  }
}

// ---- one cgroup

void read_cgroup(const Hierarchy& h, const std::string& ns_failure, model::AgentCgroup& c) {
  auto parsed = parse_kubelet_cgroup(c.path);
  c.pod_uid = parsed.pod_uid;
  c.container_id = parsed.container_id;
  c.container_runtime = parsed.container_runtime;
  c.qos_class = parsed.qos_class;
  static const char* kFields[] = {"memory_current_bytes", "anon_bytes", "file_bytes", "kernel_bytes",
                                  "sock_bytes", "inactive_file_bytes", "working_set_bytes", "procs"};
  auto all_missing = [&c](const std::string& reason, int err) {
    for (const char* f : kFields) c.unavailable.push_back({f, reason, err});
  };
  if (h.version.empty()) return all_missing(h.reason, h.err);
  if (c.path.rfind("/..", 0) == 0) {
    return all_missing("the process's cgroup is outside dpscope's cgroup namespace" +
                           (ns_failure.empty() ? std::string() : " (" + ns_failure + ")") +
                           ": run in the host cgroup namespace",
                       0);
  }
  if (c.path == "/") return all_missing("in the root cgroup: its figures are the whole node's, not the agent's", 0);
  const std::string dir = h.dir + c.path;
  auto one = [&c](const std::string& field, const std::string& path, std::optional<uint64_t>& into) {
    const FileRead r = read_small(path);
    uint64_t v = 0;
    if (!r.ok) {
      c.unavailable.push_back({field, failure(path, r.err), r.err});
    } else if (std::istringstream(r.text) >> v) {
      into = v;
    } else {
      c.unavailable.push_back({field, path + ": not a number", 0});
    }
  };
  const bool v2 = h.version == "v2";
  one("memory_current_bytes", dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"), c.memory_current_bytes);
  const std::string stat_path = dir + "/memory.stat";
  const FileRead stat = read_small(stat_path);
  const auto lines = stat_lines(stat.text);
  auto from_stat = [&](const std::string& field, const std::string& key, std::optional<uint64_t>& into,
                       const char* why_missing) {
    if (!stat.ok) return c.unavailable.push_back({field, failure(stat_path, stat.err), stat.err});
    auto it = lines.find(key);
    if (it != lines.end()) {
      into = it->second;
    } else {
      c.unavailable.push_back({field, stat_path + " has no '" + key + "' line" + why_missing, 0});
    }
  };
  if (v2) {
    from_stat("anon_bytes", "anon", c.anon_bytes, "");
    from_stat("file_bytes", "file", c.file_bytes, "");
    from_stat("kernel_bytes", "kernel", c.kernel_bytes, " (Linux 5.18 added it)");
    from_stat("sock_bytes", "sock", c.sock_bytes, "");
    from_stat("inactive_file_bytes", "inactive_file", c.inactive_file_bytes, "");
  } else {
    from_stat("anon_bytes", "total_rss", c.anon_bytes, "");
    from_stat("file_bytes", "total_cache", c.file_bytes, "");
    one("kernel_bytes", dir + "/memory.kmem.usage_in_bytes", c.kernel_bytes);
    one("sock_bytes", dir + "/memory.kmem.tcp.usage_in_bytes", c.sock_bytes);
    from_stat("inactive_file_bytes", "total_inactive_file", c.inactive_file_bytes, "");
  }
  if (c.memory_current_bytes && c.inactive_file_bytes) {
    c.working_set_bytes = model::kubelet_working_set(*c.memory_current_bytes, *c.inactive_file_bytes);
  } else {
    c.unavailable.push_back({"working_set_bytes",
                             std::string("needs ") + (c.memory_current_bytes ? "inactive_file" : "memory.current") +
                                 ", which could not be read",
                             0});
  }
  const std::string procs_path = dir + "/cgroup.procs";
  const FileRead procs = read_small(procs_path);
  if (procs.ok) {
    c.procs = static_cast<uint32_t>(std::count(procs.text.begin(), procs.text.end(), '\n'));
  } else {
    c.unavailable.push_back({"procs", failure(procs_path, procs.err), procs.err});
  }
}

std::string strip_root(const std::string& path, const std::string& root) {
  if (root.empty() || root == "/" || path.rfind(root, 0) != 0) return path;
  if (path.size() == root.size()) return "/";
  return path[root.size()] == '/' ? path.substr(root.size()) : path;
}

}  // namespace

void collect(model::Snapshot& snapshot, const Options& o) {
  model::Agents& agents = snapshot.agents;
  agents = {};
  DIR* d = ::opendir(o.proc.c_str());
  if (d == nullptr) {
    const int err = errno;
    snapshot.unavailable.push_back({"agents", "cannot list " + o.proc + ": " + std::strerror(err), err,
                                    "mount procfs (in a pod: hostPID: true, or kubectl debug node/NAME)"});
    return;
  }
  if (processes_hidden(o.proc)) {
    ::closedir(d);
    snapshot.unavailable.push_back({"agents", o.proc + " is mounted with hidepid=2: other users' processes are not listed",
                                    EACCES, "run as root"});
    return;
  }
  std::vector<model::AgentProcess> found;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const unsigned long pid = std::strtoul(e->d_name, &end, 10);
    if (*e->d_name == '\0' || *end != '\0' || pid == 0) continue;
    const std::string dir = o.proc + "/" + e->d_name;
    model::AgentProcess p;
    p.pid = static_cast<uint32_t>(pid);
    char target[4096];
    const ssize_t n = ::readlink((dir + "/exe").c_str(), target, sizeof target - 1);
    const int exe_err = n < 0 ? errno : 0;
    if (n >= 0) p.exe.assign(target, static_cast<size_t>(n));
    FileRead comm = read_small(dir + "/comm");
    if (!comm.ok) continue;  // gone since the listing
    p.comm = comm.text.substr(0, comm.text.find('\n'));
    const FileRead cmdline = read_small(dir + "/cmdline");
    size_t used = 0;
    for (size_t at = 0; at < cmdline.text.size() && used < model::kCmdlineLimit;) {
      size_t zero = cmdline.text.find('\0', at);
      if (zero == std::string::npos) zero = cmdline.text.size();
      std::string arg = cmdline.text.substr(at, std::min(zero - at, model::kCmdlineLimit - used));
      used += arg.size() + 1;
      p.cmdline.push_back(std::move(arg));
      at = zero + 1;
    }
    auto match = match_agent(p.exe, p.comm, p.cmdline.empty() ? std::string() : p.cmdline.front());
    if (!match) continue;
    // A zombie has exited and holds no memory: not a running agent.
    const std::string stat = read_small(dir + "/stat").text;
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X')) {
      continue;
    }
    p.agent = match->agent;
    p.dataplane = match->dataplane;
    p.matched_by = match->matched_by;
    if (exe_err != 0 && exe_err != ENOENT) {
      p.unavailable.push_back({"exe", failure(dir + "/exe", exe_err), exe_err});
    }
    found.push_back(std::move(p));
  }
  ::closedir(d);

  const FileRead proc_stat = read_small(o.proc + "/stat");
  uint64_t boot = 0;
  bool have_btime = false;
  {
    std::istringstream in(proc_stat.text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("btime ", 0) == 0) have_btime = std::sscanf(line.c_str() + 6, "%lu", &boot) == 1;
    }
  }
  const Hierarchy h = find_memory_hierarchy(o.cgroup_fs);
  agents.cgroup_version = h.version;
  agents.cgroup_mount = h.version.empty() ? "" : strip_root(h.dir, o.host_root);

  std::vector<uint32_t> pids;
  for (auto& p : found) {
    read_process(o.proc + "/" + std::to_string(p.pid), boot, have_btime, p);
    pids.push_back(p.pid);
  }
  std::string ns_failure;
  const auto cgroup_files = read_cgroup_files(o.proc, pids, o.cgroup_ns, &ns_failure);
  std::set<std::string> paths;
  for (size_t i = 0; i < found.size(); ++i) {
    const std::string file = o.proc + "/" + std::to_string(found[i].pid) + "/cgroup";
    if (!cgroup_files[i].ok) {
      found[i].unavailable.push_back({"cgroup", failure(file, cgroup_files[i].err), cgroup_files[i].err});
      continue;
    }
    found[i].cgroup = cgroup_of(cgroup_files[i].text, h.version);
    if (found[i].cgroup.empty()) {
      found[i].unavailable.push_back({"cgroup", file + " names no memory cgroup", 0});
      continue;
    }
    paths.insert(found[i].cgroup);
  }
  for (const auto& path : paths) {
    model::AgentCgroup c;
    c.path = path;
    read_cgroup(h, ns_failure, c);
    agents.cgroups.push_back(std::move(c));
  }
  agents.processes = std::move(found);
  agents.collected = true;
  model::canonicalize(agents);

  // A figure that could not be read makes the snapshot incomplete (exit 3),
  // with the first reason as the summary.
  auto summarise = [&snapshot](const char* section, size_t objects, const auto& list, const char* what) {
    size_t missing = 0;
    const model::ValueUnavailable* first = nullptr;
    for (const auto& x : list) {
      missing += x.unavailable.size();
      if (!first && !x.unavailable.empty()) first = &x.unavailable.front();
    }
    if (missing == 0) return;
    snapshot.unavailable.push_back({section,
                                    std::to_string(missing) + " figure" + (missing == 1 ? "" : "s") + " of " +
                                        std::to_string(objects) + " " + what + " could not be read (first: " +
                                        first->field + ": " + first->reason + ")",
                                    first->error, "each one is listed under the object's \"unavailable\""});
  };
  summarise("agents.processes", agents.processes.size(), agents.processes, "agent processes");
  summarise("agents.cgroups", agents.cgroups.size(), agents.cgroups, "agent cgroups");
}

}  // namespace dpscope::proc
