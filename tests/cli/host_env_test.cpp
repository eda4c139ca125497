// --host detection on a fake /host + /proc tree: no root, no kernel state.
// The fake procfs mirrors the real one's shape: self -> PID, <pid>/ns/* as
// distinct files (distinct inodes = distinct namespaces), 1/root -> a dir.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>

#include "cli/host_env.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::cli {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_text;

class FakePod {
 public:
  FakePod() {
    host = dir.file("host");
    proc = dir.file("proc");
    fs::create_directories(host + "/etc");
    fs::create_directories(host + "/usr/bin");
    fs::create_directories(host + "/sys/fs/bpf");
    write_text(host + "/etc/hostname", "worker-from-file\n");
    for (const char* pid : {"1", "4242"}) {
      fs::create_directories(proc + "/" + pid + "/ns");
      for (const char* ns : {"mnt", "net", "uts"}) write_text(proc + "/" + pid + "/ns/" + ns, pid);
    }
    fs::create_directory_symlink(host, proc + "/1/root");
    fs::create_symlink("4242", proc + "/self");
    mountinfo(
        // The pod's own root and its (empty) sysfs bpf dir are not the node's.
        "1000 900 0:50 / / rw - overlay overlay rw\n"
        "1001 1000 0:40 / /sys/fs/bpf rw - bpf bpf rw\n"
        // The node's root, bound recursively: its bpffs twice (Cilium binds it
        // again under /run/cilium) and its cgroup2.
        "1002 1000 8:1 / " + host + " rw master:1 - ext4 /dev/sda1 rw\n"
        "1003 1002 0:41 / " + host + "/sys/fs/bpf rw master:2 - bpf bpf rw\n"
        "1004 1002 0:42 / " + host + "/sys/fs/cgroup rw master:3 - cgroup2 cgroup2 rw\n"
        "1005 1002 0:41 / " + host + "/run/cilium/bpffs rw master:2 - bpf bpf rw\n"
        // A second bpffs whose mount point holds a space (escaped as \\040).
        "1006 1002 0:43 / " + host + "/run/my\\040bpf rw - bpf bpf rw\n"
        // Malformed lines are skipped.
        "garbage\n"
        "1 2 3 4 5 6\n");
  }
  void mountinfo(const std::string& text) { write_text(proc + "/4242/mountinfo", text); }
  HostProbe probe(const std::string& node_name_env = {}) const { return HostProbe{host, proc, node_name_env}; }

  TempDir dir;
  std::string host, proc;
};

TEST(HostEnv, DetectsKubectlDebugPodAndResolvesTheNode) {
  FakePod pod;
  PodSignals s = probe_pod_signals(pod.probe());
  EXPECT_TRUE(s.root_looks_like_rootfs);
  EXPECT_TRUE(s.root_is_pid1_root);
  EXPECT_EQ(s.pid1_root_errno, 0);
  EXPECT_FALSE(s.we_are_pid1);
  EXPECT_TRUE(s.pid1_visible);
  EXPECT_TRUE(s.pid1_other_mount_ns);
  EXPECT_TRUE(s.pid1_other_net_ns);
  EXPECT_TRUE(is_kubectl_debug(s));

  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_EQ(env.environment, "kubectl-debug");
  EXPECT_EQ(env.netns, pod.proc + "/1/ns/net");
  EXPECT_EQ(env.host_root, pod.host);
  // The node's bpffs once (the /run/cilium bind is the same file system), the
  // other node bpffs, never the pod's own /sys/fs/bpf.
  EXPECT_EQ(env.bpffs_roots, (std::vector<std::string>{pod.host + "/sys/fs/bpf", pod.host + "/run/my bpf"}));
  EXPECT_EQ(env.cgroup_root, pod.host + "/sys/fs/cgroup");
  // proc/1/ns/uts is a plain file here, so setns fails and the file is next.
  EXPECT_EQ(env.node_name, "worker-from-file");
  EXPECT_EQ(env.node_name_source, pod.host + "/etc/hostname");
  EXPECT_TRUE(env.notes.empty()) << env.notes.front();
}

