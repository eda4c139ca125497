#include "collectors/netfilter/xt.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_conntrack.h>
#define _Bool bool  // xt_sctp.h's inline helpers are C
#include <linux/netfilter/xt_sctp.h>
#undef _Bool
#include <linux/netfilter/xt_tcpudp.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>

namespace dpscope::netfilter {

namespace {

// Layouts from linux/netfilter/xt_*.h (uapi), read with memcpy so no
// alignment is assumed of the blob.
constexpr size_t kTcpSize = 12;      // struct xt_tcp: u16 spts[2], dpts[2]; u8 option, flg_mask, flg_cmp, invflags
constexpr uint8_t kTcpInvDstPort = 0x02;
constexpr size_t kUdpSize = 10;      // struct xt_udp: u16 spts[2], dpts[2]; u8 invflags
constexpr uint8_t kUdpInvDstPort = 0x02;
constexpr size_t kSctpDportOffset = 0;  // struct xt_sctp_info: u16 dpts[2]; u16 spts[2]; ... u32 flags; u32 invflags
constexpr size_t kSctpFlagsOffset = offsetof(xt_sctp_info, flags);
constexpr uint32_t kSctpDestPorts = 0x02;
constexpr size_t kCommentSize = 256;
constexpr size_t kConntrackFlagsOffset = offsetof(xt_conntrack_mtinfo1, match_flags);
static_assert(offsetof(xt_conntrack_mtinfo3, match_flags) == kConntrackFlagsOffset);
static_assert(sizeof(xt_tcp) == 12 && sizeof(xt_udp) == 10 && sizeof(xt_comment_info) == 256);
constexpr uint16_t kConntrackStateAlias = 1 << 13;
constexpr int kMultiportMax = 15;

uint16_t get_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string port_range(uint16_t lo, uint16_t hi) {
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + ":" + std::to_string(hi);
}

std::string addr_text(int family, const uint8_t* addr) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(family, addr, buf, sizeof buf);
  return buf;
}

// Matches whose kernel name differs from the -m name iptables-save prints.
std::string module_name(std::string_view name, uint8_t revision, const uint8_t* data, size_t len) {
  if (name == "conntrack" && revision >= 1 && len >= kConntrackFlagsOffset + 2) {
    if (get_u16(data + kConntrackFlagsOffset) & kConntrackStateAlias) return "state";
  }
  return std::string(name);
}

bool decode_multiport(uint8_t revision, const uint8_t* data, size_t len, model::RuleMatch& m) {
  // struct xt_multiport { u8 flags, count; u16 ports[15]; }  (rev 0)
  // struct xt_multiport_v1 { u8 flags, count; u16 ports[15]; u8 pflags[15]; u8 invert; }
  constexpr size_t kV0 = 2 + 2 * kMultiportMax;
  constexpr size_t kV1 = kV0 + kMultiportMax + 1;
  if (len < (revision >= 1 ? kV1 : kV0)) return false;
  const uint8_t flags = data[0];
  const uint8_t count = data[1];
  if (count > kMultiportMax) return false;
  if (flags != 1) return true;  // XT_MULTIPORT_DESTINATION only: --sports / --ports carry no dport
  std::string ports;
  for (int i = 0; i < count; ++i) {
    const uint16_t port = get_u16(data + 2 + 2 * i);
    if (!ports.empty()) ports += ',';
    ports += std::to_string(port);
    if (revision >= 1 && data[kV0 + i] && i + 1 < count) {
      ports += ':' + std::to_string(get_u16(data + 2 + 2 * (i + 1)));
      ++i;
    }
  }
  const bool inverted = revision >= 1 && data[kV0 + kMultiportMax];
  m.dport = ports;
  m.dport_negated = inverted;
  return true;
}

// struct nf_nat_range2 in host form, filled from any of the NAT blob revisions.
struct NatRange {
  uint32_t flags = 0;
  std::array<uint8_t, 16> min_addr{};
  std::array<uint8_t, 16> max_addr{};
  uint16_t min_port = 0;  // host order
  uint16_t max_port = 0;
  uint16_t base_port = 0;
};
constexpr uint32_t kNatMapIps = 1, kNatProtoSpecified = 2, kNatRandom = 4, kNatPersistent = 8,
                   kNatRandomFully = 16, kNatProtoOffset = 32;

// rev 0 (IPv4 only): nf_nat_ipv4_multi_range_compat { u32 rangesize; { u32 flags; be32 min_ip, max_ip; be16 min, max; } }
// rev 1: nf_nat_range { u32 flags; inet_addr min, max; be16 min_proto, max_proto }, rev 2 adds be16 base_proto.
bool read_nat_range(uint8_t revision, int family, const uint8_t* data, size_t len, NatRange& r) {
  if (revision == 0 && family == AF_INET) {
    if (len < 20 || get_u32(data) != 1) return false;
    r.flags = get_u32(data + 4);
    std::memcpy(r.min_addr.data(), data + 8, 4);
    std::memcpy(r.max_addr.data(), data + 12, 4);
    r.min_port = ntohs(get_u16(data + 16));
    r.max_port = ntohs(get_u16(data + 18));
    return true;
  }
  if (len < 40) return false;
  r.flags = get_u32(data);
  std::memcpy(r.min_addr.data(), data + 4, 16);
  std::memcpy(r.max_addr.data(), data + 20, 16);
  r.min_port = ntohs(get_u16(data + 36));
  r.max_port = ntohs(get_u16(data + 38));
  if (revision >= 2 && len >= 42) r.base_port = ntohs(get_u16(data + 40));
  return true;
}

// libxt_NAT.c sprint_range + __NAT_save.
std::string nat_args(const char* option, const NatRange& r, int family) {
  std::string range;
  const bool brackets = family == AF_INET6 && (r.flags & kNatProtoSpecified);
  const size_t alen = family == AF_INET6 ? 16 : 4;
  if (r.flags & kNatMapIps) {
    if (brackets) range += '[';
    range += addr_text(family, r.min_addr.data());
    if (std::memcmp(r.min_addr.data(), r.max_addr.data(), alen) != 0) {
      range += '-' + addr_text(family, r.max_addr.data());
    }
    if (brackets) range += ']';
  }
  if (r.flags & kNatProtoSpecified) {
    range += ':' + std::to_string(r.min_port);
    if (r.max_port != r.min_port) range += '-' + std::to_string(r.max_port);
    if (r.flags & kNatProtoOffset) range += '/' + std::to_string(r.base_port);
  }
  std::string out;
  if (!range.empty()) out = std::string("--") + option + " " + range;
  auto add = [&out](const char* s) {
    if (!out.empty()) out += ' ';
    out += s;
  };
  if (r.flags & kNatRandom) add("--random");
  if (r.flags & kNatPersistent) add("--persistent");
  if (r.flags & kNatRandomFully) add("--random-fully");
  return out;
}

// libxt_MASQUERADE.c / libxt_REDIRECT.c save.
std::string ports_args(const NatRange& r, bool random_fully_allowed) {
  std::string out;
  if (r.flags & kNatProtoSpecified) {
    out = "--to-ports " + std::to_string(r.min_port);
    if (r.max_port != r.min_port) out += '-' + std::to_string(r.max_port);
  }
  auto add = [&out](const char* s) {
    if (!out.empty()) out += ' ';
    out += s;
  };
  if (r.flags & kNatRandom) add("--random");
  if (random_fully_allowed && (r.flags & kNatRandomFully)) add("--random-fully");
  return out;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string reject_args(int family, const uint8_t* data, size_t len) {
  if (len < 4) return "";
  const uint32_t with = get_u32(data);
  // libipt_REJECT.c / libip6t_REJECT.c reject_table, indexed by enum ipt/ip6t_reject_with.
  static constexpr std::array<const char*, 9> kV4 = {
      "icmp-net-unreachable",  "icmp-host-unreachable", "icmp-proto-unreachable",
      "icmp-port-unreachable", nullptr /* echo-reply */, "icmp-net-prohibited",
      "icmp-host-prohibited",  "tcp-reset",             "icmp-admin-prohibited"};
  static constexpr std::array<const char*, 9> kV6 = {
      "icmp6-no-route",         "icmp6-adm-prohibited", "icmp6-not-neighbor",
      "icmp6-addr-unreachable", "icmp6-port-unreachable", nullptr /* echo-reply */,
      "tcp-reset",              "icmp6-policy-fail",    "icmp6-reject-route"};
  const auto& table = family == AF_INET6 ? kV6 : kV4;
  if (with >= table.size() || table[with] == nullptr) return "";
  return std::string("--reject-with ") + table[with];
}

std::string log_args(const uint8_t* data, size_t len) {
  // struct xt_log_info { u8 level; u8 logflags; char prefix[30]; }
  if (len < 32) return "";
  std::string out;
  const char* prefix = reinterpret_cast<const char*>(data + 2);
  const std::string p(prefix, strnlen(prefix, 30));
  if (!p.empty()) out += "--log-prefix" + xtables_save_string(p);
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += ' ';
    out += s;
  };
  if (data[0] != 4) add("--log-level " + std::to_string(data[0]));
  const uint8_t f = data[1];
  if (f & 0x01) add("--log-tcp-sequence");
  if (f & 0x02) add("--log-tcp-options");
  if (f & 0x04) add("--log-ip-options");
  if (f & 0x08) add("--log-uid");
  if (f & 0x20) add("--log-macdecode");
  return out;
}

}  // namespace

