// The agents section against real processes and cgroups, with /proc and
// cgroupfs read by the test itself as the oracle.
//
// The test copies tests/support/agent_stub as kube-proxy, cilium-agent and
// calico-node (and runs it through a symlink named flanneld, so only comm
// names it), starts each in its own memory cgroup under a test-made dps-*
// directory -- kubelet-shaped paths, cgroupfs and systemd style -- and runs
// `dpscope snapshot`. Every figure must equal the oracle's.
//
// Tolerance: the stubs are idle once they print "ready" (memory touched,
// threads started, then pause()), so their figures hold still; the oracle is
// read just before and just after the snapshot and dpscope's figure must lie
// between the two readings (both inclusive). When the two readings are equal,
// as they are for an idle process, that is exact equality.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "model/json.h"
#include "tests/integration/bpf_fixture.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The node's memory hierarchy, found the plain way.
struct MemoryHierarchy {
  std::string version, mount;
};

std::optional<MemoryHierarchy> memory_hierarchy() {
  auto has_memory = [](const std::string& file) {
    std::istringstream in(slurp(file));
    std::string c;
    while (in >> c) {
      if (c == "memory") return true;
    }
    return false;
  };
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    if (has_memory("/sys/fs/cgroup/cgroup.controllers") && has_memory("/sys/fs/cgroup/cgroup.subtree_control")) {
      return MemoryHierarchy{"v2", "/sys/fs/cgroup"};
    }
    return std::nullopt;
  }
  if (has_memory("/sys/fs/cgroup/unified/cgroup.controllers") &&
      has_memory("/sys/fs/cgroup/unified/cgroup.subtree_control")) {
    return MemoryHierarchy{"v2", "/sys/fs/cgroup/unified"};
  }
  if (fs::exists("/sys/fs/cgroup/memory/memory.usage_in_bytes")) return MemoryHierarchy{"v1", "/sys/fs/cgroup/memory"};
  return std::nullopt;
}

// A dps-* directory in the memory hierarchy and the cgroups made below it,
// removed deepest first on destruction (after the processes in them died).
class TestCgroups {
 public:
  explicit TestCgroups(const MemoryHierarchy& h) : h_(h), top_("/" + unique_name("agents")) {
    make(top_);
  }
  ~TestCgroups() {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
      for (int i = 0; i < 50 && rmdir((h_.mount + *it).c_str()) != 0 && errno == EBUSY; ++i) usleep(20000);
    }
  }
  TestCgroups(const TestCgroups&) = delete;
  TestCgroups& operator=(const TestCgroups&) = delete;

  // Makes top/<rel> and its parents; returns its path relative to the hierarchy root.
  std::string make_below(const std::string& rel) {
    std::string at = top_;
    std::istringstream parts(rel);
    std::string part;
    while (std::getline(parts, part, '/')) {
      if (part.empty()) continue;
      at += "/" + part;
      make(at);
    }
    return at;
  }
  const std::string& mount() const { return h_.mount; }

 private:
  void make(const std::string& rel) {
    const std::string dir = h_.mount + rel;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw std::runtime_error("mkdir " + dir + ": " + strerror(errno));
    if (errno != EEXIST || made_.empty() || made_.back() != rel) made_.push_back(rel);
    if (h_.version == "v2") {
      // Children of our own directories get the memory controller (the
      // hierarchy's root already hands it down: memory_hierarchy() checked).
      std::ofstream(dir + "/cgroup.subtree_control") << "+memory";
    }
  }
  MemoryHierarchy h_;
  std::string top_;
  std::vector<std::string> made_;
};

// A stub agent in a cgroup, killed and reaped on destruction.
class StubAgent {
 public:
  StubAgent(const std::string& exe, const std::string& cgroup_dir, int mib, int threads) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    const std::string procs = cgroup_dir + "/cgroup.procs";
    const std::string mib_s = std::to_string(mib), threads_s = std::to_string(threads);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      // Into the cgroup before exec, so everything it allocates is charged there.
      const int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, "0", 1) != 1) _exit(126);
      close(fd);
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      execl(exe.c_str(), exe.c_str(), mib_s.c_str(), threads_s.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    pollfd p{out[0], POLLIN, 0};
    char buf[16] = {};
    const bool ready = poll(&p, 1, 20000) == 1 && read(out[0], buf, sizeof buf - 1) > 0;
    close(out[0]);
    if (!ready || std::string(buf) != "ready\n") {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      throw std::runtime_error(exe + " did not start in " + cgroup_dir);
    }
  }
  ~StubAgent() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  StubAgent(const StubAgent&) = delete;
  StubAgent& operator=(const StubAgent&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// ---- the oracle: /proc and cgroupfs, read by the test

uint64_t kb_line(const std::string& file, const std::string& key) {
  std::istringstream in(slurp(file));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * (key == "Threads" ? 1 : 1024);
  }
  ADD_FAILURE() << file << " has no " << key;
  return 0;
}

