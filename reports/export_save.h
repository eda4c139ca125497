// `dpscope export`: a snapshot's iptables tables written back as the tools
// print them (iptables-save / ip6tables-save, either backend), from each
// rule's recorded text (model::Rule::text). Header comments carry no state;
// everything else is what the tool prints for that state: the tables in
// iptables-nft-save's order, built-in chains in hook order with their policy
// and counters, user chains by name, then the rules in chain order.
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::reports {

struct SaveExport {
  std::string text;                 // "" when the backend holds no table of the family
  std::vector<std::string> notes;   // said on stderr: what the output is, when that is not obvious
};

// The tables of `backend` and `family` ("ip" or "ip6"). Throws InputError
// (file = `source`) when the snapshot cannot give the text back: the
// netfilter part was not read, a chain's rules were counted but not recorded,
// or a rule has no text (a v1 snapshot, a build without libxtables).
SaveExport export_iptables_save(const model::Snapshot& s, model::Backend backend, const std::string& family,
                                const std::string& source);

}  // namespace dpscope::reports