std::string xtables_save_string(std::string_view value) {
  static constexpr std::string_view kNoQuote =
      "_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const size_t bare = value.find_first_not_of(kNoQuote);
  if (!value.empty() && bare == std::string_view::npos) return " " + std::string(value);
  std::string out = " \"";
  for (char c : value) {
    if (c == '"' || c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string protocol_name(uint8_t proto) {
  // libxtables xtables_chain_protos first (what iptables-save prints), then /etc/protocols.
  switch (proto) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_SCTP: return "sctp";
    case IPPROTO_UDPLITE: return "udplite";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "ipv6-icmp";
    case IPPROTO_ESP: return "esp";
    case IPPROTO_AH: return "ah";
    case IPPROTO_MH: return "mh";
    default: break;
  }
  struct protoent ent;
  struct protoent* res = nullptr;
  char buf[1024];
  if (getprotobynumber_r(proto, &ent, buf, sizeof buf, &res) == 0 && res != nullptr) return res->p_name;
  return std::to_string(proto);
}

std::string cidr_text(int family, const uint8_t* addr, const uint8_t* mask) {
  const size_t alen = family == AF_INET6 ? 16 : 4;
  int bits = 0;
  bool contiguous = true;
  bool seen_zero = false;
  for (size_t i = 0; i < alen; ++i) {
    for (int b = 7; b >= 0; --b) {
      const bool set = mask[i] & (1u << b);
      if (set && seen_zero) contiguous = false;
      if (set) ++bits;
      else seen_zero = true;
    }
  }
  if (!contiguous) return addr_text(family, addr) + "/" + addr_text(family, mask);
  return addr_text(family, addr) + "/" + std::to_string(bits);
}

bool decode_xt_match(std::string_view name, uint8_t revision, const uint8_t* data, size_t len, int family,
                     model::RuleMatch& m) {
  m.modules.push_back(module_name(name, revision, data, len));
  if (name == "comment") {
    if (len < kCommentSize) return false;
    const char* text = reinterpret_cast<const char*>(data);
    m.comment.assign(text, strnlen(text, kCommentSize));
    return true;
  }
  if (name == "tcp" || name == "udp") {
    const bool tcp = name == "tcp";
    if (len < (tcp ? kTcpSize : kUdpSize)) return false;
    const uint16_t lo = get_u16(data + 4), hi = get_u16(data + 6);
    const uint8_t inv = tcp ? data[11] : data[8];
    if (lo != 0 || hi != 0xFFFF) {
      m.dport = port_range(lo, hi);
      m.dport_negated = inv & (tcp ? kTcpInvDstPort : kUdpInvDstPort);
    }
    return true;
  }
  if (name == "sctp") {
    if (len < kSctpFlagsOffset + 8) return false;
    if (get_u32(data + kSctpFlagsOffset) & kSctpDestPorts) {
      m.dport = port_range(get_u16(data + kSctpDportOffset), get_u16(data + kSctpDportOffset + 2));
      m.dport_negated = get_u32(data + kSctpFlagsOffset + 4) & kSctpDestPorts;
    }
    return true;
  }
  if (name == "multiport") return decode_multiport(revision, data, len, m);
  (void)family;
  return true;
}

bool xt_target_args_decoded(std::string_view name) {
  return name == "DNAT" || name == "SNAT" || name == "MASQUERADE" || name == "REDIRECT" || name == "MARK" ||
         name == "REJECT" || name == "LOG" || name == "CONNMARK";
}

void decode_xt_target(std::string_view name, uint8_t revision, const uint8_t* data, size_t len, int family,
                      model::Rule& rule) {
  rule.verdict_kind = "target";
  rule.target = std::string(name);
  rule.target_args.clear();
  NatRange range;
  if (name == "DNAT" || name == "SNAT") {
    if (read_nat_range(revision, family, data, len, range)) {
      rule.target_args = nat_args(name == "DNAT" ? "to-destination" : "to-source", range, family);
    }
  } else if (name == "MASQUERADE" || name == "REDIRECT") {
    if (read_nat_range(family == AF_INET ? 0 : 1, family, data, len, range)) {
      rule.target_args = ports_args(range, name == "MASQUERADE");
    }
  } else if (name == "MARK") {
    if (revision == 2 && len >= 8) {
      rule.target_args = "--set-xmark " + hex(get_u32(data)) + "/" + hex(get_u32(data + 4));
    }
  } else if (name == "CONNMARK") {
    // struct xt_connmark_tginfo1 { u32 ctmark, ctmask, nfmask; u8 mode; }
    if (revision == 1 && len >= 13) {
      const uint32_t ctmark = get_u32(data), ctmask = get_u32(data + 4), nfmask = get_u32(data + 8);
      switch (data[12]) {
        case 0: rule.target_args = "--set-xmark " + hex(ctmark) + "/" + hex(ctmask); break;
        case 1: rule.target_args = "--save-mark --nfmask " + hex(nfmask) + " --ctmask " + hex(ctmask); break;
        case 2: rule.target_args = "--restore-mark --nfmask " + hex(nfmask) + " --ctmask " + hex(ctmask); break;
        default: break;
      }
    }
  } else if (name == "REJECT") {
    rule.target_args = reject_args(family, data, len);
  } else if (name == "LOG") {
    rule.target_args = log_args(data, len);
  }
}

}  // namespace dpscope::netfilter
