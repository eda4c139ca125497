#include "collectors/netfilter/nft_native.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <span>
#include <cstdio>

#include "decoders/nft_json_text.h"
#include "collectors/netfilter/nft_dump.h"
#include "collectors/netfilter/nft_values.h"
#include "collectors/netfilter/nl_attr.h"

namespace dpscope::netfilter {

namespace {

using nlohmann::json;
using namespace nla;     // NOLINT: the attribute helpers of this directory
using namespace nftval;  // NOLINT: nft datatypes and how their values print

// A concatenation's datatype id: its fields' ids, 6 bits each (datatype.c concat_subtype_id).
constexpr uint32_t kNatConcat4 = kIpaddr << 6 | kInetService, kNatConcat6 = kIp6addr << 6 | kInetService;

// What a register holds: an expression loaded from the packet or its
// metadata (with how its values print), or a literal value.
struct Value {
  enum Kind : uint8_t { kNone, kExpr, kLiteral } kind = kNone;
  json expr;                 // kExpr: as nft -j prints it
  uint32_t type = kInvalid;  // datatype of the expression's values
  Order order = Order::Big;
  uint32_t len = 0;          // bytes
  std::string bytes;         // kLiteral
  // A packet field loaded short of its width (an address prefix of whole bytes).
  uint32_t field_len = 0;
  // A bitwise AND on the expression with no xor: a prefix on an address, a
  // flag test on a bitmask type.
  std::string mask;
  json masked;               // the expression before the AND
  int dependency = -1;       // statement whose protocol gave this field its name
  // One load of adjacent fields, as nft merges `udp sport 1 udp dport 2`
  // into one 4-byte compare: nft prints a match per field again.
  std::vector<const struct Field*> fields;
  // A load of the bytes that hold a bit field, waiting for the AND that
  // picks the field's bits out (then `bits` is cleared and `expr` named).
  const struct BitField* bits = nullptr;
  uint32_t shift = 0;        // a bit field's lowest bit: its values are stored shifted
  // A host-endian value turned to network order (byteorder hton), as nft
  // does for a key of a set: the expression prints as itself.
  bool swapped = false;
  // A map expression: its map's values are intervals of this many bytes
  // (nat's `snat ip to ip saddr map { 10.1.1.0/24 : 72.2.3.66-72.2.3.78 }`).
  uint32_t interval_data_len = 0;
  // A map expression: the dependencies its key's fields would drop, dropped
  // where the statement it is part of is read (a nat's port: none).
  std::vector<int> map_deps;
  bool from_payload = false;  // a packet field's load (payload.c payload_dependency_kill)
  // A payload load as nft reads it back first (payload.c payload_init_raw:
  // base, bit offset and length), before a template names it; len 0 once
  // the value is computed from the load. nft leaves it raw ("@nh,32,32")
  // where no template of the header's protocol matches: `complete` for a
  // set key or an order compare (payload_expr_complete: a template of the
  // same offset and length), `expand` for == or != a value
  // (payload_expr_expand: a template at its offset).
  struct Raw {
    uint32_t base = 0, offset = 0, len = 0;  // NFT_PAYLOAD_*_HEADER; bits
    bool complete = false, expand = false;
    const char* protocol = nullptr;  // the header's, as raw_load had it
  } raw;
  bool raw_only = false;  // no template names the load: it prints only raw
  std::string raw_why;    // what it is, for the reason when it is refused
};

// ------------------------------------------------------------------ packet fields

struct Field {
  const char* protocol;
  uint32_t offset, len;  // bytes
  const char* name;
  uint32_t type;
  bool address = false;
};

// Whole-byte fields of the headers nft names (src/proto.c); bit fields are not here.
constexpr Field kFields[] = {
    {"ip", 2, 2, "length", kInteger}, {"ip", 4, 2, "id", kInteger}, {"ip", 6, 2, "frag-off", kInteger},
    {"ip", 8, 1, "ttl", kInteger},
    {"ip", 9, 1, "protocol", kInetProto}, {"ip", 10, 2, "checksum", kInteger},
    {"ip", 12, 4, "saddr", kIpaddr, true}, {"ip", 16, 4, "daddr", kIpaddr, true},
    {"ip6", 4, 2, "length", kInteger}, {"ip6", 6, 1, "nexthdr", kInetProto}, {"ip6", 7, 1, "hoplimit", kInteger},
    {"ip6", 8, 16, "saddr", kIp6addr, true}, {"ip6", 24, 16, "daddr", kIp6addr, true},
    {"tcp", 0, 2, "sport", kInetService}, {"tcp", 2, 2, "dport", kInetService},
    {"tcp", 4, 4, "sequence", kInteger}, {"tcp", 8, 4, "ackseq", kInteger}, {"tcp", 13, 1, "flags", kTcpFlag},
    {"tcp", 14, 2, "window", kInteger}, {"tcp", 16, 2, "checksum", kInteger}, {"tcp", 18, 2, "urgptr", kInteger},
    {"udp", 0, 2, "sport", kInetService}, {"udp", 2, 2, "dport", kInetService}, {"udp", 4, 2, "length", kInteger},
    {"udp", 6, 2, "checksum", kInteger},
    {"udplite", 0, 2, "sport", kInetService}, {"udplite", 2, 2, "dport", kInetService},
    {"sctp", 0, 2, "sport", kInetService}, {"sctp", 2, 2, "dport", kInetService}, {"sctp", 4, 4, "vtag", kInteger},
    {"dccp", 0, 2, "sport", kInetService}, {"dccp", 2, 2, "dport", kInetService},
    {"icmp", 0, 1, "type", kIcmpType}, {"icmp", 2, 2, "checksum", kInteger}, {"icmp", 4, 2, "id", kInteger},
    {"icmp", 6, 2, "sequence", kInteger},
    {"icmpv6", 0, 1, "type", kIcmp6Type}, {"icmpv6", 2, 2, "checksum", kInteger},
    {"ether", 0, 6, "daddr", kEtheraddr}, {"ether", 6, 6, "saddr", kEtheraddr}, {"ether", 12, 2, "type", kEthertype},
    {"th", 0, 2, "sport", kInetService}, {"th", 2, 2, "dport", kInetService},
    {"vlan", 2, 2, "type", kEthertype},
};

// Bit fields of the headers nft names (proto.c): a load of whole bytes, then
// an AND with the field's mask (netlink_delinearize.c binop_postprocess).
struct BitField {
  const char* protocol;
  uint32_t offset, len;  // the bytes loaded
  std::string_view mask;
  uint32_t shift;
  const char* name;
  uint32_t type;
};
constexpr BitField kBitFields[] = {
    {"vlan", 0, 2, "\x0f\xff", 0, "id", kInteger}, {"vlan", 0, 1, "\xe0", 5, "pcp", kInteger},
    {"ip", 0, 1, "\xf0", 4, "version", kInteger},  {"ip", 0, 1, "\x0f", 0, "hdrlength", kInteger},
    {"ip6", 0, 1, "\xf0", 4, "version", kInteger},
    {"ip", 1, 1, "\xfc", 2, "dscp", kDscp},       {"ip", 1, 1, "\x03", 0, "ecn", kEcn},
    {"ip6", 0, 2, "\x0f\xc0", 6, "dscp", kDscp},   {"ip6", 1, 1, "\x30", 4, "ecn", kEcn},
    {"ip6", 1, 3, "\x0f\xff\xff", 0, "flowlabel", kInteger},
};

// nft's header templates (proto.c: proto_eth, proto_vlan, proto_ip, ...),
// bit offset and length, in index order from 1 (payload.c walks them so):
// what decides whether nft names a load or leaves it raw. The protocols
// nft knows but this table does not (icmp, arp, esp ...) are never read raw.
struct Template {
  uint32_t offset, len;  // bits
};
struct ProtoTemplates {
  const char* protocol;
  std::initializer_list<Template> templates;
};
const ProtoTemplates kTemplates[] = {
    {"ether", {{0, 48}, {48, 48}, {96, 16}}},
    {"vlan", {{0, 3}, {3, 1}, {3, 1}, {4, 12}, {16, 16}}},
    {"ip", {{0, 4}, {4, 4}, {8, 6}, {14, 2}, {16, 16}, {32, 16}, {48, 16}, {64, 8}, {72, 8}, {80, 16}, {96, 32}, {128, 32}}},
    {"ip6", {{0, 4}, {4, 6}, {10, 2}, {12, 20}, {32, 16}, {48, 8}, {56, 8}, {64, 128}, {192, 128}}},
    {"tcp", {{0, 16}, {16, 16}, {32, 32}, {64, 32}, {96, 4}, {100, 4}, {104, 8}, {112, 16}, {128, 16}, {144, 16}}},
    {"udp", {{0, 16}, {16, 16}, {32, 16}, {48, 16}}},
    {"udplite", {{0, 16}, {16, 16}, {32, 16}, {48, 16}}},
    {"dccp", {{0, 16}, {16, 16}, {67, 4}}},
    {"sctp", {{0, 16}, {16, 16}, {32, 32}, {64, 32}}},
};

// A protocol nft has a description of that this decoder does not follow
// (proto.c: arp, a stacked vlan, esp, ah, comp, igmp): its fields are
// neither named nor read raw.
constexpr const char* kOpaque = "?";

// What nft makes of a load of `len` bits at `offset` of a header whose
// protocol is `protocol` (nullptr: nft has no description of it, or
// proto_inet/proto_netdev/proto_unknown, none with templates; "th": the
// transport header of no known protocol).
Value::Raw raw_load(uint32_t base, const char* protocol, uint32_t offset, uint32_t len) {
  Value::Raw r{base, offset, len, false, false, protocol};
  if (protocol == nullptr) {
    r.complete = r.expand = true;
    return r;
  }
  const std::string_view p(protocol);
  if (p == "th") {
    // payload_init_raw names 16 bits at 0 or 16 `th sport` / `th dport`.
    r.complete = r.expand = !(len == 16 && (offset == 0 || offset == 16));
    return r;
  }
  for (const ProtoTemplates& t : kTemplates) {
    if (p != t.protocol) continue;
    r.complete = r.expand = true;
    for (const Template& f : t.templates) {
      if (f.offset == offset && f.len == len) r.complete = false;
      if (f.offset == offset) r.expand = false;
    }
    return r;
  }
  return r;  // opaque: neither
}

// payload.c payload_expr_trim: whether nft reads a load ANDed with `mask`
// (big-endian bytes) as a template of its own (the mask then implied).
bool payload_trims(const Value::Raw& raw, std::string_view mask) {
  if (raw.protocol == nullptr || std::string_view(raw.protocol) == "th") return false;  // no description
  const ProtoTemplates* desc = nullptr;
  for (const ProtoTemplates& t : kTemplates) {
    if (std::string_view(raw.protocol) == t.protocol) desc = &t;
  }
  if (desc == nullptr) unknown("a mask on a header this decoder does not follow");
  // The mask's lowest set bit, and the first clear bit above it (mpz_scan1, mpz_scan0).
  const uint32_t bits = static_cast<uint32_t>(mask.size()) * 8;
  auto bit = [&](uint32_t i) { return i < bits && (static_cast<uint8_t>(mask[mask.size() - 1 - i / 8]) >> (i % 8)) & 1; };
  uint32_t mask_offset = 0;
  while (mask_offset < bits && !bit(mask_offset)) ++mask_offset;
  if (mask_offset == bits) return false;
  uint32_t mask_len = mask_offset + 1;
  while (bit(mask_len)) ++mask_len;
  uint32_t payload_offset = raw.offset + bits - mask_len, payload_len = raw.len, len = 0;
  for (const Template& t : desc->templates) {
    if (t.offset != payload_offset) continue;
    if (t.len > payload_len) return false;
    payload_len -= t.len;
    payload_offset += t.len;
    len += t.len;
    if (payload_len == 0) return false;
    if (mask_offset + len == mask_len) return true;
  }
  return false;
}

const char* transport_name(uint8_t proto) {
  switch (proto) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_UDPLITE: return "udplite";
    case IPPROTO_SCTP: return "sctp";
    case IPPROTO_DCCP: return "dccp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return nullptr;
  }
}

// json.c limit_stmt_json: rate, burst and unit as the kernel holds them.
// statement.c get_rate: a byte count in the largest unit that divides it.
std::pair<uint64_t, const char*> data_rate(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "kbytes", "mbytes"};
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return {bytes, kUnits[u]};
}

// json.c quota_stmt_json: bytes and what is used of them (runtime state,
// printed when not zero), in the largest unit that divides them.
json quota_json(const AttrTable& tb) {
  const auto [val, unit] = data_rate(be64(tb[NFTA_QUOTA_BYTES]));
  json q = {{"val", val}, {"val_unit", unit}};
  if (const uint64_t used = be64(tb[NFTA_QUOTA_CONSUMED]); used != 0) {
    const auto [u, uu] = data_rate(used);
    q["used"] = u;
    q["used_unit"] = uu;
  }
  const uint32_t f = be32(tb[NFTA_QUOTA_FLAGS]);
  if (f & ~static_cast<uint32_t>(NFT_QUOTA_F_INV | NFT_QUOTA_F_DEPLETED)) unknown("quota flags " + std::to_string(f));
  if (f & NFT_QUOTA_F_INV) q["inv"] = true;
  return {{"quota", q}};
}

