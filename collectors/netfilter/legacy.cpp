#include "collectors/netfilter/legacy.h"
#include "collectors/netfilter/xt_save.h"  // first: its glibc headers must precede the uapi ones

#include <arpa/inet.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <cstdio>
#include <memory>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <stdexcept>

#include "collectors/netfilter/xt.h"
#include "model/iptables.h"
#include "util/error.h"
#include "util/fd.h"

namespace dpscope::netfilter {

namespace {

constexpr int kMaxSizeRetries = 10;
constexpr const char* kHookChains[5] = {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"};
constexpr const char* kLegacyPermissionHint = "reading iptables-legacy tables needs CAP_NET_ADMIN (and CAP_NET_RAW): run as root";

// The parts of ipt_entry / ip6t_entry the walk needs, family-independent.
struct Entry {
  size_t offset = 0;
  uint16_t target_offset = 0;
  uint16_t next_offset = 0;
  uint64_t packets = 0, bytes = 0;
  model::RuleMatch match;
  bool go_to = false;
  const uint8_t* base = nullptr;  // start of the entry
  size_t header = 0;              // sizeof(ipt_entry) / sizeof(ip6t_entry): first match
};

// ipt_entry has `ip`, ip6t_entry has `ipv6`: one accessor for the template.
const ipt_ip& ip_header(const ipt_entry& e) { return e.ip; }
const ip6t_ip6& ip_header(const ip6t_entry& e) { return e.ipv6; }

template <typename E>
Entry read_entry(int af, const uint8_t* blob, size_t off) {
  Entry e;
  const auto* raw = reinterpret_cast<const E*>(blob + off);
  e.offset = off;
  e.base = blob + off;
  e.header = sizeof(E);
  e.target_offset = raw->target_offset;
  e.next_offset = raw->next_offset;
  e.packets = raw->counters.pcnt;
  e.bytes = raw->counters.bcnt;
  const auto& ip = ip_header(*raw);
  const uint8_t inv = ip.invflags;
  auto prefix = [&](const void* addr, const void* mask, bool inverted) -> std::optional<model::Prefix> {
    const size_t alen = af == AF_INET6 ? 16 : 4;
    static const uint8_t zero[16] = {};
    if (!inverted && std::memcmp(addr, zero, alen) == 0 && std::memcmp(mask, zero, alen) == 0) return std::nullopt;
    return model::Prefix{cidr_text(af, static_cast<const uint8_t*>(addr), static_cast<const uint8_t*>(mask)),
                         inverted};
  };
  e.match.source = prefix(&ip.src, &ip.smsk, inv & IPT_INV_SRCIP);
  e.match.destination = prefix(&ip.dst, &ip.dmsk, inv & IPT_INV_DSTIP);
  if (ip.proto != 0) {
    e.match.protocol = protocol_name(static_cast<uint8_t>(ip.proto));
    e.match.protocol_negated = inv & XT_INV_PROTO;
  }
  e.go_to = ip.flags & (af == AF_INET6 ? IP6T_F_GOTO : IPT_F_GOTO);
  return e;
}

static_assert(IP6T_INV_SRCIP == IPT_INV_SRCIP && IP6T_INV_DSTIP == IPT_INV_DSTIP);

std::string_view target_name(const Entry& e) {
  const auto* t = reinterpret_cast<const xt_entry_target*>(e.base + e.target_offset);
  return std::string_view(t->u.user.name, strnlen(t->u.user.name, sizeof t->u.user.name));
}

}  // namespace

model::Table parse_legacy_table(int af, const LegacyTableInfo& info, const uint8_t* blob, size_t size,
                                model::RuleSpool* spool) {
  std::vector<Entry> entries;
  entries.reserve(info.num_entries);
  std::unordered_map<size_t, size_t> index_of;  // offset -> entry index
  index_of.reserve(info.num_entries);
  const size_t header = af == AF_INET6 ? sizeof(ip6t_entry) : sizeof(ipt_entry);
  for (size_t off = 0; off < size;) {
    if (off + header > size) throw std::runtime_error("entry header runs past the table");
    Entry e = af == AF_INET6 ? read_entry<ip6t_entry>(af, blob, off) : read_entry<ipt_entry>(af, blob, off);
    if (e.next_offset < header || off + e.next_offset > size || e.target_offset < header ||
        e.target_offset + sizeof(xt_entry_target) > e.next_offset) {
      throw std::runtime_error("entry at offset " + std::to_string(off) + " has bad offsets");
    }
    index_of[off] = entries.size();
    off += e.next_offset;
    entries.push_back(std::move(e));
  }

  model::Table table;
  table.backend = model::Backend::IptablesLegacy;
  table.family = af == AF_INET6 ? "ip6" : "ip";
  table.name = info.name;

  // Chain starts: built-in chains at hook_entry[h], user chains at an ERROR
  // entry naming them; the table ends with an ERROR entry named "ERROR".
  struct Start {
    size_t entry;       // first rule entry
    size_t chain;       // index into table.chains
    bool builtin;
  };
  std::vector<Start> starts;
  std::unordered_map<size_t, std::string> chain_at;  // jump offset -> chain name
  for (int h = 0; h < 5; ++h) {
    if (!(info.valid_hooks & (1u << h))) continue;
    auto it = index_of.find(info.hook_entry[h]);
    auto uf = index_of.find(info.underflow[h]);
    if (it == index_of.end() || uf == index_of.end()) throw std::runtime_error("hook entry not at an entry");
    model::Chain c;
    c.name = kHookChains[h];
    // The policy is the standard verdict of the underflow entry.
    const Entry& pol = entries[uf->second];
    int verdict = 0;
    std::memcpy(&verdict, pol.base + pol.target_offset + sizeof(xt_entry_target), sizeof verdict);
    const std::string policy = verdict == -NF_DROP - 1 ? "DROP" : "ACCEPT";
    c.base = model::iptables_base_chain(info.name, c.name, policy);
    if (!c.base) c.base = model::BaseChain{model::hook_of_chain_name(c.name), "", 0, policy};
    c.policy_counters = model::Counters{pol.packets, pol.bytes};
    starts.push_back({it->second, table.chains.size(), true});
    chain_at[info.hook_entry[h]] = c.name;
    table.chains.push_back(std::move(c));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (target_name(entries[i]) != XT_ERROR_TARGET) continue;
    const auto* t = reinterpret_cast<const xt_error_target*>(entries[i].base + entries[i].target_offset);
    const std::string name(t->errorname, strnlen(t->errorname, sizeof t->errorname));
    if (name == XT_ERROR_TARGET || i + 1 >= entries.size()) continue;  // the table's end marker
    model::Chain c;
    c.name = name;
    starts.push_back({i + 1, table.chains.size(), false});
    chain_at[entries[i + 1].offset] = name;  // libiptc jumps to the entry after the ERROR head
    table.chains.push_back(std::move(c));
  }

  // Which entries end a chain: the underflow (policy) of a built-in chain,
  // the RETURN tail of a user chain (the entry before the next ERROR head).
  std::vector<bool> chain_end(entries.size(), false);
  for (int h = 0; h < 5; ++h) {
    if (info.valid_hooks & (1u << h)) chain_end[index_of.at(info.underflow[h])] = true;
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (target_name(entries[i]) == XT_ERROR_TARGET) chain_end[i - 1] = true;
  }

  // Chains decode independently (each entry belongs to one chain): spread
  // them over a few threads, as the nf_tables side spreads its dumps.
  auto walk_chain = [&](const Start& s) {
    model::Chain& chain = table.chains[s.chain];
    for (size_t i = s.entry; i < entries.size() && !chain_end[i]; ++i) {
      Entry& e = entries[i];
      if (target_name(e) == XT_ERROR_TARGET) break;
      model::Rule rule;
      rule.position = static_cast<uint32_t>(chain.rules.size() + 1);
      rule.match = std::move(e.match);  // each entry belongs to one chain
      rule.counters = model::Counters{e.packets, e.bytes};
      bool decoded = true;
      // iptables-save's line, as print_rule4 / print_rule6 build it.
      XtIpHeader ip{};
      std::memcpy(&ip, e.base, af == AF_INET6 ? sizeof ip.v6 : sizeof ip.v4);  // `ip` / `ipv6` lead the entry
      std::string& text = rule.text;
      text = "-A " + chain.name;
      append_ip_header(text, af, ip);
      bool text_ok = true;
      for (size_t m = e.header; m < e.target_offset;) {
        const auto* em = reinterpret_cast<const xt_entry_match*>(e.base + m);
        if (em->u.match_size < sizeof(xt_entry_match) || m + em->u.match_size > e.target_offset) {
          throw std::runtime_error("match at offset " + std::to_string(e.offset + m) + " has a bad size");
        }
        const std::string name(em->u.user.name, strnlen(em->u.user.name, sizeof em->u.user.name));
        if (!decode_xt_match(name, em->u.user.revision, em->data, em->u.match_size - sizeof(xt_entry_match), af,
                             rule.match)) {
          decoded = false;
        }
        if (text_ok) text_ok = append_match_text(text, af, em, ip);
        m += em->u.match_size;
      }
      const auto* t = reinterpret_cast<const xt_entry_target*>(e.base + e.target_offset);
      const std::string_view tname = target_name(e);
      if (tname.empty()) {  // XT_STANDARD_TARGET
        int verdict = 0;
        std::memcpy(&verdict, t->data, sizeof verdict);
        if (verdict < 0) {
          rule.verdict_kind = "verdict";
          switch (-verdict - 1) {
            case NF_DROP: rule.target = "DROP"; break;
            case NF_ACCEPT: rule.target = "ACCEPT"; break;
            case NF_QUEUE: rule.target = "QUEUE"; break;
            case NF_REPEAT: rule.target = "RETURN"; break;  // XT_RETURN = -NF_REPEAT - 1
            default: rule.target = std::to_string(verdict); decoded = text_ok = false; break;
          }
        } else if (static_cast<size_t>(verdict) == e.offset + e.next_offset && !e.go_to) {
          rule.verdict_kind = "none";  // falls through: no -j
        } else {
          auto it = chain_at.find(static_cast<size_t>(verdict));
          rule.verdict_kind = e.go_to ? "goto" : "jump";
          if (it != chain_at.end()) {
            rule.target = it->second;
          } else {
            rule.target = "offset " + std::to_string(verdict);
            decoded = text_ok = false;
          }
        }
      } else {
        rule.verdict_kind = "target";
        rule.target = std::string(tname);
        std::string shown;
        if (text_ok && target_text(af, t, ip, shown, rule.target_args)) {
          text += " -j " + shown;
          if (!rule.target_args.empty()) text += " " + rule.target_args;
        } else {
          text_ok = false;
        }
      }
      if (!rule.target.empty() && rule.verdict_kind != "target") {
        text += (rule.verdict_kind == "goto" ? " -g " : " -j ") + rule.target;
      }
      if (!text_ok) text.clear();
      if (!decoded) {
        rule.undecoded = true;
        rule.raw = "legacy entry at offset " + std::to_string(e.offset);
      }
      chain.rules.push_back(std::move(rule));
    }
    chain.rule_count = chain.rules.size();
    if (spool && !chain.rules.empty()) {
      // false (a full /tmp): the rules simply stay in memory.
      spool->store(model::Backend::IptablesLegacy, table.family, table.name, chain.name, chain.rules);
    }
  };
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    try {
      for (size_t k = next++; k < starts.size(); k = next++) walk_chain(starts[k]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = starts.size();
    }
  };
  constexpr size_t kEntriesPerThread = 20000;  // below that a thread costs more than it saves
  const size_t wanted = std::min<size_t>({entries.size() / kEntriesPerThread + 1, 4,
                                          std::max(1u, std::thread::hardware_concurrency())});
  std::vector<std::thread> threads;
  for (size_t i = 1; i < wanted; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return table;
}

std::vector<std::string> legacy_table_names(int af) {
  // /proc/net follows the thread-group leader's namespace; thread-self follows ours.
  const char* path = af == AF_INET6 ? "/proc/thread-self/net/ip6_tables_names" : "/proc/thread-self/net/ip_tables_names";
  std::unique_ptr<FILE, decltype(&fclose)> in(fopen(path, "re"), fclose);
  if (!in) {
    // Absent: ip(6)_tables is not loaded, so there are no legacy tables. Unreadable is an error.
    if (errno == ENOENT) return {};
    throw SystemError(std::string("reading ") + path, errno, kLegacyPermissionHint);
  }
  std::vector<std::string> names;
  char line[64];
  while (fgets(line, sizeof line, in.get()) != nullptr) {
    std::string name(line);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

model::Table read_legacy_table(int af, const std::string& name, model::RuleSpool* spool) {
  UniqueFd fd(socket(af, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW));
  if (!fd) throw SystemError("socket(SOCK_RAW) for iptables-legacy", errno, kLegacyPermissionHint);
  const int level = af == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP;
  const int get_info = af == AF_INET6 ? IP6T_SO_GET_INFO : IPT_SO_GET_INFO;
  const int get_entries = af == AF_INET6 ? IP6T_SO_GET_ENTRIES : IPT_SO_GET_ENTRIES;
  static_assert(sizeof(ipt_getinfo) == sizeof(ip6t_getinfo) && sizeof(ipt_get_entries) == sizeof(ip6t_get_entries));
  for (int attempt = 0; attempt < kMaxSizeRetries; ++attempt) {
    ipt_getinfo gi{};
    std::strncpy(gi.name, name.c_str(), sizeof gi.name - 1);
    socklen_t len = sizeof gi;
    if (getsockopt(fd.get(), level, get_info, &gi, &len) < 0) {
      throw SystemError("IPT_SO_GET_INFO " + name, errno, errno == EPERM ? kLegacyPermissionHint : "");
    }
    std::vector<uint8_t> buf(sizeof(ipt_get_entries) + gi.size);
    auto* ge = reinterpret_cast<ipt_get_entries*>(buf.data());
    std::strncpy(ge->name, name.c_str(), sizeof ge->name - 1);
    ge->size = gi.size;
    len = static_cast<socklen_t>(buf.size());
    if (getsockopt(fd.get(), level, get_entries, ge, &len) < 0) {
      if (errno == EAGAIN) continue;  // the table changed size between the two calls (libiptc retries too)
      throw SystemError("IPT_SO_GET_ENTRIES " + name, errno, errno == EPERM ? kLegacyPermissionHint : "");
    }
    LegacyTableInfo info;
    info.name = name;
    info.valid_hooks = gi.valid_hooks;
    for (int h = 0; h < 5; ++h) {
      info.hook_entry[h] = gi.hook_entry[h];
      info.underflow[h] = gi.underflow[h];
    }
    info.num_entries = gi.num_entries;
    info.size = gi.size;
    try {
      return parse_legacy_table(af, info, buf.data() + sizeof(ipt_get_entries), gi.size, spool);
    } catch (const std::runtime_error& e) {
      throw SystemError("iptables-legacy table " + name + ": " + e.what(), EPROTO);
    }
  }
  throw SystemError("iptables-legacy table " + name + " kept changing size", EAGAIN);
}

}  // namespace dpscope::netfilter
