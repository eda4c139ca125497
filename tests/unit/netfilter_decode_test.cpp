// The live netfilter decoders without a kernel: xt blobs as iptables-save
// prints them, nf_tables rule messages built with libnftnl (as iptables-nft
// builds them) decoded back, a legacy x_tables blob walked into chains, and nft
// set keys rendered the way nft prints them.
#include "collectors/netfilter/xt_save.h"  // first: its glibc headers must precede the uapi ones

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_mark.h>
#include <linux/netfilter/xt_multiport.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv4/ipt_REJECT.h>
#include <linux/netfilter_ipv6/ip6t_REJECT.h>
#include <linux/netfilter/xt_LOG.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectors/netfilter/legacy.h"
#include "collectors/netfilter/nft_rule.h"
#include "collectors/netfilter/nft_elements.h"
#include "collectors/netfilter/xt.h"

namespace dpscope::netfilter {
namespace {

template <typename T>
const uint8_t* bytes(const T& v) {
  return reinterpret_cast<const uint8_t*>(&v);
}

TEST(XtMatch, TcpDportAndNegation) {
  xt_tcp tcp{};
  tcp.spts[0] = 0, tcp.spts[1] = 0xFFFF, tcp.dpts[0] = 80, tcp.dpts[1] = 80;
  model::RuleMatch m;
  ASSERT_TRUE(decode_xt_match("tcp", 0, bytes(tcp), sizeof tcp, AF_INET, m));
  EXPECT_EQ(m.modules, std::vector<std::string>{"tcp"});
  EXPECT_EQ(m.dport, "80");
  EXPECT_FALSE(m.dport_negated);
  tcp.dpts[0] = 30000, tcp.dpts[1] = 30100, tcp.invflags = XT_TCP_INV_DSTPT;
  model::RuleMatch r;
  ASSERT_TRUE(decode_xt_match("tcp", 0, bytes(tcp), sizeof tcp, AF_INET, r));
  EXPECT_EQ(r.dport, "30000:30100");
  EXPECT_TRUE(r.dport_negated);
  // Only a source port: no dport.
  tcp = {};
  tcp.spts[0] = tcp.spts[1] = 5, tcp.dpts[1] = 0xFFFF;
  model::RuleMatch s;
  ASSERT_TRUE(decode_xt_match("tcp", 0, bytes(tcp), sizeof tcp, AF_INET, s));
  EXPECT_EQ(s.dport, "");
  EXPECT_FALSE(decode_xt_match("tcp", 0, bytes(tcp), 4, AF_INET, s)) << "short blob";
}

TEST(XtMatch, MultiportCommentAndStateAlias) {
  xt_multiport_v1 mp{};
  mp.flags = XT_MULTIPORT_DESTINATION, mp.count = 4;
  mp.ports[0] = 80, mp.ports[1] = 443, mp.ports[2] = 1000, mp.ports[3] = 2000;
  mp.pflags[2] = 1;  // 1000:2000 is a range
  model::RuleMatch m;
  ASSERT_TRUE(decode_xt_match("multiport", 1, bytes(mp), sizeof mp, AF_INET, m));
  EXPECT_EQ(m.dport, "80,443,1000:2000");

  xt_comment_info c{};
  std::strcpy(c.comment, "ns1/svc1:p80 cluster IP");
  ASSERT_TRUE(decode_xt_match("comment", 0, bytes(c), sizeof c, AF_INET, m));
  EXPECT_EQ(m.comment, "ns1/svc1:p80 cluster IP");

  xt_conntrack_mtinfo3 ct{};
  ct.match_flags = XT_CONNTRACK_STATE | XT_CONNTRACK_STATE_ALIAS;
  ASSERT_TRUE(decode_xt_match("conntrack", 3, bytes(ct), sizeof ct, AF_INET, m));
  ct.match_flags = XT_CONNTRACK_STATE;
  ASSERT_TRUE(decode_xt_match("conntrack", 3, bytes(ct), sizeof ct, AF_INET, m));
  EXPECT_EQ(m.modules, (std::vector<std::string>{"multiport", "comment", "state", "conntrack"}));
}

TEST(XtText, AddressesAndStrings) {
  uint8_t addr[4] = {10, 0, 0, 0}, mask[4] = {255, 0, 0, 0};
  EXPECT_EQ(cidr_text(AF_INET, addr, mask), "10.0.0.0/8");
  uint8_t odd[4] = {255, 0, 255, 0};
  EXPECT_EQ(cidr_text(AF_INET, addr, odd), "10.0.0.0/255.0.255.0");
  EXPECT_EQ(protocol_name(6), "tcp");
  EXPECT_EQ(protocol_name(132), "sctp");
}

// ---------------------------------------------------------------- nf_tables rules

struct RuleBuilder {
  nftnl_rule* rule = nftnl_rule_alloc();
  std::vector<char> buf = std::vector<char>(65536);
  ~RuleBuilder() { nftnl_rule_free(rule); }

