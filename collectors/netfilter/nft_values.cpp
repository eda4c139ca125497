#include "collectors/netfilter/nft_values.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

namespace dpscope::netfilter::nftval {

using nlohmann::json;


uint64_t integer(std::string_view b, Order order) {
  uint64_t v = 0;
  if (order == Order::Big || b.size() > 8) {
    if (b.size() > 8) unknown("an integer wider than 64 bits");
    for (unsigned char c : b) v = (v << 8) | c;
    return v;
  }
  switch (b.size()) {
    case 1: return static_cast<uint8_t>(b[0]);
    case 2: { uint16_t x; std::memcpy(&x, b.data(), 2); return x; }
    case 4: { uint32_t x; std::memcpy(&x, b.data(), 4); return x; }
    case 8: std::memcpy(&v, b.data(), 8); return v;
    default: unknown("a host-endian integer of " + std::to_string(b.size()) + " bytes");
  }
}

namespace {

std::string protocol_name(uint8_t p) {
  // nft prints a protocol by getprotobynumber(3) (datatype.c inet_protocol_type_print): read once.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v(256);
    for (int i = 0; i < 256; ++i) {
      struct protoent ent, *res = nullptr;
      char buf[1024];
      if (getprotobynumber_r(i, &ent, buf, sizeof buf, &res) == 0 && res != nullptr) v[i] = res->p_name;
    }
    return v;
  }();
  return names[p];
}

// A bitmask value as nft -j prints it: one name, or the names in bit order.
json flags(uint64_t v, const std::vector<std::pair<uint64_t, const char*>>& names) {
  json out = json::array();
  for (const auto& [bit, name] : names) {
    if (v & bit) {
      out.push_back(name);
      v &= ~bit;
    }
  }
  if (v != 0 || out.empty()) unknown("a flag value nft names by number");
  return out.size() == 1 ? out[0] : out;
}

}  // namespace

json symbol(uint64_t v, const std::vector<std::pair<uint64_t, const char*>>& names, bool number_otherwise) {
  for (const auto& [n, name] : names) {
    if (n == v) return name;
  }
  if (number_otherwise) return v;
  unknown("a value without a name (" + std::to_string(v) + ")");
}

