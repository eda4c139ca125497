#include "collectors/netfilter/nft_rule.h"
#include "collectors/netfilter/xt_save.h"  // first: its glibc headers must precede the uapi ones

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/xt_NFLOG.h>
#include <linux/netfilter/xt_limit.h>
#include <linux/netfilter/xt_mark.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "decoders/nft_json_text.h"
#include "collectors/netfilter/nft_dump.h"
#include "collectors/netfilter/nl_attr.h"
#include "collectors/netfilter/xt.h"

namespace dpscope::netfilter {

namespace {

using namespace nla;  // NOLINT: the attribute helpers of this directory

struct Reg {
  enum Kind : uint8_t { kNone, kMeta, kPayload } kind = kNone;
  uint32_t key = 0;  // meta key
  uint32_t base = 0, offset = 0, len = 0;
  bool masked = false;
  std::array<uint8_t, 16> mask{};
};

// An iptables-nft rule read back as iptables-nft-save reads it
// (nft-ruleparse: nft_rule_to_iptables_command_state): the ip header fields,
// the matches in order -- xt compat expressions as they are, native ones
// (tcp/udp ports and flags, mark, limit) rebuilt into the xt structs
// iptables would have sent -- and the target, then printed by libxtables.
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
      if (tb[NFTA_META_DREG] == nullptr) {
        // meta set: iptables-nft writes -j TRACE as "meta nftrace set 1" (nft_parse_meta_set).
        if (tb[NFTA_META_SREG] == nullptr || be32(tb[NFTA_META_KEY]) != NFT_META_NFTRACE) return false;
        rule_.verdict_kind = "target";
        rule_.target = "TRACE";
        target_ = xt_target_blob("TRACE", 0, nullptr, 0);
        return true;
      }
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
      const Reg& r = reg(be32(tb[NFTA_CMP_SREG]));
      const std::string_view data = data_value(tb[NFTA_CMP_DATA]);
      if ((op == NFT_CMP_GTE || op == NFT_CMP_LTE) && r.kind == Reg::kPayload) {
        return port_bound(r, op == NFT_CMP_GTE, data);  // older iptables-nft: a port range as two compares
      }
      if (op != NFT_CMP_EQ && op != NFT_CMP_NEQ) return false;
      return compare(r, op == NFT_CMP_NEQ, data);
    }
    if (name == "range") {
      const Reg& r = reg(be32(tb[NFTA_RANGE_SREG]));
      const std::string_view from = data_value(tb[NFTA_RANGE_FROM_DATA]);
      const std::string_view to = data_value(tb[NFTA_RANGE_TO_DATA]);
      if (r.kind != Reg::kPayload || r.base != NFT_PAYLOAD_TRANSPORT_HEADER || r.len != 2 || from.size() != 2 ||
          to.size() != 2 || !transport()) {
        return false;
      }
      if (r.offset != 0 && r.offset != 2) return false;
      const bool negated = be32(tb[NFTA_RANGE_OP]) == NFT_RANGE_NEQ;
      set_ports(r.offset == 2, port(from), port(to), negated);
      if (r.offset == 2) {
        rule_.match.dport = std::to_string(port(from)) + ":" + std::to_string(port(to));
        rule_.match.dport_negated = negated;
      }
      return true;
    }
    if (name == "match") {
      const auto info = tb[NFTA_MATCH_INFO];
      const auto* data = info ? static_cast<const uint8_t*>(mnl_attr_get_payload(info)) : nullptr;
      const size_t len = info ? mnl_attr_get_payload_len(info) : 0;
      const std::string_view mname = str(tb[NFTA_MATCH_NAME]);
      const auto rev = static_cast<uint8_t>(be32(tb[NFTA_MATCH_REV]));
      if (mname == "comment") xt_comment_ = true;
      matches_.push_back(xt_match_blob(mname, rev, data, len));
      return decode_xt_match(mname, rev, data, len, af_, rule_.match);
    }
    if (name == "target") {
      const auto info = tb[NFTA_TARGET_INFO];
      const auto* data = info ? static_cast<const uint8_t*>(mnl_attr_get_payload(info)) : nullptr;
      const size_t len = info ? mnl_attr_get_payload_len(info) : 0;
      rule_.verdict_kind = "target";
      rule_.target = std::string(str(tb[NFTA_TARGET_NAME]));
      target_ = xt_target_blob(rule_.target, static_cast<uint8_t>(be32(tb[NFTA_TARGET_REV])), data, len);
      return true;
    }
    if (name == "immediate") {
      if (be32(tb[NFTA_IMMEDIATE_DREG]) != NFT_REG_VERDICT) {
        reg(be32(tb[NFTA_IMMEDIATE_DREG])) = Reg{};  // a value for a "meta set" (TRACE's 1)
        return true;
      }
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
      // nft_parse_limit: -m limit as xt_rateinfo.
      const uint64_t rate = be64(tb[NFTA_LIMIT_RATE]), unit = be64(tb[NFTA_LIMIT_UNIT]);
      if (rate == 0 || (tb[NFTA_LIMIT_TYPE] && be32(tb[NFTA_LIMIT_TYPE]) != NFT_LIMIT_PKTS)) return false;
      xt_rateinfo info{};
      info.avg = static_cast<uint32_t>(XT_LIMIT_SCALE * unit / rate);
      info.burst = be32(tb[NFTA_LIMIT_BURST]);
      matches_.push_back(xt_match_blob("limit", 0, &info, sizeof info));
      rule_.match.modules.emplace_back("limit");
      return true;
    }
    if (name == "log") {
      // iptables-nft translates -j NFLOG into a native log statement with a
      // group; nft_parse_log reads it back into NFLOG's struct, with room for
      // nft's longer prefix.
      if (tb[NFTA_LOG_GROUP] == nullptr) return false;
      struct {
        uint32_t len;
        uint16_t group, threshold, flags, pad;
        char prefix[128];
      } info{};
      info.group = ntohs(mnl_attr_get_u16(tb[NFTA_LOG_GROUP]));
      if (tb[NFTA_LOG_QTHRESHOLD]) info.threshold = ntohs(mnl_attr_get_u16(tb[NFTA_LOG_QTHRESHOLD]));
      if (tb[NFTA_LOG_SNAPLEN]) {
        info.len = be32(tb[NFTA_LOG_SNAPLEN]);
        info.flags = XT_NFLOG_F_COPY_LEN;
      }
      const std::string_view prefix = str(tb[NFTA_LOG_PREFIX]);
      std::memcpy(info.prefix, prefix.data(), std::min(prefix.size(), sizeof info.prefix - 1));
      rule_.verdict_kind = "target";
      rule_.target = "NFLOG";
      target_ = xt_target_blob("NFLOG", 0, &info, sizeof info);
      return true;
    }
    return false;
  }

  // A comment from the rule's user data (a rule written by nft, or by an
  // iptables-nft that keeps comments there): iptables-nft-save adds it as the
  // last -m comment.
  void udata_comment(const std::string& comment) {
    if (comment.empty() || xt_comment_) return;
    char info[256] = {};
    std::memcpy(info, comment.data(), std::min(comment.size(), sizeof info - 1));
    matches_.push_back(xt_match_blob("comment", 0, info, sizeof info));
    rule_.match.modules.emplace_back("comment");
  }

  // iptables-nft-save's line: save_matches_and_target after the ip part. "" when libxtables cannot print it.
  std::string text(std::string_view chain) {
    std::string out = "-A ";
    out += chain;
    append_ip_header(out, af_, ip_);
    if (tcp_at_ != kNone) std::memcpy(matches_[tcp_at_].data() + XT_ALIGN(sizeof(xt_entry_match)), &tcp_, sizeof tcp_);
    if (udp_at_ != kNone) std::memcpy(matches_[udp_at_].data() + XT_ALIGN(sizeof(xt_entry_match)), &udp_, sizeof udp_);
    for (const auto& m : matches_) {
      if (!append_match_text(out, af_, reinterpret_cast<const xt_entry_match*>(m.data()), ip_)) return {};
    }
    if (!target_.empty()) {
      std::string shown;
      if (!target_text(af_, reinterpret_cast<const xt_entry_target*>(target_.data()), ip_, shown, rule_.target_args)) {
        return {};
      }
      out += " -j " + shown;
      if (!rule_.target_args.empty()) out += " " + rule_.target_args;
    } else if (!rule_.target.empty()) {
      out += (rule_.verdict_kind == "goto" ? " -g " : " -j ") + rule_.target;
    }
    return out;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};

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

  uint16_t proto() const { return af_ == AF_INET6 ? ip_.v6.proto : ip_.v4.proto; }
  uint8_t& invflags() { return af_ == AF_INET6 ? ip_.v6.invflags : ip_.v4.invflags; }

  // tcp/udp port and flag matches are native payload compares; iptables-nft-save
  // prints them as one "-m tcp"/"-m udp" (xt_tcp / xt_udp) where the first appears.
  bool transport() {
    if (proto() == IPPROTO_TCP) {
      if (tcp_at_ == kNone) {
        tcp_at_ = matches_.size();
        tcp_ = xt_tcp{{0, 0xFFFF}, {0, 0xFFFF}, 0, 0, 0, 0};
        matches_.push_back(xt_match_blob("tcp", 0, &tcp_, sizeof tcp_));
        rule_.match.modules.emplace_back("tcp");
      }
      return true;
    }
    if (proto() == IPPROTO_UDP) {
      if (udp_at_ == kNone) {
        udp_at_ = matches_.size();
        udp_ = xt_udp{{0, 0xFFFF}, {0, 0xFFFF}, 0};
        matches_.push_back(xt_match_blob("udp", 0, &udp_, sizeof udp_));
        rule_.match.modules.emplace_back("udp");
      }
      return true;
    }
    return false;
  }

  void set_ports(bool destination, uint16_t lo, uint16_t hi, bool negated) {
    uint16_t* ports = proto() == IPPROTO_TCP ? (destination ? tcp_.dpts : tcp_.spts)
                                             : (destination ? udp_.dpts : udp_.spts);
    ports[0] = lo, ports[1] = hi;
    const uint8_t bit = destination ? XT_TCP_INV_DSTPT : XT_TCP_INV_SRCPT;
    static_assert(XT_TCP_INV_DSTPT == XT_UDP_INV_DSTPT && XT_TCP_INV_SRCPT == XT_UDP_INV_SRCPT);
    uint8_t& inv = proto() == IPPROTO_TCP ? tcp_.invflags : udp_.invflags;
    if (negated) inv |= bit;
  }

  bool port_bound(const Reg& r, bool lower, std::string_view data) {
    if (r.base != NFT_PAYLOAD_TRANSPORT_HEADER || r.len != 2 || data.size() != 2 || (r.offset != 0 && r.offset != 2) ||
        !transport()) {
      return false;
    }
    uint16_t* ports = proto() == IPPROTO_TCP ? (r.offset == 2 ? tcp_.dpts : tcp_.spts)
                                             : (r.offset == 2 ? udp_.dpts : udp_.spts);
    ports[lower ? 0 : 1] = port(data);
    if (r.offset == 2) rule_.match.dport = std::to_string(ports[0]) + ":" + std::to_string(ports[1]);
    return true;
  }

  // parse_ifname: "eth0\0" is the name, "eth" (no NUL) the wildcard "eth+".
  static bool iface(std::string_view data, char* name, unsigned char* mask) {
    if (data.empty() || data.size() > IFNAMSIZ) return false;
    std::memcpy(name, data.data(), data.size());
    if (data.back() == '\0') {
      std::memset(mask, 0xff, strnlen(data.data(), data.size()) + 1);
      return true;
    }
    if (data.size() >= IFNAMSIZ) return true;
    name[data.size()] = '+';
    std::memset(mask, 0xff, data.size());
    return true;
  }

  bool compare(const Reg& r, bool negated, std::string_view data) {
    if (r.kind == Reg::kMeta) {
      switch (r.key) {
        case NFT_META_L4PROTO:
          if (data.size() != 1) return false;
          (af_ == AF_INET6 ? ip_.v6.proto : ip_.v4.proto) = static_cast<uint8_t>(data[0]);
          if (negated) invflags() |= XT_INV_PROTO;
          rule_.match.protocol = protocol_name(static_cast<uint8_t>(data[0]));
          rule_.match.protocol_negated = negated;
          return true;
        case NFT_META_IIFNAME:
        case NFT_META_OIFNAME: {
          const bool in = r.key == NFT_META_IIFNAME;
          char* name = af_ == AF_INET6 ? (in ? ip_.v6.iniface : ip_.v6.outiface) : (in ? ip_.v4.iniface : ip_.v4.outiface);
          unsigned char* mask = af_ == AF_INET6 ? (in ? ip_.v6.iniface_mask : ip_.v6.outiface_mask)
                                                : (in ? ip_.v4.iniface_mask : ip_.v4.outiface_mask);
          if (!negated && data == std::string_view("INVAL/D", 8)) {
            // add_iniface: "! -i +" (no interface at all) is written as a name no interface can have.
            name[0] = '+';
            mask[0] = mask[1] = 0xff;
            invflags() |= in ? IPT_INV_VIA_IN : IPT_INV_VIA_OUT;
            return true;
          }
          if (!iface(data, name, mask)) return false;
          if (negated) invflags() |= in ? IPT_INV_VIA_IN : IPT_INV_VIA_OUT;
          return true;
        }
        case NFT_META_MARK: {
          // nft_parse_meta_mark: -m mark as xt_mark_mtinfo1.
          if (data.size() != 4) return false;
          xt_mark_mtinfo1 info{};
          std::memcpy(&info.mark, data.data(), 4);
          info.mask = 0xFFFFFFFF;
          if (r.masked) std::memcpy(&info.mask, r.mask.data(), 4);
          info.invert = negated;
          matches_.push_back(xt_match_blob("mark", 1, &info, sizeof info));
          rule_.match.modules.emplace_back("mark");
          return true;
        }
        default:
          return false;
      }
    }
    if (r.kind != Reg::kPayload) return false;
    if (r.base == NFT_PAYLOAD_NETWORK_HEADER) return network(r, negated, data);
    if (r.base == NFT_PAYLOAD_TRANSPORT_HEADER && transport()) {
      if ((r.offset == 0 || r.offset == 2) && r.len == 2 && data.size() == 2) {
        set_ports(r.offset == 2, port(data), port(data), negated);
        if (r.offset == 2) {
          rule_.match.dport = std::to_string(port(data));
          rule_.match.dport_negated = negated;
        }
        return true;
      }
      if (r.offset == 0 && r.len == 4 && data.size() == 4 && !negated) {  // --sport and --dport in one load
        set_ports(false, port(data), port(data), false);
        set_ports(true, port(data.substr(2)), port(data.substr(2)), false);
        rule_.match.dport = std::to_string(port(data.substr(2)));
        return true;
      }
      if (r.offset == 13 && r.len == 1 && data.size() == 1 && proto() == IPPROTO_TCP) {  // --tcp-flags / --syn
        tcp_.flg_mask = r.masked ? r.mask[0] : 0xFF;
        tcp_.flg_cmp = static_cast<uint8_t>(data[0]);
        if (negated) tcp_.invflags |= XT_TCP_INV_FLAGS;
        return true;
      }
    }
    return false;
  }

  bool network(const Reg& r, bool negated, std::string_view data) {
    const bool v6 = af_ == AF_INET6;
    if (!v6 && r.offset == 9 && r.len == 1 && data.size() == 1) {  // -p as the ip header's protocol byte
      ip_.v4.proto = static_cast<uint8_t>(data[0]);
      if (negated) ip_.v4.invflags |= XT_INV_PROTO;
      rule_.match.protocol = protocol_name(static_cast<uint8_t>(data[0]));
      rule_.match.protocol_negated = negated;
      return true;
    }
    if (!v6 && r.offset == 6 && r.len == 2 && r.masked) {  // -f: fragment offset != 0
      ip_.v4.flags |= IPT_F_FRAG;
      if (!negated) ip_.v4.invflags |= IPT_INV_FRAG;  // "== 0": not a fragment
      return true;
    }
    const uint32_t src = v6 ? 8 : 12, dst = v6 ? 24 : 16, full = v6 ? 16 : 4;
    if ((r.offset != src && r.offset != dst) || r.len == 0 || r.len > full || data.size() != r.len) return false;
    std::array<uint8_t, 16> addr{}, mask{};
    std::memcpy(addr.data(), data.data(), data.size());
    if (r.masked) {
      mask = r.mask;
    } else {
      std::memset(mask.data(), 0xff, r.len);  // iptables-nft loads only the prefix's bytes
    }
    const bool is_src = r.offset == src;
    if (v6) {
      std::memcpy(is_src ? &ip_.v6.src : &ip_.v6.dst, addr.data(), 16);
      std::memcpy(is_src ? &ip_.v6.smsk : &ip_.v6.dmsk, mask.data(), 16);
    } else {
      std::memcpy(is_src ? &ip_.v4.src : &ip_.v4.dst, addr.data(), 4);
      std::memcpy(is_src ? &ip_.v4.smsk : &ip_.v4.dmsk, mask.data(), 4);
    }
    if (negated) invflags() |= is_src ? IPT_INV_SRCIP : IPT_INV_DSTIP;
    model::Prefix prefix{cidr_text(af_, addr.data(), mask.data()), negated};
    (is_src ? rule_.match.source : rule_.match.destination) = std::move(prefix);
    return true;
  }

  model::Rule& rule_;
  int af_;
  std::array<Reg, 24> regs_{};
  XtIpHeader ip_{};
  std::vector<std::vector<uint8_t>> matches_;  // xt_entry_match blobs, in the rule's order
  std::vector<uint8_t> target_;                // xt_entry_target blob ("" for a verdict / jump)
  xt_tcp tcp_{};
  xt_udp udp_{};
  size_t tcp_at_ = kNone, udp_at_ = kNone;     // their places in matches_
  bool xt_comment_ = false;
};

