// Live eBPF collector through libbpf: programs, maps (memlock, entries),
// links, attach points, pins, decoded Cilium/Calico service maps. Read-only.
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::bpf {

struct Options {
  // Network namespace whose interfaces' tc/XDP attachments are read (as in netfilter::Options).
  std::string netns;
  // bpffs roots to walk for pins; empty: every bpf mount in /proc/self/mountinfo.
  std::vector<std::string> bpffs_roots;
  // cgroup2 root for cgroup attachments; empty: found from mountinfo.
  std::string cgroup_root;
};

void collect(model::Snapshot& snapshot, const Options& options);

}  // namespace dpscope::bpf