TEST(HostEnv, NodeNameFromEnvironmentWins) {
  FakePod pod;
  HostEnv env = resolve_host_env(pod.probe("  node-a.example  "));
  EXPECT_EQ(env.node_name, "node-a.example");
  EXPECT_EQ(env.node_name_source, "NODE_NAME");
}

TEST(HostEnv, EmptyHostnameFileFallsBackToUname) {
  FakePod pod;
  write_text(pod.host + "/etc/hostname", "\n");
  HostEnv env = resolve_host_env(pod.probe());
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(env.node_name, u.nodename);
  EXPECT_EQ(env.node_name_source, "uname");
}

TEST(HostEnv, NotesWhenHostRootIsNotPid1Root) {
  FakePod pod;
  fs::remove(pod.proc + "/1/root");
  fs::create_directory_symlink(pod.dir.path(), pod.proc + "/1/root");
  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_EQ(env.environment, "kubectl-debug");
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_NE(env.notes[0].find("not the same directory as PID 1's root"), std::string::npos);
}

TEST(HostEnv, NotesWhenPid1RootCannotBeChecked) {
  // /proc/1/root unreadable (EACCES when PID 1 is not dumpable; ENOENT here).
  FakePod pod;
  fs::remove(pod.proc + "/1/root");
  fs::create_directory_symlink(pod.dir.file("gone"), pod.proc + "/1/root");
  PodSignals s = probe_pod_signals(pod.probe());
  EXPECT_EQ(s.pid1_root_errno, ENOENT);
  EXPECT_FALSE(s.root_is_pid1_root);
  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_EQ(env.environment, "kubectl-debug");
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_NE(env.notes[0].find("cannot check that " + pod.host + " is PID 1's root directory"), std::string::npos)
      << env.notes[0];
  EXPECT_NE(env.notes[0].find("No such file or directory"), std::string::npos) << env.notes[0];
}

TEST(HostEnv, NotesWhenNoBpffsUnderHostRoot) {
  FakePod pod;
  pod.mountinfo("1001 1000 0:40 / /sys/fs/bpf rw - bpf bpf rw\n");
  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_TRUE(env.bpffs_roots.empty());
  EXPECT_TRUE(env.cgroup_root.empty());
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_NE(env.notes[0].find("no bpf file system is mounted under"), std::string::npos);
}

TEST(HostEnv, RefusesWhenWeArePid1) {
  // A pod without the host PID namespace: its command is PID 1.
  FakePod pod;
  fs::remove(pod.proc + "/self");
  fs::create_symlink("1", pod.proc + "/self");
  EXPECT_FALSE(probe_pod_signals(pod.probe()).pid1_other_mount_ns);
  EXPECT_FALSE(is_kubectl_debug(probe_pod_signals(pod.probe())));
  try {
    resolve_host_env(pod.probe());
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("host PID namespace"), std::string::npos) << e.what();
  }
}

TEST(HostEnv, RefusesWhenPid1NamespacesAreUnreadable) {
  FakePod pod;
  fs::remove_all(pod.proc + "/1/ns");
  EXPECT_THROW(resolve_host_env(pod.probe()), UsageError);
}

TEST(HostEnv, OnTheNodeItselfIsHost) {
  // Same mount namespace as PID 1 (hard links share an inode), no /host.
  FakePod pod;
  for (const char* ns : {"mnt", "net"}) {
    std::string ours = pod.proc + "/4242/ns/" + ns;
    fs::remove(ours);
    fs::create_hard_link(pod.proc + "/1/ns/" + ns, ours);
  }
  fs::remove_all(pod.host);
  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_EQ(env.environment, "host");
  EXPECT_EQ(env.netns, "");  // already in PID 1's network namespace
  EXPECT_TRUE(env.bpffs_roots.empty());
  EXPECT_EQ(env.host_root, "");
  EXPECT_TRUE(env.notes.empty());
}

TEST(HostEnv, HostPidWithoutHostRootEntersPid1Netns) {
  FakePod pod;
  fs::remove_all(pod.host + "/usr");
  fs::remove_all(pod.host + "/etc");
  HostEnv env = resolve_host_env(pod.probe());
  EXPECT_EQ(env.environment, "host");
  EXPECT_EQ(env.netns, pod.proc + "/1/ns/net");
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_NE(env.notes[0].find("does not hold the node's root file system"), std::string::npos);
}

