// Legacy iptables (x_tables) read through the kernel's own getsockopt
// interface, IPT_SO_GET_INFO / IPT_SO_GET_ENTRIES and the IP6T_ twins, as
// libiptc does, without running iptables-legacy-save.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "model/snapshot_writer.h"

namespace dpscope::netfilter {

// What IPT_SO_GET_INFO returns, independent of the address family.
struct LegacyTableInfo {
  std::string name;
  uint32_t valid_hooks = 0;
  uint32_t hook_entry[5] = {};
  uint32_t underflow[5] = {};
  uint32_t num_entries = 0;
  uint32_t size = 0;
};

// Walks the entry blob of one table (the bytes after struct ipt_get_entries /
// ip6t_get_entries) into chains and rules. `af` is AF_INET or AF_INET6.
// Throws std::runtime_error when the blob is malformed.
// With a spool, each chain's rules go there as soon as decoded (rule_count set).
model::Table parse_legacy_table(int af, const LegacyTableInfo& info, const uint8_t* entries, size_t size,
                                model::RuleSpool* spool = nullptr);

// Tables listed in /proc/thread-self/net/ip_tables_names (ip6_tables_names):
// only those, since asking for another one can autoload its module.
std::vector<std::string> legacy_table_names(int af);

// Reads one table of the calling thread's network namespace. Throws SystemError.
model::Table read_legacy_table(int af, const std::string& name, model::RuleSpool* spool = nullptr);

}  // namespace dpscope::netfilter
