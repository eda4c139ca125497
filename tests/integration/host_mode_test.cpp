// The self-contained bundle and `dpscope snapshot --host`, on the real kernel.
//
//  - Bundle: a directory holding nothing but scripts/bundle.sh's output plus
//    /proc and /sys, entered with chroot in a private mount namespace, snapshots
//    a dps-* netns loaded with a kube-proxy fixture ruleset.
//  - Host mode: a simulated kubectl-debug node pod (tests/integration/host_pod.sh):
//    the node's root bound at /host, the node's PID namespace, its own mount
//    and network namespaces; the "node" is a dps-* netns with the fixture
//    ruleset, a private bpffs with a pinned map and a UTS name.
// The oracle for the ruleset is iptables-nft-save in the same namespace.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;

const char* kFixture = "fixtures/upstream/kube-proxy-iptables/syncrepeated-step1-two-clusterip.saved-nft.txt";

// table -> chain -> number of rules
using ChainCounts = std::map<std::string, std::map<std::string, uint64_t>>;

// What iptables-save printed: ":CHAIN" declares a chain, "-A CHAIN" is one rule.
ChainCounts from_iptables_save(const std::string& text) {
  ChainCounts out;
  std::istringstream in(text);
  std::string table;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("*", 0) == 0) {
      table = line.substr(1);
    } else if (line.rfind(":", 0) == 0) {
      out[table][line.substr(1, line.find(' ') - 1)];
    } else if (line.rfind("-A ", 0) == 0) {
      std::string rest = line.substr(3);
      out[table][rest.substr(0, rest.find(' '))]++;
    }
  }
  return out;
}

ChainCounts from_snapshot(const model::Snapshot& s) {
  ChainCounts out;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != model::Backend::IptablesNft || t.family != "ip") continue;
    for (const auto& c : t.chains) out[t.name][c.name] = c.rule_count;
  }
  return out;
}

size_t svc_chains(const ChainCounts& counts) {
  size_t n = 0;
  if (auto it = counts.find("nat"); it != counts.end()) {
    for (const auto& [name, rules] : it->second) n += name.rfind("KUBE-SVC-", 0) == 0;
  }
  return n;
}

std::string unavailable_list(const model::Snapshot& s) {
  std::string out;
  for (const auto& u : s.unavailable) out += u.section + " (" + u.reason + ") ";
  return out;
}

// The fixture without its `-m nfacct` rule: that match needs the xt_nfacct
// module and a named accounting object, which this kernel may not have. What
// is compared is whatever iptables-nft-save then reads back.
std::string loadable_fixture() {
  std::istringstream in(read_text(source_path(kFixture)));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find(" -m nfacct ") == std::string::npos) out += line + "\n";
  }
  return out;
}

// The fixture loaded into a fresh dps-* namespace, and the oracle's view of it.
struct LoadedNetns {
  explicit LoadedNetns(const std::string& tag) : ns(tag) {
    ns.sh("iptables-nft-restore", loadable_fixture());
    expected = from_iptables_save(ns.sh("iptables-nft-save"));
  }
  Netns ns;
  ChainCounts expected;
};

