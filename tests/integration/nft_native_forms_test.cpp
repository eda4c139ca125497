// Native nftables forms the live decoder (collectors/netfilter/nft_native.cpp)
// learned, each loaded with `nft -f` into a dps-* namespace: a rule's live
// text is exactly what `nft list ruleset` prints of it, or absent (the rule
// marked undecoded); never another text. The oracle is the real tool's
// listing, rule by rule; each test also says how many rules it prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/netfilter_support.h"
#include "tests/support/nft_text.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

struct FormsResult {
  size_t rules = 0, printed = 0, sets = 0, sets_right = 0;
  bool exported = false;  // export --format nft printed nft's listing
  std::vector<std::string> undecoded;  // raw reasons, for the report
};

// Loads `ruleset`, snapshots the namespace with --rules and checks every
// rule's text against nft's listing of it.
FormsResult live_texts_are_nfts(const std::string& tag, const std::string& ruleset) {
  Netns ns(tag);
  TempDir dir;
  ns.sh("nft -f -", ruleset);
  const std::string nft_listing = ns.sh("nft list ruleset");
  const NftTextRules text = nft_text_rules(nft_listing);
  const model::Snapshot live = nf::live_snapshot(ns, dir, {"--rules"});
  FormsResult out;
  // `export --format nft` of the snapshot: nft's listing, or refused (exit 2).
  const RunResult ex = run({dpscope_bin(), "export", dir.file("live.json"), "--format", "nft"});
  if (ex.exit_code == 0) {
    out.exported = true;
    EXPECT_EQ(ex.out, nft_ruleset_without_expires(nft_listing, {}));
  } else {
    EXPECT_EQ(ex.exit_code, 2) << ex.err;
  }
  for (const auto& t : live.netfilter.tables) {
    for (const auto& c : t.chains) {
      const auto it = text.chains.find({t.family, t.name, c.name});
      EXPECT_NE(it, text.chains.end()) << c.name;
      if (it == text.chains.end()) continue;
      EXPECT_EQ(it->second.size(), c.rules.size()) << c.name;
      for (size_t i = 0; i < c.rules.size() && i < it->second.size(); ++i) {
        const model::Rule& r = c.rules[i];
        ++out.rules;
        EXPECT_EQ(r.undecoded, r.text.empty()) << it->second[i];
        if (r.text.empty()) {
          EXPECT_EQ(r.raw.rfind("text not printed (", 0), 0u) << r.raw;
          out.undecoded.push_back(r.raw.substr(0, r.raw.find('\n')));
          continue;
        }
        ++out.printed;
        EXPECT_EQ(r.text, it->second[i]) << t.family << " " << t.name << " " << c.name << " #" << i + 1;
      }
    }
  }
  // Named sets and maps: their elements as nft lists them, or undecoded (marked).
  for (auto& [key, elements] : nft_text_set_elements(nft_listing)) {
    std::sort(elements.begin(), elements.end());
    for (const auto& t : live.netfilter.tables) {
      if (t.family != std::get<0>(key) || t.name != std::get<1>(key)) continue;
      for (const auto& set : t.sets) {
        if (set.name != std::get<2>(key)) continue;
        ++out.sets;
        if (!set.elements_undecoded.empty()) {
          out.undecoded.push_back("set " + set.name + ": " + set.elements_undecoded);
          continue;
        }
        std::vector<std::string> got;
        for (const auto& e : set.elements) got.push_back(nft_element_text(e));
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, elements) << "set " << set.name;
        ++out.sets_right;
      }
    }
  }
  std::string report;
  for (const auto& u : out.undecoded) report += "  " + u + "\n";
  std::printf("%s: %zu of %zu rules printed, %zu of %zu sets, %s; undecoded:\n%s", tag.c_str(), out.printed, out.rules,
              out.sets_right, out.sets, out.exported ? "exported" : "not exported", report.c_str());
  return out;
}

