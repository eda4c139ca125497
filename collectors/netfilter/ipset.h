// Live ipset collector: every IP set of a network namespace through the
// kernel's ipset netlink subsystem, read with libipset (the library ipset(8)
// is built on) in save mode: list/header commands only, nothing is changed.
// Fills Snapshot::ipsets, or records an "ipsets" Unavailable entry.
#pragma once

#include <string>

#include "model/snapshot.h"

namespace dpscope::netfilter {

// `netns` as netfilter::Options::netns ("" = our own). The work runs on a
// dedicated thread that setns()s, like collect().
void collect_ipsets(model::Snapshot& snapshot, const std::string& netns);

}  // namespace dpscope::netfilter