// Native nftables record: the matches reports read -- `ip|ip6 saddr|daddr`
// (address or prefix), `meta l4proto` / `ip protocol` / `ip6 nexthdr` (tcp,
// udp, sctp), `tcp|udp|sctp|th dport` (port or range) -- and the verdict of the
// rule's last statement (jump/goto/verdict, vmap, or a terminal statement, with
// `dnat|snat to ADDR[:PORT]` as target_args), exactly as the nft -j importer
// reads nft's JSON of the same rule (collectors/import/nft_json.cpp).
class NativeDecoder {
 public:
  explicit NativeDecoder(model::Rule& rule) : rule_(rule) {}

  void expr(std::string_view name, const AttrTable& tb) {
    if (name == "counter") {
      rule_.counters = model::Counters{be64(tb[NFTA_COUNTER_PACKETS]), be64(tb[NFTA_COUNTER_BYTES])};
    }
    match(name, tb);
    // Only the last expression decides the verdict; anything else clears an earlier guess.
    rule_.verdict_kind = "none";
    rule_.target.clear();
    rule_.target_args.clear();
    if (name == "immediate" && be32(tb[NFTA_IMMEDIATE_DREG]) == NFT_REG_VERDICT) {
      const Verdict v = data_verdict(tb[NFTA_IMMEDIATE_DATA]);
      switch (v.code) {
        case NF_ACCEPT: set_verdict("verdict", "accept"); break;
        case NF_DROP: set_verdict("verdict", "drop"); break;
        case NF_QUEUE: set_verdict("verdict", "queue"); break;
        case NFT_RETURN: set_verdict("verdict", "return"); break;
        case NFT_CONTINUE: set_verdict("verdict", "continue"); break;
        case NFT_JUMP: set_verdict("jump", v.chain); break;
        case NFT_GOTO: set_verdict("goto", v.chain); break;
        default: break;
      }
    } else if (name == "lookup" && tb[NFTA_LOOKUP_DREG] && be32(tb[NFTA_LOOKUP_DREG]) == NFT_REG_VERDICT) {
      const std::string_view set = str(tb[NFTA_LOOKUP_SET]);
      // Anonymous maps are named "__map%d" by nft; they have no stable name.
      set_verdict("vmap", set.substr(0, 2) == "__" ? "" : std::string(set));
      // kube-proxy picks an endpoint with `numgen random mod N vmap { 0 : goto ..., ... }`.
      const NativeReg& key = reg(be32(tb[NFTA_LOOKUP_SREG]));
      if (key.kind == NativeReg::kNumgen) rule_.target_args = key.value;
    } else if (name == "reject") {
      set_verdict("target", "reject");
    } else if (name == "nat") {
      const bool dnat = be32(tb[NFTA_NAT_TYPE]) == NFT_NAT_DNAT;
      set_verdict("target", dnat ? "dnat" : "snat");
      rule_.target_args = nat_args(tb);
    } else if (name == "masq") {
      set_verdict("target", "masquerade");
    } else if (name == "redir") {
      set_verdict("target", "redirect");
    }
  }

