// `dpscope snapshot --host`: finding the node from inside a pod.
//
// In a `kubectl debug node/NAME --profile=sysadmin` pod the node's root file
// system is mounted at /host and the pod shares the host PID namespace, so
// PID 1 is the node's init. From there the node's network namespace is
// /proc/1/ns/net, its bpffs pins are under /host/sys/fs/bpf and its name is in
// its UTS namespace (/proc/1/ns/uts) or /host/etc/hostname.
//
// Everything is read through a root prefix and a procfs path so the detection
// can be tested on a fake tree without root.
#pragma once

#include <string>
#include <vector>

#include "collectors/bpf/bpf.h"
#include "collectors/netfilter/netfilter.h"
#include "model/snapshot.h"

namespace dpscope::cli {

struct HostProbe {
  std::string root = "/host";   // where the node's root file system is mounted
  std::string proc = "/proc";   // procfs of our PID namespace (the host's in a debug pod)
  std::string node_name_env;    // $NODE_NAME ("" when unset): set by the plugin / DaemonSet
};

struct HostEnv {
  // "kubectl-debug": in a pod with the host root at probe.root and host PID ns.
  // "host": not in such a pod (run directly on the node, or a hostPID pod without /host).
  std::string environment;
  std::string netns;                     // for the collectors: <proc>/1/ns/net, "" = our own
  std::vector<std::string> bpffs_roots;  // bpffs mounts to walk for pins ("" list = collector default)
  std::string cgroup_root;               // the host's cgroup2 mount ("" = collector default)
  std::string host_root;                 // prefix to strip from recorded paths ("" none)
  std::string node_name;
  std::string node_name_source;          // "NODE_NAME", "host UTS namespace", "<root>/etc/hostname", "uname"
  std::vector<std::string> evidence;     // why this environment was chosen, for --verbose / tests
  std::vector<std::string> notes;        // worth telling the user on stderr
  bool node_mounts_elsewhere = false;    // PID 1's mount namespace is not ours: its pins are not in our mounts
};

// What a debug pod looks like from the inside. Each field is one observation.
struct PodSignals {
  bool root_looks_like_rootfs = false;  // <root>/etc and <root>/usr (or bin) are directories
  bool root_is_pid1_root = false;       // <root> is the same directory as <proc>/1/root
  int pid1_root_errno = 0;              // why <proc>/1/root could not be looked at (0: it could)
  bool we_are_pid1 = false;             // <proc>/self is "1": our own PID namespace
  bool pid1_visible = false;            // <proc>/1/ns/mnt could be read
  bool pid1_other_mount_ns = false;     // PID 1 lives in another mount namespace than us
  bool pid1_other_net_ns = false;       // ... and another network namespace
};

PodSignals probe_pod_signals(const HostProbe& probe);

// True when the signals say "a kubectl debug node pod": host root present and
// PID 1 is an init outside our container.
bool is_kubectl_debug(const PodSignals& signals);

// Resolves --host. Throws UsageError when --host cannot mean the node (a
// container without the host PID namespace).
HostEnv resolve_host_env(const HostProbe& probe);

// The node's name in the order of trust: $NODE_NAME (the Kubernetes node
// object's name, set explicitly), PID 1's UTS namespace (the running host
// name), <root>/etc/hostname, our own uname.
void resolve_node_name(const HostProbe& probe, HostEnv& env);

// bpf and cgroup2 mounts at or below `root`, from <proc>/self/mountinfo
// (octal escapes decoded; each file system listed once).
struct MountEntry {
  std::string mount_point;
  std::string fs_root;   // the subtree of the file system mounted there ("/" for all of it)
  std::string fs_type;
  std::string device;   // major:minor
};
std::vector<MountEntry> read_mountinfo(const std::string& path);

// Applies the resolved environment to the collectors' options.
void apply_host_env(const HostEnv& env, netfilter::Options& nf, bpf::Options& bpf);

// After collection: node identity and environment, and pinned paths made host
// paths again ("/host/sys/fs/bpf/x" -> "/sys/fs/bpf/x"), so a snapshot taken
// from a debug pod reads like one taken on the node.
void finish_host_snapshot(const HostEnv& env, model::Snapshot& snapshot);

}  // namespace dpscope::cli
