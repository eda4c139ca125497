// Decoding of one nf_tables rule, as a dump returns it (NFT_MSG_NEWRULE),
// straight from its netlink attributes with libmnl: a 20k-service node has
// ~350k rules, and allocating a libnftnl object per expression would cost more
// than the kernel's dump itself. libnftnl renders rules we cannot decode.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/netfilter/nft_native.h"
#include "model/snapshot.h"

namespace dpscope::netfilter {

struct RuleDecodeOptions {
  uint8_t family = 0;     // NFPROTO_* of the table
  bool iptables = false;  // decode as an iptables-nft rule (else: native nftables record)
  // A native rule's table's sets, for its text (nullptr: the text is not printed).
  const TableSets* sets = nullptr;
  // Its table's bound chains, read before (nft_native.h ChainBinding).
  const ChainBindings* bindings = nullptr;
};

// Decodes `nlh` into a rule record (position left 0 for the caller).
// An iptables-nft rule with an expression outside the xtables-compat set, and
// a native rule whose text nft_native.h cannot print, are returned with
// undecoded = true and raw = libnftnl's text of the rule.
// `iptables_listable` (iptables rules): set false when the rule has an
// expression iptables-nft 1.8.9 never writes (nft.c nft_is_expr_compatible).
// A table holding such a rule is "incompatible, use 'nft' tool" to
// iptables-nft-save, so nft is the only tool that lists it, and the
// collector reads it as native nftables.
model::Rule decode_nft_rule(const nlmsghdr* nlh, const RuleDecodeOptions& options,
                            bool* iptables_listable = nullptr);

// Why a native rule has no text: the WHY of its raw "text not printed (WHY): ...";
// "" for a rule with text, or an iptables-nft rule (its raw is libnftnl's text alone).
std::string_view text_unknown_reason(const model::Rule& rule);

// libnftnl's default text of the rule ("[ payload load 4b @ network header + 16 => reg 1 ] ..."),
// or a sentence saying libnftnl could not parse it (an expression newer than libnftnl 1.2.4).
std::string nftnl_rule_text(const nlmsghdr* nlh);

// The chain a rule message belongs to.
std::string nft_rule_chain(const nlmsghdr* nlh);

}  // namespace dpscope::netfilter
