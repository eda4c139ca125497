// Live eBPF collector through libbpf: programs, maps (memlock, entries),
// links, attach points, pins, decoded Cilium/Calico service maps. Read-only:
// map fds are opened BPF_F_RDONLY, stats are never switched on, nothing is
// attached, pinned or written. Collectors never print (libbpf's log is muted).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::bpf {

struct Options {
  // Network namespace whose interfaces' tc/tcx/XDP attachments are read (as in
  // netfilter::Options): a name under /run/netns, a path, or a PID; "" = ours.
  std::string netns;
  // bpffs roots to walk for pins; empty: every bpf mount in /proc/self/mountinfo.
  std::vector<std::string> bpffs_roots;
  // The pins asked for are another mount namespace's (--host: the node's, seen
  // from a pod): no bpffs found is then not "nothing pinned" (the host root may
  // be mounted without it), and ebpf.pins is unavailable. Otherwise no bpffs
  // mount means no pin in this mount namespace: a complete, empty fact.
  bool pins_of_other_mount_namespace = false;
  // cgroup2 root for cgroup attachments; empty: found from mountinfo.
  std::string cgroup_root;
  // Entry counting is bounded: a map with more entries than this, or reached
  // after the time budget is spent, gets entries_note instead of a number.
  uint64_t max_entries_counted = 1u << 20;
  std::chrono::milliseconds read_budget{3000};
  // Decode Cilium / Calico service maps (Ebpf::services).
  bool decode_services = true;
};

// Fills snapshot.ebpf (collected = true) or records why it could not in
// snapshot.unavailable ("ebpf", or a sub-section such as "ebpf.pins",
// "ebpf.attachments.tc", "ebpf.attachments.cgroup") with errno and a hint.
void collect(model::Snapshot& snapshot, const Options& options);

// libbpf's names with the types the 1.1.2 tables lack; a number when unknown.
std::string prog_type_name(uint32_t type);
std::string map_type_name(uint32_t type);
std::string link_type_name(uint32_t type);
std::string attach_type_name(uint32_t type);

}  // namespace dpscope::bpf
