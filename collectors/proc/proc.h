// The live agents collector: the dataplane's processes (collectors/proc/
// agent_table.h) in the PID namespace whose procfs it reads, and the memory
// cgroups they are in. Read-only: plain reads of /proc and cgroupfs files.
#pragma once

#include <string>

#include "model/snapshot.h"

namespace dpscope::proc {

struct Options {
  std::string proc = "/proc";                // procfs to scan (the host's in a kubectl-debug pod)
  std::string cgroup_fs = "/sys/fs/cgroup";  // where the cgroup hierarchies are mounted
  // The cgroup namespace to read /proc/PID/cgroup in ("" = ours). Paths in
  // that file are relative to the reader's cgroup namespace root, so a debug
  // pod with its own cgroup namespace reads them from PID 1's.
  std::string cgroup_ns;
  std::string host_root;                     // prefix stripped from the recorded mount ("" none)
};

// Fills snapshot.agents, or records "agents" (or a part of it:
// "agents.processes", "agents.cgroups") in snapshot.unavailable.
void collect(model::Snapshot& snapshot, const Options& options = {});

}  // namespace dpscope::proc
