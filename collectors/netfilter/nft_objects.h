// nf_tables' stateful objects and flowtables as `nft list ruleset` prints
// them, from libnftnl's parse of the kernel's dump. After nft v1.0.6 (Debian
// 12): rule.c obj_print_data, flowtable_print_declaration.
#pragma once

#include "model/nft_declarations.h"

struct nftnl_obj;
struct nftnl_flowtable;

namespace dpscope::netfilter {

// An object of a kind nft prints a body for that this does not know (ct
// timeout, tunnel) keeps its kind and name, its `undecoded` saying why.
model::NftObject decode_nft_object(nftnl_obj* obj);

model::NftFlowtable decode_nft_flowtable(nftnl_flowtable* ft);

// nft's time text (datatype.c time_print): 1d2h3m4s5ms; "" for 0.
std::string nft_time_text(uint64_t ms);

}  // namespace dpscope::netfilter
