// Live netfilter collector: nftables + iptables-nft via libnftnl/libmnl,
// iptables-legacy via IPT_SO_GET_INFO/ENTRIES. Read-only. Fills
// Snapshot::netfilter, or records Snapshot::unavailable entries.
#pragma once

#include <optional>
#include <string>

#include "model/snapshot.h"
#include "model/snapshot_writer.h"

namespace dpscope::netfilter {

// What a light snapshot's records say of what it left out ("... (left out by snapshot --light)").
inline constexpr const char* kLightLeftOut = "(left out by snapshot --light)";

struct Options {
  // Network namespace: a name under /run/netns, a path, or a PID. Empty: our own.
  std::string netns;
  // Fleet mode: leave out the elements of anonymous sets and maps (the
  // per-service `numgen ... vmap { }` of kube-proxy's nftables mode, so those
  // rules carry no text) and of dynamic sets (runtime state such as
  // kube-proxy's affinity-*). Each set's element dump makes the kernel find
  // the set by name in the table's list of sets; what was left out is
  // recorded (NetfilterCollection::nft_left_out).
  bool light = false;
  // Worker threads (one netlink socket each) for the per-chain rule dumps; 0: cores + 1.
  unsigned threads = 0;
  // Benchmark floor: do the same per-chain rule dumps but only count the
  // messages (no decoding, rules_recorded = false).
  bool receive_only = false;
  // When set, nf_tables rules go to this spool as each chain is read instead
  // of staying in the snapshot (model/snapshot_writer.h); write the snapshot
  // with the same spool.
  model::RuleSpool* spool = nullptr;
};

// Collects the netfilter section in the namespace of `options.netns`. The
// work runs on a thread inside it (util/netns.h); the caller's thread never
// changes namespace. Throws UsageError when the namespace does not exist.
void collect(model::Snapshot& snapshot, const Options& options);

// "" when iptables rules get their iptables-save text (libxtables and its
// extension objects load), else why not: the rules then keep their fields only.
std::string rule_text_problem();

}  // namespace dpscope::netfilter
