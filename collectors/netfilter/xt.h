// Decoders of the x_tables match blobs (xt_*_info) into the rule record's
// structured fields (dport, comment, module names: what analysis reads).
// Both backends carry the same blobs: legacy iptables in its entries, and
// iptables-nft in its xtables-compat `match` expressions. The rule's text and
// its target's options are printed by libxtables (xt_save.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/snapshot.h"

namespace dpscope::netfilter {

// Adds the `-m` module name as iptables-save prints it (conntrack saved as
// "state" when it came from `-m state`), and fills dport / comment for the
// matches that carry them (tcp, udp, sctp, multiport, comment). Returns false
// when a match we read fields from does not have the layout we know.
bool decode_xt_match(std::string_view name, uint8_t revision, const uint8_t* data, size_t len, int family,
                     model::RuleMatch& match);

// "tcp" for 6 etc., the way iptables-save names -p (number when unknown).
std::string protocol_name(uint8_t proto);

// Address text as iptables-save prints it: "10.0.0.0/8" (prefix from a contiguous mask).
std::string cidr_text(int family, const uint8_t* addr, const uint8_t* mask);

}  // namespace dpscope::netfilter