 private:
  struct NativeReg {
    enum Kind : uint8_t { kNone, kMeta, kPayload, kValue, kNumgen } kind = kNone;
    uint32_t key = 0;  // meta key
    uint32_t base = 0, offset = 0, len = 0;
    bool masked = false;
    std::array<uint8_t, 16> mask{};
    std::string value;  // immediate data; numgen: as nft prints it ("numgen random mod 5")
  };

  void match(std::string_view name, const AttrTable& tb) {
    if (name == "meta" && tb[NFTA_META_DREG]) {
      NativeReg& r = reg(be32(tb[NFTA_META_DREG]));
      r = NativeReg{};
      r.kind = NativeReg::kMeta;
      r.key = be32(tb[NFTA_META_KEY]);
    } else if (name == "payload" && tb[NFTA_PAYLOAD_DREG]) {
      NativeReg& r = reg(be32(tb[NFTA_PAYLOAD_DREG]));
      r = NativeReg{};
      r.kind = NativeReg::kPayload;
      r.base = be32(tb[NFTA_PAYLOAD_BASE]);
      r.offset = be32(tb[NFTA_PAYLOAD_OFFSET]);
      r.len = be32(tb[NFTA_PAYLOAD_LEN]);
    } else if (name == "bitwise" && tb[NFTA_BITWISE_DREG]) {
      const NativeReg src = reg(be32(tb[NFTA_BITWISE_SREG]));
      const std::string_view mask = data_value(tb[NFTA_BITWISE_MASK]);
      NativeReg& dst = reg(be32(tb[NFTA_BITWISE_DREG]));
      dst = NativeReg{};
      // Only a plain mask (a prefix) keeps the load's meaning.
      if ((tb[NFTA_BITWISE_OP] && be32(tb[NFTA_BITWISE_OP]) != NFT_BITWISE_BOOL) || mask.size() > 16) return;
      dst = src;
      dst.masked = true;
      dst.mask.fill(0);
      std::memcpy(dst.mask.data(), mask.data(), mask.size());
    } else if (name == "immediate" && tb[NFTA_IMMEDIATE_DREG] && be32(tb[NFTA_IMMEDIATE_DREG]) != NFT_REG_VERDICT) {
      NativeReg& r = reg(be32(tb[NFTA_IMMEDIATE_DREG]));
      r = NativeReg{};
      r.kind = NativeReg::kValue;
      r.value = std::string(data_value(tb[NFTA_IMMEDIATE_DATA]));
    } else if (name == "numgen" && tb[NFTA_NG_DREG]) {
      NativeReg& r = reg(be32(tb[NFTA_NG_DREG]));
      r = NativeReg{};
      r.kind = NativeReg::kNumgen;
      const uint32_t offset = be32(tb[NFTA_NG_OFFSET]);
      r.value = std::string("numgen ") + (be32(tb[NFTA_NG_TYPE]) == NFT_NG_RANDOM ? "random" : "inc") + " mod " +
                std::to_string(be32(tb[NFTA_NG_MODULUS])) + (offset ? " offset " + std::to_string(offset) : "");
    } else if (const nlattr* dreg = computed_value_register(name, tb)) {
      // A value computed at run time (a map's value, a hash, a fib or ct
      // result, ...): nothing this record spells, and whatever the register
      // held before is gone. `ip saddr @set fib daddr type local` compares a
      // fib result, not the address, in the register the address was loaded to.
      reg(be32(dreg)) = NativeReg{};
    } else if (!leaves_registers(name)) {
      regs_.fill(NativeReg{});  // an expression this decoder does not know may write any register
    } else if (name == "cmp") {
      const uint32_t op = be32(tb[NFTA_CMP_OP]);
      if (op != NFT_CMP_EQ && op != NFT_CMP_NEQ) return;
      compare(reg(be32(tb[NFTA_CMP_SREG])), op == NFT_CMP_NEQ, data_value(tb[NFTA_CMP_DATA]));
    } else if (name == "range") {
      const NativeReg& r = reg(be32(tb[NFTA_RANGE_SREG]));
      const std::string_view from = data_value(tb[NFTA_RANGE_FROM_DATA]);
      const std::string_view to = data_value(tb[NFTA_RANGE_TO_DATA]);
      if (is_dport(r) && from.size() == 2 && to.size() == 2) {
        rule_.match.dport = std::to_string(port(from)) + ":" + std::to_string(port(to));
        rule_.match.dport_negated = be32(tb[NFTA_RANGE_OP]) == NFT_RANGE_NEQ;
      }
    }
  }

