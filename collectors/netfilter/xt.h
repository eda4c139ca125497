// Decoders of the x_tables match/target blobs (xt_*_info) into the rule record.
// Both backends carry the same blobs: legacy iptables in its entries, and
// iptables-nft in its xtables-compat `match`/`target` expressions. The output
// follows what `iptables-save` prints, so a live rule equals its import.
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

// Sets verdict_kind "target", target = name, and target_args as iptables-save
// prints them for the targets in xt_target_args_decoded(); "" for others.
void decode_xt_target(std::string_view name, uint8_t revision, const uint8_t* data, size_t len, int family,
                      model::Rule& rule);

// Whether decode_xt_target reproduces iptables-save's option text for this target.
bool xt_target_args_decoded(std::string_view name);

// "tcp" for 6 etc., the way iptables-save names -p (number when unknown).
std::string protocol_name(uint8_t proto);

// Address text as iptables-save prints it: "10.0.0.0/8" (prefix from a contiguous mask).
std::string cidr_text(int family, const uint8_t* addr, const uint8_t* mask);

// iptables' xtables_save_string: bare when only [A-Za-z0-9_-], else quoted with \" \\ \' escaped.
std::string xtables_save_string(std::string_view value);

}  // namespace dpscope::netfilter
