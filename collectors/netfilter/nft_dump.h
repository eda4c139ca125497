// The nf_tables half of the live collector: one consistent generation of
// tables, chains, sets (+ elements) and rules, read over libmnl sockets in the
// calling thread's network namespace.
#pragma once

#include <cstdint>
#include <vector>

#include "collectors/netfilter/netfilter.h"
#include "model/snapshot.h"

namespace dpscope::netfilter {

struct NftDump {
  // false: the kernel has no nf_tables loaded (see nf_tables_absent), so none
  // was asked: no tables, and no generation.
  bool loaded = true;
  std::vector<model::Table> tables;   // iptables-nft and native nftables tables
  uint32_t generation = 0;
  uint32_t retries = 0;
  uint32_t set_rereads = 0;           // set element dumps repeated (nft_dump.cpp dump_elements)
  bool consistent = true;             // false: the generation moved on every attempt
  // Options::light: what was left out (NetfilterCollection::nft_left_out).
  uint64_t anonymous_sets_unread = 0;
  uint64_t dynamic_sets_unread = 0;
  uint64_t rules_without_text = 0;    // rules over an anonymous set left unread
};

// Why asking would load nf_tables, when this kernel (seen from the calling
// thread's network namespace) has none loaded; "" when it has, or when that
// cannot be told. Opening a NETLINK_NETFILTER socket loads nfnetlink, and a
// request to its nf_tables subsystem loads nf_tables (request_module): a read
// must not. nfnetlink, built in or loaded, keeps a kernel socket of protocol
// 12 in every namespace (/proc/net/netlink); a loaded nfnetlink module with no
// nf_tables module beside it means no nf_tables (it cannot be built in then).
std::string nf_tables_absent();

// Throws SystemError (errno + hint) when nf_tables cannot be read at all (EPERM...).
NftDump dump_nftables(const Options& options);

// Hook name of hook number `hooknum` in nft family `family` ("prerouting", "ingress", ...).
std::string nft_hook_name(uint8_t family, uint32_t hooknum);

// nft's family name ("ip", "ip6", "inet", "arp", "bridge", "netdev").
std::string nft_family_name(uint8_t family);

}  // namespace dpscope::netfilter