  // The destination register of an expression that writes one but is not
  // decoded here; nullptr for any other.
  static const nlattr* computed_value_register(std::string_view name, const AttrTable& tb) {
    static constexpr std::pair<std::string_view, int> kDreg[] = {
        {"lookup", NFTA_LOOKUP_DREG}, {"hash", NFTA_HASH_DREG},     {"ct", NFTA_CT_DREG},
        {"fib", NFTA_FIB_DREG},       {"rt", NFTA_RT_DREG},         {"socket", NFTA_SOCKET_DREG},
        {"osf", NFTA_OSF_DREG},       {"xfrm", NFTA_XFRM_DREG},     {"exthdr", NFTA_EXTHDR_DREG},
        {"byteorder", NFTA_BYTEORDER_DREG}, {"tunnel", NFTA_TUNNEL_DREG},
    };
    for (const auto& [n, attr] : kDreg) {
      if (n == name) return attr < kMaxAttr ? tb[attr] : nullptr;
    }
    return nullptr;
  }
  // Expressions that read registers or act, and write none (or are decoded above).
  static bool leaves_registers(std::string_view name) {
    for (std::string_view n : {"cmp", "range", "lookup", "dynset", "counter", "log", "limit", "quota", "notrack",
                               "reject", "nat", "masq", "redir", "queue", "dup", "fwd", "tproxy", "connlimit", "last",
                               "synproxy", "flow_offload", "objref", "match", "target", "immediate", "meta", "payload",
                               "bitwise", "numgen", "hash", "ct", "fib", "rt", "socket", "osf", "xfrm", "exthdr",
                               "byteorder", "tunnel"}) {
      if (n == name) return true;
    }
    return false;
  }