// Raw payload expressions (payload.c payload_expr_print "@nh,32,32"): a load
// no template of its header's protocol names, in a set key (payload_expr_complete)
// or compared (payload_expr_expand); values in hex, wider than 64 bits too.
// Where nft names the fields (ip id and frag-off) they are named; where it
// names fields this decoder does not (tcp doff, esp spi, arp htype), the
// rule is left undecoded, never printed raw.
TEST(NftNativeForms, RawPayloadExpressions) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-raw", R"(
table inet t {
	map m {
		typeof udp length . @ih,32,32 : verdict
		elements = { 20 . 0x14 : accept }
	}
	chain c {
		udp length . @nh,32,32 vmap @m
		@th,160,32 0x2736c00 drop
		@th,16,16 22 accept
		@th,0,32 0x10002 accept
		udp length . @th,160,128 vmap { 47-63 . 0xe373135363130333131303735353203 : accept }
		meta nfproto ipv4 ip saddr . @nh,32,32 { 1.1.1.1 . 0x14, 2.2.2.2 . 0x1e }
		@nh,0,8 0x45 accept
		meta nfproto ipv4 @nh,32,32 0x12345678 accept
		meta nfproto ipv4 @nh,32,32 { 0x1, 0x2 } accept
		meta nfproto ipv4 @nh,96,24 { 0xa0000, 0xa0001 } accept
		meta nfproto ipv4 @nh,96,24 < 0xa0000 accept
		meta nfproto ipv4 @nh,96,24 0xa0000 accept
		meta l4proto esp @th,0,32 0x1 accept
		meta l4proto 47 @th,0,32 0x1 accept
		meta l4proto tcp @th,96,8 0x50 accept
		meta l4proto tcp @th,160,64 0x1122334455667788 accept
		meta l4proto tcp @th,160,72 0x112233445566778899 accept
		meta l4proto udp @th,64,8 1-5 accept
	}
}
table ip x {
	chain y {
		@th,160,112 0x870697a7a6173656f03636f6d00 drop
		@nh,32,32 0x11223344 accept
		ip protocol tcp @th,0,32 0x10002 accept
		@ll,0,16 0x1 accept
	}
}
table arp a {
	chain c {
		@nh,0,16 0x1 accept
	}
}
table netdev nt {
	chain nc {
		ether saddr 0a:0b:0c:0d:0e:0f vlan id 42
		meta iiftype ether @ll,112,16 0x8100 accept
		ether type arp @nh,0,16 0x1 accept
	}
}
)");
  EXPECT_EQ(r.rules, 26u);
  EXPECT_EQ(r.printed, 22u);
}

// A set or map keyed by an AND (netlink_delinearize.c map_binop_postprocess,
// where payload_expr_trim names no field): the mask printed as the key's
// type, flags as ORs; a bit field above its lowest bit (`ip version`) with
// its elements shifted down (binop_adjust); the mask picking which bit field.
TEST(NftNativeForms, MaskedAndBitFieldKeys) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-mask", R"(
table inet t {
	map m {
		type mark : verdict
		elements = { 0x1 : accept }
	}
	set s {
		type ipv4_addr
	}
	chain c {
		meta mark >> 8 & 0xf vmap @m
		meta mark & 0xff00 { 0x100, 0x200 } accept
		ct mark & 0xf vmap { 1 : accept, 2 : drop }
		tcp flags & (syn | ack) vmap { syn : accept, ack : drop }
		tcp flags & (fin | syn | rst) == { fin, syn | rst } accept
		meta nfproto ipv4 ip version vmap { 4 : accept, 6 : drop }
		ip ttl & 0xf0 { 0x10, 0x20 } accept
		ip dscp { cs1, cs2 } accept
		ip hdrlength { 5, 6 } accept
		ip saddr & 255.255.255.0 @s accept
		meta mark & 0xff00 != { 0x100 } accept
	}
}
table bridge b {
	chain c {
		vlan pcp { 1, 2 } accept
		vlan id { 1, 2 } accept
		ip version { 4 } accept
	}
}
)");
  EXPECT_EQ(r.rules, 14u);
  EXPECT_EQ(r.printed, 14u);
  EXPECT_TRUE(r.exported);
}