std::string make_bundle(const TempDir& dir, const std::string& name) {
  std::string bundle = dir.file(name);
  RunResult r = run({source_path("scripts/bundle.sh"), dpscope_bin(), bundle});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return bundle;
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(HostBundle, SnapshotsANetnsFromAnEmptyRoot) {
  DPS_REQUIRE_ROOT();
  LoadedNetns loaded("bundle");
  ASSERT_EQ(svc_chains(loaded.expected), 2u) << "the fixture declares two ClusterIP services";
  TempDir dir;
  std::string root = make_bundle(dir, "root");
  // Nothing but the bundle: the binary, its libraries and loader, the
  // DaemonSet helper, the wrapper, the manifest, the two mount points and an
  // empty /tmp (where a pod writes its snapshot file).
  EXPECT_EQ(entries(root), (std::set<std::string>{"MANIFEST", "bin", "lib", "lib64", "usr", "proc", "sys", "tmp"}));
  EXPECT_TRUE(fs::is_empty(root + "/tmp"));
  EXPECT_TRUE(fs::is_empty(root + "/proc"));
  EXPECT_TRUE(fs::is_empty(root + "/sys"));
  // usr/lib: libxtables and its extension objects, at libxtables' own extension directory;
  // usr/share/doc: dpscope's LICENSE and the copyright file of each Debian package in the bundle.
  EXPECT_EQ(entries(root + "/usr"), (std::set<std::string>{"lib", "local", "share"}));
  EXPECT_TRUE(fs::exists(root + "/usr/share/doc/dpscope/LICENSE"));
  EXPECT_TRUE(fs::exists(root + "/usr/share/doc/libc6/copyright"));
  EXPECT_EQ(entries(root + "/usr/local/bin"), (std::set<std::string>{"dpscope", "dpscope-once"}));

  // In the namespace, a private mount namespace: proc and sys mounted in the
  // root, then chroot. JSON to stdout, everything else to stderr.
  RunResult r = run({"ip", "netns", "exec", loaded.ns.name(), "unshare", "--mount", "--propagation", "private",
                     "/bin/sh", "-c",
                     "mount -t proc proc \"$1/proc\" && mount -t sysfs sysfs \"$1/sys\" && "
                     "exec chroot \"$1\" /usr/local/bin/dpscope snapshot --no-ebpf --no-agents -o -",
                     "sh", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  model::Snapshot s = model::from_json_text(r.out, "stdout of the chrooted bundle");
  EXPECT_TRUE(s.unavailable.empty()) << unavailable_list(s);
  EXPECT_TRUE(s.netfilter.collected);
  ChainCounts got = from_snapshot(s);
  EXPECT_EQ(svc_chains(got), svc_chains(loaded.expected));
  EXPECT_EQ(got, loaded.expected);
  EXPECT_NE(r.err.find("dpscope: netfilter: "), std::string::npos) << r.err;
  // The mounts went with the mount namespace.
  EXPECT_TRUE(fs::is_empty(root + "/proc"));
}

TEST(HostBundle, WrapperRunsTheBundleOutsideAChroot) {
  TempDir dir;
  std::string bundle = make_bundle(dir, "copied-to-a-node");
  RunResult r = run({bundle + "/bin/dpscope", "--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dpscope "), std::string::npos);
  // Provenance: every file listed with a checksum and the package it came from.
  std::string manifest = read_text(bundle + "/MANIFEST");
  EXPECT_NE(manifest.find("/lib/x86_64-linux-gnu/libc.so.6 "), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("/usr/local/bin/dpscope "), std::string::npos) << manifest;
}

class HostPod : public ::testing::Test {
 protected:
  // The node's root: etc/hostname, a bpffs mount point, /usr for its init.
  std::string make_host_root(const TempDir& dir) {
    std::string host = dir.file("node-root");
    for (const char* d : {"etc", "usr", "sys/fs/bpf", "proc", "tmp"}) fs::create_directories(host + "/" + d);
    for (const char* link : {"bin", "lib", "lib64", "sbin"}) fs::create_symlink(std::string("usr/") + link, host + "/" + link);
    write_text(host + "/etc/hostname", "name-from-etc-hostname\n");
    return host;
  }
  RunResult in_pod(const std::string& pod, const std::string& host, const Netns& ns, const std::string& pin,
                   const std::vector<std::string>& dpscope_args) {
    std::vector<std::string> argv = {"timeout", "60",    "env",       "DPS_PIN_MAP=" + pin, "unshare", "--mount",
                                     "--propagation", "private", "/bin/sh", source_path("tests/integration/host_pod.sh"),
                                     pod,       host,    ns.name(),   "node-uts-1"};
    argv.insert(argv.end(), dpscope_args.begin(), dpscope_args.end());
    return run(argv);
  }
};

TEST_F(HostPod, SnapshotsTheNodeFromASimulatedDebugPod) {
  DPS_REQUIRE_ROOT();
  LoadedNetns node_netns("hostpod");
  TempDir dir;
  std::string pod = make_bundle(dir, "pod-root");
  fs::create_directory(pod + "/host");
  std::string host = make_host_root(dir);
  const std::string pin = "dps_e_pin";

  RunResult r = in_pod(pod, host, node_netns.ns, pin, {"snapshot", "--host", "-o", "-"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.exit_code << "\n" << r.err;
  // stdout is the JSON document and nothing else.
  model::Snapshot s = model::from_json_text(r.out, "stdout of dpscope in the pod");
  EXPECT_EQ(s.node.environment, "kubectl-debug");
  // The running host name of the node (PID 1's UTS namespace) wins over its /etc/hostname.
  EXPECT_EQ(s.node.name, "node-uts-1");
  // The ruleset is the node's (PID 1's netns), not the pod's empty one.
  ASSERT_TRUE(s.netfilter.collected) << unavailable_list(s);
  ChainCounts got = from_snapshot(s);
  EXPECT_EQ(svc_chains(got), 2u);
  EXPECT_EQ(got, node_netns.expected);
  // The node's pinned map was found under /host/sys/fs/bpf and is recorded
  // with its path on the node.
  ASSERT_TRUE(s.ebpf.collected) << unavailable_list(s);
  const model::BpfMap* pinned = nullptr;
  for (const auto& m : s.ebpf.maps) {
    if (m.name == pin) pinned = &m;
  }
  ASSERT_NE(pinned, nullptr) << "map " << pin << " not in the snapshot";
  EXPECT_EQ(pinned->pinned, std::vector<std::string>{"/sys/fs/bpf/" + pin});
  for (const auto& u : s.unavailable) {
    EXPECT_NE(u.section.rfind("netfilter", 0), 0u) << u.section << ": " << u.reason;
    EXPECT_NE(u.section, "ebpf.pins") << u.reason;
  }
  // Messages only on stderr.
  EXPECT_NE(r.err.find("dpscope: netfilter: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is not the same directory as PID 1's root"), std::string::npos) << r.err;
}

TEST_F(HostPod, SuggestsHostWhenRunInADebugPodWithoutIt) {
  DPS_REQUIRE_ROOT();
  Netns node_netns("hostpod-plain");
  TempDir dir;
  std::string pod = make_bundle(dir, "pod-root");
  fs::create_directory(pod + "/host");
  std::string host = make_host_root(dir);
  RunResult r = in_pod(pod, host, node_netns, "", {"snapshot", "--no-ebpf", "--no-agents", "-o", "-"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  model::Snapshot s = model::from_json_text(r.out, "stdout of dpscope in the pod");
  EXPECT_EQ(s.node.environment, "host");
  EXPECT_NE(r.err.find("add --host to snapshot the node itself"), std::string::npos) << r.err;
}

TEST_F(HostPod, RefusesWithoutTheHostPidNamespace) {
  // A pod without hostPID: its command is PID 1, the node's namespaces are out of reach.
  DPS_REQUIRE_ROOT();
  RunResult r = run({"timeout", "30", "unshare", "--pid", "--fork", "--mount-proc", dpscope_bin(), "snapshot",
                     "--host", "-o", "-"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("host PID namespace"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpscope::test