  static uint16_t port(std::string_view d) {
    return static_cast<uint16_t>((static_cast<uint8_t>(d[0]) << 8) | static_cast<uint8_t>(d[1]));
  }
  static bool is_dport(const NativeReg& r) {
    return r.kind == NativeReg::kPayload && !r.masked && r.base == NFT_PAYLOAD_TRANSPORT_HEADER && r.offset == 2 &&
           r.len == 2;
  }

  void compare(const NativeReg& r, bool negated, std::string_view data) {
    if (r.kind == NativeReg::kMeta && r.key == NFT_META_L4PROTO && data.size() == 1 && !r.masked) {
      return protocol(static_cast<uint8_t>(data[0]), negated);
    }
    if (r.kind != NativeReg::kPayload) return;
    if (r.base == NFT_PAYLOAD_TRANSPORT_HEADER) {
      if (is_dport(r) && data.size() == 2) {
        rule_.match.dport = std::to_string(port(data));
        rule_.match.dport_negated = negated;
      }
      return;
    }
    if (r.base != NFT_PAYLOAD_NETWORK_HEADER) return;
    // ip protocol (offset 9) / ip6 nexthdr (offset 6): the same fact as meta l4proto.
    if (r.len == 1 && !r.masked && data.size() == 1 && (r.offset == 9 || r.offset == 6)) {
      return protocol(static_cast<uint8_t>(data[0]), negated);
    }
    // ip saddr @12, daddr @16 (4 bytes); ip6 saddr @8, daddr @24 (16 bytes). nft
    // loads only a prefix's whole bytes (and masks the partial one).
    int af = 0;
    bool is_src = false;
    if (r.offset == 12 || r.offset == 16) {
      af = AF_INET, is_src = r.offset == 12;
    } else if (r.offset == 8 || r.offset == 24) {
      af = AF_INET6, is_src = r.offset == 8;
    }
    const uint32_t full = af == AF_INET ? 4 : 16;
    if (af == 0 || r.len == 0 || r.len > full || data.size() != r.len) return;
    std::array<uint8_t, 16> addr{}, mask{};
    std::memcpy(addr.data(), data.data(), data.size());
    if (r.masked) {
      mask = r.mask;
    } else {
      std::memset(mask.data(), 0xff, r.len);
    }
    model::Prefix prefix{cidr_text(af, addr.data(), mask.data()), negated};
    (is_src ? rule_.match.source : rule_.match.destination) = std::move(prefix);
  }

