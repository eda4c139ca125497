// Resident cost: what the dataplane's agents hold in memory (the snapshot's
// "agents" section) beside the eBPF kernel memory their dataplane owns (the
// eBPF analysis' owners), per agent, per dataplane and per node. A figure
// that could not be read is carried with its reason and no sum is built on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

struct Availability;
struct EbpfAnalysis;

// A byte figure, or why there is none.
struct Figure {
  std::optional<uint64_t> bytes;
  std::string unavailable;   // reason when !bytes
  static Figure of(uint64_t b) { return {b, {}}; }
  static Figure missing(std::string why) { return {std::nullopt, std::move(why)}; }
  // Sum; the first missing part makes the sum missing.
  Figure& operator+=(const Figure& o);
};

struct AgentUse {
  std::string agent;           // "cilium-agent"
  std::string dataplane;       // "cilium"
  uint32_t processes = 0;
  Figure rss, pss;             // summed over its processes (RSS counts shared pages once per process)
  Figure working_set;          // its cgroups' kubelet working set, each cgroup once
  Figure cgroup_kernel;        // those cgroups' kernel memory (memory.stat kernel / v1 kmem)
  std::string started_at;      // its earliest process start ("" unknown)
  std::vector<std::string> cgroups;
  std::vector<std::string> pods;   // "pod UID, container ID (runtime)" named by the cgroup paths
  std::vector<std::string> notes;  // "cgroup ... holds 7 processes, 1 of them agents"
};

struct DataplaneUse {
  std::string dataplane;
  std::vector<std::string> agents;
  Figure rss, pss, working_set, cgroup_kernel;  // each cgroup once
  bool ebpf_owner = false;       // analysis::owner_rules() names this dataplane
  Figure ebpf_memlock;           // its eBPF objects' fdinfo memlock (programs + maps); 0 when not an owner
  Figure ebpf_map_memlock;       // maps only
  Figure total;                  // working_set + ebpf_memlock
  std::string started_at;        // earliest agent start
  std::string ebpf_first_loaded_at;  // its oldest program's load time ("" none)
  // Every agent process started after its oldest eBPF program was loaded: the
  // objects were made by an earlier process, so kubectl top does not show
  // them in the running agents' working set.
  bool started_after_ebpf = false;
};

struct AgentsAnalysis {
  bool collected = false;
  bool unavailable = false;
  std::string reason;                  // when unavailable
  std::vector<std::string> incomplete; // "agents.processes: ..."
  std::string cgroup_version;          // "v2" | "v1" | ""
  std::vector<AgentUse> agents;        // by (dataplane, agent)
  std::vector<DataplaneUse> dataplanes;  // by dataplane
  Figure working_set, ebpf_memlock, total;  // over dataplanes
  // Whether this kernel charges eBPF map memory to the creating process's
  // memory cgroup (Linux 5.11+): "yes", "no", or "" (kernel unknown).
  std::string bpf_memcg_charged;
  bool usable() const { return collected && !unavailable; }
};

// `availability`: of the "agents" section (analysis.cpp's availability_of).
AgentsAnalysis analyze_agents(const model::Snapshot& s, const EbpfAnalysis& ebpf, const Availability& availability);

// "6.18.44-fc" -> true when at least major.minor; false when older; nullopt unparsable.
std::optional<bool> kernel_at_least(const std::string& release, int major, int minor);

}  // namespace dpscope::analysis