  nftnl_expr* add(const char* name) {
    nftnl_expr* e = nftnl_expr_alloc(name);
    nftnl_rule_add_expr(rule, e);
    return e;
  }
  void meta(uint32_t key) {
    auto* e = add("meta");
    nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
    nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
  }
  void payload(uint32_t base, uint32_t offset, uint32_t len) {
    auto* e = add("payload");
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
  }
  void cmp(uint32_t op, const void* data, uint32_t len) {
    auto* e = add("cmp");
    nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
    nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
    nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
  }
  void match(const char* name, const void* info, uint32_t len) {
    auto* e = add("match");
    nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, name);
    nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 0);
    // libnftnl takes ownership of the match info buffer (it frees it with the expression).
    void* copy = malloc(len);
    std::memcpy(copy, info, len);
    nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, copy, len);
  }
  void verdict(int code, const char* chain = nullptr) {
    auto* e = add("immediate");
    nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
    nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, code);
    if (chain) nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
  }
  const nlmsghdr* message() {
    nftnl_rule_set_str(rule, NFTNL_RULE_TABLE, "nat");
    nftnl_rule_set_str(rule, NFTNL_RULE_CHAIN, "KUBE-SERVICES");
    nlmsghdr* nlh = nftnl_nlmsg_build_hdr(buf.data(), NFT_MSG_NEWRULE, NFPROTO_IPV4, 0, 1);
    nftnl_rule_nlmsg_build_payload(nlh, rule);
    return nlh;
  }
};

// -A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "..." -m tcp --dport 80 -j KUBE-SVC-X
TEST(NftRule, IptablesNftServiceRule) {
  RuleBuilder b;
  const uint8_t tcp = IPPROTO_TCP;
  b.meta(NFT_META_L4PROTO);
  b.cmp(NFT_CMP_EQ, &tcp, 1);
  const uint8_t daddr[4] = {172, 30, 0, 41};
  b.payload(NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
  b.cmp(NFT_CMP_EQ, daddr, 4);
  xt_comment_info c{};
  std::strcpy(c.comment, "ns1/svc1:p80 cluster IP");
  b.match("comment", &c, sizeof c);
  const uint16_t port = htons(80);
  b.payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
  b.cmp(NFT_CMP_EQ, &port, 2);
  b.add("counter");
  b.verdict(NFT_JUMP, "KUBE-SVC-XPGD46QRK7WJZT7O");
  const nlmsghdr* nlh = b.message();
  EXPECT_EQ(nft_rule_chain(nlh), "KUBE-SERVICES");
  const model::Rule r = decode_nft_rule(nlh, {NFPROTO_IPV4, true});
  EXPECT_FALSE(r.undecoded) << r.raw;
  ASSERT_TRUE(r.match.destination.has_value());
  EXPECT_EQ(r.match.destination->cidr, "172.30.0.41/32");
  EXPECT_EQ(r.match.protocol, "tcp");
  EXPECT_EQ(r.match.dport, "80");
  EXPECT_EQ(r.match.comment, "ns1/svc1:p80 cluster IP");
  EXPECT_EQ(r.match.modules, (std::vector<std::string>{"comment", "tcp"}));
  EXPECT_EQ(r.verdict_kind, "jump");
  EXPECT_EQ(r.target, "KUBE-SVC-XPGD46QRK7WJZT7O");
  ASSERT_TRUE(r.counters.has_value());
}

// ! -s 10.0.0.0/8 loads one byte (iptables-nft shortens byte-aligned prefixes).
TEST(NftRule, ShortPrefixLoadAndNegation) {
  RuleBuilder b;
  const uint8_t net = 10;
  b.payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 1);
  b.cmp(NFT_CMP_NEQ, &net, 1);
  b.verdict(NF_ACCEPT);
  const model::Rule r = decode_nft_rule(b.message(), {NFPROTO_IPV4, true});
  ASSERT_TRUE(r.match.source.has_value());
  EXPECT_EQ(r.match.source->cidr, "10.0.0.0/8");
  EXPECT_TRUE(r.match.source->negated);
  EXPECT_EQ(r.verdict_kind, "verdict");
  EXPECT_EQ(r.target, "ACCEPT");
}

