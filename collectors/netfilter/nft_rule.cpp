#include "collectors/netfilter/nft_rule.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <memory>
#include <string_view>

#include "collectors/netfilter/xt.h"

namespace dpscope::netfilter {

namespace {

constexpr int kMaxAttr = 32;
using AttrTable = std::array<const nlattr*, kMaxAttr>;

int store_attr(const nlattr* attr, void* data) {
  auto* tb = static_cast<AttrTable*>(data);
  const int type = mnl_attr_get_type(attr);
  if (type >= 0 && type < kMaxAttr) (*tb)[type] = attr;
  return MNL_CB_OK;
}

AttrTable parse_nested(const nlattr* nest) {
  AttrTable tb{};
  if (nest != nullptr) mnl_attr_parse_nested(nest, store_attr, &tb);
  return tb;
}

uint32_t be32(const nlattr* a) { return a ? ntohl(mnl_attr_get_u32(a)) : 0; }
uint64_t be64(const nlattr* a) { return a ? be64toh(mnl_attr_get_u64(a)) : 0; }

std::string_view str(const nlattr* a) {
  if (a == nullptr) return {};
  const char* s = static_cast<const char*>(mnl_attr_get_payload(a));
  return std::string_view(s, strnlen(s, mnl_attr_get_payload_len(a)));
}

// NFTA_DATA_VALUE bytes of a nested nft_data attribute.
std::string_view data_value(const nlattr* nest) {
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

Verdict data_verdict(const nlattr* nest) {
  Verdict v;
  const AttrTable tb = parse_nested(nest);
  if (tb[NFTA_DATA_VERDICT] == nullptr) return v;
  const AttrTable vt = parse_nested(tb[NFTA_DATA_VERDICT]);
  v.present = true;
  v.code = static_cast<int32_t>(be32(vt[NFTA_VERDICT_CODE]));
  v.chain = std::string(str(vt[NFTA_VERDICT_CHAIN]));
  return v;
}

// What a register holds, as far as the xtables-compat shapes need to know.
struct Reg {
  enum Kind : uint8_t { kNone, kMeta, kPayload } kind = kNone;
  uint32_t key = 0;  // meta key
  uint32_t base = 0, offset = 0, len = 0;
  bool masked = false;
  std::array<uint8_t, 16> mask{};
};

class IptablesDecoder {
 public:
  IptablesDecoder(model::Rule& rule, int af) : rule_(rule), af_(af) {}

  // Returns false when the expression is outside what iptables-nft emits (or we know).
  bool expr(std::string_view name, const AttrTable& tb) {
    if (name == "counter") {
      rule_.counters = model::Counters{be64(tb[NFTA_COUNTER_PACKETS]), be64(tb[NFTA_COUNTER_BYTES])};
      return true;
    }
    if (name == "meta") {
      if (tb[NFTA_META_DREG] == nullptr) return false;  // meta set (e.g. -j TRACE)
      Reg& r = reg(be32(tb[NFTA_META_DREG]));
      r = Reg{};
      r.kind = Reg::kMeta;
      r.key = be32(tb[NFTA_META_KEY]);
      return true;
    }
    if (name == "payload") {
      if (tb[NFTA_PAYLOAD_DREG] == nullptr) return false;  // payload write
      Reg& r = reg(be32(tb[NFTA_PAYLOAD_DREG]));
      r = Reg{};
      r.kind = Reg::kPayload;
      r.base = be32(tb[NFTA_PAYLOAD_BASE]);
      r.offset = be32(tb[NFTA_PAYLOAD_OFFSET]);
      r.len = be32(tb[NFTA_PAYLOAD_LEN]);
      return true;
    }
    if (name == "bitwise") {
      const Reg src = reg(be32(tb[NFTA_BITWISE_SREG]));
      const std::string_view mask = data_value(tb[NFTA_BITWISE_MASK]);
      if (tb[NFTA_BITWISE_OP] && be32(tb[NFTA_BITWISE_OP]) != NFT_BITWISE_BOOL) return false;
      if (mask.size() > 16) return false;
      Reg& dst = reg(be32(tb[NFTA_BITWISE_DREG]));
      dst = src;
      dst.masked = true;
      dst.mask.fill(0);
      std::memcpy(dst.mask.data(), mask.data(), mask.size());
      return true;
    }
    if (name == "cmp") {
      const uint32_t op = be32(tb[NFTA_CMP_OP]);
      if (op != NFT_CMP_EQ && op != NFT_CMP_NEQ) return false;
      return compare(reg(be32(tb[NFTA_CMP_SREG])), op == NFT_CMP_NEQ, data_value(tb[NFTA_CMP_DATA]));
    }
    if (name == "range") {
      const Reg& r = reg(be32(tb[NFTA_RANGE_SREG]));
      const std::string_view from = data_value(tb[NFTA_RANGE_FROM_DATA]);
      const std::string_view to = data_value(tb[NFTA_RANGE_TO_DATA]);
      if (r.kind != Reg::kPayload || r.base != NFT_PAYLOAD_TRANSPORT_HEADER || r.len != 2 || from.size() != 2 ||
          to.size() != 2 || rule_.match.protocol.empty()) {
        return false;
      }
      transport_module();
      if (r.offset == 2) {
        const std::string ports = std::to_string(port(from)) + ":" + std::to_string(port(to));
        rule_.match.dport = ports;
        rule_.match.dport_negated = be32(tb[NFTA_RANGE_OP]) == NFT_RANGE_NEQ;
      }
      return r.offset == 0 || r.offset == 2;
    }
    if (name == "match") {
      const auto info = tb[NFTA_MATCH_INFO];
      const auto* data = info ? static_cast<const uint8_t*>(mnl_attr_get_payload(info)) : nullptr;
      const size_t len = info ? mnl_attr_get_payload_len(info) : 0;
      return decode_xt_match(str(tb[NFTA_MATCH_NAME]), static_cast<uint8_t>(be32(tb[NFTA_MATCH_REV])), data, len,
                             af_, rule_.match);
    }
    if (name == "target") {
      const auto info = tb[NFTA_TARGET_INFO];
      const auto* data = info ? static_cast<const uint8_t*>(mnl_attr_get_payload(info)) : nullptr;
      const size_t len = info ? mnl_attr_get_payload_len(info) : 0;
      decode_xt_target(str(tb[NFTA_TARGET_NAME]), static_cast<uint8_t>(be32(tb[NFTA_TARGET_REV])), data, len, af_,
                       rule_);
      return true;
    }
    if (name == "immediate") {
      if (be32(tb[NFTA_IMMEDIATE_DREG]) != NFT_REG_VERDICT) return false;
      const Verdict v = data_verdict(tb[NFTA_IMMEDIATE_DATA]);
      if (!v.present) return false;
      switch (v.code) {
        case NF_ACCEPT: set_verdict("verdict", "ACCEPT"); return true;
        case NF_DROP: set_verdict("verdict", "DROP"); return true;
        case NF_QUEUE: set_verdict("verdict", "QUEUE"); return true;
        case NFT_RETURN: set_verdict("verdict", "RETURN"); return true;
        case NFT_JUMP: set_verdict("jump", v.chain); return true;
        case NFT_GOTO: set_verdict("goto", v.chain); return true;
        default: return false;
      }
    }
    if (name == "limit") {
      rule_.match.modules.emplace_back("limit");
      return true;
    }
    if (name == "log") {
      // iptables-nft translates -j NFLOG into a native log statement with a group.
      rule_.verdict_kind = "target";
      rule_.target = "NFLOG";
      return tb[NFTA_LOG_GROUP] != nullptr;
    }
    return false;
  }

 private:
  static uint16_t port(std::string_view v) {
    uint16_t p;
    std::memcpy(&p, v.data(), 2);
    return ntohs(p);
  }

  Reg& reg(uint32_t n) { return regs_[n < regs_.size() ? n : 0]; }

  void set_verdict(const char* kind, std::string target) {
    rule_.verdict_kind = kind;
    rule_.target = std::move(target);
  }

  // tcp/udp port and flag matches are native payload compares; iptables-save
  // prints them as one "-m tcp" (the protocol's name) where the first appears.
  void transport_module() {
    if (transport_seen_) return;
    transport_seen_ = true;
    rule_.match.modules.push_back(rule_.match.protocol);
  }

  bool compare(const Reg& r, bool negated, std::string_view data) {
    if (r.kind == Reg::kMeta) {
      switch (r.key) {
        case NFT_META_L4PROTO:
          if (data.size() != 1) return false;
          rule_.match.protocol = protocol_name(static_cast<uint8_t>(data[0]));
          rule_.match.protocol_negated = negated;
          return true;
        case NFT_META_IIFNAME:
        case NFT_META_OIFNAME:
          return true;  // -i / -o: no field in the rule record
        case NFT_META_MARK:
          rule_.match.modules.emplace_back("mark");
          return true;
        default:
          return false;
      }
    }
    if (r.kind != Reg::kPayload) return false;
    if (r.base == NFT_PAYLOAD_NETWORK_HEADER) return address(r, negated, data);
    if (r.base == NFT_PAYLOAD_TRANSPORT_HEADER && !rule_.match.protocol.empty()) {
      if (r.offset == 0 && r.len == 2) {  // --sport
        transport_module();
        return true;
      }
      if ((r.offset == 2 && r.len == 2) || (r.offset == 0 && r.len == 4)) {
        if (data.size() != r.len) return false;
        transport_module();
        rule_.match.dport = std::to_string(port(data.substr(r.len - 2)));
        rule_.match.dport_negated = negated;
        return true;
      }
      if (r.offset == 13 && r.len == 1 && rule_.match.protocol == "tcp") {  // --tcp-flags / --syn
        transport_module();
        return true;
      }
    }
    return false;
  }

  bool address(const Reg& r, bool negated, std::string_view data) {
    const bool v6 = af_ == AF_INET6;
    const uint32_t src = v6 ? 8 : 12, dst = v6 ? 24 : 16, full = v6 ? 16 : 4;
    if ((r.offset != src && r.offset != dst) || r.len == 0 || r.len > full || data.size() != r.len) return false;
    std::array<uint8_t, 16> addr{}, mask{};
    std::memcpy(addr.data(), data.data(), data.size());
    if (r.masked) {
      mask = r.mask;
    } else {
      std::memset(mask.data(), 0xff, r.len);  // iptables-nft loads only the prefix's bytes
    }
    model::Prefix prefix{cidr_text(af_, addr.data(), mask.data()), negated};
    (r.offset == src ? rule_.match.source : rule_.match.destination) = std::move(prefix);
    return true;
  }

  model::Rule& rule_;
  int af_;
  std::array<Reg, 24> regs_{};
  bool transport_seen_ = false;
};

// Native nftables record: the verdict of the rule's last statement, as the
// nft -j importer reads it (jump/goto/verdict, vmap, or a terminal statement).
void native_expr(std::string_view name, const AttrTable& tb, model::Rule& rule) {
  if (name == "counter") {
    rule.counters = model::Counters{be64(tb[NFTA_COUNTER_PACKETS]), be64(tb[NFTA_COUNTER_BYTES])};
  }
  // Only the last expression decides; anything else clears an earlier guess.
  rule.verdict_kind = "none";
  rule.target.clear();
  if (name == "immediate" && be32(tb[NFTA_IMMEDIATE_DREG]) == NFT_REG_VERDICT) {
    const Verdict v = data_verdict(tb[NFTA_IMMEDIATE_DATA]);
    switch (v.code) {
      case NF_ACCEPT: rule.verdict_kind = "verdict", rule.target = "accept"; break;
      case NF_DROP: rule.verdict_kind = "verdict", rule.target = "drop"; break;
      case NF_QUEUE: rule.verdict_kind = "verdict", rule.target = "queue"; break;
      case NFT_RETURN: rule.verdict_kind = "verdict", rule.target = "return"; break;
      case NFT_CONTINUE: rule.verdict_kind = "verdict", rule.target = "continue"; break;
      case NFT_JUMP: rule.verdict_kind = "jump", rule.target = v.chain; break;
      case NFT_GOTO: rule.verdict_kind = "goto", rule.target = v.chain; break;
      default: break;
    }
  } else if (name == "lookup" && tb[NFTA_LOOKUP_DREG] && be32(tb[NFTA_LOOKUP_DREG]) == NFT_REG_VERDICT) {
    rule.verdict_kind = "vmap";
    const std::string_view set = str(tb[NFTA_LOOKUP_SET]);
    // Anonymous maps are named "__map%d" by nft; they have no stable name.
    rule.target = set.substr(0, 2) == "__" ? "" : std::string(set);
  } else if (name == "reject") {
    rule.verdict_kind = "target", rule.target = "reject";
  } else if (name == "nat") {
    rule.verdict_kind = "target";
    rule.target = be32(tb[NFTA_NAT_TYPE]) == NFT_NAT_DNAT ? "dnat" : "snat";
  } else if (name == "masq") {
    rule.verdict_kind = "target", rule.target = "masquerade";
  } else if (name == "redir") {
    rule.verdict_kind = "target", rule.target = "redirect";
  }
}

std::string udata_comment(const nlattr* a) {
  if (a == nullptr) return {};
  const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
  const size_t len = mnl_attr_get_payload_len(a);
  // TLVs: u8 type, u8 len, value; NFTNL_UDATA_RULE_COMMENT (0) is NUL-terminated.
  for (size_t off = 0; off + 2 <= len;) {
    const uint8_t type = p[off], vlen = p[off + 1];
    if (off + 2 + vlen > len) break;
    if (type == 0) {
      const char* s = reinterpret_cast<const char*>(p + off + 2);
      return std::string(s, strnlen(s, vlen));
    }
    off += 2 + vlen;
  }
  return {};
}

AttrTable rule_attrs(const nlmsghdr* nlh) {
  AttrTable tb{};
  mnl_attr_parse(nlh, sizeof(nfgenmsg), store_attr, &tb);
  return tb;
}

}  // namespace

std::string nft_rule_chain(const nlmsghdr* nlh) { return std::string(str(rule_attrs(nlh)[NFTA_RULE_CHAIN])); }

model::Rule decode_nft_rule(const nlmsghdr* nlh, const RuleDecodeOptions& options) {
  model::Rule rule;
  const AttrTable tb = rule_attrs(nlh);
  const int af = options.family == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
  IptablesDecoder ipt(rule, af);
  bool decoded = true;
  if (tb[NFTA_RULE_EXPRESSIONS] != nullptr) {
    const nlattr* nest = tb[NFTA_RULE_EXPRESSIONS];
    const char* end = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
    // mnl_attr_for_each_nested, spelled out: the macro does not compile as C++.
    for (auto* elem = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
         mnl_attr_ok(elem, static_cast<int>(end - reinterpret_cast<const char*>(elem))); elem = mnl_attr_next(elem)) {
      const AttrTable et = parse_nested(elem);
      const std::string_view name = str(et[NFTA_EXPR_NAME]);
      const AttrTable data = parse_nested(et[NFTA_EXPR_DATA]);
      if (options.iptables) {
        if (decoded && !ipt.expr(name, data)) decoded = false;
      } else {
        native_expr(name, data, rule);
      }
    }
  }
  const std::string comment = udata_comment(tb[NFTA_RULE_USERDATA]);
  if (!comment.empty() && rule.match.comment.empty()) rule.match.comment = comment;
  if (!decoded) {
    rule.undecoded = true;
    rule.raw = nftnl_rule_text(nlh);
  }
  return rule;
}

std::string nftnl_rule_text(const nlmsghdr* nlh) {
  std::unique_ptr<nftnl_rule, decltype(&nftnl_rule_free)> r(nftnl_rule_alloc(), nftnl_rule_free);
  if (!r) return "unrendered rule: out of memory";
  if (nftnl_rule_nlmsg_parse(nlh, r.get()) < 0) {
    const AttrTable tb = rule_attrs(nlh);
    return "unparseable rule (handle " + std::to_string(be64(tb[NFTA_RULE_HANDLE])) +
           "): an expression libnftnl 1.2.4 does not know";
  }
  std::string buf(4096, '\0');
  for (;;) {
    const int n = nftnl_rule_snprintf(buf.data(), buf.size(), r.get(), NFTNL_OUTPUT_DEFAULT, 0);
    if (n < 0) return "unrendered rule";
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(n);
      return buf;
    }
    buf.resize(n + 1);
  }
}

}  // namespace dpscope::netfilter
