#include "collectors/netfilter/nft_elements.h"

#include <libnftnl/udata.h>
#include <linux/netfilter/nf_tables.h>

#include <algorithm>
#include <map>
#include <bit>
#include <cstring>
#include <string_view>

#include "collectors/netfilter/nft_native.h"  // element_statements

namespace dpscope::netfilter {

using nlohmann::json;
using namespace nftval;  // NOLINT: nft datatypes and how their values print

namespace {

constexpr int kTypeBits = 6;
constexpr size_t kConcatFields = 16;  // NFT_REG32_00..15: a key of at most 16 fields

// nft v1.0.6's datatypes (src/datatype.h enum datatypes; each type's
// .name, .size and .byteorder in datatype.c, meta.c, ct.c, proto.c, rt.c):
// width 0 is a type whose width the set's key length says.
struct DatatypeInfo {
  const char* name;
  uint32_t len;  // bytes
  Order order;
};
constexpr Order H = Order::Host, B = Order::Big;
constexpr DatatypeInfo kDatatypes[] = {
    {"invalid", 0, B},      {"verdict", 0, B},      {"nf_proto", 1, H},       {"bitmask", 0, H},
    {"integer", 0, H},      {"string", 0, H},       {"ll_addr", 0, B},        {"ipv4_addr", 4, B},
    {"ipv6_addr", 16, B},   {"ether_addr", 6, B},   {"ether_type", 2, B},     {"arp_op", 2, B},
    {"inet_proto", 1, B},   {"inet_service", 2, B}, {"icmp_type", 1, B},      {"tcp_flag", 1, B},
    {"dccp_pkttype", 1, B}, {"mh_type", 1, B},      {"time", 8, H},           {"mark", 4, H},
    {"iface_index", 4, H},  {"iface_type", 2, H},   {"realm", 4, H},          {"classid", 4, H},
    {"uid", 4, H},          {"gid", 4, H},          {"ct_state", 4, H},       {"ct_dir", 1, H},
    {"ct_status", 4, H},    {"icmpv6_type", 1, B},  {"ct_label", 16, H},      {"pkt_type", 1, H},
    {"icmp_code", 1, B},    {"icmpv6_code", 1, B},  {"icmpx_code", 1, B},     {"devgroup", 4, H},
    {"dscp", 1, B},         {"ecn", 1, B},          {"fib_addrtype", 4, H},   {"boolean", 1, H},
    {"ct_event", 4, H},     {"ifname", 16, H},      {"igmp_type", 1, B},      {"time", 8, H},
    {"hour", 4, H},         {"day", 1, H},          {"cgroupsv2", 8, H},
};
constexpr uint32_t kDatatypeCount = sizeof kDatatypes / sizeof kDatatypes[0];

// Types whose ranges nft prints as a prefix when they are one (DTYPE_F_PREFIX).
bool prefix_type(uint32_t t) {
  return t == kIpaddr || t == kIp6addr || t == kMark || t == 35 /* devgroup */ || t == 22 /* realm */;
}

bool string_type(uint32_t t) { return t == kString || t == kIfname; }

const DatatypeInfo& info(uint32_t type) {
  if (type == kInvalid || type >= kDatatypeCount) unknown("a set of datatype " + std::to_string(type));
  return kDatatypes[type];
}

// The integer keys of meta and ct (meta.c meta_templates, ct.c
// ct_templates: width and byte order); nullptr for another key.
const KeyField* meta_integer(uint32_t key) {
  static constexpr KeyField kLen{kInteger, Order::Host, 4}, kNftrace{kInteger, Order::Host, 1},
      kRandom{kInteger, Order::Big, 4}, kPvid{kInteger, Order::Host, 2};
  switch (key) {
    case NFT_META_LEN: case NFT_META_CPU: case NFT_META_CGROUP: case NFT_META_SECMARK: return &kLen;
    case NFT_META_NFTRACE: return &kNftrace;
    case NFT_META_PRANDOM: return &kRandom;
    case NFT_META_BRI_IIFPVID: return &kPvid;
    default: return nullptr;
  }
}

const KeyField* ct_integer(uint32_t key) {
  static constexpr KeyField kCount{kInteger, Order::Host, 8}, kZone{kInteger, Order::Host, 2},
      kSecmark{kInteger, Order::Host, 4}, kId{kInteger, Order::Big, 4};
  switch (key) {
    case NFT_CT_BYTES: case NFT_CT_PKTS: case NFT_CT_AVGPKT: return &kCount;
    case NFT_CT_ZONE: return &kZone;
    case NFT_CT_SECMARK: return &kSecmark;
    case NFT_CT_ID: return &kId;
    default: return nullptr;
  }
}

// An integer field as its typeof declares it: a payload field (big-endian,
// its width in the userdata), or a number nft generates (host-endian, 32
// bits: numgen.c, hash.c). Other expressions' integers are not read yet.
KeyField typeof_integer(const std::vector<TypeofField>& typeof_fields, uint32_t byteorder, size_t i, size_t count,
                        uint32_t total) {
  if (typeof_fields.empty() && count == 1) {
    // No typeof (an anonymous set, a set declared by another tool): nft
    // reads the key as a plain integer in the byte order the userdata
    // says (netlink.c netlink_delinearize_set: constant_expr_alloc).
    if (byteorder != 1 && byteorder != 2) unknown("an integer key or value whose byte order the set does not say");
    return {kInteger, byteorder == 1 ? Order::Host : Order::Big, total, false};
  }
  if (typeof_fields.size() != count) unknown("an integer field whose typeof the set does not say");
  const TypeofField& t = typeof_fields[i];
  KeyField f{kInteger, Order::Big, 0, t.raw};
  if (t.expr == kTypeofPayload && t.bits > 0) {
    f.len = (t.bits + 7) / 8;
  } else if (t.expr == kTypeofNumgen || t.expr == kTypeofHash) {
    f.order = Order::Host;
    f.len = 4;
  } else if (t.expr == kTypeofXfrm && (t.key == NFT_XFRM_KEY_REQID || t.key == NFT_XFRM_KEY_SPI)) {
    // xfrm.c xfrm_templates: reqid host-endian, spi big-endian, 32 bits.
    f.order = t.key == NFT_XFRM_KEY_REQID ? Order::Host : Order::Big;
    f.len = 4;
  } else if (const KeyField* m = t.expr == kTypeofMeta ? meta_integer(t.key) : t.expr == kTypeofCt ? ct_integer(t.key) : nullptr) {
    f = *m;
  } else {
    unknown("an integer field of a typeof expression not read yet (expression type " + std::to_string(t.expr) + ")");
  }
  if (count == 1 && f.len != total) unknown("a typeof integer of another width than the set's key");
  return f;
}

// The fields of a declared type (a key's, a map value's) of `total` bytes.
std::vector<KeyField> declared_fields(uint32_t type, uint32_t total, const std::vector<TypeofField>& typeof_fields,
                                     uint32_t byteorder) {
  const std::vector<uint32_t> types = split_key_type(type);
  std::vector<KeyField> out;
  for (size_t i = 0; i < types.size(); ++i) {
    const uint32_t t = types[i];
    const DatatypeInfo& d = info(t);
    if (t == kInteger) {
      out.push_back(typeof_integer(typeof_fields, byteorder, i, types.size(), total));
    } else if (types.size() == 1) {
      if (d.len == 0 && !string_type(t)) unknown("a key or value of datatype " + std::string(d.name) + " (no fixed width)");
      out.push_back({t, d.order, total});
    } else {
      if (d.len == 0) unknown("a concatenation with a field of no fixed width (" + std::string(d.name) + ")");
      out.push_back({t, d.order, d.len});
    }
  }
  return out;
}

// A concatenation's fields, each padded to 4 bytes (netlink_padded_len).
uint32_t padded(uint32_t len) { return (len + 3) / 4 * 4; }

// What a field's bytes are worth as a number, for sorting: nft compares
// the values it read (mergesort.c expr_msort_value; segtree.c
// expr_value_cmp), a host-endian field by its number.
bool less_value(std::string_view a, std::string_view b, bool host) {
  if (!host || a.size() != b.size()) return a < b;
  for (size_t k = a.size(); k-- > 0;) {
    if (a[k] != b[k]) return static_cast<uint8_t>(a[k]) < static_cast<uint8_t>(b[k]);
  }
  return false;
}

// `v` with only its lowest set bit (in `order`: the first byte of a
// little-endian host value holds its lowest bits).
std::string lowest_bit(std::string v, Order order) {
  const bool little = order == Order::Host && std::endian::native == std::endian::little;
  bool found = false;
  for (size_t i = 0; i < v.size(); ++i) {
    char& c = v[little ? i : v.size() - 1 - i];
    const auto byte = static_cast<uint8_t>(c);
    c = found ? 0 : static_cast<char>(byte & -byte);
    found = found || byte != 0;
  }
  return v;
}

// One before `v` (big-endian bytes).
std::string minus_one(std::string v) {
  for (size_t k = v.size(); k-- > 0;) {
    if (static_cast<uint8_t>(v[k]--) != 0) break;
  }
  return v;
}


// A field of an interval set: the kernel holds a host-endian number in
// network order there (nft switches it before sending: netlink.c
// concat_elem_expr, netlink_delinearize_setelem), a string as its bytes.
json field_value(const KeyField& f, std::string_view b, bool interval) {
  if (f.shift) {
    if (interval || b.size() > 8) unknown("a range or a wide value of a bit field above its lowest bit");
    const uint64_t n = integer(b, f.order) >> f.shift;
    if (f.type == kInteger) return n;
    if (n > 0xff) unknown("a bit field value wider than a byte");
    return value(f.type, Order::Big, std::string(1, static_cast<char>(n)));  // `ip dscp { cs1, af41 }`
  }
  json v;
  if (interval && f.order == Order::Host && !string_type(f.type) && std::endian::native == std::endian::little) {
    const std::string host(b.rbegin(), b.rend());
    v = value(f.type, Order::Host, host);
  } else {
    v = value(f.type, f.order, b);
  }
  // Several flags of a bitmask type: nft lists them as ORs in bit order
  // (netlink.c bitmask_expr_to_binops), {"|": [{"|": ["fin", "psh"]}, "ack"]}.
  if (v.is_array()) {
    json folded = v[0];
    for (size_t i = 1; i < v.size(); ++i) folded = {{"|", {folded, v[i]}}};
    return folded;
  }
  return v;
}

// A range's end: nft prints it as a number whatever symbol the value has
// (expression.c range_expr_print), an address as an address.
json range_end(const KeyField& f, std::string_view b) {
  json v = field_value(f, b, true);
  const bool named = f.type == kIpaddr || f.type == kIp6addr || f.type == kEtheraddr || string_type(f.type);
  if (!v.is_number() && !named) return integer(b, Order::Big);  // an interval set holds it in network order
  return v;
}

// lo..hi of one field (segtree.c add_interval, interval_to_string,
// concat_range_aggregate): a value, a prefix, a name wildcard or a range.
json interval_value(const KeyField& f, const std::string& lo, const std::string& hi) {
  if (lo == hi) return field_value(f, lo, true);
  const int plen = prefix_len(lo, hi);
  if (string_type(f.type)) {
    // A name wildcard: its prefix, then zeros up to all ones ("eth*").
    const size_t n = plen >= 0 && plen % 8 == 0 ? static_cast<size_t>(plen / 8) : 0;
    const size_t name = lo.find('\0');
    if (n == 0 || n >= lo.size() || name != n) unknown("a range of names");
    return lo.substr(0, n) + "*";
  }
  if (plen >= 0 && prefix_type(f.type)) {
    return {{"prefix", {{"addr", field_value(f, lo, true)}, {"len", plen}}}};
  }
  return {{"range", {range_end(f, lo), range_end(f, hi)}}};
}

// A key as nft -j prints it, split into its fields.
json key_value(const std::vector<KeyField>& key, std::string_view b, bool interval) {
  if (key.size() == 1) return field_value(key[0], b.substr(0, key[0].len), interval);
  json c = json::array();
  size_t off = 0;
  for (const KeyField& f : key) {
    if (off + f.len > b.size()) unknown("a set key shorter than its fields");
    c.push_back(field_value(f, b.substr(off, f.len), interval));
    off += padded(f.len);
  }
  return {{"concat", c}};
}

// A concatenated range (pipapo: key and an inclusive key_end): each field
// lo..hi on its own.
json concat_range(const std::vector<KeyField>& key, const std::string& lo, const std::string& hi) {
  json c = json::array();
  size_t off = 0;
  for (const KeyField& f : key) {
    if (off + f.len > lo.size() || off + f.len > hi.size()) unknown("a set key shorter than its fields");
    c.push_back(interval_value(f, lo.substr(off, f.len), hi.substr(off, f.len)));
    off += padded(f.len);
  }
  return {{"concat", c}};
}

// lo..hi of an address as nft prints a range it reads back: a prefix
// when it is one (netlink.c range_expr_to_prefix, range_expr_is_prefix;
// lo == hi is a /32), else the range.
json address_range(const KeyField& f, const std::string& lo, const std::string& hi) {
  const int plen = prefix_len(lo, hi);
  if (plen >= 0) return {{"prefix", {{"addr", value(f.type, f.order, lo)}, {"len", plen}}}};
  return {{"range", {value(f.type, f.order, lo), value(f.type, f.order, hi)}}};
}

// An interval map's value (netlink.c netlink_delinearize_setelem): one
// address's low and high ends (netlink_parse_interval_elem: always a
// prefix or a range), or each field's low ends then their high ends
// (netlink_parse_concat_elem: range_expr_reduce, a field equal at both
// ends one value, an address a prefix or a range, another a range).
json interval_data(const std::vector<KeyField>& fields, std::string_view b) {
  auto address = [](const KeyField& f) { return f.type == kIpaddr || f.type == kIp6addr; };
  if (fields.size() == 1) {
    // Declared of the whole value's width: each end is half of it.
    const KeyField& f = fields[0];
    const size_t half = f.type == kIpaddr ? 4 : 16;
    if (!address(f) || b.size() != 2 * half) unknown("an interval map value of another width or type");
    return address_range(f, std::string(b.substr(0, half)), std::string(b.substr(half)));
  }
  uint32_t total = 0;
  for (const KeyField& f : fields) total += padded(f.len);
  if (2 * static_cast<size_t>(total) != b.size()) unknown("an interval map value of another width than its fields'");
  json c = json::array();
  size_t off = 0;
  for (const KeyField& f : fields) {
    if (f.order != Order::Big || string_type(f.type)) unknown("an interval map value of a field in host order or a string");
    const std::string lo(b.substr(off, f.len)), hi(b.substr(total + off, f.len));
    off += padded(f.len);
    if (lo == hi) {
      c.push_back(field_value(f, lo, false));
    } else if (address(f)) {
      c.push_back(address_range(f, lo, hi));
    } else {
      c.push_back({{"range", {field_value(f, lo, false), field_value(f, hi, false)}}});
    }
  }
  return {{"concat", c}};
}

// A map element's value: one of the data type, or a concatenation of
// fields (nat's address and port).
json map_data(const SetShape& set, std::string_view b) {
  const std::vector<KeyField> fields = declared_data(set);
  if (set.data_interval) return interval_data(fields, b);
  if (fields.size() == 1) {
    if (fields[0].len != b.size()) unknown("a map value of another width than the map's");
    return value(fields[0].type, fields[0].order, b);
  }
  uint32_t total = 0;
  for (const KeyField& f : fields) total += padded(f.len);
  if (total != b.size()) unknown("a map value of another width than its fields'");
  return key_value(fields, b, false);
}

// The element's key with what nft prints beside it (json.c
// set_elem_expr_json wraps them in "elem").
json with_attributes(json key, const RawSetElement& e) {
  if (e.timeout_ms == 0 && e.expires_ms == 0 && e.comment.empty() && e.statements.empty()) return key;
  // nft -j prints whole seconds (json.c set_elem_expr_json); the text would show the milliseconds.
  if (e.timeout_ms % 1000 != 0) unknown("a set element timeout of milliseconds");
  json elem = {{"val", std::move(key)}};
  if (!e.statements.empty()) elem.update(element_statements(reinterpret_cast<const nlattr*>(e.statements.data())));
  if (e.timeout_ms) elem["timeout"] = e.timeout_ms / 1000;
  if (e.expires_ms) elem["expires"] = e.expires_ms / 1000;
  if (!e.comment.empty()) elem["comment"] = e.comment;
  return {{"elem", std::move(elem)}};
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
  std::string out;
  for (uint32_t t : split_key_type(type)) {
    if (t == kInvalid || t >= kDatatypeCount) return "";
    out += (out.empty() ? "" : " . ") + std::string(kDatatypes[t].name);
  }
  return out;
}

std::string object_kind_name(uint32_t obj_type) {
  switch (obj_type) {
    case NFT_OBJECT_COUNTER: return "counter";
    case NFT_OBJECT_QUOTA: return "quota";
    case NFT_OBJECT_CT_HELPER: return "ct helper";
    case NFT_OBJECT_LIMIT: return "limit";
    case NFT_OBJECT_CT_TIMEOUT: return "ct timeout";
    case NFT_OBJECT_SECMARK: return "secmark";
    case NFT_OBJECT_CT_EXPECT: return "ct expectation";
    case NFT_OBJECT_SYNPROXY: return "synproxy";
    default: return "";
  }
}

namespace {

// Each attribute of a userdata nest by its type, up to `max`.
std::vector<const nftnl_udata*> udata_table(const void* data, uint32_t len, size_t max) {
  struct Ctx {
    std::vector<const nftnl_udata*> tb;
  } ctx{std::vector<const nftnl_udata*>(max + 1, nullptr)};
  if (nftnl_udata_parse(
          data, len,
          [](const nftnl_udata* attr, void* d) -> int {
            auto* c = static_cast<Ctx*>(d);
            if (nftnl_udata_type(attr) < c->tb.size()) c->tb[nftnl_udata_type(attr)] = attr;
            return 0;
          },
          &ctx) < 0) {
    return std::vector<const nftnl_udata*>(max + 1, nullptr);
  }
  return ctx.tb;
}

uint32_t udata_u32(const nftnl_udata* a) {
  if (a == nullptr || nftnl_udata_len(a) != sizeof(uint32_t)) return 0;
  uint32_t v;
  std::memcpy(&v, nftnl_udata_get(a), sizeof v);
  return v;
}

// One expression's userdata (NFTNL_UDATA_SET_TYPEOF_DATA): payload.c
// payload_expr_build_udata (desc id 0 is a raw payload); the others' kind.
TypeofField typeof_field(uint32_t expr, const nftnl_udata* data) {
  TypeofField f;
  f.expr = expr;
  // NFTNL_UDATA_META_KEY, _CT_KEY, _XFRM_KEY (xfrm.c) are attribute 0.
  if ((expr == kTypeofMeta || expr == kTypeofCt || expr == kTypeofXfrm) && data != nullptr) {
    const auto tb = udata_table(nftnl_udata_get(data), nftnl_udata_len(data), 0);
    f.key = udata_u32(tb[0]);
  }
  if (expr == kTypeofPayload && data != nullptr) {
    enum { kDesc, kType, kBase, kOffset, kLen };
    const auto tb = udata_table(nftnl_udata_get(data), nftnl_udata_len(data), kLen);
    f.raw = tb[kDesc] != nullptr && udata_u32(tb[kDesc]) == 0;
    f.bits = udata_u32(tb[kLen]);
  }
  return f;
}

// The fields of a typeof attribute (NFTNL_UDATA_SET_KEY_TYPEOF or
// _DATA_TYPEOF); empty when it is not one nft v1.0.6 writes.
std::vector<TypeofField> parse_typeof(const nftnl_udata* attr) {
  if (attr == nullptr) return {};
  const auto top = udata_table(nftnl_udata_get(attr), nftnl_udata_len(attr), NFTNL_UDATA_SET_TYPEOF_MAX);
  if (!top[NFTNL_UDATA_SET_TYPEOF_EXPR] || !top[NFTNL_UDATA_SET_TYPEOF_DATA]) return {};
  const uint32_t expr = udata_u32(top[NFTNL_UDATA_SET_TYPEOF_EXPR]);
  const nftnl_udata* body = top[NFTNL_UDATA_SET_TYPEOF_DATA];
  if (expr != kTypeofConcat) return {typeof_field(expr, body)};
  // expression.c concat_expr_build_udata: one nest per field (0, 1, ...),
  // each holding the field's expression type (0) and its userdata (1).
  std::vector<TypeofField> out;
  const auto nests = udata_table(nftnl_udata_get(body), nftnl_udata_len(body), kConcatFields);
  for (size_t i = 0; i < kConcatFields && nests[i] != nullptr; ++i) {
    const auto sub = udata_table(nftnl_udata_get(nests[i]), nftnl_udata_len(nests[i]), 1);
    if (!sub[0]) return {};
    out.push_back(typeof_field(udata_u32(sub[0]), sub[1]));
  }
  return out;
}

}  // namespace

void read_set_userdata(SetShape& set, const void* data, uint32_t len) {
  const auto tb = udata_table(data, len, NFTNL_UDATA_SET_MAX);
  set.key_typeof = parse_typeof(tb[NFTNL_UDATA_SET_KEY_TYPEOF]);
  set.data_typeof = parse_typeof(tb[NFTNL_UDATA_SET_DATA_TYPEOF]);
  set.key_byteorder = udata_u32(tb[NFTNL_UDATA_SET_KEYBYTEORDER]);
  set.data_byteorder = udata_u32(tb[NFTNL_UDATA_SET_DATABYTEORDER]);
  set.data_interval = udata_u32(tb[NFTNL_UDATA_SET_DATA_INTERVAL]) != 0;
}

std::vector<KeyField> declared_data(const SetShape& set) {
  return declared_fields(set.data_type, set.data_len, set.data_typeof, set.data_byteorder);
}

std::vector<KeyField> declared_key(const SetShape& set) {
  uint32_t type = 0;
  for (uint32_t k : set.key_types) type = type << kTypeBits | k;
  std::vector<KeyField> key = declared_fields(type, set.key_len, set.key_typeof, set.key_byteorder);
  // A concatenated interval set says its fields' widths (a typeof field's among them).
  if (key.size() > 1 && set.field_lens.size() == key.size()) {
    for (size_t i = 0; i < key.size(); ++i) {
      if (key[i].len != set.field_lens[i]) unknown("a concatenated key whose field widths are not its types'");
    }
  }
  return key;
}

json set_elements_json(const SetShape& set, const std::vector<KeyField>& key) {
  const bool interval = set.flags & NFT_SET_INTERVAL;
  const bool is_map = set.flags & NFT_SET_MAP;
  // A concatenated interval set lists its elements in the kernel's order,
  // each with its own end (netlink.c netlink_list_setelems:
  // concat_range_aggregate); other sets are sorted.
  const bool concat_ranges = interval && key.size() > 1;
  std::vector<const RawSetElement*> els;
  const RawSetElement* catchall = nullptr;
  for (const RawSetElement& e : set.elements) {
    if (e.flags & NFT_SET_ELEM_CATCHALL) {
      catchall = &e;  // listed last (mergesort.c expr_msort_value, interval_map_decompose)
      continue;
    }
    if (!e.key_end.empty() && !concat_ranges) unknown("a range element in a set of one field");
    if (concat_ranges && e.key_end.empty() && !(e.flags & NFT_SET_ELEM_INTERVAL_END)) {
      unknown("a concatenated interval element without its end");
    }
    els.push_back(&e);
  }
  if (!concat_ranges) {
    // A single host-endian field of a plain set sorts by its number; a
    // concatenation as one host-endian number of its fields (mergesort.c
    // concat_expr_msort_value); an interval set's keys are in network order.
    const bool host = !interval && (key.size() > 1 || key[0].order == Order::Host);
    // Several flags print as ORs, and nft sorts an OR by its left-most
    // operand (mergesort.c expr_msort_value of a binop): the lowest flag.
    std::map<const RawSetElement*, std::string> sort_key;
    if (key.size() == 1 && !interval) {
      for (const RawSetElement* e : els) {
        if (field_value(key[0], e->key, false).is_object()) sort_key[e] = lowest_bit(e->key, key[0].order);
      }
    }
    auto key_of = [&](const RawSetElement* e) -> const std::string& {
      const auto it = sort_key.find(e);
      return it == sort_key.end() ? e->key : it->second;
    };
    // nft's merge sort (mergesort.c list_expr_sort) puts the later of two
    // equal keys first: a stable sort of the reversed list.
    std::reverse(els.begin(), els.end());
    std::stable_sort(els.begin(), els.end(), [&](const RawSetElement* a, const RawSetElement* b) {
      if (less_value(key_of(a), key_of(b), host)) return true;
      if (less_value(key_of(b), key_of(a), host)) return false;
      // One range's end and the next one's start: the end first.
      return (a->flags & NFT_SET_ELEM_INTERVAL_END) && !(b->flags & NFT_SET_ELEM_INTERVAL_END);
    });
  }
  if (catchall) els.push_back(catchall);
  json out = json::array();
  for (size_t i = 0; i < els.size(); ++i) {
    const RawSetElement& e = *els[i];
    if (e.flags & NFT_SET_ELEM_INTERVAL_END) continue;
    json k;
    if (e.flags & NFT_SET_ELEM_CATCHALL) {
      k = "*";
    } else if (concat_ranges) {
      k = concat_range(key, e.key, e.key_end);
    } else if (interval) {
      // A range ends one before what follows it: its own end, or the next
      // range's start (nft sends no end between adjacent ranges); the last
      // one without an end runs to the top value.
      const bool followed = i + 1 < els.size() && !(els[i + 1]->flags & NFT_SET_ELEM_CATCHALL);
      const std::string hi = followed ? minus_one(els[i + 1]->key) : std::string(e.key.size(), '\xff');
      k = interval_value(key[0], e.key, hi);
    } else {
      k = key_value(key, e.key, false);
    }
    k = with_attributes(std::move(k), e);
    if (set.flags & NFT_SET_OBJECT) {
      if (e.objref.empty()) unknown("an object map element without an object");
      out.push_back(json::array({k, e.objref}));
    } else if (!e.objref.empty()) {
      unknown("a set element with an object");
    } else if (!is_map) {
      out.push_back(k);
    } else if (e.has_verdict) {
      out.push_back(json::array({k, verdict(e.verdict, e.chain)}));
    } else {
      if (set.data_type == NFT_DATA_VERDICT) unknown("a verdict map element without a verdict");
      out.push_back(json::array({k, map_data(set, e.data)}));
    }
  }
  return out;
}

int prefix_len(const std::string& lo, const std::string& hi) {
  if (lo.size() != hi.size()) return -1;
  auto bit = [](const std::string& v, size_t i) { return (static_cast<uint8_t>(v[i / 8]) >> (7 - i % 8)) & 1; };
  size_t len = lo.size() * 8;
  while (len > 0 && bit(lo, len - 1) == 0 && bit(hi, len - 1) == 1) --len;
  for (size_t i = 0; i < len; ++i) {
    if (bit(lo, i) != bit(hi, i)) return -1;
  }
  return static_cast<int>(len);
}

}  // namespace dpscope::netfilter