namespace {

json address(int af, std::string_view b) {
  char buf[INET6_ADDRSTRLEN] = {};
  const size_t want = af == AF_INET ? 4 : 16;
  if (b.size() != want || inet_ntop(af, b.data(), buf, sizeof buf) == nullptr) unknown("an address of a wrong size");
  return std::string(buf);
}

// json.c integer_type_json: a number when it fits 64 bits, else "0x" and
// its hex digits (gmp's mpz_get_str: no leading zeros).
json wide_integer(std::string_view b) {
  const size_t first = b.find_first_not_of('\0');
  if (first == std::string_view::npos || b.size() - first <= 8) {
    return first == std::string_view::npos ? 0 : integer(b.substr(first), Order::Big);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (size_t i = first; i < b.size(); ++i) {
    const auto c = static_cast<unsigned char>(b[i]);
    if (i != first || c >> 4) out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace

json value(uint32_t type, Order order, std::string_view b) {
  switch (type) {
    case kIpaddr: return address(AF_INET, b);
    case kIp6addr: return address(AF_INET6, b);
    case kInetService: return integer(b, Order::Big);
    case kInteger: return order == Order::Big && b.size() > 8 ? wide_integer(b) : json(integer(b, order));
    case kMark: return integer(b, Order::Host);
    case kInetProto: {
      if (b.size() != 1) unknown("a protocol of a wrong size");
      const std::string name = protocol_name(static_cast<uint8_t>(b[0]));
      if (name.empty()) return static_cast<uint8_t>(b[0]);
      return name;
    }
    case kNfproto: return symbol(integer(b, Order::Host), {{NFPROTO_IPV4, "ipv4"}, {NFPROTO_IPV6, "ipv6"}});
    case kEthertype:
      // proto.c ethertype_tbl: 0x8100's first name is "8021q" ("vlan" is its alias).
      return symbol(integer(b, Order::Big), {{0x0800, "ip"}, {0x0806, "arp"}, {0x86dd, "ip6"}, {0x8100, "8021q"},
                                              {0x88a8, "8021ad"}});
    case kIfname:
    case kString: {
      // netlink_delinearize.c __expr_postprocess_string: a name whose last
      // byte is no NUL is compared short of it, a prefix: "eth*"; else the
      // name up to its NUL, a literal '*' at its end escaped ("dummy\*":
      // printed by the caller that knows it is a rule's constant).
      if (b.empty() || b.back() != '\0') {
        if (b.find('\0') != std::string_view::npos) unknown("a name prefix with a NUL inside");
        return std::string(b) + "*";
      }
      const std::string name(b.substr(0, b.find('\0')));
      if (!name.empty() && name.back() == '*') unknown("a name ending in a literal *");
      return name;
    }
    case kIfindex: {
      // nft names the interface as the namespace has it now (datatype.c ifindex_type_print).
      const uint64_t index = integer(b, Order::Host);
      char name[IF_NAMESIZE] = {};
      if (index != 0 && if_indextoname(static_cast<unsigned>(index), name) != nullptr) return std::string(name);
      return index;
    }
    case kClassid: {
      // A tc handle (meta.c tchandle_type_print): "root", "none" or major:minor in hex.
      if (b.size() != 4) unknown("a tc handle of a wrong size");
      const uint64_t h = integer(b, Order::Host);
      if (h == 0xffffffff) return "root";
      if (h == 0) return "none";
      char buf[24];
      std::snprintf(buf, sizeof buf, "%x:%x", static_cast<unsigned>(h >> 16), static_cast<unsigned>(h & 0xffff));
      return std::string(buf);
    }
    case kArphrd:
      return symbol(integer(b, Order::Host), {{1, "ether"}, {512, "ppp"}, {768, "ipip"}, {769, "ipip6"},
                                              {772, "loopback"}, {776, "sit"}, {778, "ipgre"}});
    case kEtheraddr: {
      if (b.size() != 6) unknown("an ether address of a wrong size");
      char buf[18];
      const auto* p = reinterpret_cast<const uint8_t*>(b.data());
      std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", p[0], p[1], p[2], p[3], p[4], p[5]);
      return std::string(buf);
    }
    case kCtState:
      return flags(integer(b, Order::Host),
                   {{1, "invalid"}, {2, "established"}, {4, "related"}, {8, "new"}, {64, "untracked"}});
    case kCtStatus:
      return flags(integer(b, Order::Host), {{1, "expected"}, {2, "seen-reply"}, {4, "assured"}, {8, "confirmed"},
                                             {16, "snat"}, {32, "dnat"}, {512, "dying"}});
    case kCtDir: return symbol(integer(b, Order::Host), {{0, "original"}, {1, "reply"}});
    case kTcpFlag:
      return flags(integer(b, Order::Big), {{1, "fin"}, {2, "syn"}, {4, "rst"}, {8, "psh"}, {16, "ack"}, {32, "urg"},
                                            {64, "ecn"}, {128, "cwr"}});
    case kFibAddr:
      return symbol(integer(b, Order::Host), {{0, "unspec"}, {1, "unicast"}, {2, "local"}, {3, "broadcast"},
                                              {4, "anycast"}, {5, "multicast"}, {6, "blackhole"}, {7, "unreachable"},
                                              {8, "prohibit"}});
    // proto.c dscp_type_tbl, ecn_type_tbl: the first name of a value, else
    // a number (printed in hex: their basefmt).
    case kDscp:
      return symbol(integer(b, Order::Big),
                    {{0x00, "cs0"}, {0x08, "cs1"}, {0x10, "cs2"}, {0x18, "cs3"}, {0x20, "cs4"}, {0x28, "cs5"},
                     {0x30, "cs6"}, {0x38, "cs7"}, {0x01, "lephb"}, {0x0a, "af11"}, {0x0c, "af12"}, {0x0e, "af13"},
                     {0x12, "af21"}, {0x14, "af22"}, {0x16, "af23"}, {0x1a, "af31"}, {0x1c, "af32"}, {0x1e, "af33"},
                     {0x22, "af41"}, {0x24, "af42"}, {0x26, "af43"}, {0x2c, "va"}, {0x2e, "ef"}},
                    true);
    case kEcn: return symbol(integer(b, Order::Big), {{0, "not-ect"}, {1, "ect1"}, {2, "ect0"}, {3, "ce"}}, true);
    case kBoolean: {  // datatype.c boolean_type: json.c prints it as a JSON boolean
      const uint64_t v = integer(b, Order::Host);
      if (b.size() != 1 || v > 1) unknown("a boolean of another value");
      return v == 1;
    }
    case kPkttype:
      return symbol(integer(b, Order::Host), {{0, "host"}, {1, "broadcast"}, {2, "multicast"}, {3, "other"}});
    case kIcmpType:
      return symbol(integer(b, Order::Big),
                    {{0, "echo-reply"}, {3, "destination-unreachable"}, {4, "source-quench"}, {5, "redirect"},
                     {8, "echo-request"}, {9, "router-advertisement"}, {10, "router-solicitation"},
                     {11, "time-exceeded"}, {12, "parameter-problem"}, {13, "timestamp-request"},
                     {14, "timestamp-reply"}, {15, "info-request"}, {16, "info-reply"}, {17, "address-mask-request"},
                     {18, "address-mask-reply"}},
                    true);
    case kIcmp6Type:
      return symbol(integer(b, Order::Big),
                    {{1, "destination-unreachable"}, {2, "packet-too-big"}, {3, "time-exceeded"},
                     {4, "parameter-problem"}, {128, "echo-request"}, {129, "echo-reply"},
                     {130, "mld-listener-query"}, {131, "mld-listener-report"}, {132, "mld-listener-done"},
                     {133, "nd-router-solicit"}, {134, "nd-router-advert"}, {135, "nd-neighbor-solicit"},
                     {136, "nd-neighbor-advert"}, {137, "nd-redirect"}, {138, "router-renumbering"},
                     {141, "ind-neighbor-solicit"}, {142, "ind-neighbor-advert"}, {143, "mld2-listener-report"}},
                    true);
    default: unknown("a value of datatype " + std::to_string(type));
  }
}

json verdict(int32_t code, const std::string& chain) {
  switch (code) {
    case NF_ACCEPT: return {{"accept", nullptr}};
    case NF_DROP: return {{"drop", nullptr}};
    case NFT_CONTINUE: return {{"continue", nullptr}};
    case NFT_RETURN: return {{"return", nullptr}};
    case NFT_JUMP: return {{"jump", {{"target", chain}}}};
    case NFT_GOTO: return {{"goto", {{"target", chain}}}};
    default: unknown("verdict " + std::to_string(code));
  }
}

}  // namespace dpscope::netfilter::nftval