// Constants in set and map statements: a map's value typed by the map's
// data, typeof or not (netlink_parse_dynset: expr_set_type), printed as
// nft's text of the statement; a concatenated key's fields typed by the
// set's key; a key of one field left untyped, "0xa020304 [invalid type]"
// (datatype.c invalid_type_print; it was printed typed before: wrong).
// A value of several fields stays undecoded.
TEST(NftNativeForms, ConstantsInSetStatements) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-const", R"(
table ip t {
	set s {
		type ipv4_addr
		flags dynamic
	}
	set c2 {
		type ipv4_addr . inet_service
		flags dynamic
	}
	set c3 {
		typeof ip saddr . tcp dport
		flags dynamic
	}
	map m {
		type ipv4_addr : mark
		flags dynamic
	}
	map m2 {
		typeof ip saddr : meta mark
		flags dynamic
	}
	map m3 {
		type ipv4_addr : ipv4_addr
		flags dynamic
	}
	map m4 {
		typeof ip saddr : tcp dport
		flags dynamic
	}
	map m5 {
		type ipv4_addr : inet_service . ipv4_addr
		flags dynamic
	}
	set s6 {
		type ipv6_addr
		flags dynamic
	}
	set mk {
		type mark
		flags dynamic
	}
	chain c {
		add @s { 10.2.3.4 }
		add @c2 { 10.2.3.4 . 22 }
		add @c3 { 10.2.3.4 . 22 }
		add @c2 { ip saddr . 22 }
		add @m { ip saddr : 0x2 }
		add @m { 10.2.3.4 : 0x2 }
		update @m2 { ip saddr : 0x3 }
		update @m3 { ip saddr : 1.2.3.4 }
		update @m4 { ip saddr : 22 }
		update @m5 { ip saddr : 22 . 1.2.3.4 }
		update @m { ip saddr counter : 0x2 }
		add @s { 0.0.0.0 }
		add @s6 { 2001:db8::1 }
		add @mk { 0x5 }
	}
}
)");
  EXPECT_EQ(r.rules, 14u);
  EXPECT_EQ(r.printed, 13u);
}

// Payload writes (netlink_parse_payload_stmt, stmt_payload_postprocess):
// `ip daddr set 10.0.0.1`, a whole field set to a constant of its type or
// to an expression (a map, another field), the protocol match it implies
// left out. A bit field's write (`ip dscp set cs1`, a load, a mask and an
// OR) stays undecoded.
TEST(NftNativeForms, PayloadWrites) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-write", R"(
table inet t {
	map m {
		typeof iifname : ip daddr
		elements = { "lo" : 127.0.0.1 }
	}
	chain c {
		ip daddr set 10.0.0.1
		meta l4proto tcp tcp dport set 8080
		ip6 saddr set ::1
		ip ttl set 64
		ip dscp set cs1
		ip saddr set ip daddr
		ip daddr set iifname map @m
		meta l4proto udp udp checksum set 0
		ip daddr set numgen inc mod 16 map { 0-7 : 10.0.1.1, 8-15 : 10.0.1.2 }
	}
}
table ip x {
	chain c {
		@nh,64,8 set 0x40
		tcp sport set 22
		ip saddr set 1.2.3.4 ip daddr set 5.6.7.8
	}
}
table bridge b {
	chain c {
		ether saddr set 00:11:22:33:44:55
		ether type ip ip daddr set 1.1.1.1
	}
}
)");
  EXPECT_EQ(r.rules, 14u);
  EXPECT_GE(r.printed, 12u);
}

// ct keys with a direction and the keys beside them (ct.c ct_templates,
// json.c ct_expr_json): `ct original proto-dst` in a typeof map's key, a
// port once the protocol is known (ct_expr_update_type). Undecoded: an
// anonymous set of ports typed by no protocol (nft prints "[invalid
// type]"), a prefix compared short (netlink_parse_cmp), counters compared
// in network order, `ct original saddr` (its family is not in nft -j).
TEST(NftNativeForms, CtWithDirection) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-ct", R"(
table ip t {
	map pinned {
		typeof ip saddr . ct original proto-dst : ip daddr . tcp dport
		size 65535
		flags dynamic,timeout
		timeout 6m
	}
	chain c {
		update @pinned { ip saddr . ct original proto-dst timeout 1m30s : ip daddr . tcp dport }
		meta l4proto tcp ct original proto-dst 22 accept
		meta l4proto tcp ct reply proto-src { 22, 80 } accept
		ct original ip saddr 10.0.0.1 accept
		ct reply ip daddr 10.0.0.0/8 accept
		ct original l3proto ipv4 accept
		ct reply protocol tcp accept
		ct original packets > 10 accept
		ct reply bytes 100-200 accept
		ct zone 3 accept
		ct original zone 3 accept
		ct zone set 2
		ct avgpkt 64 accept
		ct original saddr 10.0.0.1 accept
	}
}
)");
  EXPECT_EQ(r.rules, 14u);
  EXPECT_GE(r.printed, 9u);
}

