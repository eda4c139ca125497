// A rule's text exactly as iptables-save prints it, by the iptables project's
// own code: libxtables and the extension objects (libxt_*.so), each of which
// has the save() iptables-save calls for its match or target. The header
// (-s/-d/-i/-o/-p/-f) is printed here as iptables' xshared.c does.
//
// Both backends end in these calls: legacy entries carry the xt blobs as the
// kernel returns them, iptables-nft rules carry them in xt compat expressions
// or have them rebuilt from native expressions (as iptables-nft-save does).
#pragma once

#include <net/if.h>  // glibc before the uapi headers: libc-compat.h then leaves
#include <netinet/in.h>  // in_addr, ifreq to glibc (xtables.h includes both)

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dpscope::netfilter {

// The ip part of a rule, as iptables-save reads it (the first member of
// ipt_entry / ip6t_entry: what the extensions' save() get as `ip`).
union XtIpHeader {
  ipt_ip v4;
  ip6t_ip6 v6;
};

// Appends " -s ADDR/MASK -d ... -i IF -o IF -p PROTO -f" as iptables-save
// (save_ipv4_addr / save_ipv6_addr / save_rule_details) prints them.
void append_ip_header(std::string& out, int family, const XtIpHeader& ip);

// Appends " -m NAME OPTIONS" as print_match_save prints the match. False when
// libxtables is not available or has no extension for it (out unchanged).
bool append_match_text(std::string& out, int family, const xt_entry_match* match, const XtIpHeader& ip);

// The target of an extension: `name` = what follows "-j" (the extension's
// alias or its name), `options` = its save() output without the leading space.
// False when libxtables or the extension is not there.
bool target_text(int family, const xt_entry_target* target, const XtIpHeader& ip, std::string& name,
                 std::string& options);

// A match / target blob with its header, as the extensions expect it: the
// name, revision and size set, `data` copied after the header.
std::vector<uint8_t> xt_match_blob(std::string_view name, uint8_t revision, const void* data, size_t len);
std::vector<uint8_t> xt_target_blob(std::string_view name, uint8_t revision, const void* data, size_t len);

// "" when libxtables is usable, else why not (the rules then have no text).
std::string xtables_problem(int family);

}  // namespace dpscope::netfilter
