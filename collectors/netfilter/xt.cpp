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

#include <bit>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

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

}  // namespace

namespace {

std::string lookup_protocol_name(uint8_t proto) {
  // xshared.c proto_to_name: the services database first (what iptables-save
  // prints: "mobility-header" for 135), then libxtables' xtables_chain_protos.
  struct protoent ent;
  struct protoent* res = nullptr;
  char buf[1024];
  if (proto != 0 && getprotobynumber_r(proto, &ent, buf, sizeof buf, &res) == 0 && res != nullptr) return res->p_name;
  switch (proto) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_SCTP: return "sctp";
    case IPPROTO_UDPLITE: return "udplite";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "ipv6-icmp";
    case IPPROTO_ESP: return "esp";
    case IPPROTO_AH: return "ah";
    case IPPROTO_MH: return "ipv6-mh";
    default: break;
  }
  return std::to_string(proto);
}

}  // namespace

std::string protocol_name(uint8_t proto) {
  // getprotobynumber_r reads /etc/protocols on every call: once per number, not once per rule.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v(256);
    for (int p = 0; p < 256; ++p) v[p] = lookup_protocol_name(static_cast<uint8_t>(p));
    return v;
  }();
  return names[proto];
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

}  // namespace dpscope::netfilter