// nat from maps whose values are intervals (netlink_delinearize.c
// is_nat_addr_map; netlink.c netlink_parse_interval_elem,
// netlink_parse_concat_elem): `snat ip prefix to ip saddr map { ... }`,
// values printed as prefixes or ranges, an address and port range pair
// per field, in the rules' anonymous maps and in named maps.
TEST(NftNativeForms, NatIntervalMaps) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-natmap", R"(
table ip n {
	map m1 {
		type ipv4_addr : interval ipv4_addr
		flags interval
		elements = { 192.168.1.2 : 10.141.10.1-10.141.10.3, 192.168.3.0/24 : 10.0.1.0/24 }
	}
	map m2 {
		type ipv4_addr : interval ipv4_addr . inet_service
		flags interval
		elements = { 1.2.3.5 : 10.0.0.0/24 . 80-90, 1.2.3.6 : 10.0.0.1-10.0.0.7 . 22 }
	}
	chain c {
		type nat hook prerouting priority dstnat; policy accept;
		ip protocol tcp dnat ip to ip saddr map @m2
		dnat ip to ip saddr map @m1
	}
	chain p {
		type nat hook postrouting priority srcnat; policy accept;
		snat ip prefix to ip saddr map { 10.141.11.0/24 : 192.168.2.0/24 }
		snat ip to ip saddr map { 10.1.1.0/24 : 72.2.3.66-72.2.3.78 }
	}
}
table inet i {
	chain c {
		type nat hook postrouting priority srcnat; policy accept;
		snat ip to ip saddr map { 10.1.1.0/24 : 72.2.3.66-72.2.3.78 }
		snat ip6 prefix to ip6 saddr map { 2001:db8:1111::/64 : 2001:db8:2222::/64 }
	}
}
)");
  EXPECT_EQ(r.rules, 6u);
  EXPECT_EQ(r.printed, 6u);
  EXPECT_EQ(r.sets, 2u);
  EXPECT_EQ(r.sets_right, 2u);
  EXPECT_TRUE(r.exported);
}

// osf and ipsec (xfrm) expressions (netlink_parse_osf, netlink_parse_xfrm;
// json.c osf_expr_json, xfrm_expr_json), as keys of typeof maps too (an
// ipsec reqid host-endian, xfrm.c xfrm_templates).
TEST(NftNativeForms, OsfAndIpsec) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-osf", R"(
table inet t {
	map m1 {
		typeof osf name : ct mark
		elements = { "Linux" : 0x00000001 }
	}
	map m5 {
		typeof ipsec in reqid . iifname : verdict
		elements = { 23 . "eth0" : accept }
	}
	chain c {
		type filter hook prerouting priority filter; policy accept;
		ct mark set osf name map @m1
		osf ttl loose name "Linux" accept
		osf ttl skip version "Linux:3.0" accept
		osf name { "Linux", "Windows" } accept
		ipsec in reqid . iifname vmap @m5
		ipsec in reqid 1 accept
		ipsec in spnum 1 ip saddr 10.0.0.1 accept
		ipsec in spi 256 accept
		ipsec in ip6 daddr ::1 accept
		ipsec in reqid { 1, 2 } accept
	}
}
)");
  EXPECT_EQ(r.rules, 10u);
  EXPECT_EQ(r.printed, 10u);
  EXPECT_EQ(r.sets, 2u);
  EXPECT_EQ(r.sets_right, 2u);
  EXPECT_TRUE(r.exported);
}

