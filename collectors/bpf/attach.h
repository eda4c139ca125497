// Attach points (internal to the bpf collector): tc clsact filters, tcx and XDP
// per interface in a network namespace (rtnetlink via libmnl, BPF_PROG_QUERY),
// and cgroup programs on the cgroup2 tree.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::bpf {

struct NetnsAttachments {
  std::vector<model::BpfAttachment> attachments;
  std::map<uint32_t, std::string> interfaces;   // ifindex -> name, in that netns
  std::vector<model::Unavailable> unavailable;
};

// Runs in a thread that setns()s into `netns` ("" = the caller's namespace).
NetnsAttachments collect_netns_attachments(const std::string& netns);

// Programs attached directly to each cgroup under the cgroup2 root ("" = found
// in mountinfo); `links` names the bpf_link of each attachment made through one.
void collect_cgroup_attachments(const std::string& cgroup_root, const std::vector<model::BpfLink>& links,
                                std::vector<model::BpfAttachment>& out, std::vector<model::Unavailable>& unavailable);

// Mount points of one filesystem type, from /proc/self/mountinfo.
std::vector<std::string> mounts_of_type(const std::string& fstype);

}  // namespace dpscope::bpf
