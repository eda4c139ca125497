#include "collectors/netfilter/nft_typeof.h"

#include <libnftnl/udata.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "collectors/netfilter/nft_values.h"

namespace dpscope::netfilter {

// Its own namespace: the directory compiles in unity batches, whose other
// files' anonymous namespaces (and using-directives) would meet these names.
namespace typeof_udata {
namespace {

using nftval::unknown;

// nft v1.0.6's expression types (include/expression.h enum expr_types): the
// userdata names an expression by it.
enum ExprType : uint32_t {
  kExprVerdict = 1, kExprPayload = 7, kExprExthdr = 8, kExprMeta = 9, kExprSocket = 10, kExprOsf = 11,
  kExprCt = 12, kExprConcat = 13, kExprNumgen = 23, kExprHash = 24, kExprRt = 25, kExprFib = 26,
  kExprXfrm = 27,
};

// The kinds of the types nft has no parse_udata for (why it cannot be a typeof).
const char* expr_type_name(uint32_t etype) {
  static constexpr const char* kNames[] = {
      "invalid", "verdict", "symbol", "variable", "value", "prefix", "range", "payload", "exthdr", "meta",
      "socket", "osf", "ct", "concat", "list", "set", "set reference", "set element", "mapping", "map",
      "unary", "binop", "relational", "numgen", "hash", "rt", "fib", "xfrm", "catchall", "flagcmp"};
  return etype < std::size(kNames) ? kNames[etype] : "unknown";
}

// What concat_type_alloc makes of a field's datatype: type 0 ends the walk
// over a concatenation's subtypes; ct_label and ct_event are missing from
// datatype.c's datatypes[], so a walk that reaches them fails.
enum class Dtype { Invalid, Listed, Unlisted };

// One expression read back: its text, and what nft's checks of it need.
struct Field {
  std::string text;
  bool has_width = true;  // expr->len > 0
  Dtype dtype = Dtype::Listed;
};

// The attributes of one userdata nest by type, as nft's parse callbacks keep
// them (the last of each type it knows; unknown types are skipped).
using Attrs = std::vector<const nftnl_udata*>;

// A callback's verdict on one attribute: keep it, skip it, or fail the nest.
enum class Take { Keep, Skip, Fail };

// nftnl_udata_parse only checks that an attribute starts inside the buffer:
// one whose header or value runs past it is read out of bounds, by nft too.
void check_bounds(const void* data, uint32_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + len;
  while (p < end) {
    if (end - p < 2 || end - p - 2 < p[1]) unknown("typeof userdata with an attribute past its end");
    p += 2 + p[1];  // struct nftnl_udata: type, len, value[len]
  }
}

template <class Judge>
Attrs parse_nest(const void* data, uint32_t len, size_t slots, Judge judge) {
  check_bounds(data, len);
  struct Ctx {
    Attrs tb;
    Judge& judge;
  } ctx{Attrs(slots, nullptr), judge};
  const int rc = nftnl_udata_parse(
      data, len,
      [](const nftnl_udata* attr, void* d) -> int {
        auto* c = static_cast<Ctx*>(d);
        const uint8_t type = nftnl_udata_type(attr);
        switch (c->judge(type, nftnl_udata_len(attr))) {
          case Take::Fail: return -1;
          case Take::Skip: return 0;
          case Take::Keep: c->tb[type] = attr; return 0;
        }
        return 0;
      },
      &ctx);
  if (rc < 0) unknown("typeof userdata nft v1.0.6 rejects");
  return ctx.tb;
}

// The callback most expressions use (meta_parse_udata, ct_parse_udata ...):
// types below `count` are u32s, any other length fails the nest.
Attrs u32_attrs(const nftnl_udata* nest, size_t count) {
  return parse_nest(nftnl_udata_get(nest), nftnl_udata_len(nest), count, [count](uint8_t type, uint8_t len) {
    if (type >= count) return Take::Skip;
    return len == sizeof(uint32_t) ? Take::Keep : Take::Fail;
  });
}

uint32_t u32(const nftnl_udata* a) {
  uint32_t v;
  std::memcpy(&v, nftnl_udata_get(a), sizeof v);
  return v;
}

// The u32 at `type` that nft's parse_udata requires (it returns NULL without it).
uint32_t required(const Attrs& tb, size_t type, const char* what) {
  if (tb[type] == nullptr) unknown(std::string("typeof userdata of a ") + what + " without attribute " + std::to_string(type));
  return u32(tb[type]);
}

// A template token by index; nullptr where nft's table has no entry (it
// would print "(null)") or none at all (it would read past its array).
const char* token_at(std::initializer_list<const char*> tokens, uint32_t i) {
  return i < tokens.size() ? tokens.begin()[i] : nullptr;
}

// --- payload (payload.c payload_expr_parse_udata, payload_expr_print) ---

// nft v1.0.6 src/proto.c: each protocol of proto_definitions[] by its
// enum proto_desc_id (include/proto.h), its templates[] in index order
// (the enum *_hdr_fields of proto.h); nullptr where templates[] is empty.
struct ProtoDesc {
  const char* name;
  std::initializer_list<const char*> templates;
};
const ProtoDesc kProtocols[] = {
    {nullptr, {}},  // PROTO_DESC_UNKNOWN: a raw payload
    {"ah", {nullptr, "nexthdr", "hdrlength", "reserved", "spi", "sequence"}},
    {"esp", {nullptr, "spi", "sequence"}},
    {"comp", {nullptr, "nexthdr", "flags", "cpi"}},
    {"icmp", {nullptr, "type", "code", "checksum", "id", "sequence", "gateway", "mtu"}},
    {"igmp", {nullptr, "type", "checksum", "mrt", "group"}},
    {"udp", {nullptr, "sport", "dport", "length", "checksum"}},
    {"udplite", {nullptr, "sport", "dport", "csumcov", "checksum"}},
    {"tcp", {nullptr, "sport", "dport", "sequence", "ackseq", "doff", "reserved", "flags", "window", "checksum", "urgptr"}},
    {"dccp", {nullptr, "sport", "dport", "type"}},
    {"sctp", {nullptr, "sport", "dport", "vtag", "checksum"}},
    {"th", {nullptr, "sport", "dport"}},
    // [0] of ip and ip6 is the meta template ("l4proto") payload.c would print as such.
    {"ip", {"l4proto", "version", "hdrlength", "dscp", "ecn", "length", "id", "frag-off", "ttl", "protocol", "checksum", "saddr", "daddr"}},
    {"ip6", {"l4proto", "version", "dscp", "ecn", "flowlabel", "length", "nexthdr", "hoplimit", "saddr", "daddr"}},
    {"icmpv6", {nullptr, "type", "code", "checksum", "parameter-problem", "mtu", "id", "sequence", "max-delay"}},
    {"arp", {nullptr, "htype", "ptype", "hlen", "plen", "operation", "saddr ether", "saddr ip", "daddr ether", "daddr ip"}},
    {"vlan", {nullptr, "pcp", "dei", "cfi", "id", "type"}},
    {"ether", {nullptr, "daddr", "saddr", "type"}},
};

Field payload_field(const nftnl_udata* data) {
  enum { kDesc, kType, kBase, kOffset, kLen, kCount };
  const Attrs tb = u32_attrs(data, kCount);
  const uint32_t desc = required(tb, kDesc, "payload");
  const uint32_t type = required(tb, kType, "payload");
  const uint32_t len = tb[kLen] ? u32(tb[kLen]) : 0;
  // proto_find_desc: no description for 0 or past PROTO_DESC_MAX, a raw payload.
  if (desc == 0 || desc >= std::size(kProtocols)) {
    const uint32_t base = required(tb, kBase, "raw payload");
    const uint32_t offset = required(tb, kOffset, "raw payload");
    static constexpr const char* kBases[] = {nullptr, "ll", "nh", "th", "ih"};  // proto.c proto_base_tokens
    if (base == 0 || base >= std::size(kBases)) unknown("a raw payload of base " + std::to_string(base));
    return {"@" + std::string(kBases[base]) + "," + std::to_string(offset) + "," + std::to_string(len), len > 0};
  }
  const ProtoDesc& p = kProtocols[desc];
  const char* token = token_at(p.templates, type);
  if (token == nullptr) unknown("a " + std::string(p.name) + " payload of template " + std::to_string(type));
  return {std::string(p.name) + " " + token};  // every named template has a width
}

// --- meta (meta.c meta_templates, meta_expr_print) ---

Field meta_field(const nftnl_udata* data) {
  // By enum nft_meta_keys (nft v1.0.6's include/linux/netfilter/nf_tables.h).
  static constexpr std::array<const char*, 35> kKeys = {
      "length", "protocol", "priority", "mark", "iif", "oif", "iifname", "oifname", "iiftype", "oiftype",
      "skuid", "skgid", "nftrace", "rtclassid", "secmark", "nfproto", "l4proto", "ibrname", "obrname",
      "pkttype", "cpu", "iifgroup", "oifgroup", "cgroup", "random", "ipsec", "iifkind", "oifkind", "ibrpvid",
      "ibrvproto", "time", "day", "hour", "sdif", "sdifname"};
  const uint32_t key = required(u32_attrs(data, 1), 0, "meta");
  if (key >= kKeys.size()) unknown("a meta expression of key " + std::to_string(key));
  // meta_key_is_unqualified: these print without "meta ".
  constexpr uint32_t kIif = 4, kOif = 5, kIifname = 6, kOifname = 7, kIifgroup = 21, kOifgroup = 22;
  const bool bare = key == kIif || key == kOif || key == kIifname || key == kOifname || key == kIifgroup || key == kOifgroup;
  return {(bare ? "" : "meta ") + std::string(kKeys[key])};
}

// --- ct (ct.c ct_templates, ct_print) ---

Field ct_field(const nftnl_udata* data) {
  // By enum nft_ct_keys.
  static constexpr std::array<const char*, 24> kKeys = {
      "state", "direction", "status", "mark", "secmark", "expiration", "helper", "l3proto", "saddr", "daddr",
      "protocol", "proto-src", "proto-dst", "label", "packets", "bytes", "avgpkt", "zone", "event", "ip saddr",
      "ip daddr", "ip6 saddr", "ip6 daddr", "id"};
  constexpr uint32_t kSrc = 8, kDst = 9, kProtoSrc = 11, kProtoDst = 12, kLabels = 13, kEventmask = 18;
  const Attrs tb = u32_attrs(data, 2);
  const uint32_t key = required(tb, 0, "ct");
  // ct_expr_alloc takes the direction as an int8_t: -1 (none), 0, 1.
  const auto dir = static_cast<int8_t>(required(tb, 1, "ct"));
  if (key >= kKeys.size()) unknown("a ct expression of key " + std::to_string(key));
  std::string text = "ct ";
  // ct_dir2str; saddr/daddr get no "ip " here: the typeof's nfproto is not kept.
  if (dir == 0) text += "original ";
  if (dir == 1) text += "reply ";
  text += kKeys[key];
  Field f{std::move(text)};
  if (key == kSrc || key == kDst) f.has_width = false;  // invalid_type, length 0 until a rule's context says
  if (key == kSrc || key == kDst || key == kProtoSrc || key == kProtoDst) f.dtype = Dtype::Invalid;
  if (key == kLabels || key == kEventmask) f.dtype = Dtype::Unlisted;
  return f;
}

// --- exthdr (exthdr.c exthdr_expr_parse_udata, exthdr_expr_print) ---

// IPv6 extension headers by enum exthdr_desc_id (exthdr.c, include/exthdr.h).
const ProtoDesc kIp6Exthdrs[] = {
    {nullptr, {}},
    {"hbh", {nullptr, "nexthdr", "hdrlength"}},
    {"rt", {nullptr, "nexthdr", "hdrlength", "type", "seg-left"}},
    {"rt0", {nullptr, "reserved", "addr[1]", "addr[2]"}},
    {"rt2", {}},  // its templates are empty: nft prints "(null)"
    {"srh", {nullptr, "last-entry", "flags", "tag", "sid[1]", "sid[2]"}},
    {"frag", {nullptr, "nexthdr", "reserved", "frag-off", "reserved2", "more-fragments", "id"}},
    {"dst", {nullptr, "nexthdr", "hdrlength"}},
    {"mh", {nullptr, "nexthdr", "hdrlength", "type", "reserved", "checksum"}},
};

// tcpopt.c tcpopt_protocols[] by option kind; a template's offset says the
// number nft prints after "sack" (offset / 64).
struct TcpOption {
  uint32_t kind;
  const char* name;
  std::initializer_list<std::pair<const char*, uint32_t>> templates;
};
const TcpOption kTcpOptions[] = {
    {0, "eol", {{"kind", 0}}},
    {1, "nop", {{"kind", 0}}},
    {2, "maxseg", {{"kind", 0}, {"length", 8}, {"size", 16}}},
    {3, "window", {{"kind", 0}, {"length", 8}, {"count", 16}}},
    {4, "sack-perm", {{"kind", 0}, {"length", 8}}},
    {5, "sack", {{"kind", 0}, {"length", 8}, {"left", 16}, {"right", 48}, {"left", 80}, {"right", 112},
                 {"left", 144}, {"right", 176}, {"left", 208}, {"right", 240}}},
    {8, "timestamp", {{"kind", 0}, {"length", 8}, {"tsval", 16}, {"tsecr", 48}}},
    {19, "md5sig", {{"kind", 0}, {"length", 8}}},
    {30, "mptcp", {{"kind", 0}, {"length", 8}, {"subtype", 16}}},
    {34, "fastopen", {{"kind", 0}, {"length", 8}}},
};

Field tcp_option_field(uint32_t kind, uint32_t field) {
  // tcpopt_expr_alloc: the kinds 256..258 nft uses for the 2nd..4th SACK block.
  enum { kSackLeft = 2, kSackRight = 3 };
  if (kind >= 256 && kind <= 258) {
    const uint32_t block = kind - 255;
    if (field == kSackLeft || field == kSackRight) field += 2 * block;
    kind = 5;
  }
  for (const TcpOption& o : kTcpOptions) {
    if (o.kind != kind) continue;
    if (field >= o.templates.size()) unknown("a tcp option " + std::string(o.name) + " of field " + std::to_string(field));
    const auto& [token, offset] = o.templates.begin()[field];
    const uint32_t block = offset / 64;
    return {"tcp option " + std::string(o.name) + (block ? std::to_string(block) : "") + " " + token};
  }
  // nft prints an unlisted kind as "tcp option nop kind": not worth claiming.
  unknown("a tcp option of kind " + std::to_string(kind));
}

Field ip_option_field(uint8_t type, uint8_t field) {
  // ipopt.c ipopt_protocols[]: by IPOPT_* (netinet/ip.h).
  static constexpr std::initializer_list<const char*> kRoute = {nullptr, "type", "length", nullptr, "ptr", "addr"};
  static constexpr std::initializer_list<const char*> kRa = {nullptr, "type", "length", "value"};
  const char* name = type == 7 ? "rr" : type == 131 ? "lsrr" : type == 137 ? "ssrr" : type == 148 ? "ra" : nullptr;
  if (name == nullptr) unknown("an ip option of type " + std::to_string(type));
  const char* token = token_at(type == 148 ? kRa : kRoute, field);
  if (token == nullptr) unknown("an ip option " + std::string(name) + " of field " + std::to_string(field));
  return {"ip option " + std::string(name) + " " + token};
}

Field sctp_chunk_field(uint32_t type, uint32_t field) {
  // sctp_chunk.c sctp_chunk_protocols[]: by chunk type; common fields first.
  struct Chunk {
    uint32_t type;
    const char* name;
    std::initializer_list<const char*> fields;  // after type, flags, length
  };
  static const Chunk kChunks[] = {
      {0, "data", {"tsn", "stream", "ssn", "ppid"}},
      {1, "init", {"init-tag", "a-rwnd", "num-outbound-streams", "num-inbound-streams", "initial-tsn"}},
      {2, "init-ack", {"init-tag", "a-rwnd", "num-outbound-streams", "num-inbound-streams", "initial-tsn"}},
      {3, "sack", {"cum-tsn-ack", "a-rwnd", "num-gap-ack-blocks", "num-dup-tsns"}},
      {4, "heartbeat", {}},
      {5, "heartbeat-ack", {}},
      {6, "abort", {}},
      {7, "shutdown", {"cum-tsn-ack"}},
      {8, "shutdown-ack", {}},
      {9, "error", {}},
      {10, "cookie-echo", {}},
      {11, "cookie-ack", {}},
      {12, "ecne", {"lowest-tsn"}},
      {13, "cwr", {"lowest-tsn"}},
      {14, "shutdown-complete", {}},
      {128, "asconf-ack", {"seqno"}},
      {192, "forward-tsn", {"new-cum-tsn"}},
      {193, "asconf", {"seqno"}},
  };
  static constexpr const char* kCommon[] = {"type", "flags", "length"};
  for (const Chunk& c : kChunks) {
    if (c.type != type) continue;
    const char* token = field < 3 ? kCommon[field] : token_at(c.fields, field - 3);
    if (token == nullptr) unknown("an sctp chunk " + std::string(c.name) + " of field " + std::to_string(field));
    return {"sctp chunk " + std::string(c.name) + " " + token};
  }
  unknown("an sctp chunk of type " + std::to_string(type));
}

Field exthdr_field(const nftnl_udata* data) {
  enum { kDesc, kType, kOp, kCount };
  enum { kOpIpv6, kOpTcpopt, kOpIpv4, kOpSctp };  // enum nft_exthdr_op
  const Attrs tb = u32_attrs(data, kCount);
  const uint32_t desc = required(tb, kDesc, "exthdr");
  const uint32_t type = required(tb, kType, "exthdr");
  const uint32_t op = tb[kOp] ? u32(tb[kOp]) : uint32_t{kOpIpv6};
  switch (op) {
    case kOpIpv6: {
      if (desc == 0 || desc >= std::size(kIp6Exthdrs)) unknown("an ipv6 extension header of id " + std::to_string(desc));
      const ProtoDesc& h = kIp6Exthdrs[desc];
      const char* token = token_at(h.templates, static_cast<uint8_t>(type));  // exthdr_expr_alloc's uint8_t
      if (token == nullptr) unknown("an exthdr " + std::string(h.name) + " of template " + std::to_string(type));
      return {std::string(h.name) + " " + token};
    }
    case kOpTcpopt: return tcp_option_field(desc, type);
    case kOpIpv4: return ip_option_field(static_cast<uint8_t>(desc), static_cast<uint8_t>(type));  // ipopt_expr_alloc's uint8_t
    case kOpSctp: return sctp_chunk_field(desc, type);
    default: unknown("an exthdr expression of op " + std::to_string(op));
  }
}

// --- the others ---

Field numgen_field(const nftnl_udata* data) {
  const Attrs tb = u32_attrs(data, 3);  // type, mod, offset
  const uint32_t type = required(tb, 0, "numgen"), mod = required(tb, 1, "numgen"), offset = required(tb, 2, "numgen");
  if (type > 1) unknown("a numgen expression of type " + std::to_string(type));
  std::string text = std::string("numgen ") + (type == 0 ? "inc" : "random") + " mod " + std::to_string(mod);
  if (offset != 0) text += " offset " + std::to_string(offset);
  return {std::move(text)};
}

Field hash_field(const nftnl_udata* data) {
  enum { kType, kOffset, kMod, kSeed, kSeedSet, kCount };
  const Attrs tb = u32_attrs(data, kCount);
  const uint32_t type = required(tb, kType, "hash"), offset = required(tb, kOffset, "hash");
  const uint32_t seed = required(tb, kSeed, "hash"), mod = required(tb, kMod, "hash");
  const uint32_t seed_set = required(tb, kSeedSet, "hash");
  // jhash prints the expression it hashes, which the userdata does not keep
  // (nft v1.0.6 dereferences NULL there).
  constexpr uint32_t kSymmetric = 1;
  if (type != kSymmetric) unknown("typeof of a jhash expression");
  std::string text = "symhash mod " + std::to_string(mod);
  if (seed_set != 0) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", seed);
    text += " seed 0x" + std::string(hex);
  }
  if (offset != 0) text += " offset " + std::to_string(offset);
  return {std::move(text)};
}

Field socket_field(const nftnl_udata* data) {
  static constexpr const char* kKeys[] = {"transparent", "mark", "wildcard", "cgroupv2"};  // enum nft_socket_keys
  const uint32_t key = required(u32_attrs(data, 1), 0, "socket");
  if (key >= std::size(kKeys)) unknown("a socket expression of key " + std::to_string(key));
  // The userdata keeps no cgroupv2 level: nft reads it back as 0.
  return {"socket " + std::string(kKeys[key]) + (key == 3 ? " level 0" : "")};
}

Field rt_field(const nftnl_udata* data) {
  static constexpr const char* kKeys[] = {"classid", "ip nexthop", "ip6 nexthop", "mtu", "ipsec"};  // enum nft_rt_keys
  const uint32_t key = required(u32_attrs(data, 1), 0, "rt");
  if (key >= std::size(kKeys)) unknown("an rt expression of key " + std::to_string(key));
  return {"rt " + std::string(kKeys[key])};
}

Field fib_field(const nftnl_udata* data) {
  const Attrs tb = u32_attrs(data, 2);  // result, flags
  const uint32_t result = required(tb, 0, "fib");
  uint32_t flags = required(tb, 1, "fib");
  static constexpr const char* kResults[] = {nullptr, "oif", "oifname", "type"};  // enum nft_fib_result
  if (result == 0 || result >= std::size(kResults)) unknown("a fib expression of result " + std::to_string(result));
  constexpr uint32_t kPresent = 1 << 5;
  flags &= ~kPresent;
  static constexpr std::pair<uint32_t, const char*> kFlags[] = {{1 << 0, "saddr"}, {1 << 1, "daddr"}, {1 << 2, "mark"},
                                                                 {1 << 3, "iif"}, {1 << 4, "oif"}};
  std::string text = "fib ";
  for (const auto& [bit, name] : kFlags) {
    if (!(flags & bit)) continue;
    text += name;
    flags &= ~bit;
    if (flags) text += " . ";
  }
  if (flags) unknown("a fib expression of flags nft prints in hex");
  return {text + " " + kResults[result]};
}

Field xfrm_field(const nftnl_udata* data) {
  enum { kKey, kSpnum, kDir, kCount };
  const Attrs tb = u32_attrs(data, kCount);
  const uint32_t key = required(tb, kKey, "ipsec");
  const auto dir = static_cast<uint8_t>(required(tb, kDir, "ipsec"));      // xfrm_expr_alloc's uint8_t
  const auto spnum = static_cast<uint8_t>(required(tb, kSpnum, "ipsec"));
  if (dir > 1) unknown("an ipsec expression of direction " + std::to_string(dir));
  // By enum nft_xfrm_keys: daddr ip, daddr ip6, saddr ip, saddr ip6, reqid, spi.
  static constexpr const char* kKeys[] = {nullptr, " ip daddr", " ip6 daddr", " ip saddr", " ip6 saddr", " reqid", " spi"};
  if (key == 0 || key >= std::size(kKeys)) unknown("an ipsec expression of key " + std::to_string(key));
  std::string text = dir == 0 ? "ipsec in" : "ipsec out";
  if (spnum != 0) text += " spnum " + std::to_string(spnum);
  return {text + kKeys[key]};
}

Field field_of(uint32_t etype, const nftnl_udata* data);

// expression.c concat_expr_parse_udata: one nest per field (0, 1, ...), each
// holding the field's expression type (0) and its userdata (1).
Field concat_field(const nftnl_udata* data) {
  constexpr size_t kMaxFields = 16;  // NFT_REG32_SIZE
  const Attrs nests = parse_nest(nftnl_udata_get(data), nftnl_udata_len(data), kMaxFields, [](uint8_t type, uint8_t len) {
    return type >= kMaxFields || len <= sizeof(uint32_t) ? Take::Fail : Take::Keep;
  });
  std::vector<Field> fields;
  for (size_t i = 0; i < kMaxFields && nests[i] != nullptr; ++i) {
    const Attrs sub = parse_nest(nftnl_udata_get(nests[i]), nftnl_udata_len(nests[i]), 2, [](uint8_t type, uint8_t len) {
      if (type == 0) return len == sizeof(uint32_t) ? Take::Keep : Take::Fail;
      if (type == 1) return len > sizeof(uint32_t) ? Take::Keep : Take::Fail;
      return Take::Skip;
    });
    // nft reuses an uninitialized table here when one is missing.
    if (sub[0] == nullptr || sub[1] == nullptr) unknown("a concatenation field without its type or userdata");
    const uint32_t etype = u32(sub[0]);
    // nft itself writes no userdata for these, which fails the concatenation;
    // a nested concatenation would be one of more than plain datatypes.
    if (etype == kExprVerdict || etype == kExprOsf || etype == kExprConcat) {
      unknown("a concatenation with a " + std::string(expr_type_name(etype)) + " field");
    }
    fields.push_back(field_of(etype, sub[1]));
  }
  // No fields (what nft 1.0.6 writes for a set declared `type ipv4_addr .
  // inet_service`): concat_expr_parse_udata makes a concatenation of no
  // width, which set_udata_key_valid refuses: nft prints "type".
  if (fields.empty()) return {"", false};
  // Six bits a subtype: past five, the concatenation's datatype loses fields.
  if (fields.size() > 5) unknown("a concatenation of more than five fields");
  // concat_type_alloc walks the subtypes from the first non-zero one until a
  // zero one; one missing from datatypes[] on the way fails the concatenation.
  size_t i = 0;
  while (i < fields.size() && fields[i].dtype == Dtype::Invalid) ++i;
  for (; i < fields.size() && fields[i].dtype != Dtype::Invalid; ++i) {
    if (fields[i].dtype == Dtype::Unlisted) unknown("a concatenation with a ct label or ct event field");
  }
  Field out;
  for (const Field& f : fields) {
    // A field of no width leaves the key shorter than the kernel's: nft prints "type".
    if (!f.has_width) unknown("a concatenation with a field of no width (" + f.text + ")");
    if (!out.text.empty()) out.text += " . ";
    out.text += f.text;
  }
  return out;
}

Field field_of(uint32_t etype, const nftnl_udata* data) {
  switch (etype) {
    case kExprVerdict: return {"verdict"};  // verdict_expr_parse_udata: the symbol "verdict"
    case kExprPayload: return payload_field(data);
    case kExprExthdr: return exthdr_field(data);
    case kExprMeta: return meta_field(data);
    case kExprSocket: return socket_field(data);
    case kExprOsf: return {"osf name"};  // osf_expr_parse_udata: ttl 0, flags 0
    case kExprCt: return ct_field(data);
    case kExprConcat: return concat_field(data);
    case kExprNumgen: return numgen_field(data);
    case kExprHash: return hash_field(data);
    case kExprRt: return rt_field(data);
    case kExprFib: return fib_field(data);
    case kExprXfrm: return xfrm_field(data);
    default: unknown("typeof of a " + std::string(expr_type_name(etype)) + " expression");
  }
}

std::string read(const void* data, uint32_t len) {
  // netlink.c set_parse_udata_cb: a shorter attribute fails the set's whole userdata.
  if (data == nullptr || len < 3) unknown("a typeof attribute too short for nft v1.0.6");
  // set_key_parse_udata: the expression type (a u32) and its userdata.
  enum { kExpr = NFTNL_UDATA_SET_TYPEOF_EXPR, kData = NFTNL_UDATA_SET_TYPEOF_DATA };
  const Attrs top = parse_nest(data, len, NFTNL_UDATA_SET_TYPEOF_MAX + 1, [](uint8_t type, uint8_t attr_len) {
    if (type == kExpr) return attr_len == sizeof(uint32_t) ? Take::Keep : Take::Fail;
    return type == kData ? Take::Keep : Take::Skip;
  });
  if (top[kExpr] == nullptr || top[kData] == nullptr) unknown("a typeof attribute without its expression");
  const Field f = field_of(u32(top[kExpr]), top[kData]);
  // set_udata_key_valid: a width of 0 bytes is no key's or value's (the
  // kernel's are never 0), nft prints "type": "".
  if (!f.has_width) return "";
  return f.text;
}

}  // namespace
}  // namespace typeof_udata

std::string typeof_text(const void* data, uint32_t len) { return typeof_udata::read(data, len); }

}  // namespace dpscope::netfilter