json limit_json(const AttrTable& tb) {
  const uint32_t type = be32(tb[NFTA_LIMIT_TYPE]);
  if (type != NFT_LIMIT_PKTS && type != NFT_LIMIT_PKT_BYTES) unknown("a limit of type " + std::to_string(type));
  const char* per = nullptr;
  switch (be64(tb[NFTA_LIMIT_UNIT])) {
    case 1: per = "second"; break;
    case 60: per = "minute"; break;
    case 3600: per = "hour"; break;
    case 86400: per = "day"; break;
    case 604800: per = "week"; break;
    default: unknown("a limit per " + std::to_string(be64(tb[NFTA_LIMIT_UNIT])) + " seconds");
  }
  const uint32_t f = be32(tb[NFTA_LIMIT_FLAGS]);
  if (f & ~static_cast<uint32_t>(NFT_LIMIT_F_INV)) unknown("limit flags " + std::to_string(f));
  json body = {{"rate", be64(tb[NFTA_LIMIT_RATE])}, {"burst", be32(tb[NFTA_LIMIT_BURST])}, {"per", per}};
  if (type == NFT_LIMIT_PKT_BYTES) {
    // json.c limit_stmt_json: rate and burst in their units (get_rate).
    const auto [rate, rate_unit] = data_rate(be64(tb[NFTA_LIMIT_RATE]));
    const auto [burst, burst_unit] = data_rate(be32(tb[NFTA_LIMIT_BURST]));
    body["rate"] = rate;
    body["burst"] = burst;
    body["rate_unit"] = rate_unit;
    body["burst_unit"] = burst_unit;
  }
  if (f & NFT_LIMIT_F_INV) body["inv"] = true;
  return {{"limit", body}};
}

// json.c connlimit_stmt_json: `ct count over 20` (the count of connections
// is runtime state nft does not print).
json connlimit_json(const AttrTable& tb) {
  const uint32_t f = be32(tb[NFTA_CONNLIMIT_FLAGS]);
  if (f & ~static_cast<uint32_t>(NFT_CONNLIMIT_F_INV)) unknown("connlimit flags " + std::to_string(f));
  json body = {{"val", be32(tb[NFTA_CONNLIMIT_COUNT])}};
  if (f & NFT_CONNLIMIT_F_INV) body["inv"] = true;
  return {{"ct count", body}};
}

// ------------------------------------------------------------------ the decoder

class Decoder {
 public:
  Decoder(uint8_t family, const TableSets& sets, const ChainBindings* bindings)
      : family_(family), sets_(sets), bindings_(bindings) {
    if (family == NFPROTO_IPV4) network_ = "ip";
    if (family == NFPROTO_IPV6) network_ = "ip6";
    if (family == NFPROTO_BRIDGE) link_ = "ether";
    if (family == NFPROTO_ARP) network_ = kOpaque;  // proto.c proto_arp: not followed here
  }

  void expr(std::string_view name, const AttrTable& tb) {
    if (name == "payload") return payload(tb);
    if (name == "meta") return meta(tb);
    if (name == "ct") return ct(tb);
    if (name == "immediate") return immediate(tb);
    if (name == "bitwise") return bitwise(tb);
    if (name == "cmp") return cmp(tb);
    if (name == "range") return range(tb);
    if (name == "lookup") return lookup(tb);
    if (name == "numgen") return numgen(tb);
    if (name == "fib") return fib(tb);
    if (name == "osf") return osf(tb);
    if (name == "exthdr") return exthdr(tb);
    if (name == "rt") return rt(tb);
    if (name == "xfrm") return xfrm(tb);
    if (name == "counter") {
      return emit({{"counter", {{"packets", be64(tb[NFTA_COUNTER_PACKETS])}, {"bytes", be64(tb[NFTA_COUNTER_BYTES])}}}});
    }
    if (name == "nat") return nat(tb);
    if (name == "masq") return masquerade(tb);
    if (name == "redir") return redirect(tb);
    if (name == "tproxy") return tproxy(tb);
    if (name == "reject") return reject(tb);
    if (name == "dynset") return dynset(tb);
    if (name == "notrack") return emit({{"notrack", nullptr}});
    if (name == "flow_offload") {  // netlink_parse_flow_offload, json.c flow_offload_stmt_json
      return emit({{"flow", {{"op", "add"}, {"flowtable", "@" + std::string(str(tb[NFTA_FLOW_TABLE_NAME]))}}}});
    }
    if (name == "limit") return emit(limit_json(tb));
    if (name == "connlimit") return emit(connlimit_json(tb));
    if (name == "quota") return emit(quota_json(tb));
    if (name == "log") return log(tb);
    if (name == "objref") return objref(tb);
    if (name == "byteorder") return byteorder(tb);
    unknown("expression \"" + std::string(name) + "\"");
  }

  json finish() {
    json out = json::array();
    for (size_t i = 0; i < statements_.size(); ++i) {
      if (!removed_[i]) out.push_back(std::move(statements_[i]));
    }
    return out;
  }

 private:
  // ---------------------------------------------------------- registers
  // nft_registers: NFT_REG_1..4 are 16 bytes each, NFT_REG32_00.. 4 bytes
  // each over the same space; a concatenation loads its fields into
  // consecutive 4-byte registers.
  static size_t slot(uint32_t reg) {
    if (reg >= NFT_REG_1 && reg <= NFT_REG_4) return (reg - NFT_REG_1) * 4;
    if (reg >= NFT_REG32_00 && reg <= NFT_REG32_15) return reg - NFT_REG32_00;
    unknown("register " + std::to_string(reg));
  }
  Value& reg(uint32_t r) { return regs_[slot(r)]; }
  const Value& read(const nlattr* a, bool raw_ok = false) {
    const Value& v = reg(be32(a));
    if (v.kind == Value::kNone) unknown("a register read before it was written");
    if (v.raw_only && !raw_ok) unknown("a raw payload expression (" + v.raw_why + ")");
    if (v.bits) unknown("a raw payload expression (bits of " + std::string(v.bits->protocol) + " without their mask)");
    if (v.swapped) unknown("a value in network byte order used outside a set key");
    return v;
  }
  void write(const nlattr* a, Value v) { reg(be32(a)) = std::move(v); }

  void emit(json statement) {
    // netlink_delinearize.c rule_maybe_reset_payload_deps: after any
    // statement but a match, no later field drops an earlier protocol match.
    const bool expression = statement.is_object() && (statement.contains("match") || statement.contains("vmap"));
    statements_.push_back(std::move(statement));
    removed_.push_back(false);
    if (!expression) dep_floor_ = static_cast<int>(statements_.size());
  }
  // A dependency still there to drop.
  bool alive(int dep) const { return dep >= dep_floor_ && static_cast<size_t>(dep) < removed_.size(); }
  bool multi_family() const { return family_ == NFPROTO_INET || family_ == NFPROTO_BRIDGE || family_ == NFPROTO_NETDEV; }

  // ---------------------------------------------------------- loads
  void payload(const AttrTable& tb) {
    const uint32_t base = be32(tb[NFTA_PAYLOAD_BASE]), offset = be32(tb[NFTA_PAYLOAD_OFFSET]), len = be32(tb[NFTA_PAYLOAD_LEN]);
    if (tb[NFTA_PAYLOAD_SREG]) return payload_write(tb, load(base, offset, len));
    write(tb[NFTA_PAYLOAD_DREG], load(base, offset, len));
  }

  // netlink_delinearize.c netlink_parse_payload_stmt, stmt_payload_postprocess:
  // `ip daddr set 10.0.0.1`, the value typed by the field. Only a field a
  // template names whole (payload_expr_complete); nft reads a raw one's
  // write as the bits it changes (stmt_payload_binop_postprocess), not here.
  // The checksum nft asks the kernel to fix is implied by the field.
  void payload_write(const AttrTable& tb, const Value& field) {
    const bool whole = field.fields.empty() && !field.bits && (field.field_len == 0 || field.len == field.field_len);
    if (field.raw_only || !whole || !field.expr.contains("payload")) unknown("a payload write of a field loaded in part or raw");
    const Value& v = read(tb[NFTA_PAYLOAD_SREG]);
    json value = operand(v, field.type, Order::Big);
    used(field);
    used(v);
    emit({{"mangle", {{"key", field.expr}, {"value", std::move(value)}}}});
  }

  // A load of `len` bytes at `offset` of header `base`, named as nft names it.
  Value load(uint32_t base, uint32_t offset, uint32_t len) {
    const char* protocol = nullptr;
    int dependency = -1;
    switch (base) {
      case NFT_PAYLOAD_LL_HEADER:
        protocol = link_;
        dependency = link_dependency_;
        break;
      case NFT_PAYLOAD_NETWORK_HEADER:
        protocol = network_;
        dependency = network_dependency_;
        break;
      case NFT_PAYLOAD_TRANSPORT_HEADER:
        protocol = transport_;
        dependency = transport_dependency_;
        break;
      default: unknown("a payload of base " + std::to_string(base));
    }
    // Without a protocol, a transport port is nft's `th sport` / `th dport`.
    if (protocol == nullptr && base == NFT_PAYLOAD_TRANSPORT_HEADER) protocol = "th", dependency = -1;
    // A stacked vlan header: nft's offsets past it (payload.c
    // get_stacked_desc) are not followed for a raw load.
    const bool stacked = base == NFT_PAYLOAD_LL_HEADER && vlan_dependency_ >= 0;
    const Value::Raw raw = raw_load(base, stacked ? kOpaque : protocol, offset * 8, len * 8);
    if (protocol == nullptr) return raw_value(raw, "no protocol known for its header");
    // After `ether type vlan` the bytes past the ether header are the vlan header's (proto.c proto_vlan).
    if (base == NFT_PAYLOAD_LL_HEADER && vlan_dependency_ >= 0 && offset >= 14 && offset < 18) {
      protocol = "vlan", offset -= 14, dependency = vlan_dependency_;
    }
    // proto.c icmp templates past the type, code and checksum mean what the
    // icmp type says (payload_expr_complete: icmp_dep): `icmp id` and
    // `icmp sequence` of an echo, else gateway, mtu ... not named here.
    const bool icmp = std::string_view(protocol) == "icmp" || std::string_view(protocol) == "icmpv6";
    if (icmp && offset + len > 4 && icmp_type_ != kIcmpTypeNone && !icmp_echo()) {
      unknown("an icmp field whose meaning the icmp type decides");
    }
    for (const Field& f : kFields) {
      if (std::string_view(f.protocol) != protocol || f.offset != offset) continue;
      if (f.len != len && !(f.address && len < f.len)) continue;
      Value v;
      v.kind = Value::kExpr;
      v.expr = {{"payload", {{"protocol", f.protocol}, {"field", f.name}}}};
      v.type = f.type;
      v.len = len;
      v.field_len = f.len;
      v.dependency = dependency;
      // payload.c payload_may_dependency_kill: a protocol key of the same
      // header (`vlan type` after `ether type 8021q`) drops no match there.
      if (multi_family() && std::string_view(f.protocol) == "vlan" && std::string_view(f.name) == "type") v.dependency = -1;
      v.from_payload = true;
      v.raw = raw;
      return v;
    }
    for (const BitField& f : kBitFields) {
      if (std::string_view(f.protocol) != protocol || f.offset != offset || f.len != len) continue;
      Value v;
      v.kind = Value::kExpr;
      v.bits = &f;
      v.len = len;
      v.dependency = dependency;
      v.from_payload = true;
      v.raw = raw;
      return v;
    }
    const std::string why = (protocol == kOpaque ? std::string("a header this decoder does not follow") : protocol) +
                            " at byte " + std::to_string(offset) + ", " + std::to_string(len) + " bytes";
    // Adjacent whole fields loaded at once; `th` has no templates past its
    // ports (payload_expr_expand of no description: one raw load).
    Value v;
    for (uint32_t at = offset; at < offset + len;) {
      const Field* next = nullptr;
      for (const Field& f : kFields) {
        if (std::string_view(f.protocol) == protocol && f.offset == at && at + f.len <= offset + len) next = &f;
      }
      if (next == nullptr || std::string_view(protocol) == "th") return raw_value(raw, why);
      v.fields.push_back(next);
      at += next->len;
    }
    v.kind = Value::kExpr;
    v.len = len;
    v.dependency = dependency;
    v.from_payload = true;
    v.raw = raw;
    return v;
  }

