// The agents collector on a procfs and cgroupfs laid out in a temporary
// directory (the files' formats as Linux 6.x prints them): every figure read
// from its file, and every unreadable piece recorded with its reason, never 0.
// The same collector against real processes and cgroups:
// tests/integration/agents_live_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "collectors/proc/proc.h"
#include "tests/support/process.h"

namespace dpscope::proc {
namespace {

namespace fs = std::filesystem;

const std::string kUid = "0c1f5f0a-3c8e-4c38-9f38-5cbb4a2b7d11";
const std::string kId = "4b7c2f1d9e8a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c";
const std::string kPodPath = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                             std::string("0c1f5f0a_3c8e_4c38_9f38_5cbb4a2b7d11") + ".slice/cri-containerd-" + kId +
                             ".scope";

struct FakeNode {
  test::TempDir dir;
  std::string proc = dir.file("proc");
  std::string cg = dir.file("cgroup");

  void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    test::write_text(path, text);
  }
  // A process with the files the collector reads; `cgroup` as /proc/PID/cgroup prints it.
  void process(int pid, const std::string& exe, const std::string& comm, const std::string& cgroup,
               const std::string& rss_kb = "70412", const std::string& pss_kb = "65536") {
    const std::string d = proc + "/" + std::to_string(pid);
    fs::create_directories(d);
    fs::create_symlink(exe, d + "/exe");
    write(d + "/comm", comm + "\n");
    write(d + "/cmdline", exe + std::string("\0--v=2\0", 7));
    write(d + "/status", "Name:\t" + comm + "\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t 1300000 kB\nVmRSS:\t   " +
                             rss_kb + " kB\nRssAnon:\t   60000 kB\nThreads:\t17\nSigQ:\t0/63471\n");
    write(d + "/smaps_rollup", "55d0c0000000-7ffd3e9ff000 ---p 00000000 00:00 0                          [rollup]\n"
                               "Rss:               70412 kB\nPss:               " + pss_kb +
                                   " kB\nPss_Dirty:         60000 kB\nPss_Anon:          60000 kB\n");
    // Field 22 (starttime) = 250 ticks; "(comm) with spaces" exercises the last ')'.
    write(d + "/stat", std::to_string(pid) + " (" + comm +
                           " x) S 1 42 42 0 -1 4194560 9000 0 0 0 100 50 0 0 20 0 17 0 250 1300000000 17603\n");
    write(d + "/cgroup", cgroup);
  }
  void cgroup_v2(const std::string& path, bool with_kernel = true) {
    const std::string d = cg + path;
    write(d + "/memory.current", "104857600\n");
    std::string stat = "anon 73400320\nfile 31457280\n";
    if (with_kernel) stat += "kernel 4194304\n";
    stat += "kernel_stack 327680\nsock 8192\ninactive_file 20971520\nactive_file 10485760\n";
    write(d + "/memory.stat", stat);
    write(d + "/cgroup.procs", "100\n");
  }
  FakeNode() {
    write(proc + "/stat", "cpu  1 2 3 4\nintr 1\nctxt 2\nbtime 1764547200\nprocesses 9\n");
    fs::create_directories(proc + "/self");
    write(cg + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  }
  model::Snapshot collect() {
    model::Snapshot s;
    Options o;
    o.proc = proc;
    o.cgroup_fs = cg;
    o.host_root = dir.path();
    proc::collect(s, o);
    return s;
  }
};

TEST(ProcCollect, FiguresComeFromTheirFiles) {
  FakeNode n;
  n.process(100, "/usr/bin/cilium-agent", "cilium-agent", "0::" + kPodPath + "\n");
  n.process(200, "/usr/sbin/sshd", "sshd", "0::/system.slice/ssh.service\n");  // not an agent
  n.cgroup_v2(kPodPath);
  model::Snapshot s = n.collect();
  ASSERT_TRUE(s.agents.collected);
  EXPECT_TRUE(s.unavailable.empty()) << s.unavailable.front().reason;
  EXPECT_EQ(s.agents.cgroup_version, "v2");
  EXPECT_EQ(s.agents.cgroup_mount, "/cgroup");  // host root stripped
  ASSERT_EQ(s.agents.processes.size(), 1u);
  const auto& p = s.agents.processes[0];
  EXPECT_EQ(p.pid, 100u);
  EXPECT_EQ(p.agent, "cilium-agent");
  EXPECT_EQ(p.dataplane, "cilium");
  EXPECT_EQ(p.matched_by, "exe");
  EXPECT_EQ(p.cmdline, (std::vector<std::string>{"/usr/bin/cilium-agent", "--v=2"}));
  EXPECT_EQ(p.rss_bytes, 70412u * 1024);
  EXPECT_EQ(p.pss_bytes, 65536u * 1024);
  EXPECT_EQ(p.threads, 17u);
  const long hz = sysconf(_SC_CLK_TCK);
  const time_t start = 1764547200 + 250 / hz;
  char want[32];
  std::tm tm{};
  gmtime_r(&start, &tm);
  std::strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%SZ", &tm);
  EXPECT_EQ(p.started_at, want);
  EXPECT_EQ(p.cgroup, kPodPath);
  ASSERT_EQ(s.agents.cgroups.size(), 1u);
  const auto& c = s.agents.cgroups[0];
  EXPECT_EQ(c.pod_uid, kUid);
  EXPECT_EQ(c.container_id, kId);
  EXPECT_EQ(c.container_runtime, "containerd");
  EXPECT_EQ(c.memory_current_bytes, 104857600u);
  EXPECT_EQ(c.anon_bytes, 73400320u);
  EXPECT_EQ(c.file_bytes, 31457280u);
  EXPECT_EQ(c.kernel_bytes, 4194304u);
  EXPECT_EQ(c.sock_bytes, 8192u);
  EXPECT_EQ(c.inactive_file_bytes, 20971520u);
  EXPECT_EQ(c.working_set_bytes, 104857600u - 20971520u);
  EXPECT_EQ(c.procs, 1u);
  EXPECT_TRUE(c.unavailable.empty());
}

TEST(ProcCollect, WorkingSetClampsAtZeroAsKubeletDoes) {
  FakeNode n;
  n.process(100, "/usr/local/bin/kube-proxy", "kube-proxy", "0::/kp\n");
  n.write(n.cg + "/kp/memory.current", "1000\n");
  n.write(n.cg + "/kp/memory.stat", "anon 1\nfile 2\nkernel 3\nsock 4\ninactive_file 4096\n");
  n.write(n.cg + "/kp/cgroup.procs", "100\n");
  model::Snapshot s = n.collect();
  ASSERT_EQ(s.agents.cgroups.size(), 1u);
  EXPECT_EQ(s.agents.cgroups[0].working_set_bytes, 0u);
}

TEST(ProcCollect, UnreadablePiecesAreUnavailableNotZero) {
  FakeNode n;
  n.process(100, "/usr/bin/calico-node", "calico-node", "0::/calico\n");
  n.cgroup_v2("/calico", /*with_kernel=*/false);  // Linux < 5.18 prints no "kernel" total
  fs::remove(n.proc + "/100/smaps_rollup");       // Linux < 4.14
  model::Snapshot s = n.collect();
  ASSERT_EQ(s.agents.processes.size(), 1u);
  const auto& p = s.agents.processes[0];
  EXPECT_FALSE(p.pss_bytes);
  ASSERT_EQ(p.unavailable.size(), 1u);
  EXPECT_EQ(p.unavailable[0].field, "pss_bytes");
  EXPECT_EQ(p.unavailable[0].error, ENOENT);
  const auto& c = s.agents.cgroups.at(0);
  EXPECT_FALSE(c.kernel_bytes);
  ASSERT_EQ(c.unavailable.size(), 1u);
  EXPECT_EQ(c.unavailable[0].field, "kernel_bytes");
  EXPECT_NE(c.unavailable[0].reason.find("no 'kernel' line"), std::string::npos);
  EXPECT_TRUE(c.working_set_bytes);  // the rest is still read
  // The snapshot says it is incomplete.
  ASSERT_EQ(s.unavailable.size(), 2u);
  EXPECT_EQ(s.unavailable[0].section, "agents.processes");
  EXPECT_EQ(s.unavailable[1].section, "agents.cgroups");
}

TEST(ProcCollect, NoMemoryControllerMarksEveryCgroupFigure) {
  FakeNode n;
  n.write(n.cg + "/cgroup.controllers", "cpu io pids\n");
  n.process(100, "/usr/bin/kube-router", "kube-router", "0::/kr\n");
  model::Snapshot s = n.collect();
  EXPECT_EQ(s.agents.cgroup_version, "");
  const auto& c = s.agents.cgroups.at(0);
  EXPECT_FALSE(c.memory_current_bytes);
  EXPECT_FALSE(c.working_set_bytes);
  EXPECT_EQ(c.unavailable.size(), 8u);
  EXPECT_NE(c.unavailable[0].reason.find("without the memory controller"), std::string::npos);
  EXPECT_EQ(s.agents.processes.at(0).rss_bytes, 70412u * 1024);  // process figures do not need cgroups
}

TEST(ProcCollect, CgroupV1MemoryHierarchy) {
  FakeNode n;
  fs::remove(n.cg + "/cgroup.controllers");
  n.write(n.cg + "/unified/cgroup.controllers", "hugetlb\n");  // a hybrid node: v2 without memory
  const std::string path = "/kubepods/burstable/pod" + kUid + "/" + kId;
  n.process(100, "/usr/local/bin/kube-proxy", "kube-proxy",
            "12:pids:/kubepods/burstable/pod" + kUid + "/" + kId + "\n4:cpu,cpuacct:/x\n3:memory:" + path + "\n0::/\n");
  const std::string d = n.cg + "/memory" + path;
  n.write(n.cg + "/memory/memory.usage_in_bytes", "999999999\n");
  n.write(d + "/memory.usage_in_bytes", "52428800\n");
  n.write(d + "/memory.stat", "cache 100\nrss 200\ntotal_cache 10485760\ntotal_rss 41943040\ntotal_inactive_file 5242880\n");
  n.write(d + "/memory.kmem.usage_in_bytes", "1048576\n");
  n.write(d + "/memory.kmem.tcp.usage_in_bytes", "0\n");
  n.write(d + "/cgroup.procs", "100\n7\n");
  model::Snapshot s = n.collect();
  EXPECT_EQ(s.agents.cgroup_version, "v1");
  EXPECT_EQ(s.agents.processes.at(0).cgroup, path);
  const auto& c = s.agents.cgroups.at(0);
  EXPECT_EQ(c.memory_current_bytes, 52428800u);
  EXPECT_EQ(c.anon_bytes, 41943040u);
  EXPECT_EQ(c.file_bytes, 10485760u);
  EXPECT_EQ(c.inactive_file_bytes, 5242880u);
  EXPECT_EQ(c.kernel_bytes, 1048576u);
  EXPECT_EQ(c.sock_bytes, 0u);  // read as 0: a real zero
  EXPECT_EQ(c.working_set_bytes, 52428800u - 5242880u);
  EXPECT_EQ(c.procs, 2u);
  EXPECT_EQ(c.qos_class, "burstable");
}

TEST(ProcCollect, RootCgroupAndForeignNamespaceAreNotTheAgents) {
  FakeNode n;
  n.process(100, "/usr/bin/flanneld", "flanneld", "0::/\n");
  n.process(101, "/usr/bin/kindnetd", "kindnetd", "0::/../../kubepods/x\n");
  model::Snapshot s = n.collect();
  ASSERT_EQ(s.agents.cgroups.size(), 2u);
  for (const auto& c : s.agents.cgroups) {
    EXPECT_FALSE(c.memory_current_bytes) << c.path;
    ASSERT_FALSE(c.unavailable.empty());
  }
  // Sorted by path: "/" first.
  EXPECT_NE(s.agents.cgroups[0].unavailable[0].reason.find("root cgroup"), std::string::npos);
  EXPECT_NE(s.agents.cgroups[1].unavailable[0].reason.find("outside dpscope's cgroup namespace"), std::string::npos);
}

TEST(ProcCollect, NoProcfsIsUnavailable) {
  model::Snapshot s;
  Options o;
  o.proc = "/nonexistent/proc";
  collect(s, o);
  EXPECT_FALSE(s.agents.collected);
  ASSERT_EQ(s.unavailable.size(), 1u);
  EXPECT_EQ(s.unavailable[0].section, "agents");
  EXPECT_EQ(s.unavailable[0].error, ENOENT);
}

TEST(ProcCollect, ZombiesAreNotRunningAgents) {
  FakeNode n;
  n.process(100, "/usr/local/bin/kube-proxy", "kube-proxy", "0::/kp\n");
  n.write(n.proc + "/100/stat", "100 (kube-proxy) Z 1 100 100 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 250 0 0\n");
  EXPECT_TRUE(n.collect().agents.processes.empty());
}

TEST(ProcCollect, NoAgentsIsAnEmptyCollectedSection) {
  FakeNode n;
  n.process(200, "/usr/sbin/sshd", "sshd", "0::/system.slice/ssh.service\n");
  model::Snapshot s = n.collect();
  EXPECT_TRUE(s.agents.collected);
  EXPECT_TRUE(s.agents.processes.empty());
  EXPECT_TRUE(s.unavailable.empty());
}

}  // namespace
}  // namespace dpscope::proc
