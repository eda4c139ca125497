// Reading nf_tables netlink attributes with libmnl: the few helpers both rule
// decoders (nft_rule.cpp, nft_native.cpp) use.
#pragma once

#include <arpa/inet.h>
#include <endian.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

namespace dpscope::netfilter::nla {

constexpr int kMaxAttr = 32;
using AttrTable = std::array<const nlattr*, kMaxAttr>;

inline int store_attr(const nlattr* attr, void* data) {
  auto* tb = static_cast<AttrTable*>(data);
  const int type = mnl_attr_get_type(attr);
  if (type >= 0 && type < kMaxAttr) (*tb)[type] = attr;
  return MNL_CB_OK;
}

inline AttrTable parse_nested(const nlattr* nest) {
  AttrTable tb{};
  if (nest != nullptr) mnl_attr_parse_nested(nest, store_attr, &tb);
  return tb;
}

inline uint32_t be32(const nlattr* a) { return a ? ntohl(mnl_attr_get_u32(a)) : 0; }
inline uint64_t be64(const nlattr* a) { return a ? be64toh(mnl_attr_get_u64(a)) : 0; }

inline std::string_view str(const nlattr* a) {
  if (a == nullptr) return {};
  const char* s = static_cast<const char*>(mnl_attr_get_payload(a));
  return std::string_view(s, strnlen(s, mnl_attr_get_payload_len(a)));
}

// NFTA_DATA_VALUE bytes of a nested nft_data attribute.
inline std::string_view data_value(const nlattr* nest) {
  const AttrTable tb = parse_nested(nest);
  const nlattr* v = tb[NFTA_DATA_VALUE];
  if (v == nullptr) return {};
  return std::string_view(static_cast<const char*>(mnl_attr_get_payload(v)), mnl_attr_get_payload_len(v));
}

struct Verdict {
  bool present = false;
  int32_t code = 0;
  std::string chain;
};

inline Verdict data_verdict(const nlattr* nest) {
  Verdict v;
  const AttrTable tb = parse_nested(nest);
  if (tb[NFTA_DATA_VERDICT] == nullptr) return v;
  const AttrTable vt = parse_nested(tb[NFTA_DATA_VERDICT]);
  v.present = true;
  v.code = static_cast<int32_t>(be32(vt[NFTA_VERDICT_CODE]));
  v.chain = std::string(str(vt[NFTA_VERDICT_CHAIN]));
  return v;
}

// Calls f(name, data attributes) for each expression of NFTA_RULE_EXPRESSIONS.
template <typename F>
void for_each_expression(const nlattr* nest, F&& f) {
  if (nest == nullptr) return;
  const char* end = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
  // mnl_attr_for_each_nested, spelled out: the macro does not compile as C++.
  for (auto* elem = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
       mnl_attr_ok(elem, static_cast<int>(end - reinterpret_cast<const char*>(elem))); elem = mnl_attr_next(elem)) {
    const AttrTable et = parse_nested(elem);
    f(str(et[NFTA_EXPR_NAME]), parse_nested(et[NFTA_EXPR_DATA]));
  }
}

}  // namespace dpscope::netfilter::nla
