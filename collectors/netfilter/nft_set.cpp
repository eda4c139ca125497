#include "collectors/netfilter/nft_set.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

#include "collectors/netfilter/xt.h"

namespace dpscope::netfilter {

namespace {

// nftables src/datatype.h enum datatypes.
enum : uint32_t {
  kVerdict = 1, kNfproto = 2, kBitmask = 3, kInteger = 4, kString = 5, kLladdr = 6, kIpaddr = 7, kIp6addr = 8,
  kEtheraddr = 9, kEthertype = 10, kArpop = 11, kInetProtocol = 12, kInetService = 13, kIcmpType = 14,
  kTcpFlag = 15, kMark = 19, kIfindex = 20, kCtState = 26, kIfname = 41,
};
constexpr int kTypeBits = 6;

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string out = "0x";
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    out += b;
  }
  return out;
}

// Bytes a field of this datatype occupies (0 when not fixed/known).
size_t field_size(uint32_t type) {
  switch (type) {
    case kIpaddr: return 4;
    case kIp6addr: return 16;
    case kInetProtocol: return 1;
    case kInetService: return 2;
    case kEtheraddr: return 6;
    case kMark: return 4;
    case kIfindex: return 4;
    case kIfname: return 16;
    case kNfproto: return 1;
    case kEthertype: return 2;
    default: return 0;
  }
}

std::string render_field(uint32_t type, const uint8_t* p, size_t n) {
  char buf[INET6_ADDRSTRLEN];
  switch (type) {
    case kIpaddr:
      if (n >= 4) return inet_ntop(AF_INET, p, buf, sizeof buf);
      break;
    case kIp6addr:
      if (n >= 16) return inet_ntop(AF_INET6, p, buf, sizeof buf);
      break;
    case kInetProtocol:
      if (n >= 1) return protocol_name(p[0]);
      break;
    case kInetService:
      if (n >= 2) return std::to_string((p[0] << 8) | p[1]);
      break;
    case kInteger: {
      // nft's integer keys (numgen, mark-like values) are host-endian numbers.
      uint64_t v = 0;
      if (n == 1) v = p[0];
      else if (n == 2) { uint16_t x; std::memcpy(&x, p, 2); v = x; }
      else if (n == 4) { uint32_t x; std::memcpy(&x, p, 4); v = x; }
      else if (n == 8) std::memcpy(&v, p, 8);
      else break;
      return std::to_string(v);
    }
    case kMark: {
      if (n < 4) break;
      uint32_t v;
      std::memcpy(&v, p, 4);
      std::snprintf(buf, sizeof buf, "0x%08x", v);
      return buf;
    }
    case kIfname:
      return "\"" + std::string(reinterpret_cast<const char*>(p), strnlen(reinterpret_cast<const char*>(p), n)) + "\"";
    case kEtheraddr:
      if (n >= 6) {
        std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", p[0], p[1], p[2], p[3], p[4], p[5]);
        return buf;
      }
      break;
    default:
      break;
  }
  return hex_bytes(p, n);
}

}  // namespace

std::vector<uint32_t> split_key_type(uint32_t key_type) {
  std::vector<uint32_t> out;
  const uint32_t mask = (1u << kTypeBits) - 1;
  if (key_type <= mask) return {key_type};
  for (uint32_t t = key_type; t != 0; t >>= kTypeBits) out.insert(out.begin(), t & mask);
  return out;
}

std::string datatype_name(uint32_t type) {
  switch (type) {
    case kVerdict: return "verdict";
    case kNfproto: return "nf_proto";
    case kBitmask: return "bitmask";
    case kInteger: return "integer";
    case kString: return "string";
    case kLladdr: return "ll_addr";
    case kIpaddr: return "ipv4_addr";
    case kIp6addr: return "ipv6_addr";
    case kEtheraddr: return "ether_addr";
    case kEthertype: return "ether_type";
    case kArpop: return "arp_op";
    case kInetProtocol: return "inet_proto";
    case kInetService: return "inet_service";
    case kIcmpType: return "icmp_type";
    case kTcpFlag: return "tcp_flag";
    case kMark: return "mark";
    case kIfindex: return "iface_index";
    case kCtState: return "ct_state";
    case kIfname: return "ifname";
    default: return "type-" + std::to_string(type);
  }
}

std::string render_set_key(const uint8_t* data, size_t len, const std::vector<uint32_t>& types) {
  if (types.size() <= 1) {
    const uint32_t type = types.empty() ? 0 : types[0];
    const size_t size = type == kInteger ? len : field_size(type);
    if (size == 0 || size > len) return hex_bytes(data, len);
    return render_field(type, data, len);
  }
  std::string out;
  size_t off = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const size_t size = field_size(types[i]);
    const size_t padded = (size + 3) & ~size_t{3};
    if (size == 0 || off + size > len) return hex_bytes(data, len);
    if (i) out += " . ";
    out += render_field(types[i], data + off, size);
    off += padded;
  }
  return out;
}

std::string render_verdict(int32_t code, const std::string& chain) {
  switch (code) {
    case NF_ACCEPT: return "accept";
    case NF_DROP: return "drop";
    case NF_QUEUE: return "queue";
    case NFT_CONTINUE: return "continue";
    case NFT_BREAK: return "break";
    case NFT_RETURN: return "return";
    case NFT_JUMP: return "jump " + chain;
    case NFT_GOTO: return "goto " + chain;
    default: return "verdict-" + std::to_string(code);
  }
}

}  // namespace dpscope::netfilter
