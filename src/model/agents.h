// The "agents" section: the dataplane's processes on the node and the memory
// they hold, as /proc and cgroupfs report it (docs/snapshot-schema.md,
// "agents"). Facts only: which dataplane a process belongs to is recorded as
// the collector recognised it (collectors/proc/agent_table.cpp), and every
// figure that could not be read is absent with its reason in `unavailable`,
// never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpscope::model {

// One figure that could not be read, and why.
struct ValueUnavailable {
  std::string field;    // "pss_bytes", "cgroup", "kernel_bytes", ...
  std::string reason;   // "/proc/42/smaps_rollup: Permission denied"
  int error = 0;        // errno, 0 when not a syscall failure
  bool operator==(const ValueUnavailable&) const = default;
};

struct AgentProcess {
  uint32_t pid = 0;
  std::string agent;        // the table's name: "kube-proxy", "cilium-agent", "calico-node", ...
  std::string dataplane;    // "kube-proxy", "cilium", "calico", "kube-router", "antrea", "ovn-kubernetes", ...
  std::string matched_by;   // "exe" | "comm" | "cmdline": what named it
  std::string exe;          // /proc/PID/exe target, in the process's own mount namespace ("" unreadable)
  std::string comm;         // /proc/PID/comm (15 characters at most)
  std::vector<std::string> cmdline;  // argv, cut to kCmdlineLimit bytes in all
  std::string started_at;   // RFC 3339 UTC: /proc/PID/stat starttime + /proc/stat btime ("" unknown)
  std::optional<uint64_t> rss_bytes;   // VmRSS of /proc/PID/status
  std::optional<uint64_t> pss_bytes;   // Pss of /proc/PID/smaps_rollup
  std::optional<uint32_t> threads;     // Threads of /proc/PID/status
  std::string cgroup;       // its memory cgroup, relative to the hierarchy's root ("" unknown)
  std::vector<ValueUnavailable> unavailable;
  bool operator==(const AgentProcess&) const = default;
};

// A memory cgroup holding at least one agent. Figures are hierarchical (they
// include child cgroups), as kubelet reads them.
struct AgentCgroup {
  std::string path;               // "/kubepods.slice/.../cri-containerd-<id>.scope"
  std::string pod_uid;            // from a kubelet-shaped path ("" none)
  std::string container_id;       // "" none
  std::string container_runtime;  // "containerd" | "docker" | "crio" | "" (not named by the path)
  std::string qos_class;          // "guaranteed" | "burstable" | "besteffort" | ""
  // v2 memory.current; v1 memory.usage_in_bytes
  std::optional<uint64_t> memory_current_bytes;
  // v2 memory.stat anon / file / kernel / sock / inactive_file;
  // v1 memory.stat total_rss / total_cache, memory.kmem.usage_in_bytes,
  // memory.kmem.tcp.usage_in_bytes, memory.stat total_inactive_file
  std::optional<uint64_t> anon_bytes, file_bytes, kernel_bytes, sock_bytes, inactive_file_bytes;
  // kubelet's working set: memory_current - inactive_file, 0 when negative
  // (what `kubectl top` shows)
  std::optional<uint64_t> working_set_bytes;
  std::optional<uint32_t> procs;  // processes directly in it (cgroup.procs lines)
  std::vector<ValueUnavailable> unavailable;
  bool operator==(const AgentCgroup&) const = default;
};

struct Agents {
  bool collected = false;        // false: section absent (see Snapshot::unavailable "agents")
  std::string cgroup_version;    // "v2" | "v1" | "" (no memory controller: see the cgroups' unavailable)
  std::string cgroup_mount;      // the memory hierarchy read, host root stripped ("" none)
  std::vector<AgentProcess> processes;  // by pid
  std::vector<AgentCgroup> cgroups;     // by path
  bool operator==(const Agents&) const = default;
};

inline constexpr size_t kCmdlineLimit = 4096;

// kubelet's working set (cadvisor): usage minus inactive file pages, clamped at 0.
uint64_t kubelet_working_set(uint64_t memory_current, uint64_t inactive_file);

// Sorts processes by pid and cgroups by path.
void canonicalize(Agents& a);

// JSON form of the section (the "agents" object); from_json throws
// std::invalid_argument("/agents/processes/0/pid: expected an integer").
nlohmann::json agents_to_json(const Agents& a);
Agents agents_from_json(const nlohmann::json& j, const std::string& pointer);

}  // namespace dpscope::model