  // A load no template names (payload.c payload_expr_print: "@nh,32,32"),
  // its values printed in hex (datatype.c xinteger_type); a raw payload
  // implies no protocol (its description is proto_unknown:
  // payload_dependency_kill). Where nft would name it after all (`raw`
  // says where), it is refused when used (`why`).
  static Value raw_value(const Value::Raw& raw, const std::string& why) {
    static constexpr const char* kBases[] = {"ll", "nh", "th", "ih"};  // proto.c proto_base_tokens
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"payload", {{"base", kBases[raw.base]}, {"offset", raw.offset}, {"len", raw.len}}}};
    v.type = kInteger;
    v.order = Order::Big;
    v.len = raw.len / 8;
    v.raw = raw;
    v.raw_only = true;
    v.raw_why = why;
    return v;
  }

  // A value that is a payload load nft leaves raw where it is used: as a
  // key (`complete`) or compared (`expand`); else unknown.
  static Value as_raw(const Value& v, bool expand) {
    if (v.raw.len == 0 || !(expand ? v.raw.expand : v.raw.complete)) {
      unknown("a raw payload expression (" + (v.raw_why.empty() ? std::string("a field loaded in part") : v.raw_why) + ")");
    }
    Value r = raw_value(v.raw, v.raw_why);
    r.raw = v.raw;
    return r;
  }

  void meta(const AttrTable& tb) {
    const uint32_t key = be32(tb[NFTA_META_KEY]);
    struct Key {
      uint32_t key;
      const char* name;
      uint32_t type, len;
      Order order;
    };
    static constexpr Key kKeys[] = {
        {NFT_META_LEN, "length", kInteger, 4, Order::Host},   {NFT_META_PROTOCOL, "protocol", kEthertype, 2, Order::Big},
        {NFT_META_MARK, "mark", kMark, 4, Order::Host},       {NFT_META_IIFNAME, "iifname", kIfname, 16, Order::Host},
        {NFT_META_OIFNAME, "oifname", kIfname, 16, Order::Host}, {NFT_META_NFPROTO, "nfproto", kNfproto, 1, Order::Host},
        {NFT_META_L4PROTO, "l4proto", kInetProto, 1, Order::Host}, {NFT_META_PKTTYPE, "pkttype", kPkttype, 1, Order::Host},
        {NFT_META_NFTRACE, "nftrace", kInteger, 1, Order::Host},
        {NFT_META_IIF, "iif", kIfindex, 4, Order::Host},      {NFT_META_OIF, "oif", kIfindex, 4, Order::Host},
        {NFT_META_IIFTYPE, "iiftype", kArphrd, 2, Order::Host}, {NFT_META_OIFTYPE, "oiftype", kArphrd, 2, Order::Host},
        // A tc class id ("1:2", meta.c tchandle_type_print).
        {NFT_META_PRIORITY, "priority", kClassid, 4, Order::Host},
        {NFT_META_CPU, "cpu", kInteger, 4, Order::Host},      {NFT_META_CGROUP, "cgroup", kInteger, 4, Order::Host},
        {NFT_META_PRANDOM, "random", kInteger, 4, Order::Big},
        {NFT_META_IIFKIND, "iifkind", kIfname, 16, Order::Host}, {NFT_META_OIFKIND, "oifkind", kIfname, 16, Order::Host},
        {NFT_META_SDIF, "sdif", kIfindex, 4, Order::Host},    {NFT_META_SDIFNAME, "sdifname", kIfname, 16, Order::Host},
    };
    for (const Key& k : kKeys) {
      if (k.key != key) continue;
      if (tb[NFTA_META_SREG]) {
        const Value& v = read(tb[NFTA_META_SREG]);
        json value = operand(v, k.type, k.order);
        used(v);  // netlink_delinearize.c: STMT_META's expression read like a match's
        return emit({{"mangle", {{"key", {{"meta", {{"key", k.name}}}}}, {"value", std::move(value)}}}});
      }
      Value v;
      v.kind = Value::kExpr;
      v.expr = {{"meta", {{"key", k.name}}}};
      v.type = k.type;
      v.len = k.len;
      v.order = k.order;
      return write(tb[NFTA_META_DREG], std::move(v));
    }
    unknown("meta key " + std::to_string(key));
  }

  void ct(const AttrTable& tb) {
    const uint32_t key = be32(tb[NFTA_CT_KEY]);
    const char* name = nullptr;
    uint32_t type = kInvalid, len = 4;
    Order order = Order::Host;
    // ct.c ct_templates: token, datatype, byte order, width.
    switch (key) {
      case NFT_CT_STATE: name = "state", type = kCtState; break;
      case NFT_CT_STATUS: name = "status", type = kCtStatus; break;
      case NFT_CT_MARK: name = "mark", type = kMark; break;
      case NFT_CT_DIRECTION: name = "direction", type = kCtDir, len = 1; break;
      // Counters of the connection: host-endian 64-bit integers.
      case NFT_CT_PKTS: name = "packets", type = kInteger, len = 8; break;
      case NFT_CT_BYTES: name = "bytes", type = kInteger, len = 8; break;
      case NFT_CT_AVGPKT: name = "avgpkt", type = kInteger, len = 8; break;
      case NFT_CT_ZONE: name = "zone", type = kInteger, len = 2; break;
      case NFT_CT_L3PROTOCOL: name = "l3proto", type = kNfproto, len = 1; break;
      case NFT_CT_PROTOCOL: name = "protocol", type = kInetProto, len = 1, order = Order::Big; break;
      // ct.c ct_expr_update_type: a port once the transport protocol is
      // known, else of no type (nft prints its values "[invalid type]").
      case NFT_CT_PROTO_SRC: name = "proto-src", len = 2, order = Order::Big; break;
      case NFT_CT_PROTO_DST: name = "proto-dst", len = 2, order = Order::Big; break;
      case NFT_CT_SRC_IP: name = "ip saddr", type = kIpaddr, order = Order::Big; break;
      case NFT_CT_DST_IP: name = "ip daddr", type = kIpaddr, order = Order::Big; break;
      case NFT_CT_SRC_IP6: name = "ip6 saddr", type = kIp6addr, len = 16, order = Order::Big; break;
      case NFT_CT_DST_IP6: name = "ip6 daddr", type = kIp6addr, len = 16, order = Order::Big; break;
      default: unknown("ct key " + std::to_string(key));
    }
    if ((key == NFT_CT_PROTO_SRC || key == NFT_CT_PROTO_DST) && transport_ != nullptr) type = kInetService;
    json body = {{"key", name}};
    // json.c ct_expr_json: "dir" (ct.c ct_dir_tbl), printed before the key.
    if (tb[NFTA_CT_DIRECTION]) {
      const uint8_t dir = mnl_attr_get_u8(tb[NFTA_CT_DIRECTION]);
      if (dir > 1) unknown("a ct direction " + std::to_string(dir));
      body["dir"] = dir == 0 ? "original" : "reply";
    }
    if (tb[NFTA_CT_SREG]) {
      if (tb[NFTA_CT_DIRECTION]) unknown("a ct statement with a direction");
      const Value& v = read(tb[NFTA_CT_SREG]);
      json value = operand(v, type, order);
      used(v);
      return emit({{"mangle", {{"key", {{"ct", body}}}, {"value", std::move(value)}}}});
    }
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"ct", body}};
    v.type = type;
    v.len = len;
    v.field_len = len;  // an address's full width, for a prefix of it
    v.order = order;
    write(tb[NFTA_CT_DREG], std::move(v));
  }

  void numgen(const AttrTable& tb) {
    const uint32_t type = be32(tb[NFTA_NG_TYPE]);
    if (type != NFT_NG_RANDOM && type != NFT_NG_INCREMENTAL) unknown("numgen type " + std::to_string(type));
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"numgen",
               {{"mode", type == NFT_NG_RANDOM ? "random" : "inc"},
                {"mod", be32(tb[NFTA_NG_MODULUS])},
                {"offset", be32(tb[NFTA_NG_OFFSET])}}}};
    v.type = kInteger;
    v.len = 4;
    v.order = Order::Host;
    write(tb[NFTA_NG_DREG], std::move(v));
  }

  void fib(const AttrTable& tb) {
    const uint32_t result = be32(tb[NFTA_FIB_RESULT]), f = be32(tb[NFTA_FIB_FLAGS]);
    Value v;
    v.kind = Value::kExpr;
    v.order = Order::Host;
    v.len = 4;
    const char* name = nullptr;
    switch (result) {
      case NFT_FIB_RESULT_ADDRTYPE: name = "type", v.type = kFibAddr; break;
      case NFT_FIB_RESULT_OIF: name = "oif", v.type = kIfindex; break;
      case NFT_FIB_RESULT_OIFNAME: name = "oifname", v.type = kIfname, v.len = 16; break;
      default: unknown("fib result " + std::to_string(result));
    }
    json names = json::array();
    uint32_t rest = f;
    for (const auto& [bit, n] : std::initializer_list<std::pair<uint32_t, const char*>>{
             {NFTA_FIB_F_SADDR, "saddr"}, {NFTA_FIB_F_DADDR, "daddr"}, {NFTA_FIB_F_MARK, "mark"},
             {NFTA_FIB_F_IIF, "iif"}, {NFTA_FIB_F_OIF, "oif"}}) {
      if (rest & bit) names.push_back(n), rest &= ~bit;
    }
    if (rest != 0) unknown("fib flags " + std::to_string(f));
    v.expr = {{"fib", {{"result", name}, {"flags", names}}}};
    write(tb[NFTA_FIB_DREG], std::move(v));
  }

  // netlink_delinearize.c netlink_parse_exthdr, exthdr.c exthdr_init_raw,
  // tcpopt.c tcpopt_init_raw: an IPv6 extension header's or a TCP
  // option's field, named by the template of its offset and width (the
  // whole-byte ones: bit fields and the routing header's types are not
  // followed here); json.c exthdr_expr_json. nft drops the protocol match
  // it implies (payload.c exthdr_dependency_kill).
  void exthdr(const AttrTable& tb) {
    struct Tmpl {
      const char* field;
      uint32_t offset, len;  // bits
      uint32_t type;
    };
    struct Desc {
      uint8_t type;
      const char* name;
      std::initializer_list<Tmpl> templates;
    };
    static const Desc kIpv6[] = {
        {IPPROTO_HOPOPTS, "hbh", {{"nexthdr", 0, 8, kInetProto}, {"hdrlength", 8, 8, kInteger}}},
        {IPPROTO_ROUTING, "rt",
         {{"nexthdr", 0, 8, kInetProto}, {"hdrlength", 8, 8, kInteger}, {"type", 16, 8, kInteger}, {"seg-left", 24, 8, kInteger}}},
        {IPPROTO_FRAGMENT, "frag", {{"nexthdr", 0, 8, kInetProto}, {"reserved", 8, 8, kInteger}, {"id", 32, 32, kInteger}}},
        {IPPROTO_DSTOPTS, "dst", {{"nexthdr", 0, 8, kInetProto}, {"hdrlength", 8, 8, kInteger}}},
    };
    static const Desc kTcpOptions[] = {
        {2, "maxseg", {{"kind", 0, 8, kInteger}, {"length", 8, 8, kInteger}, {"size", 16, 16, kInteger}}},
        {3, "window", {{"kind", 0, 8, kInteger}, {"length", 8, 8, kInteger}, {"count", 16, 8, kInteger}}},
        {4, "sack-perm", {{"kind", 0, 8, kInteger}, {"length", 8, 8, kInteger}}},
        {8, "timestamp", {{"kind", 0, 8, kInteger}, {"length", 8, 8, kInteger}, {"tsval", 16, 32, kInteger}, {"tsecr", 48, 32, kInteger}}},
    };
    const uint32_t op = be32(tb[NFTA_EXTHDR_OP]);
    const uint8_t type = mnl_attr_get_u8(tb[NFTA_EXTHDR_TYPE]);
    const uint32_t offset = be32(tb[NFTA_EXTHDR_OFFSET]) * 8, len = be32(tb[NFTA_EXTHDR_LEN]) * 8;
    // NFT_EXTHDR_F_PRESENT: a test of the header's or option's presence
    // (`tcp option maxseg exists`), a boolean; json.c leaves the field out.
    const uint32_t xflags = tb[NFTA_EXTHDR_FLAGS] ? be32(tb[NFTA_EXTHDR_FLAGS]) : 0;
    if (xflags & ~static_cast<uint32_t>(NFT_EXTHDR_F_PRESENT)) unknown("exthdr flags " + std::to_string(xflags));
    const bool present = xflags & NFT_EXTHDR_F_PRESENT;
    if (present && tb[NFTA_EXTHDR_SREG]) unknown("an exthdr write of a presence");
    const bool tcp = op == NFT_EXTHDR_OP_TCPOPT;
    if (!tcp && op != NFT_EXTHDR_OP_IPV6) unknown("an exthdr expression of op " + std::to_string(op));
    const Desc* desc = nullptr;
    for (const Desc& d : tcp ? std::span<const Desc>(kTcpOptions) : std::span<const Desc>(kIpv6)) {
      if (d.type == type) desc = &d;
    }
    if (desc == nullptr) unknown("an exthdr expression of type " + std::to_string(type));
    const Tmpl* field = nullptr;
    for (const Tmpl& t : desc->templates) {
      if (t.offset == offset && t.len == len) field = &t;
    }
    if (field == nullptr) unknown(std::string("an exthdr expression of ") + desc->name + " at bit " + std::to_string(offset));
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{tcp ? "tcp option" : "exthdr", {{"name", desc->name}}}};
    if (!present) v.expr.begin().value()["field"] = field->field;
    v.type = present ? kBoolean : field->type;
    v.len = len / 8;
    v.dependency = tcp ? transport_dependency_ : network_dependency_;
    if (tb[NFTA_EXTHDR_SREG]) {
      // `tcp option maxseg size set rt mtu`: the value typed by the field; a
      // host value turned to network order (byteorder hton) prints as itself.
      const Value& val = reg(be32(tb[NFTA_EXTHDR_SREG]));
      if (val.kind == Value::kNone || val.raw_only || val.bits) unknown("an exthdr write of an unknown value");
      Value plain = val;
      plain.swapped = false;
      json value = operand(plain, v.type, Order::Big);
      used(v);
      used(plain);
      return emit({{"mangle", {{"key", v.expr}, {"value", std::move(value)}}}});
    }
    if (!tb[NFTA_EXTHDR_DREG]) unknown("an exthdr statement without a register (reset)");
    write(tb[NFTA_EXTHDR_DREG], std::move(v));
  }

  // rt.c rt_templates, json.c rt_expr_json: `rt mtu` (the TCP MSS of the route, host-endian).
  void rt(const AttrTable& tb) {
    if (be32(tb[NFTA_RT_KEY]) != NFT_RT_TCPMSS) unknown("rt key " + std::to_string(be32(tb[NFTA_RT_KEY])));
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"rt", {{"key", "mtu"}}}};
    v.type = kInteger;
    v.len = 2;
    v.order = Order::Host;
    write(tb[NFTA_RT_DREG], std::move(v));
  }

  // netlink_delinearize.c netlink_parse_osf, osf.c osf_expr_alloc: the
  // OS's name (or version), a 16-byte string; json.c osf_expr_json.
  void osf(const AttrTable& tb) {
    json body = {{"key", be32(tb[NFTA_OSF_FLAGS]) & NFT_OSF_F_VERSION ? "version" : "name"}};
    if (be32(tb[NFTA_OSF_FLAGS]) & ~static_cast<uint32_t>(NFT_OSF_F_VERSION)) unknown("osf flags");
    const uint8_t ttl = tb[NFTA_OSF_TTL] ? mnl_attr_get_u8(tb[NFTA_OSF_TTL]) : 0;
    if (ttl == 1) body["ttl"] = "loose";
    if (ttl == 2) body["ttl"] = "skip";
    if (ttl > 2) unknown("osf ttl " + std::to_string(ttl));
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"osf", body}};
    v.type = kString;
    v.len = 16;  // NFT_OSF_MAXGENRELEN
    v.order = Order::Host;
    write(tb[NFTA_OSF_DREG], std::move(v));
  }

  // netlink_delinearize.c netlink_parse_xfrm, xfrm.c xfrm_templates and
  // json.c xfrm_expr_json: `ipsec in reqid`, `ipsec out spnum 1 ip saddr`.
  void xfrm(const AttrTable& tb) {
    const uint32_t key = be32(tb[NFTA_XFRM_KEY]);
    const uint8_t dir = tb[NFTA_XFRM_DIR] ? mnl_attr_get_u8(tb[NFTA_XFRM_DIR]) : 0xff;
    if (dir > 1) unknown("an ipsec expression of direction " + std::to_string(dir));  // XFRM_POLICY_IN, _OUT
    Value v;
    v.kind = Value::kExpr;
    json body;
    switch (key) {
      case NFT_XFRM_KEY_DADDR_IP4: body = {{"key", "daddr"}, {"family", "ip"}}, v.type = kIpaddr, v.len = 4; break;
      case NFT_XFRM_KEY_SADDR_IP4: body = {{"key", "saddr"}, {"family", "ip"}}, v.type = kIpaddr, v.len = 4; break;
      case NFT_XFRM_KEY_DADDR_IP6: body = {{"key", "daddr"}, {"family", "ip6"}}, v.type = kIp6addr, v.len = 16; break;
      case NFT_XFRM_KEY_SADDR_IP6: body = {{"key", "saddr"}, {"family", "ip6"}}, v.type = kIp6addr, v.len = 16; break;
      case NFT_XFRM_KEY_REQID: body = {{"key", "reqid"}}, v.type = kInteger, v.len = 4, v.order = Order::Host; break;
      case NFT_XFRM_KEY_SPI: body = {{"key", "spi"}}, v.type = kInteger, v.len = 4; break;
      default: unknown("an ipsec expression of key " + std::to_string(key));
    }
    body["dir"] = dir == 0 ? "in" : "out";
    body["spnum"] = tb[NFTA_XFRM_SPNUM] ? be32(tb[NFTA_XFRM_SPNUM]) : 0;
    v.expr = {{"ipsec", body}};
    write(tb[NFTA_XFRM_DREG], std::move(v));
  }

  void immediate(const AttrTable& tb) {
    if (be32(tb[NFTA_IMMEDIATE_DREG]) == NFT_REG_VERDICT) {
      const Verdict v = data_verdict(tb[NFTA_IMMEDIATE_DATA]);
      if (!v.present) unknown("a verdict immediate without a verdict");
      if (bindings_ == nullptr) {
        if (v.chain.rfind("__chain", 0) == 0) unknown("a chain binding (jump { ... })");
      } else if (const auto it = bindings_->find(v.chain); it != bindings_->end()) {
        return emit(binding(v.code, *it->second));
      }
      return emit(verdict(v.code, v.chain));
    }
    Value v;
    v.kind = Value::kLiteral;
    v.bytes = std::string(data_value(tb[NFTA_IMMEDIATE_DATA]));
    v.len = static_cast<uint32_t>(v.bytes.size());
    write(tb[NFTA_IMMEDIATE_DREG], std::move(v));
  }

  // netlink_delinearize.c netlink_parse_byteorder: a unary conversion nft
  // prints as its operand. Only as a key of a named set or map: the
  // elements of an anonymous one would need the value's swapped byte order.
  void byteorder(const AttrTable& tb) {
    const Value& src = reg(be32(tb[NFTA_BYTEORDER_SREG]));
    if (src.kind != Value::kExpr || src.raw_only || src.bits || src.swapped || !src.fields.empty() || !src.mask.empty() || src.shift) {
      unknown("a byte order conversion of a computed value");
    }
    // nft writes a one-byte value's conversion in a concatenation as one
    // byte of two-byte elements (libnftnl: `hton(reg 10, 2, 1)`, size then
    // len): the kernel swaps no element (nft_byteorder_eval: len / size),
    // and nft prints the operand whatever the widths (unary_expr_alloc).
    const uint32_t len = be32(tb[NFTA_BYTEORDER_LEN]), size = be32(tb[NFTA_BYTEORDER_SIZE]);
    const bool one_byte = src.len == 1 && len == 1;
    if (be32(tb[NFTA_BYTEORDER_OP]) != NFT_BYTEORDER_HTON || src.order != Order::Host ||
        !(one_byte || (len == src.len && size == src.len))) {
      unknown("a byte order conversion other than one host value to network order");
    }
    Value v = src;
    v.raw = {};
    v.swapped = true;
    write(tb[NFTA_BYTEORDER_DREG], std::move(v));
  }

  // `e & m`, `e | x`, `e ^ x`: nft's own reading of a mask-and-xor
  // (netlink_delinearize.c binop_postprocess).
  void bitwise(const AttrTable& tb) {
    const uint32_t op = be32(tb[NFTA_BITWISE_OP]);
    if (op == NFT_BITWISE_LSHIFT || op == NFT_BITWISE_RSHIFT) return shift(tb, op);
    if (op != NFT_BITWISE_BOOL) unknown("bitwise operation " + std::to_string(op));
    const Value src = reg(be32(tb[NFTA_BITWISE_SREG]));
    if (src.raw_only) unknown("a bitwise operation on a raw payload expression (" + src.raw_why + ")");
    if (src.swapped) unknown("a bitwise operation on a value in network byte order");
    if (src.kind != Value::kExpr || !src.fields.empty()) unknown("a bitwise operation on a constant or on several fields");
    const std::string mask(data_value(tb[NFTA_BITWISE_MASK])), x(data_value(tb[NFTA_BITWISE_XOR]));
    if (src.bits) return write(tb[NFTA_BITWISE_DREG], bit_field(src, mask, x));
    if (src.shift) unknown("a bitwise operation on a bit field");
    const bool xor_zero = std::all_of(x.begin(), x.end(), [](char c) { return c == 0; });
    if (xor_zero && src.raw.len != 0 && payload_trims(src.raw, mask)) unknown("a mask nft reads as a header field of its own");
    const bool mask_ones = std::all_of(mask.begin(), mask.end(), [](char c) { return static_cast<uint8_t>(c) == 0xff; });
    Value v = src;
    v.raw = {};
    v.mask.clear();
    if (xor_zero) {
      v.masked = src.expr;
      v.mask = mask;
      v.expr = {{"&", {src.expr, value(int_type(src), src.order, mask)}}};
    } else if (mask_ones) {
      v.expr = {{"^", {src.expr, value(int_type(src), src.order, x)}}};
    } else {
      bool inverse = mask.size() == x.size();
      for (size_t i = 0; inverse && i < mask.size(); ++i) inverse = static_cast<uint8_t>(~mask[i]) == static_cast<uint8_t>(x[i]);
      if (!inverse) unknown("a mask-and-xor that is not one of &, |, ^");
      v.expr = {{"|", {src.expr, value(int_type(src), src.order, x)}}};
    }
    write(tb[NFTA_BITWISE_DREG], std::move(v));
  }

  // A shift by a constant number of bits (netlink_delinearize.c
  // netlink_parse_bitwise: NFTA_BITWISE_DATA holds it, host-endian).
  void shift(const AttrTable& tb, uint32_t op) {
    const Value src = reg(be32(tb[NFTA_BITWISE_SREG]));
    if (src.kind != Value::kExpr || src.raw_only || !src.fields.empty() || src.bits || src.shift) {
      unknown("a shift of a constant, of a bit field or of a raw payload expression");
    }
    const std::string amount(data_value(tb[NFTA_BITWISE_DATA]));
    if (amount.size() != 4) unknown("a shift by an amount of " + std::to_string(amount.size()) + " bytes");
    Value v = src;
    v.raw = {};
    v.mask.clear();
    v.expr = {{op == NFT_BITWISE_LSHIFT ? "<<" : ">>", {src.expr, integer(amount, Order::Host)}}};
    write(tb[NFTA_BITWISE_DREG], std::move(v));
  }

  // The bytes of a bit field and the AND that keeps only its bits: the field.
  static Value bit_field(const Value& src, std::string_view mask, std::string_view x) {
    // The field of these bytes whose bits the mask picks (`ip version`, `ip hdrlength`).
    const BitField* found = nullptr;
    for (const BitField& b : kBitFields) {
      if (std::string_view(b.protocol) == src.bits->protocol && b.offset == src.bits->offset && b.len == src.bits->len &&
          b.mask == mask) {
        found = &b;
      }
    }
    const bool xor_zero = std::all_of(x.begin(), x.end(), [](char c) { return c == 0; });
    if (found == nullptr || !xor_zero) unknown("a raw payload expression (bits of " + std::string(src.bits->protocol) + ")");
    const BitField& f = *found;
    Value v = src;
    v.raw = {};
    v.bits = nullptr;
    v.expr = {{"payload", {{"protocol", f.protocol}, {"field", f.name}}}};
    v.type = f.type;
    v.shift = f.shift;
    return v;
  }

  // Several flags of a bitmask value as nft -j writes them in an
  // expression: ORs in bit order (netlink.c bitmask_expr_to_binops).
  static json flag_ors(json v) {
    if (!v.is_array()) return v;
    json folded = v[0];
    for (size_t i = 1; i < v.size(); ++i) folded = {{"|", {folded, v[i]}}};
    return folded;
  }

  // The operand of a binary operation prints as its expression's type,
  // except that an address mask is not an address.
  static uint32_t int_type(const Value& v) { return v.type == kIpaddr || v.type == kIp6addr ? kInteger : v.type; }

  // ---------------------------------------------------------- comparisons
  static bool is_bitmask(uint32_t type) { return type == kCtState || type == kCtStatus || type == kTcpFlag; }

  void cmp(const AttrTable& tb) {
    const uint32_t op = be32(tb[NFTA_CMP_OP]);
    const bool equality = op == NFT_CMP_EQ || op == NFT_CMP_NEQ;
    // netlink_delinearize.c payload_match_postprocess: == and != a value
    // split a load into the fields it spans (payload_expr_expand), an order
    // compare takes it whole (payload_expr_complete): a field loaded in
    // part, or several, are then a raw payload.
    const Value& loaded = reg(be32(tb[NFTA_CMP_SREG]));
    const bool partial = !loaded.fields.empty() || loaded.bits || (loaded.field_len && loaded.len < loaded.field_len);
    const bool raw = loaded.raw.len != 0 && (loaded.raw_only || (!equality && partial));
    const bool swapped = loaded.swapped;
    const Value& l = swapped ? unswapped(loaded) : raw ? scratch_ = as_raw(loaded, equality) : read(tb[NFTA_CMP_SREG]);
    if (l.kind != Value::kExpr) unknown("a comparison of a constant");
    if (!l.fields.empty()) return compare_fields(l, op, data_value(tb[NFTA_CMP_DATA]));
    if (l.shift) return compare_shifted(l, op, data_value(tb[NFTA_CMP_DATA]));
    static constexpr const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    if (op > NFT_CMP_GTE) unknown("cmp op " + std::to_string(op));
    std::string data(data_value(tb[NFTA_CMP_DATA]));
    if (swapped) data = host_order(data, l.len);
    if (l.type == kBoolean && op != NFT_CMP_EQ) unknown("a presence test other than exists or missing");
    // netlink_delinearize.c netlink_parse_cmp: a value shorter than the
    // register's is a prefix of it (`ct reply ip daddr 10.0.0.0/8`), except
    // for a string (a name's wildcard, "eth*").
    if (data.size() < l.len && l.type != kIfname && l.type != kString) unknown("a compare of a prefix of a value");
    json left = l.expr, right;
    std::string op_name = kOps[op];
    const bool zero = std::all_of(data.begin(), data.end(), [](char c) { return c == 0; });
    if (!l.mask.empty() && is_bitmask(l.type) && op == NFT_CMP_NEQ && zero) {
      // `ct state new`: (state & new) != 0.
      left = l.masked;
      op_name = "in";
      right = value(l.type, l.order, l.mask);
    } else if (!l.mask.empty() && (l.type == kIpaddr || l.type == kIp6addr)) {
      left = l.masked;
      right = prefix(l, data, prefix_length(l.mask));
    } else if (!l.mask.empty() && l.type == kMark && host_prefix(l.mask) >= 0) {
      // relational_binop_postprocess: a mark (DTYPE_F_PREFIX) under a
      // prefix mask is a prefix, `meta mark 0xffffff00/24`.
      if (!equality) unknown("an order compare of a mark under a prefix mask");
      left = l.masked;
      right = {{"prefix", {{"addr", value(l.type, l.order, data)}, {"len", host_prefix(l.mask)}}}};
    } else if ((l.type == kIfname || l.type == kString) && !data.empty() && data.back() == '\0' &&
               data.find('\0') > 0 && data[data.find('\0') - 1] == '*') {
      // __expr_postprocess_string: a literal '*' ending a name is escaped.
      right = data.substr(0, data.find('\0') - 1) + "\\*";
    } else if (l.field_len != 0 && l.len < l.field_len) {
      right = prefix(l, data, l.len * 8);  // a prefix of whole bytes: only they are loaded
    } else if (is_bitmask(l.type) && !l.mask.empty() &&
               std::all_of(l.mask.begin(), l.mask.end(), [](char c) { return static_cast<uint8_t>(c) == 0xff; })) {
      unknown("a flag type under a mask of all its bits");
    } else if (is_bitmask(l.type) && l.mask.empty() &&
               __builtin_popcountll(integer(data, l.type == kTcpFlag ? Order::Big : l.order)) != 1) {
      // A plain compare of several flags or none: nft prints a number (`tcp flags == 0x12`).
      unknown("a flag type compared with several flags or none");
    } else {
      right = value(l.type, l.order, data);
    }
    // `x >= a` then `x <= b` is how nft 1.0.6 writes the range `x a-b`.
    if (op == NFT_CMP_LTE && !statements_.empty() && !removed_.back()) {
      json& last = statements_.back();
      if (last.contains("match") && last["match"]["op"] == ">=" && last["match"]["left"] == left) {
        last["match"]["op"] = "==";
        last["match"]["right"] = {{"range", {last["match"]["right"], right}}};
        return used(l);
      }
    }
    const int index = static_cast<int>(statements_.size());
    emit({{"match", {{"op", op_name}, {"left", left}, {"right", right}}}});
    used(l);
    // A converted value is no protocol match to nft (relational_expr_pctx_update: a unary left).
    if (op == NFT_CMP_EQ && l.mask.empty() && !swapped) protocol_context(l, data, index);
  }

  void compare_fields(const Value& l, uint32_t op, std::string_view data) {
    if (op != NFT_CMP_EQ || !l.mask.empty() || data.size() != l.len) unknown("a compare of several fields at once");
    size_t off = 0;
    used(l);
    for (const Field* f : l.fields) {
      Value field;
      field.kind = Value::kExpr;
      field.expr = {{"payload", {{"protocol", f->protocol}, {"field", f->name}}}};
      const std::string_view bytes = data.substr(off, f->len);
      const int index = static_cast<int>(statements_.size());
      emit({{"match", {{"op", "=="}, {"left", field.expr}, {"right", value(f->type, Order::Big, bytes)}}}});
      // Each field's match gives its protocol, as one written alone would
      // (payload_match_expand: relational_expr_pctx_update per field):
      // `ether saddr ... ether type vlan` names the vlan header after it.
      protocol_context(field, bytes, index);
      off += f->len;
    }
  }

  // A bit field above its bytes' lowest bit: nft prints the value shifted down.
  void compare_shifted(const Value& l, uint32_t op, std::string_view data) {
    if (op != NFT_CMP_EQ && op != NFT_CMP_NEQ) unknown("an order comparison of a bit field");
    const uint64_t raw = integer(data, Order::Big);
    if (raw & ((uint64_t{1} << l.shift) - 1)) unknown("a bit field value outside its bits");
    emit({{"match", {{"op", op == NFT_CMP_EQ ? "==" : "!="}, {"left", l.expr}, {"right", small_value(l.type, raw >> l.shift)}}}});
    used(l);
  }

  // `meta length > 1000`, `ct original packets > 10`: nft compares a
  // host-endian value in network order (byteorder hton of the whole value,
  // see byteorder()) and prints the operand, the constant typed by it
  // (netlink_delinearize.c: a unary's argument; its value read back to host
  // order). Not after a mask or of a computed value.
  const Value& unswapped(const Value& v) {
    if (v.kind != Value::kExpr || !v.mask.empty() || !v.fields.empty() || v.bits || v.shift || v.raw_only) {
      unknown("a compare of a computed value in network byte order");
    }
    scratch_ = v;
    scratch_.swapped = false;
    return scratch_;
  }
  static std::string host_order(std::string b, uint32_t len) {
    if (b.size() != len) unknown("a value in network byte order of another width");
    std::reverse(b.begin(), b.end());
    return b;
  }

  // A bit field's value, shifted down: a number, or the name its type gives it (`ip dscp cs1`).
  static json small_value(uint32_t type, uint64_t n) {
    if (type == kInteger) return n;
    if (n > 0xff) unknown("a bit field value wider than a byte");
    return value(type, Order::Big, std::string(1, static_cast<char>(n)));
  }

  // The prefix length of a host-endian 32-bit mask (expr_mask_is_prefix:
  // ones from the top, then zeros), -1 when it is none or all zeros.
  static int host_prefix(const std::string& mask) {
    if (mask.size() != 4) return -1;
    const uint32_t m = static_cast<uint32_t>(integer(mask, Order::Host));
    if (m == 0) return -1;
    const int len = __builtin_popcount(m);
    return m == (~uint32_t{0} << (32 - len)) ? len : -1;
  }

  static uint32_t prefix_length(const std::string& mask) {
    uint32_t len = 0;
    size_t i = 0;
    for (; i < mask.size() && static_cast<uint8_t>(mask[i]) == 0xff; ++i) len += 8;
    if (i < mask.size()) {
      uint8_t m = static_cast<uint8_t>(mask[i]);
      while (m & 0x80) ++len, m = static_cast<uint8_t>(m << 1);
      if (m != 0) unknown("an address mask that is not a prefix");
      for (++i; i < mask.size(); ++i) {
        if (mask[i] != 0) unknown("an address mask that is not a prefix");
      }
    }
    return len;
  }

  json prefix(const Value& l, const std::string& data, uint32_t len) {
    std::string full = data;
    full.resize(l.field_len, '\0');
    return {{"prefix", {{"addr", value(l.type, l.order, full)}, {"len", len}}}};
  }

  // A match on the packet's protocol is what lets nft name the next
  // header's fields; that match is then not printed (it is implied).
  // The expressions a protocol match can be on are built once: this runs
  // for every `==` of every rule (87,000 on a 3,000-Service kube-proxy table).
  void protocol_context(const Value& l, std::string_view data, int index) {
    const json& e = l.expr;
    static const json kEtherType = {{"payload", {{"protocol", "ether"}, {"field", "type"}}}};
    static const json kVlanType = {{"payload", {{"protocol", "vlan"}, {"field", "type"}}}};
    static const json kIpProtocol = {{"payload", {{"protocol", "ip"}, {"field", "protocol"}}}};
    static const json kIp6Nexthdr = {{"payload", {{"protocol", "ip6"}, {"field", "nexthdr"}}}};
    static const json kMetaProtocol = {{"meta", {{"key", "protocol"}}}};
    static const json kMetaIiftype = {{"meta", {{"key", "iiftype"}}}};
    static const json kMetaL4proto = {{"meta", {{"key", "l4proto"}}}};
    static const json kMetaNfproto = {{"meta", {{"key", "nfproto"}}}};
    // Bridge and netdev tables: `ether type ip` / `meta protocol ip` name the network header.
    const bool ether_type = e == kEtherType;
    const bool ethertype = ether_type || e == kMetaProtocol || e == kVlanType;
    if (ethertype && data.size() == 2) {
      const uint64_t type = integer(data, Order::Big);
      if (ether_type && type == 0x8100) {
        vlan_dependency_ = index;
      } else if (type == 0x8100 || type == 0x88a8) {
        link_ = kOpaque;  // a vlan header nft stacks (proto.c proto_eth, proto_netdev): not followed here
      }
      network_ = type == 0x0800 ? "ip" : type == 0x86dd ? "ip6" : nullptr;
      network_dependency_ = network_ ? index : -1;
      // arp: a header nft names and this decoder does not.
      if (type == 0x0806) network_ = kOpaque;
      return;
    }
    // Outside bridge tables, `meta iiftype ether` is what names the link
    // header ether (proto.c proto_netdev/proto_inet: the hook gives none).
    if (e == kMetaIiftype && integer(data, Order::Host) == 1) {
      link_ = "ether";
      link_dependency_ = index;
      return;
    }
    if (data.size() != 1) return;
    const uint8_t proto = static_cast<uint8_t>(data[0]);
    static const json kIcmpType = {{"payload", {{"protocol", "icmp"}, {"field", "type"}}}};
    static const json kIcmp6Type = {{"payload", {{"protocol", "icmpv6"}, {"field", "type"}}}};
    if (e == kIcmpType || e == kIcmp6Type) icmp_type_ = proto;
    const bool l4 = e == kMetaL4proto || e == kIpProtocol || e == kIp6Nexthdr;
    if (l4) {
      const char* before = transport_;
      transport_ = transport_name(proto);
      transport_dependency_ = transport_ ? index : -1;
      if (transport_ == nullptr) {
        // proto.c: esp, ah, comp and igmp have headers nft names; another
        // protocol has none (meta_expr_pctx_update: proto_unknown), except
        // that a payload match of one leaves the description as it was
        // (payload_expr_pctx_update).
        const bool nft_names = proto == IPPROTO_ESP || proto == IPPROTO_AH || proto == IPPROTO_COMP || proto == IPPROTO_IGMP;
        if (nft_names || (e != kMetaL4proto && before != nullptr)) transport_ = kOpaque;
      }
      transport_dep_payload_ = e != kMetaL4proto;
      // netlink_delinearize.c ct_meta_common_postprocess: `meta l4proto`
      // drops the network protocol match before it where
      // meta_may_dependency_kill says (`meta nfproto ipv4 meta l4proto icmp`
      // is `meta l4proto icmp`; in inet, bridge and netdev tables only for
      // icmp or icmpv6 of that family; in ip and ip6 tables for its own family).
      if (e == kMetaL4proto && alive(network_dependency_) && meta_may_kill(proto)) removed_[network_dependency_] = true;
    }
    if (e == kMetaNfproto) {
      network_ = proto == NFPROTO_IPV4 ? "ip" : proto == NFPROTO_IPV6 ? "ip6" : nullptr;
      network_dependency_ = network_ ? index : -1;
    }
  }

  // The icmp type a match gave (payload.c: th_dep.icmp.type); kIcmpTypeAny
  // when a set of them did.
  static constexpr int kIcmpTypeNone = -1, kIcmpTypeAny = 256;
  bool icmp_echo() const {
    return transport_ != nullptr && ((std::string_view(transport_) == "icmp" && (icmp_type_ == 8 || icmp_type_ == 0)) ||
                                     (std::string_view(transport_) == "icmpv6" && (icmp_type_ == 128 || icmp_type_ == 129)));
  }

  bool meta_may_kill(uint8_t l4proto) const {
    const uint8_t nfproto = network_ == nullptr ? NFPROTO_UNSPEC
                            : std::string_view(network_) == "ip" ? NFPROTO_IPV4
                            : std::string_view(network_) == "ip6" ? NFPROTO_IPV6 : NFPROTO_UNSPEC;
    if (family_ == NFPROTO_IPV4 || family_ == NFPROTO_IPV6) return family_ == nfproto;
    if (!multi_family()) return true;
    if (l4proto != IPPROTO_ICMP && l4proto != IPPROTO_ICMPV6) return false;
    return !((nfproto == NFPROTO_IPV4 && l4proto == IPPROTO_ICMPV6) || (nfproto == NFPROTO_IPV6 && l4proto == IPPROTO_ICMP));
  }

  // A field named through a protocol match makes that match implied.
  void used(const Value& v) {
    for (const int d : v.map_deps) {
      if (alive(d)) removed_[d] = true;
    }
    if (!alive(v.dependency)) return;
    // payload.c payload_may_dependency_kill: in bridge, netdev and inet
    // tables a transport field leaves `ip protocol tcp` (a match on the
    // network header, which restricts the family) in place.
    if (v.from_payload && v.dependency == transport_dependency_ && transport_dep_payload_ && multi_family()) return;
    removed_[v.dependency] = true;
  }

  void range(const AttrTable& tb) {
    // A range compares the load whole (payload_match_postprocess: payload_expr_complete).
    const Value& loaded = reg(be32(tb[NFTA_RANGE_SREG]));
    const bool partial = !loaded.fields.empty() || loaded.bits || (loaded.field_len && loaded.len < loaded.field_len);
    const bool raw = loaded.raw.len != 0 && (loaded.raw_only || partial);
    const bool swapped = loaded.swapped;
    const Value& l = swapped ? unswapped(loaded) : raw ? scratch_ = as_raw(loaded, false) : read(tb[NFTA_RANGE_SREG]);
    if (l.kind != Value::kExpr || !l.mask.empty() || !l.fields.empty() || l.shift) unknown("a range on a computed value");
    std::string from(data_value(tb[NFTA_RANGE_FROM_DATA])), to(data_value(tb[NFTA_RANGE_TO_DATA]));
    if (swapped) from = host_order(from, l.len), to = host_order(to, l.len);
    const bool neq = be32(tb[NFTA_RANGE_OP]) == NFT_RANGE_NEQ;
    emit({{"match",
           {{"op", neq ? "!=" : "=="},
            {"left", l.expr},
            {"right", {{"range", {value(l.type, l.order, from), value(l.type, l.order, to)}}}}}}});
    used(l);
  }

  // ---------------------------------------------------------- sets
  const SetShape& set_named(std::string_view name) {
    const auto it = sets_.find(name);
    if (it == sets_.end() || it->second == nullptr) unknown("a lookup in a set that was not listed");
    return *it->second;
  }

  // The key a lookup reads: one register, or a concatenation of as many as
  // the set's key has fields.
  std::vector<Value> key_of(const nlattr* sreg, const SetShape& set, bool typed_constants = false) {
    return fields_of(sreg, set.key_types, typed_constants);
  }

  // Registers from `sreg` on holding one value of each of `types` (a set's
  // key, a map's data).
  // `typed_constants`: a set statement's key, whose constants nft types by
  // the set's key when it has several fields (see key_constant).
  std::vector<Value> fields_of(const nlattr* sreg, const std::vector<uint32_t>& types, bool typed_constants) {
    std::vector<Value> parts;
    size_t s = slot(be32(sreg));
    const size_t fields = std::max<size_t>(types.size(), 1);
    for (size_t i = 0; i < fields; ++i) {
      if (s >= regs_.size() || regs_[s].kind == Value::kNone) unknown("a lookup key that is not loaded");
      parts.push_back(regs_[s]);
      if (parts.back().kind == Value::kLiteral) parts.back() = key_constant(parts.back(), types, i, typed_constants);
      s += (regs_[s].len + 3) / 4;
    }
    for (Value& p : parts) {
      // A key takes a load whole (netlink_delinearize.c expr_postprocess:
      // payload_expr_complete): a field loaded in part, or several, or
      // the bytes of a bit field without its mask, are a raw payload.
      const bool partial = !p.fields.empty() || p.bits || (p.field_len && p.len < p.field_len);
      if (p.raw.len != 0 && (p.raw_only || partial)) p = as_raw(p, false);
    }
    for (Value& p : parts) {
      // `meta mark >> 8 & 0xf`, `tcp flags & (ack | urg)`: the AND is the
      // key (netlink_delinearize.c map_binop_postprocess keeps it where
      // payload_expr_trim finds no field), its flags as nft -j's ORs.
      // An address's mask prints as an address there (`ip saddr & 255.255.255.0`).
      const bool whole = p.field_len == 0 || p.len == p.field_len;
      if (!p.mask.empty() && p.kind == Value::kExpr && whole) {
        p.expr = {{"&", {p.masked, flag_ors(value(p.type, p.order, p.mask))}}};
        p.mask.clear();
      }
    }
    for (const Value& p : parts) {
      if (!p.mask.empty() || (p.field_len && p.len < p.field_len)) unknown("a set key that is a prefix");
      if (!p.fields.empty()) unknown("a set key of several fields loaded at once");
      if (p.bits) unknown("a set key of a bit field without its mask");
      if (p.len == 0) unknown("a set key of a map's values of unknown width");
    }
    return parts;
  }

  // A constant in a set statement's key (`add @s { ip saddr . 10002 }`):
  // nft types a concatenated key's fields by the set's key, typeof or not
  // (netlink_delinearize.c netlink_parse_dynset: netlink_parse_concat_key),
  // so it prints as the set's type at its place. A key of one field it
  // leaves untyped ("0xa020304 [invalid type]", datatype.c
  // invalid_type_print), as it leaves a lookup's (netlink_parse_lookup:
  // netlink_parse_concat_expr) and the fields of a map's value: not read
  // here. Its JSON is a bare value, whose print form the printer takes from
  // an expression beside it: only types that print as JSON gives them.
  static Value key_constant(const Value& c, const std::vector<uint32_t>& types, size_t i, bool typed_constants) {
    if (!typed_constants || types.size() < 2) unknown("a constant nft prints untyped (a key of one field, a lookup's, a value's field)");
    if (i >= types.size()) unknown("a constant in a set key of no known type");
    const uint32_t t = types[i];
    if (t != kIpaddr && t != kIp6addr && t != kInetService && t != kInetProto && t != kEtheraddr) {
      unknown("a constant of datatype " + std::to_string(t) + " in a set statement");
    }
    Value v = c;
    v.kind = Value::kExpr;
    v.type = types[i];
    v.expr = value(v.type, Order::Big, c.bytes);
    return v;
  }

  static json key_expr(const std::vector<Value>& parts) {
    if (parts.size() == 1) return parts[0].expr;
    json c = json::array();
    for (const Value& p : parts) c.push_back(p.expr);
    return {{"concat", c}};
  }

  // An anonymous set's elements, typed by the lookup's operands.
  static json elements(const SetShape& set, const std::vector<Value>& parts) {
    if (!set.elements_read) unknown(kAnonymousElementsUnread);
    // nft types the elements by the set's own key (netlink.c
    // netlink_delinearize_set): a field of no datatype (a ct proto-src
    // nft did not know the protocol of) prints "0x16 [invalid type]".
    // A typeof key says the same (ct.c ct_expr_parse_udata: the template's
    // type, none for ct's addresses and ports).
    auto untyped_ct = [](const TypeofField& f) {
      return f.expr == kTypeofCt && (f.key == NFT_CT_SRC || f.key == NFT_CT_DST || f.key == NFT_CT_PROTO_SRC ||
                                     f.key == NFT_CT_PROTO_DST);
    };
    if (set.key_types.size() != parts.size() ||
        std::any_of(set.key_types.begin(), set.key_types.end(), [](uint32_t t) { return t == kInvalid; }) ||
        std::any_of(set.key_typeof.begin(), set.key_typeof.end(), untyped_ct)) {
      unknown("an anonymous set of a key field of no datatype");
    }
    std::vector<KeyField> key;
    for (const Value& p : parts) key.push_back({p.type, p.order, p.len, false, p.shift});
    return {{"set", set_elements_json(set, key)}};
  }

  json set_ref(std::string_view name, const SetShape& set, const std::vector<Value>& parts) {
    if (set.flags & NFT_SET_ANONYMOUS) {
      // nft turns a host-endian key to network order for an interval set
      // only, whose elements it stores so (netlink_linearize.c).
      for (const Value& p : parts) {
        if (p.swapped && !(set.flags & NFT_SET_INTERVAL)) unknown("an anonymous set keyed by a value in network byte order");
      }
      return elements(set, parts);
    }
    return "@" + std::string(name);
  }

  void lookup(const AttrTable& tb) {
    const std::string_view name = str(tb[NFTA_LOOKUP_SET]);
    const SetShape& set = set_named(name);
    const std::vector<Value> parts = key_of(tb[NFTA_LOOKUP_SREG], set);
    const json key = key_expr(parts);
    // netlink_delinearize.c payload_icmp_check: an anonymous set of icmp
    // types sets the context too (from its first element): echo types only
    // are followed here.
    for (const Value& p : parts) {
      if (parts.size() == 1 && p.expr.contains("payload") && p.expr["payload"].value("field", "") == "type" &&
          (p.expr["payload"].value("protocol", "") == "icmp" || p.expr["payload"].value("protocol", "") == "icmpv6")) {
        if (!(set.flags & NFT_SET_ANONYMOUS)) continue;
        const bool v6 = p.expr["payload"].value("protocol", "") == "icmpv6";
        bool echo = set.elements_read && !set.elements.empty();
        for (const RawSetElement& e : set.elements) {
          const int t = e.key.size() == 1 ? static_cast<uint8_t>(e.key[0]) : -1;
          echo = echo && (v6 ? (t == 128 || t == 129) : (t == 0 || t == 8));
        }
        icmp_type_ = echo ? (v6 ? 128 : 8) : kIcmpTypeAny;
      }
    }
    const json data = set_ref(name, set, parts);
    if (tb[NFTA_LOOKUP_DREG] && be32(tb[NFTA_LOOKUP_DREG]) != NFT_REG_VERDICT) {
      // A map expression is part of the statement that uses it: its key's
      // fields drop their matches when that statement is read.
      Value v = map_value(set, key, data);
      for (const Value& p : parts) {
        v.map_deps.insert(v.map_deps.end(), p.map_deps.begin(), p.map_deps.end());
        if (p.dependency >= 0 && !(p.from_payload && p.dependency == transport_dependency_ && transport_dep_payload_ && multi_family())) {
          v.map_deps.push_back(p.dependency);
        }
      }
      return write(tb[NFTA_LOOKUP_DREG], std::move(v));
    }
    for (const Value& p : parts) used(p);
    if (tb[NFTA_LOOKUP_DREG]) {
      return emit({{"vmap", {{"key", key}, {"data", data}}}});
    }
    const bool inverted = be32(tb[NFTA_LOOKUP_FLAGS]) & NFT_LOOKUP_F_INV;
    emit({{"match", {{"op", inverted ? "!=" : "=="}, {"left", key}, {"right", data}}}});
  }

  // A map expression (netlink_delinearize.c netlink_parse_lookup with a
  // dreg): the value a key maps to, typed by the map's data. Only data of
  // one known type of a fixed width; a concatenation (nat's `addr . port`)
  // or an integer (whose byte order the set's typeof would tell) is unknown.
  static Value map_value(const SetShape& set, const json& key, const json& data) {
    Value v;
    v.kind = Value::kExpr;
    v.expr = {{"map", {{"key", key}, {"data", data}}}};
    v.type = set.data_type;
    switch (set.data_type) {
      case kIpaddr: case kMark: case kClassid: v.len = 4; break;
      case kIp6addr: v.len = 16; break;
      case kInetService: v.len = 2; break;
      case kEtheraddr: v.len = 6; break;
      // nat's `addr . port` (netlink_delinearize.c is_nat_proto_map).
      case kNatConcat4: v.len = 8; break;
      case kNatConcat6: v.len = 20; break;
      default:
        // A named map prints by its name, whatever its values are; their
        // width is then not known, which a key or a compare would need.
        if (!data.is_string() || set.data_type >= 64) unknown("a map expression of data type " + std::to_string(set.data_type));
        v.len = 0;
    }
    v.order = set.data_type == kMark || set.data_type == kClassid ? Order::Host : Order::Big;
    if (set.data_interval) v.interval_data_len = set.data_len;
    return v;
  }

  void dynset(const AttrTable& tb) {
    // A zero timeout is the set's own (nft sends it for `update @s { ip saddr }`) and is not printed.
    const uint64_t timeout_ms = be64(tb[NFTA_DYNSET_TIMEOUT]);
    // nft -j prints whole seconds (json.c time_type_json); the text would show the milliseconds.
    if (timeout_ms % 1000 != 0) unknown("a set statement timeout of milliseconds");
    const std::string_view name = str(tb[NFTA_DYNSET_SET_NAME]);
    const SetShape& set = set_named(name);
    // A constant key of one field: nft leaves it untyped (netlink_parse_dynset
    // types only a concatenation's fields) and prints "0xa020304 [invalid
    // type]" (datatype.c invalid_type_print, the bytes read big-endian). nft
    // -j has no form for it: the statement becomes its text, the key put in
    // where a placeholder printed.
    const Value& key_reg = reg(be32(tb[NFTA_DYNSET_SREG_KEY]));
    std::string untyped;
    std::vector<Value> parts;
    if (key_reg.kind == Value::kLiteral && set.key_types.size() <= 1 && key_reg.bytes.size() == set.key_len) {
      untyped = invalid_type_text(key_reg.bytes);
      Value p;
      p.kind = Value::kExpr;
      p.expr = kUntypedKey;
      p.len = key_reg.len;
      parts.push_back(std::move(p));
    } else {
      parts = key_of(tb[NFTA_DYNSET_SREG_KEY], set, true);
    }
    const uint32_t op = be32(tb[NFTA_DYNSET_OP]);
    static constexpr const char* kOps[] = {"add", "update", "delete"};
    if (op > NFT_DYNSET_OP_DELETE) unknown("dynset op " + std::to_string(op));
    json elem = key_expr(parts);
    if (timeout_ms != 0) elem = {{"elem", {{"val", elem}, {"timeout", timeout_ms / 1000}}}};
    json body = {{"op", kOps[op]}, {"elem", elem}, {"set", "@" + std::string(name)}};
    // The statements each element gets (netlink_parse_dynset: one in
    // NFTA_DYNSET_EXPR, several in NFTA_DYNSET_EXPRESSIONS); nft -j prints
    // them stateless.
    json stmts = json::array();
    if (tb[NFTA_DYNSET_EXPR]) {
      const AttrTable et = parse_nested(tb[NFTA_DYNSET_EXPR]);
      stmts.push_back(element_statement(str(et[NFTA_EXPR_NAME]), parse_nested(et[NFTA_EXPR_DATA])));
    }
    for_each_expression(tb[NFTA_DYNSET_EXPRESSIONS], [&](std::string_view n, const AttrTable& t) {
      stmts.push_back(element_statement(n, t));
    });
    if (!stmts.empty()) body["stmt"] = stmts;
    // netlink_parse_dynset: statements on an anonymous set's elements, no
    // map: nft prints a meter (`meter xyz size 8192 { ip saddr counter }`).
    if (!stmts.empty() && (set.flags & NFT_SET_ANONYMOUS) && !tb[NFTA_DYNSET_SREG_DATA]) unknown("a meter");
    for (const Value& p : parts) used(p);
    if (tb[NFTA_DYNSET_SREG_DATA]) {
      // A map's: `update @m { ip saddr : tcp sport }` (statement.c
      // map_stmt_print; nft 1.0.6 -j prints it as that text, later nfts as
      // {"map": {"op", "elem", "data", "map"}}, the form used here).
      if (set.data_type == NFT_DATA_VERDICT) unknown("a map statement of a verdict");
      const Value& constant = reg(be32(tb[NFTA_DYNSET_SREG_DATA]));
      if (constant.kind == Value::kLiteral) return emit(with_untyped_key(map_statement_text(body, set, constant.bytes), untyped));
      const std::vector<Value> data = fields_of(tb[NFTA_DYNSET_SREG_DATA], split_key_type(set.data_type), false);
      for (const Value& p : data) used(p);
      body["data"] = key_expr(data);
      body["map"] = body["set"];
      body.erase("set");
      return emit(with_untyped_key({{"map", body}}, untyped));
    }
    emit(with_untyped_key({{"set", body}}, untyped));
  }

  static constexpr const char* kUntypedKey = "@@untyped-key@@";  // a set reference's form: printed as it is

  static std::string invalid_type_text(std::string_view b) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string digits;
    for (unsigned char c : b) digits += kDigits[c >> 4], digits += kDigits[c & 15];
    const size_t first = digits.find_first_not_of('0');
    return "0x" + (first == std::string::npos ? std::string("0") : digits.substr(first)) + " [invalid type]";
  }

  // A set or map statement with an untyped key: its text, the key in place.
  json with_untyped_key(const json& statement, const std::string& untyped) {
    if (untyped.empty()) return statement;
    std::string text;
    if (statement.is_string()) {
      text = statement.get<std::string>();
    } else {
      const nft_text::NftRuleText t = nft_text::nft_rule_text(json::array({statement}), nft_family_name(family_), "");
      if (!t.unknown.empty()) unknown("a set statement: " + t.unknown);
      text = t.text;
    }
    const size_t at = text.find(kUntypedKey);
    if (at == std::string::npos || text.find(kUntypedKey, at + 1) != std::string::npos) unknown("a set statement of an unknown text");
    return text.replace(at, std::string_view(kUntypedKey).size(), untyped);
  }

  // `update @m { ip saddr : 0x00000002 }`: a constant value, which nft
  // types by the map's data (netlink_delinearize.c netlink_parse_dynset:
  // expr_set_type(expr_data, set->data->dtype ...)), typeof or not. nft -j
  // has no form that says that type, so the statement is its text, as nft
  // 1.0.6's JSON holds a map statement (json.c stmt_print_json), printed
  // as statement.c map_stmt_print does: the set statement's text with
  // " : value" before its closing brace.
  json map_statement_text(const json& set_body, const SetShape& set, const std::string& bytes) {
    const std::vector<KeyField> fields = declared_data(set);
    if (fields.size() != 1 || fields[0].len != bytes.size()) unknown("a constant map value of another width than the map's");
    const KeyField& f = fields[0];
    const json data = value(f.type, f.order, bytes);
    if (data.is_array()) unknown("a constant map value of several flags");
    const std::string type_name =
        f.type == kInteger ? (f.hex ? nft_text::kIntegerHex : nft_text::kIntegerDecimal) : datatype_name(f.type);
    const nft_text::NftElementText v = nft_text::nft_set_element_text(json::array({0, data}), {nft_text::kIntegerDecimal}, type_name);
    if (!v.unknown.empty()) unknown("a constant map value: " + v.unknown);
    const nft_text::NftRuleText t = nft_text::nft_rule_text(json::array({{{"set", set_body}}}), nft_family_name(family_), "");
    if (!t.unknown.empty()) unknown("a map statement: " + t.unknown);
    if (t.text.size() < 2 || t.text.compare(t.text.size() - 2, 2, " }") != 0) unknown("a map statement of an unknown text");
    return t.text.substr(0, t.text.size() - 2) + " : " + v.value + " }";
  }

  // A named object's use (netlink_delinearize.c netlink_parse_objref): by
  // name, or by a map from a key to names.
  void objref(const AttrTable& tb) {
    if (tb[NFTA_OBJREF_IMM_TYPE]) {
      return emit({{object_kind(be32(tb[NFTA_OBJREF_IMM_TYPE])), std::string(str(tb[NFTA_OBJREF_IMM_NAME]))}});
    }
    const std::string_view name = str(tb[NFTA_OBJREF_SET_NAME]);
    const SetShape& set = set_named(name);
    if (!(set.flags & NFT_SET_OBJECT)) unknown("an object reference through a set that is not an object map");
    const std::vector<Value> parts = key_of(tb[NFTA_OBJREF_SET_SREG], set);
    const json data = set_ref(name, set, parts);
    for (const Value& p : parts) used(p);
    emit({{object_kind(set.obj_type), {{"map", {{"key", key_expr(parts)}, {"data", data}}}}}});
  }

  // json.c names the statement by the object's type (obj_type_name).
  static std::string object_kind(uint32_t type) {
    std::string name = object_kind_name(type);
    if (name.empty()) unknown("an object of type " + std::to_string(type));
    return name;
  }

  // A statement a set statement attaches to its element, as nft -j prints
  // it there (stateless: a counter without its numbers).
  static json element_statement(std::string_view name, const AttrTable& tb) {
    if (name == "counter") return {{"counter", nullptr}};
    if (name == "limit") return limit_json(tb);
    if (name == "connlimit") return connlimit_json(tb);
    if (name == "quota") return quota_json(tb);
    unknown("a set statement with a \"" + std::string(name) + "\" statement");
  }

  // json.c log_stmt_json: what the kernel dumps of a log expression, the
  // default level (warn) left out.
  void log(const AttrTable& tb) {
    json body = json::object();
    if (tb[NFTA_LOG_PREFIX]) body["prefix"] = std::string(str(tb[NFTA_LOG_PREFIX]));
    if (tb[NFTA_LOG_GROUP]) body["group"] = ntohs(mnl_attr_get_u16(tb[NFTA_LOG_GROUP]));
    if (tb[NFTA_LOG_SNAPLEN]) body["snaplen"] = be32(tb[NFTA_LOG_SNAPLEN]);
    if (tb[NFTA_LOG_QTHRESHOLD]) body["queue-threshold"] = ntohs(mnl_attr_get_u16(tb[NFTA_LOG_QTHRESHOLD]));
    if (tb[NFTA_LOG_LEVEL]) {
      static constexpr const char* kLevels[] = {"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug", "audit"};
      const uint32_t level = be32(tb[NFTA_LOG_LEVEL]);
      if (level > 8) unknown("log level " + std::to_string(level));
      if (level != 4) body["level"] = kLevels[level];
    }
    const uint32_t f = be32(tb[NFTA_LOG_FLAGS]);
    if (f != 0) {
      if (f & ~0x2fu) unknown("log flags " + std::to_string(f));
      json names = json::array();
      if (f == 0x2f) {
        names.push_back("all");
      } else {
        for (const auto& [bit, n] : std::initializer_list<std::pair<uint32_t, const char*>>{
                 {0x01, "tcp sequence"}, {0x02, "tcp options"}, {0x04, "ip options"}, {0x08, "skuid"}, {0x20, "ether"}}) {
          if (f & bit) names.push_back(n);
        }
      }
      body["flags"] = names.size() == 1 ? names[0] : names;
    }
    emit({{"log", body.empty() ? json(nullptr) : body}});
  }

  // ---------------------------------------------------------- actions
  // A value an action or a mangle statement takes: a constant prints as the
  // target's type, an expression as itself.
  json operand(const Value& v, uint32_t type, Order order) {
    if (v.kind == Value::kLiteral) return value(type, order, v.bytes);
    if (!v.fields.empty()) unknown("a value of several fields loaded at once");
    if (v.shift) unknown("a value of a bit field above its lowest bit");
    if (v.type == kNatConcat4 || v.type == kNatConcat6) unknown("a value of a nat map of address and port");
    return v.expr;
  }

  static json nat_flags(uint32_t f) {
    json names = json::array();
    if (f & NF_NAT_RANGE_PROTO_RANDOM) names.push_back("random");
    if (f & NF_NAT_RANGE_PROTO_RANDOM_FULLY) names.push_back("fully-random");
    if (f & NF_NAT_RANGE_PERSISTENT) names.push_back("persistent");
    if (f & NF_NAT_RANGE_NETMAP) names.push_back("netmap");
    if (names.size() == 1) return names[0];
    return names;
  }

  void nat(const AttrTable& tb) {
    const bool dnat = be32(tb[NFTA_NAT_TYPE]) == NFT_NAT_DNAT;
    const uint32_t nat_family = be32(tb[NFTA_NAT_FAMILY]);
    const uint32_t addr_type = nat_family == NFPROTO_IPV6 ? kIp6addr : kIpaddr;
    nat_port_present_ = tb[NFTA_NAT_REG_PROTO_MIN] != nullptr;
    json body = json::object();
    // netlink_parse_nat: the family (json.c: printed for ipv4 and ipv6 only) in an inet table.
    if (family_ == NFPROTO_INET && (nat_family == NFPROTO_IPV4 || nat_family == NFPROTO_IPV6)) {
      body["family"] = nat_family == NFPROTO_IPV6 ? "ip6" : "ip";
    }
    if (nat_interval_map(tb, nat_family, body)) {
      // the map gives the addresses (and ports)
    } else if (!nat_concat(tb, nat_family, body)) {  // else the map gives both address and port
      // netlink_delinearize.c rule_parse_postprocess STMT_NAT: the address
      // is read like a match (its map's key drops its matches), the port
      // after payload_dependency_reset (it drops none).
      if (tb[NFTA_NAT_REG_ADDR_MIN]) {
        body["addr"] = nat_range(tb[NFTA_NAT_REG_ADDR_MIN], tb[NFTA_NAT_REG_ADDR_MAX], addr_type);
        used(reg(be32(tb[NFTA_NAT_REG_ADDR_MIN])));
      }
      if (tb[NFTA_NAT_REG_PROTO_MIN]) body["port"] = nat_range(tb[NFTA_NAT_REG_PROTO_MIN], tb[NFTA_NAT_REG_PROTO_MAX], kInetService);
    }
    uint32_t f = be32(tb[NFTA_NAT_FLAGS]) & ~(NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED);
    if (f & NF_NAT_RANGE_NETMAP) {
      // `snat ip prefix to ...` (netlink_parse_nat: STMT_NAT_F_PREFIX;
      // json.c: "netmap" among the flags, "prefix" in type_flags).
      if (!body.contains("addr") || !body["addr"].contains("map")) unknown("a nat with a netmap prefix not from an interval map");
      body["type_flags"] = "prefix";
    }
    if (f) body["flags"] = nat_flags(f);
    emit({{dnat ? "dnat" : "snat", body}});
  }

  // netlink_delinearize.c is_nat_addr_map: an address map whose values are
  // intervals (of addresses, or of addresses and ports) gives the nat all
  // its addresses and ports; nft then names the family in any table and
  // reads no other register.
  bool nat_interval_map(const AttrTable& tb, uint32_t nat_family, json& body) {
    if (!tb[NFTA_NAT_REG_ADDR_MIN]) return false;
    const Value& a = reg(be32(tb[NFTA_NAT_REG_ADDR_MIN]));
    if (a.kind != Value::kExpr || !a.expr.contains("map") || a.interval_data_len == 0) return false;
    const uint32_t addr = nat_family == NFPROTO_IPV6 ? 16 : 4;
    const uint32_t n = a.interval_data_len;
    if (n != 2 * addr && n != 2 * (addr + 4)) unknown("a nat map of intervals of another width");
    body["family"] = nat_family == NFPROTO_IPV6 ? "ip6" : "ip";
    body["addr"] = a.expr;
    used(a);
    return true;
  }

  // `dnat ip to ip saddr map { a : b . port }`: one map gives the address
  // and, in the register after it, the port (netlink_delinearize.c
  // netlink_parse_nat, is_nat_proto_map); nft then names the family in any table.
  bool nat_concat(const AttrTable& tb, uint32_t nat_family, json& body) {
    if (!tb[NFTA_NAT_REG_ADDR_MIN]) return false;
    const Value& a = reg(be32(tb[NFTA_NAT_REG_ADDR_MIN]));
    const uint32_t want = nat_family == NFPROTO_IPV6 ? kNatConcat6 : kNatConcat4;
    if (a.kind != Value::kExpr || !a.expr.contains("map") || a.type != want) return false;
    const uint32_t addr_min = be32(tb[NFTA_NAT_REG_ADDR_MIN]);
    const size_t port_slot = slot(addr_min) + (nat_family == NFPROTO_IPV6 ? 4 : 1);
    if (!tb[NFTA_NAT_REG_PROTO_MIN] || slot(be32(tb[NFTA_NAT_REG_PROTO_MIN])) != port_slot) {
      unknown("a nat map of address and port read otherwise");
    }
    if ((tb[NFTA_NAT_REG_ADDR_MAX] && be32(tb[NFTA_NAT_REG_ADDR_MAX]) != addr_min) ||
        (tb[NFTA_NAT_REG_PROTO_MAX] && be32(tb[NFTA_NAT_REG_PROTO_MAX]) != be32(tb[NFTA_NAT_REG_PROTO_MIN]))) {
      unknown("a nat map of address and port ranges");
    }
    body["family"] = nat_family == NFPROTO_IPV6 ? "ip6" : "ip";
    body["addr"] = a.expr;
    used(a);
    return true;
  }

  json nat_range(const nlattr* min, const nlattr* max, uint32_t type) {
    const Value& lo = read(min);
    if (max && be32(max) != be32(min)) {
      const Value& hi = read(max);
      if (lo.kind != Value::kLiteral || hi.kind != Value::kLiteral) unknown("a nat range of expressions");
      // netlink_parse_nat: two registers are a range, of addresses printed
      // as a prefix where it is one (range_expr_to_prefix; both ends equal:
      // a /32), of ports always as a range.
      if (type == kIpaddr || type == kIp6addr) {
        const int plen = prefix_len(lo.bytes, hi.bytes);
        if (plen >= 0) {
          if (nat_port_present_) unknown("a nat address prefix with a port");
          return {{"prefix", {{"addr", value(type, Order::Big, lo.bytes)}, {"len", plen}}}};
        }
      } else if (lo.bytes == hi.bytes) {
        unknown("a nat port range of one port");
      }
      return {{"range", {value(type, Order::Big, lo.bytes), value(type, Order::Big, hi.bytes)}}};
    }
    // `snat to ip saddr map { ... }`: an address map of the nat's own family.
    if (lo.kind == Value::kExpr && lo.expr.contains("map") && lo.type == type) return lo.expr;
    if (lo.kind != Value::kLiteral) unknown("a nat address from an expression");
    return value(type, Order::Big, lo.bytes);
  }

  // masquerade and redirect: flags, and a port (range) to map to.
  json port_action(const AttrTable& tb, int flags_attr, int min_attr, int max_attr) {
    json body = json::object();
    if (tb[min_attr]) body["port"] = nat_range(tb[min_attr], tb[max_attr], kInetService);
    const uint32_t f = be32(tb[flags_attr]) & ~NF_NAT_RANGE_PROTO_SPECIFIED;
    if (f) body["flags"] = nat_flags(f);
    if (body.empty()) return nullptr;
    return body;
  }

  void masquerade(const AttrTable& tb) {
    emit({{"masquerade", port_action(tb, NFTA_MASQ_FLAGS, NFTA_MASQ_REG_PROTO_MIN, NFTA_MASQ_REG_PROTO_MAX)}});
  }
  void redirect(const AttrTable& tb) {
    emit({{"redirect", port_action(tb, NFTA_REDIR_FLAGS, NFTA_REDIR_REG_PROTO_MIN, NFTA_REDIR_REG_PROTO_MAX)}});
  }

  // netlink_delinearize.c netlink_parse_tproxy: the address is of the
  // statement's family (the table's, or ip/ip6 in an inet table, where nft
  // names it), the port an inet_service; both network order.
  void tproxy(const AttrTable& tb) {
    const uint32_t tproxy_family = tb[NFTA_TPROXY_FAMILY] ? be32(tb[NFTA_TPROXY_FAMILY]) : NFPROTO_UNSPEC;
    json body = json::object();
    if (family_ == NFPROTO_INET && tproxy_family != NFPROTO_UNSPEC) {
      if (tproxy_family != NFPROTO_IPV4 && tproxy_family != NFPROTO_IPV6) unknown("a tproxy of another family");
      body["family"] = tproxy_family == NFPROTO_IPV6 ? "ip6" : "ip";
    }
    if (tb[NFTA_TPROXY_REG_ADDR]) {
      if (tproxy_family != NFPROTO_IPV4 && tproxy_family != NFPROTO_IPV6) unknown("a tproxy address of no family");
      const Value& a = read(tb[NFTA_TPROXY_REG_ADDR]);
      if (a.kind != Value::kLiteral) unknown("a tproxy address from an expression");
      body["addr"] = value(tproxy_family == NFPROTO_IPV6 ? kIp6addr : kIpaddr, Order::Big, a.bytes);
    }
    if (tb[NFTA_TPROXY_REG_PORT]) {
      const Value& p = read(tb[NFTA_TPROXY_REG_PORT]);
      if (p.kind != Value::kLiteral) unknown("a tproxy port from an expression");
      body["port"] = value(kInetService, Order::Big, p.bytes);
    }
    emit({{"tproxy", body}});
  }

  void reject(const AttrTable& tb) {
    const uint32_t type = be32(tb[NFTA_REJECT_TYPE]);
    const uint8_t code = tb[NFTA_REJECT_ICMP_CODE] ? mnl_attr_get_u8(tb[NFTA_REJECT_ICMP_CODE]) : 0;
    // netlink_delinearize.c stmt_reject_postprocess: in ip and ip6 tables
    // `reject with tcp reset` drops the transport match; in inet, bridge and
    // netdev tables a reject but icmpx's drops the network one.
    if ((family_ == NFPROTO_IPV4 || family_ == NFPROTO_IPV6) && type == NFT_REJECT_TCP_RST && alive(transport_dependency_)) {
      removed_[transport_dependency_] = true;
    }
    if (multi_family() && type != NFT_REJECT_ICMPX_UNREACH && alive(network_dependency_)) removed_[network_dependency_] = true;
    if (type == NFT_REJECT_TCP_RST) return emit({{"reject", {{"type", "tcp reset"}}}});
    const char* kind = nullptr;
    std::vector<std::pair<uint64_t, const char*>> codes;
    if (type == NFT_REJECT_ICMPX_UNREACH) {
      kind = "icmpx";
      codes = {{0, "no-route"}, {1, "port-unreachable"}, {2, "host-unreachable"}, {3, "admin-prohibited"}};
    } else if (type == NFT_REJECT_ICMP_UNREACH && (family_ == NFPROTO_IPV6 || (network_ && std::string_view(network_) == "ip6"))) {
      kind = "icmpv6";
      codes = {{0, "no-route"}, {1, "admin-prohibited"}, {3, "addr-unreachable"}, {4, "port-unreachable"},
               {5, "policy-fail"}, {6, "reject-route"}};
    } else if (type == NFT_REJECT_ICMP_UNREACH && family_ == NFPROTO_IPV4) {
      kind = "icmp";
      codes = {{0, "net-unreachable"}, {1, "host-unreachable"}, {2, "prot-unreachable"}, {3, "port-unreachable"},
               {9, "net-prohibited"}, {10, "host-prohibited"}, {13, "admin-prohibited"}};
    } else {
      unknown("a reject of type " + std::to_string(type) + " in this family");
    }
    emit({{"reject", {{"type", kind}, {"expr", symbol(code, codes)}}}});
  }

  // statement.c chain_stmt_print: a bound chain's rules inside the rule, at
  // one fixed indentation whatever the nesting (chain_rules_print's "\t\t"
  // and its "\t"); nft -j prints this statement as that same text.
  json binding(int32_t code, const ChainBinding& chain) {
    if (code != NFT_JUMP && code != NFT_GOTO) unknown("a chain binding with verdict " + std::to_string(code));
    if (!chain.read) unknown(kBindingNotRead);
    if (!chain.unknown.empty()) unknown("a chain binding: " + chain.unknown);
    std::string text = code == NFT_JUMP ? "jump {\n" : "goto {\n";
    for (const std::string& rule : chain.rules) text += "\t\t\t" + rule + "\n";
    return text + "\t\t}";
  }

  uint8_t family_;
  const TableSets& sets_;
  const ChainBindings* bindings_;
  const char* link_ = nullptr;
  const char* network_ = nullptr;
  const char* transport_ = nullptr;
  int link_dependency_ = -1, vlan_dependency_ = -1, network_dependency_ = -1, transport_dependency_ = -1;
  bool transport_dep_payload_ = false;  // the transport match is `ip protocol` / `ip6 nexthdr`
  int icmp_type_ = kIcmpTypeNone;
  bool nat_port_present_ = false;  // the nat being read has a port
  int dep_floor_ = 0;                   // matches before it are no longer dropped
  std::array<Value, 20> regs_{};
  Value scratch_;  // a load read back raw for one compare
  std::vector<json> statements_;
  std::vector<bool> removed_;
};

}  // namespace