uint64_t number_file(const std::string& file) { return std::stoull(slurp(file)); }

uint64_t stat_key(const std::string& file, const std::string& key) {
  std::istringstream in(slurp(file));
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  ADD_FAILURE() << file << " has no " << key;
  return 0;
}

std::string memory_cgroup_of(pid_t pid, const std::string& version) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    if (version == "v2" && line.rfind("0::", 0) == 0) return line.substr(3);
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    if (version == "v1" && controllers.find(",memory,") != std::string::npos) return line.substr(b + 1);
  }
  return {};
}

using Figures = std::map<std::string, uint64_t>;

Figures oracle(pid_t pid, const MemoryHierarchy& h) {
  const std::string p = "/proc/" + std::to_string(pid);
  Figures f;
  f["rss_bytes"] = kb_line(p + "/status", "VmRSS");
  f["threads"] = kb_line(p + "/status", "Threads");
  f["pss_bytes"] = kb_line(p + "/smaps_rollup", "Pss");
  const std::string dir = h.mount + memory_cgroup_of(pid, h.version);
  const bool v2 = h.version == "v2";
  f["memory_current_bytes"] = number_file(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
  f["anon_bytes"] = stat_key(dir + "/memory.stat", v2 ? "anon" : "total_rss");
  f["file_bytes"] = stat_key(dir + "/memory.stat", v2 ? "file" : "total_cache");
  f["inactive_file_bytes"] = stat_key(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
  f["kernel_bytes"] = v2 ? stat_key(dir + "/memory.stat", "kernel") : number_file(dir + "/memory.kmem.usage_in_bytes");
  f["sock_bytes"] = v2 ? stat_key(dir + "/memory.stat", "sock") : number_file(dir + "/memory.kmem.tcp.usage_in_bytes");
  const uint64_t cur = f["memory_current_bytes"], inactive = f["inactive_file_bytes"];
  f["working_set_bytes"] = cur < inactive ? 0 : cur - inactive;  // kubelet's formula, clamped at 0
  std::istringstream procs(slurp(dir + "/cgroup.procs"));
  std::string line;
  uint64_t n = 0;
  while (std::getline(procs, line)) ++n;
  f["procs"] = n;
  return f;
}

std::string started_at(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i < 22; ++i) in >> field;
  uint64_t ticks = 0;
  in >> ticks;
  uint64_t btime = 0;
  std::istringstream ps(slurp("/proc/stat"));
  std::string key;
  while (ps >> key) {
    if (key == "btime") ps >> btime;
  }
  const time_t t = static_cast<time_t>(btime + ticks / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const json* find_by(const json& list, const std::string& key, const json& value) {
  for (const auto& x : list) {
    if (x.value(key, json()) == value) return &x;
  }
  return nullptr;
}

struct Agent {
  std::string name;       // as run (copy or symlink name)
  std::string agent;      // as dpscope records it
  std::string dataplane;
  std::string matched_by;
  bool systemd_path;      // kubelet's systemd driver shape, else cgroupfs
  int mib, threads;
  std::string pod_uid, container_id, cgroup;
  std::unique_ptr<StubAgent> process;
};

constexpr const char* kContainerId = "4b7c2f1d9e8a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b";

std::string pod_uid_for(int n) {
  char uid[40];
  std::snprintf(uid, sizeof uid, "%08x-3c8e-4c38-9f38-%012x", static_cast<unsigned>(getpid()), n);
  return uid;
}

// Starts `a` in a kubelet-shaped cgroup under `cg`.
void start(Agent& a, TestCgroups& cg, const std::string& dir, int n) {
  a.pod_uid = pod_uid_for(n);
  a.container_id = std::string(kContainerId) + (n < 10 ? "0" : "") + std::to_string(n);
  std::string rel;
  if (a.systemd_path) {
    std::string underscored = a.pod_uid;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    rel = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + underscored + ".slice/cri-containerd-" +
          a.container_id + ".scope";
  } else {
    rel = "kubepods/burstable/pod" + a.pod_uid + "/" + a.container_id;
  }
  a.cgroup = cg.make_below(rel);
  a.process = std::make_unique<StubAgent>(dir + "/" + a.name, cg.mount() + a.cgroup, a.mib, a.threads);
}

void expect_between(uint64_t got, uint64_t before, uint64_t after, const std::string& what) {
  EXPECT_GE(got, std::min(before, after)) << what << " (oracle before " << before << ", after " << after << ")";
  EXPECT_LE(got, std::max(before, after)) << what << " (oracle before " << before << ", after " << after << ")";
}

class AgentsLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "SKIPPED: needs root to make cgroups and read other processes' smaps_rollup";
    h_ = memory_hierarchy();
    if (!h_) GTEST_SKIP() << "SKIPPED: no memory cgroup controller this test may use (v2 root without +memory, or none)";
    for (const char* name : {"kube-proxy", "cilium-agent", "calico-node"}) {
      fs::copy_file(DPSCOPE_AGENT_STUB, bin_.file(name));
      fs::permissions(bin_.file(name), fs::perms::owner_all);
    }
    fs::create_symlink(DPSCOPE_AGENT_STUB, bin_.file("flanneld"));  // exe names the stub: only comm says flanneld
  }
  TempDir bin_;
  std::optional<MemoryHierarchy> h_;
};

TEST_F(AgentsLive, EveryFigureEqualsProcAndCgroupfs) {
  TestCgroups cg(*h_);
  std::vector<Agent> agents;
  agents.push_back({"kube-proxy", "kube-proxy", "kube-proxy", "exe", false, 48, 4, {}, {}, {}, {}});
  agents.push_back({"cilium-agent", "cilium-agent", "cilium", "exe", true, 96, 9, {}, {}, {}, {}});
  agents.push_back({"calico-node", "calico-node", "calico", "exe", true, 32, 2, {}, {}, {}, {}});
  agents.push_back({"flanneld", "flanneld", "flannel", "comm", false, 16, 1, {}, {}, {}, {}});
  for (size_t i = 0; i < agents.size(); ++i) start(agents[i], cg, bin_.path(), static_cast<int>(i));

  std::map<pid_t, Figures> before, after;
  for (const auto& a : agents) before[a.process->pid()] = oracle(a.process->pid(), *h_);
  TempDir out;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run({dpscope_bin(), "snapshot", "--no-ebpf", "-q", "-o", out.file("s.json")});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& a : agents) after[a.process->pid()] = oracle(a.process->pid(), *h_);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  std::cerr << "[ agents ] dpscope snapshot --no-ebpf took " << seconds << " s\n";
  const json s = json::parse(read_text(out.file("s.json")));
  for (const auto& u : s["unavailable"]) {
    EXPECT_NE(u["section"].get<std::string>().rfind("agents", 0), 0u) << u.dump();
  }
  const json& section = s["agents"];
  ASSERT_TRUE(section["collected"].get<bool>());
  EXPECT_EQ(section["cgroup"]["version"], h_->version);
  EXPECT_EQ(section["cgroup"]["mount"], h_->mount);

  for (const auto& a : agents) {
    const pid_t pid = a.process->pid();
    SCOPED_TRACE(a.name + " pid " + std::to_string(pid));
    const json* p = find_by(section["processes"], "pid", pid);
    ASSERT_NE(p, nullptr) << "not found in the snapshot";
    EXPECT_EQ((*p)["agent"], a.agent);
    EXPECT_EQ((*p)["dataplane"], a.dataplane);
    EXPECT_EQ((*p)["matched_by"], a.matched_by);
    EXPECT_EQ((*p)["comm"], a.name);
    EXPECT_EQ((*p)["cmdline"][1], std::to_string(a.mib));
    EXPECT_EQ((*p)["started_at"], started_at(pid));
    EXPECT_TRUE((*p)["unavailable"].empty()) << (*p)["unavailable"].dump();
    EXPECT_EQ((*p)["cgroup"], a.cgroup);
    const Figures& b = before[pid];
    const Figures& f = after[pid];
    for (const char* k : {"rss_bytes", "pss_bytes", "threads"}) expect_between((*p)[k], b.at(k), f.at(k), k);
    EXPECT_EQ((*p)["threads"], a.threads);
    EXPECT_GE((*p)["rss_bytes"].get<uint64_t>(), uint64_t(a.mib) << 20);  // the stub's memory is resident
    std::cerr << "[ agents ] " << a.name << ": RSS " << (*p)["rss_bytes"] << ", PSS " << (*p)["pss_bytes"];

    const json* c = find_by(section["cgroups"], "path", a.cgroup);
    ASSERT_NE(c, nullptr) << "cgroup " << a.cgroup << " not in the snapshot";
    EXPECT_TRUE((*c)["unavailable"].empty()) << (*c)["unavailable"].dump();
    for (const char* k : {"memory_current_bytes", "anon_bytes", "file_bytes", "kernel_bytes", "sock_bytes",
                          "inactive_file_bytes", "working_set_bytes", "procs"}) {
      ASSERT_TRUE(c->contains(k)) << k;
      expect_between((*c)[k], b.at(k), f.at(k), k);
    }
    EXPECT_EQ((*c)["procs"], 1);
    EXPECT_GE((*c)["working_set_bytes"].get<uint64_t>(), uint64_t(a.mib) << 20);  // charged to its cgroup
    std::cerr << ", memory.current " << (*c)["memory_current_bytes"] << ", working set " << (*c)["working_set_bytes"]
              << " (oracle before/after equal: " << (b == f ? "yes" : "no") << ")\n";
    // Attribution from the kubelet-shaped path.
    EXPECT_EQ((*c)["pod_uid"], a.pod_uid);
    EXPECT_EQ((*c)["container_id"], a.container_id);
    EXPECT_EQ((*c)["container_runtime"], a.systemd_path ? "containerd" : "");
    EXPECT_EQ((*c)["qos_class"], "burstable");
  }
}