TEST(NftRule, UnknownExpressionKeptUndecodedWithRawText) {
  RuleBuilder b;
  auto* ct = b.add("ct");
  nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
  nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_DREG, NFT_REG_1);
  b.verdict(NF_DROP);
  const model::Rule r = decode_nft_rule(b.message(), {NFPROTO_IPV4, true});
  EXPECT_TRUE(r.undecoded);
  EXPECT_NE(r.raw.find("ct load state"), std::string::npos) << r.raw;
  // The same rule in a native table: only the verdict matters, nothing is undecoded.
  RuleBuilder n;
  auto* ct2 = n.add("ct");
  nftnl_expr_set_u32(ct2, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
  nftnl_expr_set_u32(ct2, NFTNL_EXPR_CT_DREG, NFT_REG_1);
  n.verdict(NF_DROP);
  const model::Rule native = decode_nft_rule(n.message(), {NFPROTO_IPV4, false});
  EXPECT_FALSE(native.undecoded);
  EXPECT_EQ(native.verdict_kind, "verdict");
  EXPECT_EQ(native.target, "drop");
}

TEST(NftRule, NativeVerdictMapsNamedAndAnonymous) {
  for (const char* set : {"service-ips", "__map12"}) {
    RuleBuilder b;
    auto* l = b.add("lookup");
    nftnl_expr_set_str(l, NFTNL_EXPR_LOOKUP_SET, set);
    nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
    nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_VERDICT);
    const model::Rule r = decode_nft_rule(b.message(), {NFPROTO_IPV4, false});
    EXPECT_EQ(r.verdict_kind, "vmap");
    EXPECT_EQ(r.target, std::string(set) == "service-ips" ? "service-ips" : "");
  }
}

