// nf_tables' own attribute shapes (nft_data, verdicts, a rule's expressions)
// over util/netlink.h: the few helpers both rule decoders (nft_rule.cpp,
// nft_native.cpp) use.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>

#include <string>
#include <string_view>

#include "util/netlink.h"

namespace dpscope::netfilter::nla {

// nf_tables attributes by type, 0..31 (util/netlink.h reads them).
constexpr int kMaxAttr = 32;
using AttrTable = netlink::Attrs<kMaxAttr - 1>;

inline AttrTable parse_nested(const nlattr* nest) { return netlink::parse_nested<kMaxAttr - 1>(nest); }

using netlink::be32;
using netlink::be64;
using netlink::str;

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
  netlink::for_each_nested(nest, [&](const nlattr* elem) {
    const AttrTable et = parse_nested(elem);
    f(str(et[NFTA_EXPR_NAME]), parse_nested(et[NFTA_EXPR_DATA]));
  });
}

}  // namespace dpscope::netfilter::nla