// A concatenated interval key with host-endian fields: nft converts each
// to network order (byteorder hton), a one-byte field as one byte of
// two-byte elements (a swap of nothing); nft prints the operands.
TEST(NftNativeForms, ByteOrderInConcatenatedIntervalKeys) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-bo", R"(
table inet filter {
	map test {
		type mark . inet_service . inet_proto : mark
		flags interval,timeout
		elements = { 0x00000001 . 22 . tcp : 0x00000002, 0x00000002-0x00000005 . 80-90 . udp : 0x00000003 }
	}
	chain output {
		type filter hook output priority filter; policy accept;
		meta mark set meta mark . tcp dport . meta l4proto map @test counter
		meta mark . tcp dport . meta l4proto { 0x00000001 . 22 . tcp, 0x00000002-0x00000003 . 80-90 . tcp } accept
		meta l4proto . meta mark { tcp . 0x00000001, udp . 0x00000002-0x00000004 } accept
	}
}
)");
  EXPECT_EQ(r.rules, 3u);
  EXPECT_EQ(r.printed, 3u);
  EXPECT_EQ(r.sets, 1u);
  EXPECT_EQ(r.sets_right, 1u);
  EXPECT_TRUE(r.exported);
}

// IPv6 extension headers and TCP options (netlink_parse_exthdr,
// exthdr_init_raw, tcpopt_init_raw) of whole-byte fields, compared, in a
// set, written (`tcp option maxseg size set rt mtu`, rt.c's mtu); the
// protocol match they imply left out (exthdr_dependency_kill). A bit field
// (frag more-fragments), a routing header type nft finds
// by searching (srh sid[1]) and mh stay undecoded.
TEST(NftNativeForms, ExtensionHeadersAndTcpOptions) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-exthdr", R"(
table inet t {
	chain c {
		rt type 0 counter drop
		meta nfproto ipv6 rt seg-left 1 drop
		hbh nexthdr tcp accept
		frag id 5 accept
		dst hdrlength { 1, 2 } accept
		tcp option maxseg size 1-500 drop
		tcp flags syn tcp option maxseg size set rt mtu
		tcp option maxseg size set 1360
		tcp option window count 7 accept
		tcp option timestamp tsval 5 accept
		frag more-fragments 1 accept
		tcp option maxseg exists accept
		rt0 addr[1] ::1 accept
		mh type 1 accept
	}
}
)");
  EXPECT_EQ(r.rules, 14u);
  EXPECT_EQ(r.printed, 11u);
}

// Several statements on a set's elements (a limit and a counter), listed
// in the kernel's order as nft prints them (set_elem_expr_print), and in
// the set's declaration (set_print_declaration: stateless).
TEST(NftNativeForms, SeveralStatementsOnSetElements) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-multi", R"(
table ip x {
	set y {
		type ipv4_addr
		limit rate 1/second burst 5 packets counter
		elements = { 1.1.1.1 limit rate 1/second burst 5 packets counter packets 0 bytes 0,
			     4.4.4.4 limit rate 1/second burst 5 packets counter packets 0 bytes 0 }
	}
	set z {
		type ipv4_addr . inet_service
		flags dynamic
		counter quota 1000 bytes
	}
	chain y {
		type filter hook output priority filter; policy accept;
		ip daddr @y
		ip daddr . tcp dport @z
		update @z { ip daddr . tcp dport counter quota 1000 bytes }
	}
}
)");
  EXPECT_EQ(r.rules, 3u);
  EXPECT_EQ(r.printed, 3u);
  EXPECT_EQ(r.sets, 2u);
  EXPECT_EQ(r.sets_right, 2u);
  EXPECT_TRUE(r.exported);
}

// connlimit (`ct count over 20`): a rule's statement, a set statement's,
// a set's declaration (json.c connlimit_stmt_json); the ruleset exports.
TEST(NftNativeForms, Connlimit) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-connlimit", R"(
table ip x {
	set est-connlimit {
		type ipv4_addr
		size 65535
		flags dynamic
	}
	set new-connlimit {
		type ipv4_addr
		size 65535
		flags dynamic
		ct count over 20
	}
	chain c {
		type filter hook input priority filter; policy accept;
		ct count 10 accept
		ct count over 100 drop
		ct state new add @est-connlimit { ip saddr ct count over 20 } drop
		add @new-connlimit { ip saddr } accept
	}
}
)");
  EXPECT_EQ(r.rules, 4u);
  EXPECT_EQ(r.printed, 4u);
  EXPECT_TRUE(r.exported);
}