// dpscope in a cgroup namespace of its own (as in a pod), without --host: the
// agent's cgroup lies outside it, /proc/PID/cgroup prints "/../...", and its
// figures are unavailable with that reason -- never read from a wrong
// directory, never 0. The process figures are still read.
TEST_F(AgentsLive, CgroupOutsideOurNamespaceIsUnavailable) {
  if (run({"sh", "-c", "command -v unshare"}).exit_code != 0) GTEST_SKIP() << "SKIPPED: no unshare(1)";
  TestCgroups cg(*h_);
  Agent kp{"kube-proxy", "kube-proxy", "kube-proxy", "exe", false, 16, 2, {}, {}, {}, {}};
  start(kp, cg, bin_.path(), 20);
  const std::string own = cg.make_below("dpscope");
  TempDir out;
  auto r = sh("echo $$ > " + cg.mount() + own + "/cgroup.procs && exec unshare --cgroup " + dpscope_bin() +
              " snapshot -q --no-ebpf -o " + out.file("s.json"));
  ASSERT_EQ(r.exit_code, 3) << r.err;  // incomplete: agents.cgroups
  const json s = json::parse(read_text(out.file("s.json")));
  const json* p = find_by(s["agents"]["processes"], "pid", kp.process->pid());
  ASSERT_NE(p, nullptr);
  const std::string path = (*p)["cgroup"];
  EXPECT_EQ(path.rfind("/../", 0), 0u) << path;
  EXPECT_TRUE(p->contains("rss_bytes"));
  const json* c = find_by(s["agents"]["cgroups"], "path", path);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->contains("memory_current_bytes"));
  EXPECT_FALSE(c->contains("working_set_bytes"));
  ASSERT_FALSE((*c)["unavailable"].empty());
  EXPECT_NE((*c)["unavailable"][0]["reason"].get<std::string>().find("outside dpscope's cgroup namespace"),
            std::string::npos);
  EXPECT_NE(find_by(s["unavailable"], "section", "agents.cgroups"), nullptr);
}

