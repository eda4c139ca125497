// `dpscope export --format nft`: a snapshot's native nftables tables written
// back as `nft list ruleset` prints them (nft v1.0.6, Debian 12: rule.c
// table_print and what it calls), from the rules' recorded text, the sets'
// elements and the tables' declarations (model/nft_declarations.h).
//
// Everything but an element's `expires` (runtime state, like the time left
// on a conntrack entry) is what nft prints for that state: tables in the
// kernel's order, then in each its objects, sets, flowtables and chains in
// the order they were added (their handles), as nft lists them.
#pragma once

#include <string>

#include "model/snapshot.h"
#include "reports/export_save.h"

namespace dpscope::reports {

// Throws InputError (file = `source`) when the snapshot cannot give the text
// back: nf_tables was not read, a table's declarations were not recorded
// (an `nft -j` import, a snapshot before v2.3), or a rule, a set's
// elements or declaration, or an object was read but not decoded. Tables of
// iptables-nft are left out and named in the notes (their text is
// iptables-save's: --format iptables-save).
SaveExport export_nft_ruleset(const model::Snapshot& s, const std::string& source);

// nft's text of a base chain's or flowtable's priority (rule.c prio2str):
// "filter", "dstnat - 5", "-250". `family` is the table's ("ip", "bridge").
std::string nft_priority_text(const std::string& family, const std::string& hook, int32_t priority);

}  // namespace dpscope::reports