// kube-proxy's service and endpoint rules as nft sends them:
// `ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`
// and `meta l4proto tcp dnat to 10.180.0.1:80`.
TEST(NftRule, NativeMatchesAndDnatArguments) {
  RuleBuilder b;
  const uint8_t daddr[4] = {172, 30, 0, 41}, tcp = IPPROTO_TCP, net = 10;
  const uint8_t port80[2] = {0, 80};
  b.payload(NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
  b.cmp(NFT_CMP_EQ, daddr, 4);
  b.meta(NFT_META_L4PROTO);
  b.cmp(NFT_CMP_EQ, &tcp, 1);
  b.payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
  b.cmp(NFT_CMP_EQ, port80, 2);
  b.payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 1);
  b.cmp(NFT_CMP_NEQ, &net, 1);
  b.verdict(NFT_JUMP, "mark-for-masquerade");
  const model::Rule r = decode_nft_rule(b.message(), {NFPROTO_IPV4, false});
  ASSERT_TRUE(r.match.destination.has_value());
  EXPECT_EQ(r.match.destination->cidr, "172.30.0.41/32");
  EXPECT_FALSE(r.match.destination->negated);
  ASSERT_TRUE(r.match.source.has_value());
  EXPECT_EQ(r.match.source->cidr, "10.0.0.0/8");
  EXPECT_TRUE(r.match.source->negated);
  EXPECT_EQ(r.match.protocol, "tcp");
  EXPECT_EQ(r.match.dport, "80");
  EXPECT_EQ(r.verdict_kind, "jump");
  EXPECT_EQ(r.target, "mark-for-masquerade");
  EXPECT_EQ(r.target_args, "");

  RuleBuilder d;
  d.meta(NFT_META_L4PROTO);
  d.cmp(NFT_CMP_EQ, &tcp, 1);
  const uint8_t ep[4] = {10, 180, 0, 1};
  auto* a = d.add("immediate");
  nftnl_expr_set_u32(a, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
  nftnl_expr_set(a, NFTNL_EXPR_IMM_DATA, ep, 4);
  auto* p = d.add("immediate");
  nftnl_expr_set_u32(p, NFTNL_EXPR_IMM_DREG, NFT_REG_2);
  nftnl_expr_set(p, NFTNL_EXPR_IMM_DATA, port80, 2);
  auto* nat = d.add("nat");
  nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
  nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_FAMILY, NFPROTO_IPV4);
  nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
  nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
  const model::Rule dn = decode_nft_rule(d.message(), {NFPROTO_IPV4, false});
  EXPECT_EQ(dn.match.protocol, "tcp");
  EXPECT_EQ(dn.verdict_kind, "target");
  EXPECT_EQ(dn.target, "dnat");
  EXPECT_EQ(dn.target_args, "to 10.180.0.1:80");

  // A nat address from a map lookup is not spelled.
  RuleBuilder m;
  auto* l = m.add("lookup");
  nftnl_expr_set_str(l, NFTNL_EXPR_LOOKUP_SET, "__map3");
  nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
  nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_1);
  auto* mn = m.add("nat");
  nftnl_expr_set_u32(mn, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
  nftnl_expr_set_u32(mn, NFTNL_EXPR_NAT_FAMILY, NFPROTO_IPV4);
  nftnl_expr_set_u32(mn, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
  const model::Rule mapped = decode_nft_rule(m.message(), {NFPROTO_IPV4, false});
  EXPECT_EQ(mapped.target, "dnat");
  EXPECT_EQ(mapped.target_args, "");
}

// ---------------------------------------------------------------- legacy blob

// Builds INPUT (policy DROP) with "-s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT"
// and "-j FOO", then user chain FOO with "-j RETURN", as the kernel lays it out.
struct LegacyBlob {
  std::vector<uint8_t> data;
  size_t entry(const ipt_ip& ip, const std::vector<uint8_t>& matches, const std::vector<uint8_t>& target) {
    const size_t off = data.size();
    ipt_entry e{};
    e.ip = ip;
    e.target_offset = static_cast<uint16_t>(sizeof(ipt_entry) + matches.size());
    e.next_offset = static_cast<uint16_t>(e.target_offset + target.size());
    data.resize(off + e.next_offset);
    std::memcpy(data.data() + off, &e, sizeof e);
    if (!matches.empty()) std::memcpy(data.data() + off + sizeof e, matches.data(), matches.size());
    std::memcpy(data.data() + off + e.target_offset, target.data(), target.size());
    return off;
  }
  static std::vector<uint8_t> standard(int verdict) {
    std::vector<uint8_t> t(XT_ALIGN(sizeof(xt_entry_target) + sizeof(int)));
    auto* h = reinterpret_cast<xt_entry_target*>(t.data());
    h->u.target_size = static_cast<uint16_t>(t.size());
    std::memcpy(h->data, &verdict, sizeof verdict);
    return t;
  }
  static std::vector<uint8_t> error(const char* name) {
    std::vector<uint8_t> t(XT_ALIGN(sizeof(xt_error_target)));
    auto* h = reinterpret_cast<xt_error_target*>(t.data());
    h->target.u.target_size = static_cast<uint16_t>(t.size());
    std::strcpy(h->target.u.user.name, XT_ERROR_TARGET);
    std::strcpy(h->errorname, name);
    return t;
  }
};

TEST(LegacyTable, WalksChainsJumpsAndPolicies) {
  LegacyBlob b;
  ipt_ip any{};
  ipt_ip ssh{};
  inet_pton(AF_INET, "10.0.0.0", &ssh.src);
  inet_pton(AF_INET, "255.0.0.0", &ssh.smsk);
  ssh.proto = IPPROTO_TCP;
  std::vector<uint8_t> tcp_match(XT_ALIGN(sizeof(xt_entry_match) + sizeof(xt_tcp)));
  auto* m = reinterpret_cast<xt_entry_match*>(tcp_match.data());
  m->u.match_size = static_cast<uint16_t>(tcp_match.size());
  std::strcpy(m->u.user.name, "tcp");
  xt_tcp tcp{};
  tcp.spts[1] = 0xFFFF, tcp.dpts[0] = tcp.dpts[1] = 22;
  std::memcpy(m->data, &tcp, sizeof tcp);

  const size_t rule1 = b.entry(ssh, tcp_match, LegacyBlob::standard(-NF_ACCEPT - 1));
  // Entry sizes are fixed, so FOO's first entry offset is known before writing it:
  // rule2, policy, ERROR(FOO), then FOO's RETURN rule.
  const size_t std_size = sizeof(ipt_entry) + LegacyBlob::standard(0).size();
  const size_t foo_first = b.data.size() + 2 * std_size + sizeof(ipt_entry) + LegacyBlob::error("FOO").size();
  const size_t rule2 = b.entry(any, {}, LegacyBlob::standard(static_cast<int>(foo_first)));
  const size_t policy = b.entry(any, {}, LegacyBlob::standard(-NF_DROP - 1));
  b.entry(any, {}, LegacyBlob::error("FOO"));
  ASSERT_EQ(b.data.size(), foo_first);
  b.entry(any, {}, LegacyBlob::standard(-NF_REPEAT - 1));  // a user "-j RETURN"
  b.entry(any, {}, LegacyBlob::standard(-NF_REPEAT - 1));  // FOO's implicit tail
  b.entry(any, {}, LegacyBlob::error("ERROR"));

  LegacyTableInfo info;
  info.name = "filter";
  info.valid_hooks = 1u << NF_INET_LOCAL_IN;
  info.hook_entry[NF_INET_LOCAL_IN] = static_cast<uint32_t>(rule1);
  info.underflow[NF_INET_LOCAL_IN] = static_cast<uint32_t>(policy);
  const model::Table t = parse_legacy_table(AF_INET, info, b.data.data(), b.data.size());
  EXPECT_EQ(t.backend, model::Backend::IptablesLegacy);
  ASSERT_EQ(t.chains.size(), 2u);
  const model::Chain& input = t.chains[0];
  EXPECT_EQ(input.name, "INPUT");
  ASSERT_TRUE(input.base.has_value());
  EXPECT_EQ(input.base->policy, "DROP");
  ASSERT_EQ(input.rules.size(), 2u);
  EXPECT_EQ(input.rules[0].match.source->cidr, "10.0.0.0/8");
  EXPECT_EQ(input.rules[0].match.protocol, "tcp");
  EXPECT_EQ(input.rules[0].match.dport, "22");
  EXPECT_EQ(input.rules[0].target, "ACCEPT");
  EXPECT_EQ(input.rules[1].verdict_kind, "jump");
  EXPECT_EQ(input.rules[1].target, "FOO");
  (void)rule2;
  const model::Chain& foo = t.chains[1];
  EXPECT_EQ(foo.name, "FOO");
  EXPECT_FALSE(foo.base.has_value());
  ASSERT_EQ(foo.rules.size(), 1u);
  EXPECT_EQ(foo.rules[0].target, "RETURN");

  EXPECT_THROW(parse_legacy_table(AF_INET, info, b.data.data(), b.data.size() - 3), std::runtime_error);
}

// ---------------------------------------------------------------- set keys

TEST(NftSet, ConcatenatedKeysReadLikeNft) {
  const uint32_t concat = ((7u << 6 | 12u) << 6) | 13u;  // ipv4_addr . inet_proto . inet_service
  const auto types = split_key_type(concat);
  ASSERT_EQ(types, (std::vector<uint32_t>{7, 12, 13}));
  EXPECT_EQ(datatype_name(types[1]), "inet_proto");
  EXPECT_EQ(datatype_name(7u << 6 | 13u), "ipv4_addr . inet_service");  // a map's nat data, once "type-461"
  EXPECT_EQ(datatype_name(63), "");
  SetShape set;
  set.key_types = types;
  set.key_len = 12;
  set.elements.push_back({std::string("\xac\x1e\x00\x29\x06\0\0\0\x00\x50\0\0", 12)});
  set.elements.push_back({std::string("\x0a\x00\x00\x01\x11\0\0\0\x00\x35\0\0", 12)});
  // Sorted as nft sorts a concatenation: one host-endian number, its last field most significant.
  EXPECT_EQ(set_elements_json(set, declared_key(set)).dump(),
            R"([{"concat":["10.0.0.1","udp",53]},{"concat":["172.30.0.41","tcp",80]}])");
}

TEST(NftSet, IntervalsPairLikeNft) {
  SetShape set;
  set.key_types = {7};
  set.key_len = 4;
  set.flags = NFT_SET_INTERVAL;
  auto el = [](std::string key, uint32_t flags) {
    RawSetElement e;
    e.key = std::move(key);
    e.flags = flags;
    return e;
  };
  // 10.0.0.0/8 and 192.168.1.1-192.168.1.3, with their ends; the kernel's order is not nft's.
  set.elements = {el(std::string("\xc0\xa8\x01\x01", 4), 0), el(std::string("\x0b\0\0\0", 4), NFT_SET_ELEM_INTERVAL_END),
                  el(std::string("\x0a\0\0\0", 4), 0), el(std::string("\xc0\xa8\x01\x04", 4), NFT_SET_ELEM_INTERVAL_END)};
  EXPECT_EQ(set_elements_json(set, declared_key(set)).dump(),
            R"([{"prefix":{"addr":"10.0.0.0","len":8}},{"range":["192.168.1.1","192.168.1.3"]}])");
  // A mark is host-endian, but an interval set holds it in network order.
  SetShape marks = set;
  marks.key_types = {19};
  marks.elements = {el(std::string("\0\0\0\x23", 4), 0), el(std::string("\0\0\0\x24", 4), NFT_SET_ELEM_INTERVAL_END)};
  EXPECT_EQ(set_elements_json(marks, declared_key(marks)).dump(), "[35]");
  // A name wildcard, "eth*", ends one past "eth" followed by all ones.
  SetShape names = set;
  names.key_types = {41};
  names.key_len = 16;
  names.elements = {el(std::string("eth\0\0\0\0\0\0\0\0\0\0\0\0\0", 16), 0),
                    el(std::string("eti\0\0\0\0\0\0\0\0\0\0\0\0\0", 16), NFT_SET_ELEM_INTERVAL_END)};
  EXPECT_EQ(set_elements_json(names, declared_key(names)).dump(), R"(["eth*"])");
}

TEST(NftSet, MapValuesAndUnknownsLikeNft) {
  SetShape map;
  map.key_types = {19};  // mark, host-endian in a plain map
  map.key_len = 4;
  map.flags = NFT_SET_MAP;
  map.data_type = NFT_DATA_VERDICT;
  RawSetElement e;
  e.key = std::string("\x23\0\0\0", 4);
  e.has_verdict = true;
  e.verdict = NFT_GOTO;
  e.chain = "svc-1";
  e.comment = "c";
  map.elements = {e};
  EXPECT_EQ(set_elements_json(map, declared_key(map)).dump(),
            R"([[{"elem":{"comment":"c","val":35}},{"goto":{"target":"svc-1"}}]])");
  // An integer key whose typeof the set's userdata does not say is not guessed.
  SetShape integers;
  integers.key_types = {4};
  integers.key_len = 4;
  EXPECT_THROW(declared_key(integers), nftval::Unknown);
  integers.key_typeof = {TypeofField{kTypeofPayload, true, 32}};  // @nh,32,32: big-endian, printed in hex
  integers.elements = {RawSetElement{std::string("\0\0\x01\0", 4)}};
  const auto key = declared_key(integers);
  ASSERT_EQ(key.size(), 1u);
  EXPECT_TRUE(key[0].hex);
  EXPECT_EQ(set_elements_json(integers, key).dump(), "[256]");
  // Without a typeof (an anonymous set), nft reads it in the byte order its userdata says.
  integers.key_typeof.clear();
  integers.key_byteorder = 1;  // BYTEORDER_HOST_ENDIAN
  EXPECT_EQ(set_elements_json(integers, declared_key(integers)).dump(), "[65536]");
}

}  // namespace
}  // namespace dpscope::netfilter
