// The expression a named set declares its key or value with ("typeof ip
// saddr . tcp dport"), read back from the set's userdata as nft v1.0.6 does
// (netlink.c set_make_key: each expression type's parse_udata) and printed
// as its expr_print does (rule.c set_print_key_and_data).
#pragma once

#include <cstdint>
#include <string>

namespace dpscope::netfilter {

// The text nft v1.0.6 prints after "typeof " in a set declaration, from the
// payload of the set's NFTNL_UDATA_SET_KEY_TYPEOF or NFTNL_UDATA_SET_DATA_TYPEOF
// userdata attribute (what nftnl_udata_get/nftnl_udata_len give for it):
// "ip saddr", "ip saddr . tcp dport", "meta mark", "ct state", "@nh,32,32" ...
// "" where nft reads back an expression of no width (a concatenation of no
// fields, what nft writes for a set declared by type): nft prints "type".
// Throws nftval::Unknown for any expression it cannot print exactly as nft
// does, and for userdata nft itself could not read back.
//
// What stays the caller's to check (netlink.c netlink_delinearize_set): nft
// prints "typeof" only when the expression's width rounded up to bytes is the
// set's key (or data) length, and a map's key only when its value's typeof is
// valid as well; otherwise it prints "type <datatype>" for both.
std::string typeof_text(const void* data, uint32_t len);

}  // namespace dpscope::netfilter
