// Live IPVS collector: the IP Virtual Server table of a network namespace
// through the kernel's generic-netlink "IPVS" family (what ipvsadm(8) reads),
// and the addresses on the dummy interfaces IPVS proxies bind their VIPs to
// (kube-ipvs0, kube-dummy-if) through rtnetlink. GET requests only.
//
// The family is looked up in a CTRL_CMD_GETFAMILY dump, never by name: a
// by-name lookup makes the kernel load ip_vs (request_module
// "net-pf-16-proto-16-family-IPVS"), which would change the node. A kernel
// without it gives Ipvs{collected, loaded = false, reason}.
#pragma once

#include <string>

#include "model/snapshot.h"

namespace dpscope::ipvs {

// Fills snapshot.ipvs, or records an "ipvs" Unavailable entry (no privilege,
// a failed dump). `netns` as netfilter::Options::netns ("" = our own); the
// work runs on a dedicated thread that setns()s.
void collect(model::Snapshot& snapshot, const std::string& netns);

}  // namespace dpscope::ipvs