// Bit fields of IPv4 and IPv6 (proto.c: dscp, ecn, flowlabel) and frag-off:
// a value shifted down and named by its type (dscp_type_tbl, ecn_type_tbl,
// a number in hex otherwise), compared and in sets; a mask on frag-off.
// A bit field's write (`ip dscp set cs1`) stays undecoded.
TEST(NftNativeForms, IpBitFieldsAndFragOff) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-dscp", R"(
table ip t {
	chain c {
		ip dscp cs1 accept
		ip dscp 0x3f accept
		ip dscp != ef accept
		ip ecn ce accept
		ip ecn not-ect accept
		ip dscp { cs1, af41 } accept
		ip dscp set cs1
	}
}
table ip6 t6 {
	chain c {
		ip6 dscp cs1 accept
		ip6 ecn ce accept
		ip6 flowlabel 5 accept
		ip6 dscp { cs2, ef } accept
	}
}
)");
  EXPECT_EQ(r.rules, 11u);
  EXPECT_EQ(r.printed, 10u);
  const FormsResult f = live_texts_are_nfts("nf-frag", R"(
table ip t {
	chain c {
		ip frag-off & 0x1fff != 0 drop
		ip frag-off 0 accept
		ip frag-off & 0x4000 != 0 accept
		ip id 5 ip frag-off 6 accept
		ip frag-off { 1, 2 } accept
		ip dscp cs1 accept
		ip ecn ce accept
	}
}
)");
  EXPECT_EQ(f.rules, 7u);
  EXPECT_EQ(f.printed, 7u);
  EXPECT_TRUE(f.exported);
}

// Order compares and ranges of host-endian values, which nft converts to
// network order first (byteorder hton): the operand printed, the constant
// read back (meta length > 1000, meta mark > 0x00000005, ct original
// packets > 10); tc handles of meta priority (meta.c tchandle_type_print);
// meta keys cpu, cgroup, random, iifkind/oifkind, sdif/sdifname.
TEST(NftNativeForms, OrderComparesPriorityAndMetaKeys) {
  DPS_REQUIRE_ROOT();
  const FormsResult o = live_texts_are_nfts("nf-order", R"(
table inet t {
	chain c {
		meta length > 1000 accept
		meta length 100-200 accept
		meta mark > 0x5 accept
		meta mark < 0x10 accept
		ct original packets > 10 accept
		ct reply bytes 100-200 accept
		ct mark >= 0x100 accept
		meta length != 100-200 accept
		meta priority > 1:2 accept
		meta length { 100-200, 300-400 } accept
		ct packets <= 5 accept
		meta cpu > 2 accept
	}
}
)");
  EXPECT_EQ(o.rules, 12u);
  EXPECT_EQ(o.printed, 12u);
  EXPECT_TRUE(o.exported);
  const FormsResult p = live_texts_are_nfts("nf-prio", R"(
table inet t {
	chain c {
		meta priority > 1:2 accept
		meta priority 1:2 accept
		meta priority none accept
		meta priority root accept
		meta priority set 1:2
		meta priority set ffff:ffff
		meta priority { 1:1, 1:a } accept
		meta priority 10:a-10:ff accept
		meta priority set ip saddr map { 10.0.0.1 : 1:2 }
	}
}
)");
  EXPECT_EQ(p.rules, 9u);
  EXPECT_EQ(p.printed, 9u);
  EXPECT_TRUE(p.exported);
  const FormsResult m = live_texts_are_nfts("nf-meta", R"(
table inet t {
	chain c {
		meta cpu 2 accept
		meta cpu > 2 accept
		meta cgroup 1048577 accept
		meta random 5 accept
		meta iifkind "vrf" accept
		meta oifkind "veth*" accept
		meta sdif 0 accept
		meta sdifname "vrf1" accept
		meta cpu { 1, 2 } accept
	}
}
)");
  EXPECT_EQ(m.rules, 9u);
  EXPECT_EQ(m.printed, 9u);
  EXPECT_TRUE(m.exported);
}

