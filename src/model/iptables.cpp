#include "model/iptables.h"

#include <algorithm>
#include <array>

namespace dpscope::model {

namespace {

struct Builtin {
  const char* table;
  const char* chain;
  const char* type;
  int32_t priority;
};

// iptables 1.8.9 nft.c builtin_table / NF_IP_PRI_* (identical for ip6).
constexpr std::array<Builtin, 17> kBuiltins = {{
    {"raw", "PREROUTING", "filter", -300},
    {"raw", "OUTPUT", "filter", -300},
    {"mangle", "PREROUTING", "filter", -150},
    {"mangle", "INPUT", "filter", -150},
    {"mangle", "FORWARD", "filter", -150},
    {"mangle", "OUTPUT", "route", -150},
    {"mangle", "POSTROUTING", "filter", -150},
    {"filter", "INPUT", "filter", 0},
    {"filter", "FORWARD", "filter", 0},
    {"filter", "OUTPUT", "filter", 0},
    {"nat", "PREROUTING", "nat", -100},
    {"nat", "INPUT", "nat", 100},
    {"nat", "OUTPUT", "nat", -100},
    {"nat", "POSTROUTING", "nat", 100},
    {"security", "INPUT", "filter", 50},
    {"security", "FORWARD", "filter", 50},
    {"security", "OUTPUT", "filter", 50},
}};

}  // namespace

bool is_iptables_table(const std::string& table) {
  return table == "filter" || table == "nat" || table == "mangle" || table == "raw" || table == "security";
}

std::string hook_of_chain_name(const std::string& chain) {
  if (chain == "PREROUTING") return "prerouting";
  if (chain == "INPUT") return "input";
  if (chain == "FORWARD") return "forward";
  if (chain == "OUTPUT") return "output";
  if (chain == "POSTROUTING") return "postrouting";
  return "";
}

std::optional<BaseChain> iptables_base_chain(const std::string& table, const std::string& chain,
                                             const std::string& policy) {
  for (const auto& b : kBuiltins) {
    if (table == b.table && chain == b.chain) {
      return BaseChain{hook_of_chain_name(chain), b.type, b.priority, policy};
    }
  }
  return std::nullopt;
}

std::vector<std::string> iptables_builtin_chains(const std::string& table) {
  std::vector<std::string> out;
  for (const auto& b : kBuiltins) {
    if (table == b.table) out.emplace_back(b.chain);
  }
  return out;
}

Backend classify_nft_table(const std::string& family, const std::string& table,
                           const std::vector<std::string>& base_chain_names) {
  if ((family != "ip" && family != "ip6") || !is_iptables_table(table)) return Backend::Nftables;
  const auto builtins = iptables_builtin_chains(table);
  for (const auto& name : base_chain_names) {
    if (std::find(builtins.begin(), builtins.end(), name) == builtins.end()) return Backend::Nftables;
  }
  return Backend::IptablesNft;
}

}  // namespace dpscope::model