// Two snapshots -- a kube-proxy "node", then a Cilium one with Cilium-shaped
// eBPF objects loaded before its agent started -- compared: the resident
// cost rows carry the snapshots' figures and the seed sentence is there.
TEST_F(AgentsLive, CompareAnswersTheSeedQuestion) {
  TestCgroups cg(*h_);
  TempDir out;
  Agent kp{"kube-proxy", "kube-proxy", "kube-proxy", "exe", false, 40, 3, {}, {}, {}, {}};
  start(kp, cg, bin_.path(), 10);
  auto a = run({dpscope_bin(), "snapshot", "--no-ebpf", "-q", "-o", out.file("kube-proxy.json")});
  ASSERT_TRUE(a.exit_code == 0 || a.exit_code == 3) << a.err;
  kp.process.reset();

  BpffsDir bpffs("agents");
  bpffix::BpfObject cilium(bpffix::fixture_object("cilium_node"), bpffs.path() + "/tc/globals");
  std::this_thread::sleep_for(std::chrono::milliseconds(5100));  // after its maps, beyond the 2 s margin plus clock rounding: a restart
  Agent ca{"cilium-agent", "cilium-agent", "cilium", "exe", true, 80, 5, {}, {}, {}, {}};
  start(ca, cg, bin_.path(), 11);
  auto b = run({dpscope_bin(), "snapshot", "-q", "-o", out.file("cilium.json")});
  ASSERT_TRUE(b.exit_code == 0 || b.exit_code == 3) << b.err;

  auto c = run({dpscope_bin(), "compare", out.file("kube-proxy.json"), out.file("cilium.json"), "--label", "kp",
                "--label", "cil", "--format", "json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json report = json::parse(c.out);
  auto row = [&](const std::string& id) -> json {
    for (const auto& r : report["rows"]) {
      if (r["id"] == id) return r;
    }
    ADD_FAILURE() << "no row " << id;
    return json::object();
  };
  auto cgroup_ws = [&](const std::string& file, const std::string& path) -> uint64_t {
    const json s = json::parse(read_text(out.file(file)));
    const json* cgj = find_by(s["agents"]["cgroups"], "path", path);
    if (!cgj) return 0;
    return (*cgj)["working_set_bytes"].get<uint64_t>();
  };
  const uint64_t kp_ws = cgroup_ws("kube-proxy.json", kp.cgroup);
  const uint64_t ca_ws = cgroup_ws("cilium.json", ca.cgroup);
  EXPECT_GE(kp_ws, 40u << 20);
  EXPECT_GE(ca_ws, 80u << 20);
  EXPECT_EQ(row("resident.agent.kube-proxy.working_set_bytes")["values"][0], kp_ws);
  EXPECT_EQ(row("resident.agent.cilium-agent.working_set_bytes")["values"][1], ca_ws);
  EXPECT_EQ(row("resident.agent.cilium-agent.working_set_bytes")["values"][0], 0);  // not running there
  // Cilium's eBPF half is the eBPF analysis' owner figure, which holds at least the objects this test loaded
  // (bpftool's memlock for their ids).
  const uint64_t owner = row("ebpf.memlock_bytes.cilium")["values"][1].get<uint64_t>();
  EXPECT_EQ(row("resident.dataplane.cilium.ebpf_memlock_bytes")["values"][1], owner);
  uint64_t ours = 0;
  for (uint32_t id : cilium.map_ids()) {
    auto m = run({"bpftool", "-j", "map", "show", "id", std::to_string(id)});
    ours += json::parse(m.out).value("bytes_memlock", uint64_t{0});
  }
  EXPECT_GT(ours, 0u);
  EXPECT_GE(owner, ours);
  EXPECT_EQ(row("resident.dataplane.cilium.total_bytes")["values"][1], ca_ws + owner);
  bool sentence = false, restart = false;
  for (const auto& f : report["findings"]) {
    const std::string text = f.get<std::string>();
    sentence = sentence || (text.rfind("networking stack memory: kube-proxy ", 0) == 0 &&
                            text.find(" (kp) vs cilium-agent ") != std::string::npos &&
                            text.find("+ eBPF maps ") != std::string::npos);
    restart = restart || text.find("kubectl top does not attribute their memory to the running agent") !=
                             std::string::npos;
  }
  EXPECT_TRUE(sentence) << report["findings"].dump(1);
  EXPECT_TRUE(restart) << report["findings"].dump(1);
  // The HTML page charts it.
  auto html = run({dpscope_bin(), "compare", out.file("kube-proxy.json"), out.file("cilium.json"), "--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("Networking stack memory per dataplane"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
