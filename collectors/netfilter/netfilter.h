// Live netfilter collector: nftables + iptables-nft via libnftnl/libmnl,
// iptables-legacy via IPT_SO_GET_INFO/ENTRIES. Read-only. Fills
// Snapshot::netfilter, or records Snapshot::unavailable entries.
#pragma once

#include <optional>
#include <string>

#include "model/snapshot.h"

namespace dpscope::netfilter {

struct Options {
  // Network namespace: a name under /run/netns, a path, or a PID. Empty: our own.
  std::string netns;
  // Record every rule and the elements of anonymous sets (slower on big nodes).
  bool rules = false;
};

void collect(model::Snapshot& snapshot, const Options& options);

}  // namespace dpscope::netfilter