  void protocol(uint8_t p, bool negated) {
    // Only the protocols whose ports the record carries; others stay "" (not recorded).
    const char* name = p == IPPROTO_TCP ? "tcp" : p == IPPROTO_UDP ? "udp" : p == IPPROTO_SCTP ? "sctp" : "";
    rule_.match.protocol = name;
    rule_.match.protocol_negated = *name != '\0' && negated;
  }

  // "to 10.180.0.1:80", "to [fd00::1]:80", "to 10.180.0.1" -- nft's own spelling
  // of the nat statement's arguments (ranges and map-fed addresses are not spelled).
  std::string nat_args(const AttrTable& tb) {
    const int af = be32(tb[NFTA_NAT_FAMILY]) == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
    const size_t len = af == AF_INET6 ? 16 : 4;
    if (!tb[NFTA_NAT_REG_ADDR_MIN]) return "";
    if (tb[NFTA_NAT_REG_ADDR_MAX] && be32(tb[NFTA_NAT_REG_ADDR_MAX]) != be32(tb[NFTA_NAT_REG_ADDR_MIN])) return "";
    const NativeReg& a = reg(be32(tb[NFTA_NAT_REG_ADDR_MIN]));
    if (a.kind != NativeReg::kValue || a.value.size() != len) return "";
    char buf[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(af, a.value.data(), buf, sizeof buf) == nullptr) return "";
    std::string addr = buf;
    if (!tb[NFTA_NAT_REG_PROTO_MIN]) return "to " + addr;
    if (tb[NFTA_NAT_REG_PROTO_MAX] && be32(tb[NFTA_NAT_REG_PROTO_MAX]) != be32(tb[NFTA_NAT_REG_PROTO_MIN])) return "";
    const NativeReg& p = reg(be32(tb[NFTA_NAT_REG_PROTO_MIN]));
    if (p.kind != NativeReg::kValue || p.value.size() != 2) return "";
    return "to " + (af == AF_INET6 ? "[" + addr + "]" : addr) + ":" + std::to_string(port(p.value));
  }