// Which protocol matches nft leaves out as implied, and forms it prints its
// own way, found against nft 1.0.6's tests/py rules: a match after a
// statement other than a match stays (rule_maybe_reset_payload_deps);
// `ip protocol tcp` stays before a tcp field in inet and bridge tables
// (payload_may_dependency_kill); `meta l4proto` drops `meta nfproto` as
// meta_may_dependency_kill says; a nat port's map drops nothing; reject's
// per family (stmt_reject_postprocess); 8021q; an escaped literal '*';
// a mark prefix; a nat address range that is a prefix. `icmp mtu` (an
// icmp field the type decides) and a compare of several tcp flags at once
// stay undecoded.
TEST(NftNativeForms, ImpliedMatchesAsNftDropsThem) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-deps", R"(
table inet t {
	chain c {
		ip protocol tcp tcp dport 22 accept
		meta nfproto ipv4 counter ip saddr 1.2.3.4 accept
		meta nfproto ipv4 meta l4proto icmpv6 accept
		meta nfproto ipv4 meta l4proto icmp accept
		meta nfproto ipv6 meta l4proto tcp accept
		meta l4proto tcp meta mark 0x00003039 reject with tcp reset
		meta nfproto ipv6 reject with icmpv6 port-unreachable
		iifname "dummy\*" accept
		iifname "eth*" accept
		meta mark 0xffffff00/24 accept
		meta mark & 0x0000ffff == 0x00000001 accept
		meta protocol { ip, arp, 8021q, ip6 } accept
		tcp flags == 0x12 accept
		tcp flags == syn accept
	}
	chain n {
		type nat hook prerouting priority dstnat; policy accept;
		meta l4proto tcp dnat to :80
		meta l4proto tcp dnat ip to 10.0.0.1:80
	}
}
table ip x {
	chain c {
		ip protocol tcp meta mark set 0x00000001 tcp dport 22
		icmp mtu 22 accept
		icmp type echo-request icmp id 5 accept
		icmp type { echo-reply, echo-request } icmp id 42 accept
		meta l4proto tcp reject with tcp reset
	}
	chain n {
		type nat hook postrouting priority srcnat; policy accept;
		iifname "eth0" tcp dport 80-90 snat to 192.168.3.0/24
		snat to 10.0.0.1-10.0.0.5
	}
	chain r {
		type nat hook prerouting priority dstnat; policy accept;
		ip protocol tcp redirect to :tcp dport map { 22 : 8000, 80 : 8080 }
		ip protocol tcp dnat to ip saddr map { 10.0.0.1 : 10.0.0.2 }
	}
}
table bridge b {
	chain c {
		ether type 8021q ip protocol icmp accept
		ip protocol tcp tcp dport 22 accept
		ether type ip ip saddr 1.2.3.4 accept
	}
}
)");
  EXPECT_EQ(r.rules, 28u);
  EXPECT_EQ(r.printed, 26u);
}

// Limits of bytes and quotas (json.c limit_stmt_json, quota_stmt_json:
// rates in the largest unit that divides them, statement.c get_rate), in
// rules and on a set statement's elements.
TEST(NftNativeForms, ByteLimitsAndQuotas) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-limit", R"(
table inet t {
	set s {
		type ipv4_addr
		flags dynamic
	}
	chain c {
		limit rate 1 mbytes/second accept
		limit rate over 1024 bytes/second burst 512 bytes accept
		limit rate 10 kbytes/minute accept
		quota 1000 bytes accept
		quota over 1 mbytes accept
		quota 2048 bytes used 1024 bytes accept
		add @s { ip saddr quota 1000 bytes } accept
		add @s { ip saddr limit rate 10 kbytes/second } accept
	}
}
)");
  EXPECT_EQ(r.rules, 8u);
  EXPECT_EQ(r.printed, 8u);
  EXPECT_TRUE(r.exported);
}

// Presence tests of IPv6 extension headers and TCP options (NFT_EXTHDR_F_PRESENT:
// a boolean, exists or missing).
TEST(NftNativeForms, ExtensionHeaderPresence) {
  DPS_REQUIRE_ROOT();
  const FormsResult r = live_texts_are_nfts("nf-exists", R"(
table inet t {
	chain c {
		tcp option maxseg exists accept
		tcp option sack-perm missing accept
		tcp option window exists accept
		exthdr hbh exists accept
		exthdr frag missing accept
		exthdr rt exists accept
	}
}
)");
  EXPECT_EQ(r.rules, 6u);
  EXPECT_EQ(r.printed, 6u);
  EXPECT_TRUE(r.exported);
}

}  // namespace
}  // namespace dpscope::test