TEST(HostEnv, ApplyFillsCollectorOptions) {
  HostEnv env;
  env.netns = "/proc/1/ns/net";
  env.bpffs_roots = {"/host/sys/fs/bpf"};
  env.cgroup_root = "/host/sys/fs/cgroup";
  netfilter::Options nf;
  bpf::Options bo;
  bo.bpffs_roots = {"/untouched"};
  apply_host_env(env, nf, bo);
  EXPECT_EQ(nf.netns, "/proc/1/ns/net");
  EXPECT_EQ(bo.netns, "/proc/1/ns/net");
  EXPECT_EQ(bo.bpffs_roots, env.bpffs_roots);
  EXPECT_EQ(bo.cgroup_root, "/host/sys/fs/cgroup");
  // Nothing found: the collectors keep their defaults.
  HostEnv bare;
  bpf::Options kept;
  kept.cgroup_root = "/sys/fs/cgroup";
  apply_host_env(bare, nf, kept);
  EXPECT_EQ(kept.cgroup_root, "/sys/fs/cgroup");
  EXPECT_TRUE(kept.bpffs_roots.empty());
}

TEST(HostEnv, FinishRecordsIdentityAndMakesPinsHostPaths) {
  HostEnv env;
  env.environment = "kubectl-debug";
  env.node_name = "worker-1";
  env.host_root = "/host";
  model::Snapshot s;
  s.node.name = "node-debugger-worker-1-abcde";
  s.node.environment = "host";
  model::BpfMap m;
  m.pinned = {"/host/sys/fs/bpf/tc/globals/cilium_lb4_services_v2", "/hostile/x", "/host"};
  s.ebpf.maps.push_back(m);
  model::BpfProgram p;
  p.pinned = {"/host/sys/fs/bpf/calico/xdp/prog"};
  s.ebpf.programs.push_back(p);
  model::BpfLink l;
  l.pinned = {"/host/run/cilium/bpffs/link"};
  s.ebpf.links.push_back(l);
  finish_host_snapshot(env, s);
  EXPECT_EQ(s.node.name, "worker-1");
  EXPECT_EQ(s.node.environment, "kubectl-debug");
  EXPECT_EQ(s.ebpf.maps[0].pinned,
            (std::vector<std::string>{"/sys/fs/bpf/tc/globals/cilium_lb4_services_v2", "/hostile/x", "/host"}));
  EXPECT_EQ(s.ebpf.programs[0].pinned, std::vector<std::string>{"/sys/fs/bpf/calico/xdp/prog"});
  EXPECT_EQ(s.ebpf.links[0].pinned, std::vector<std::string>{"/run/cilium/bpffs/link"});
}

TEST(HostEnv, ReadsMountinfoFields) {
  TempDir dir;
  write_text(dir.file("mountinfo"),
             "36 35 98:0 /sub\\134dir /mnt/a\\011b rw,noatime master:1 shared:2 - ext3 /dev/root rw\n"
             "37 35 0:41 / /sys/fs/bpf rw - bpf bpf rw\n");
  auto m = read_mountinfo(dir.file("mountinfo"));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].device, "98:0");
  EXPECT_EQ(m[0].fs_root, "/sub\\dir");
  EXPECT_EQ(m[0].mount_point, "/mnt/a\tb");
  EXPECT_EQ(m[0].fs_type, "ext3");
  EXPECT_EQ(m[1].fs_type, "bpf");
  EXPECT_TRUE(read_mountinfo(dir.file("absent")).empty());
}

TEST(HostEnv, RealProcWithoutHostRootIsNotADebugPod) {
  // This machine is not a debug pod: whatever PID 1 is, there is no host root.
  TempDir dir;
  HostProbe probe{dir.file("no-such-root"), "/proc", ""};
  EXPECT_FALSE(is_kubectl_debug(probe_pod_signals(probe)));
}

}  // namespace
}  // namespace dpscope::cli
