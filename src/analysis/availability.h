// Whether the facts behind a figure were read: every view asks this before it
// counts, concludes or gates on a section (unknown is never zero).
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::analysis {

// Whether the facts behind a number were collected. A section listed in
// Snapshot::unavailable is `unavailable` with its reason; a section that was
// simply not part of the input (an iptables-save import has no eBPF) is
// `collected == false` with an empty reason, or with the importer's "not
// imported: ..." record as reason (errno 0). `incomplete` names subsections
// that were unavailable while the rest was read.
struct Availability {
  bool collected = false;
  bool unavailable = false;
  std::string reason;                   // "EPERM: run as root (hint)" when unavailable
  std::vector<std::string> incomplete;  // "netfilter.iptables-legacy: reason"
  // Parts the input did not contain (an importer's "not imported" record of a
  // child): what was read is complete, but a total over the section leaves them out.
  std::vector<std::string> not_imported;  // "netfilter.iptables-legacy: not imported: ..."
  bool usable() const { return collected && !unavailable; }
  // Read in full: the only state a Finding, a gate or a fit may conclude from.
  bool complete() const { return usable() && incomplete.empty(); }
  // Complete, and no part left out of the input: a total over it is the node's.
  bool whole() const { return complete() && not_imported.empty(); }
  // "not collected", "unavailable (reason)", "incomplete (reasons)"; "" when complete.
  std::string gap() const;
};

// The availability of `section` ("netfilter.iptables-legacy", "ebpf.maps", ...)
// in a snapshot: unavailable when it or a parent is listed, incomplete when a
// child is; `collected` says whether its top-level section was read at all.
Availability availability_of(const model::Snapshot& s, const std::string& section, bool collected);
// Both parts' gaps: unavailable when either is, incomplete when either is.
Availability combine(const Availability& a, const Availability& b);

}  // namespace dpscope::analysis