json element_statements(const nlattr* expressions) {
  json list = json::array();
  for_each_expression(expressions, [&](std::string_view name, const AttrTable& tb) {
    json out = json::object();
    if (name == "counter") {
      out["counter"] = {{"packets", be64(tb[NFTA_COUNTER_PACKETS])}, {"bytes", be64(tb[NFTA_COUNTER_BYTES])}};
    } else if (name == "limit") {
      out.update(limit_json(tb));
    } else if (name == "quota") {
      out = quota_json(tb);
    } else if (name == "connlimit") {
      out = connlimit_json(tb);
    } else {
      unknown("a set element with a \"" + std::string(name) + "\" statement");
    }
    list.push_back(std::move(out));
  });
  // One statement merges into the element's object, as nft -j writes it
  // (json.c set_elem_expr_json); several, whose order an object would not
  // keep, go in a list under "stmt" in the kernel's order, which nft prints
  // them in (expression.c set_elem_expr_print, rule.c set_print_declaration).
  if (list.size() == 1) return list[0];
  if (list.empty()) return json::object();
  return {{"stmt", list}};
}

NativeStatements native_statements(const nlattr* expressions, uint8_t family, const TableSets& sets,
                                   const ChainBindings* bindings) {
  NativeStatements out;
  try {
    Decoder d(family, sets, bindings);
    for_each_expression(expressions, [&](std::string_view name, const AttrTable& tb) { d.expr(name, tb); });
    out.statements = d.finish();
  } catch (const Unknown& u) {
    out.unknown = u.what;
    out.statements = json::array();
  }
  return out;
}

}  // namespace dpscope::netfilter