  void set_verdict(const char* kind, std::string target) {
    rule_.verdict_kind = kind;
    rule_.target = std::move(target);
  }

  NativeReg& reg(uint32_t n) { return regs_[n < regs_.size() ? n : 0]; }

  model::Rule& rule_;
  std::array<NativeReg, 24> regs_{};
};

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
  return netlink::parse_message<kMaxAttr - 1>(nlh, sizeof(nfgenmsg));
}

// A native rule without text: raw is this, the reason, "): " and libnftnl's text.
constexpr std::string_view kTextNotPrinted = "text not printed (";

// iptables 1.8.9 nft.c nft_is_expr_compatible: an expression iptables-nft
// writes (supported_exprs), or its limit and log forms. The same list stands
// in 1.8.10 and 1.8.11; later iptables also refuses a bitwise shift.
bool iptables_nft_writes(std::string_view name, const AttrTable& tb) {
  static constexpr std::string_view kWritten[] = {"match",   "target",  "payload",   "meta",   "cmp",
                                                  "bitwise", "counter", "immediate", "lookup", "range"};
  if (std::find(std::begin(kWritten), std::end(kWritten), name) != std::end(kWritten)) return true;
  if (name == "limit") {
    const uint32_t type = tb[NFTA_LIMIT_TYPE] ? be32(tb[NFTA_LIMIT_TYPE]) : NFT_LIMIT_PKTS;
    return type == NFT_LIMIT_PKTS && be32(tb[NFTA_LIMIT_FLAGS]) == 0;
  }
  return name == "log" && tb[NFTA_LOG_GROUP] != nullptr;
}

}  // namespace

