// What iptables means by its tables, shared by every collector so a live
// snapshot and an import of the same state agree: the built-in chains of each
// table with the nft hook/type/priority iptables-nft gives them (the same
// NF_IP_PRI_* values the legacy tables register), and how to tell a table that
// iptables-nft manages from a native nftables one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::model {

// The iptables tables: filter, nat, mangle, raw, security.
bool is_iptables_table(const std::string& table);

// Built-in chain `chain` of iptables table `table` (e.g. "nat", "PREROUTING"):
// hook "prerouting", type "nat", priority -100, and the given policy
// ("ACCEPT"/"DROP"). nullopt when `chain` is not built into `table`.
std::optional<BaseChain> iptables_base_chain(const std::string& table, const std::string& chain,
                                             const std::string& policy);

// The built-in chain names of `table`, in hook order ({} for an unknown table).
std::vector<std::string> iptables_builtin_chains(const std::string& table);

// Backend of a table found in the nftables ruleset: IptablesNft when it is an
// iptables table name in family ip/ip6 and every base chain carries an
// iptables built-in name for that table; otherwise Nftables.
Backend classify_nft_table(const std::string& family, const std::string& table,
                           const std::vector<std::string>& base_chain_names);

// "PREROUTING" -> "prerouting" etc. ("" when not a netfilter hook name).
std::string hook_of_chain_name(const std::string& chain);

}  // namespace dpscope::model