std::string nft_rule_chain(const nlmsghdr* nlh) { return std::string(str(rule_attrs(nlh)[NFTA_RULE_CHAIN])); }

model::Rule decode_nft_rule(const nlmsghdr* nlh, const RuleDecodeOptions& options, bool* iptables_listable) {
  model::Rule rule;
  const AttrTable tb = rule_attrs(nlh);
  const int af = options.family == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
  IptablesDecoder ipt(rule, af);
  NativeDecoder native(rule);
  bool decoded = true;
  for_each_expression(tb[NFTA_RULE_EXPRESSIONS], [&](std::string_view name, const AttrTable& data) {
    if (options.iptables) {
      if (decoded && !ipt.expr(name, data)) decoded = false;
      if (iptables_listable && !iptables_nft_writes(name, data)) *iptables_listable = false;
    } else {
      native.expr(name, data);
    }
  });
  const std::string comment = udata_comment(tb[NFTA_RULE_USERDATA]);
  if (!comment.empty() && rule.match.comment.empty()) rule.match.comment = comment;
  if (options.iptables && decoded) {
    ipt.udata_comment(comment);
    rule.text = ipt.text(str(tb[NFTA_RULE_CHAIN]));
    // An extension saved under an alias (xt target CT with --notrack is "-j NOTRACK"):
    // the target is the name iptables-save prints, as the importer reads it.
    if (rule.verdict_kind == "target") {
      const size_t j = rule.text.rfind(" -j ");
      if (j != std::string::npos) {
        const std::string shown = rule.text.substr(j + 4, rule.text.find(' ', j + 4) - (j + 4));
        if (!shown.empty() && shown != rule.target) rule.target = shown;
      }
    }
  }
  if (!options.iptables && options.sets != nullptr) {
    // The text goes through the printer `nft -j` imports use, so a live and
    // an imported snapshot of one ruleset print each rule the same way.
    const NativeStatements st = native_statements(tb[NFTA_RULE_EXPRESSIONS], options.family, *options.sets, options.bindings);
    std::string why = st.unknown;
    if (why.empty()) {
      nft_text::NftRuleText t = nft_text::nft_rule_text(st.statements, nft_family_name(options.family), comment);
      rule.text = std::move(t.text);
      why = std::move(t.unknown);
    }
    if (rule.text.empty()) {
      rule.undecoded = true;
      rule.raw = std::string(kTextNotPrinted) + why + "): " + nftnl_rule_text(nlh);
    }
  }
  if (!decoded) {
    rule.undecoded = true;
    rule.raw = nftnl_rule_text(nlh);
  }
  return rule;
}

std::string_view text_unknown_reason(const model::Rule& rule) {
  const std::string_view raw = rule.raw;
  if (!rule.text.empty() || raw.substr(0, kTextNotPrinted.size()) != kTextNotPrinted) return {};
  // The reason may hold parentheses of its own: it ends at the first "): ".
  return raw.substr(kTextNotPrinted.size(), raw.find("): ") - kTextNotPrinted.size());
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
