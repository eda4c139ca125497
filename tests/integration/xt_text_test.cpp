// libxtables printing (collectors/netfilter/xt_save.h): each extension's own
// save(), as iptables-save prints it. In the integration tier because the
// unit tier runs under AddressSanitizer, where libxtables is not loaded.
#include "collectors/netfilter/xt_save.h"  // first: its glibc headers must precede the uapi ones

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/xt_LOG.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_mark.h>
#include <linux/netfilter_ipv6/ip6t_REJECT.h>

#include <cstring>
#include <string>

namespace dpscope::netfilter {
namespace {

// Target options come from the extension's own save() (libxtables), as iptables-save prints them.
TEST(XtTarget, OptionsAsIptablesSavePrintsThem) {
  ASSERT_EQ(xtables_problem(AF_INET), "");
  const XtIpHeader ip{};
  std::string name, options;
  nf_nat_range2 dnat{};
  dnat.flags = NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED;
  inet_pton(AF_INET, "10.180.0.1", &dnat.min_addr.in);
  dnat.max_addr = dnat.min_addr;
  dnat.min_proto.all = dnat.max_proto.all = htons(80);
  auto t = xt_target_blob("DNAT", 2, &dnat, sizeof dnat);
  ASSERT_TRUE(target_text(AF_INET, reinterpret_cast<const xt_entry_target*>(t.data()), ip, name, options));
  EXPECT_EQ(name, "DNAT");
  EXPECT_EQ(options, "--to-destination 10.180.0.1:80");

  xt_mark_tginfo2 mark{0x4000, 0x4000};
  t = xt_target_blob("MARK", 2, &mark, sizeof mark);
  ASSERT_TRUE(target_text(AF_INET, reinterpret_cast<const xt_entry_target*>(t.data()), ip, name, options));
  EXPECT_EQ(options, "--set-xmark 0x4000/0x4000");

  xt_log_info log{};
  log.level = 6;
  std::strcpy(log.prefix, "hi there");
  t = xt_target_blob("LOG", 0, &log, sizeof log);
  ASSERT_TRUE(target_text(AF_INET, reinterpret_cast<const xt_entry_target*>(t.data()), ip, name, options));
  EXPECT_EQ(options, "--log-prefix \"hi there\" --log-level 6");

  // The IPv6 copy of libxtables has IPv6's REJECT (its own reject-with table).
  ip6t_reject_info rej6{IP6T_ICMP6_PORT_UNREACH};
  t = xt_target_blob("REJECT", 0, &rej6, sizeof rej6);
  ASSERT_TRUE(target_text(AF_INET6, reinterpret_cast<const xt_entry_target*>(t.data()), XtIpHeader{}, name, options));
  EXPECT_EQ(options, "--reject-with icmp6-port-unreachable");

  // An extension this machine has no object for: no text.
  t = xt_target_blob("NO-SUCH-TARGET", 0, nullptr, 0);
  EXPECT_FALSE(target_text(AF_INET, reinterpret_cast<const xt_entry_target*>(t.data()), ip, name, options));
}

TEST(XtText, MatchAndHeaderAsIptablesSavePrintsThem) {
  XtIpHeader ip{};
  inet_pton(AF_INET, "10.0.0.0", &ip.v4.dst);
  inet_pton(AF_INET, "255.0.0.0", &ip.v4.dmsk);
  std::strcpy(ip.v4.iniface, "eth");
  std::memset(ip.v4.iniface_mask, 0xff, 3);
  ip.v4.proto = IPPROTO_TCP;
  ip.v4.invflags = IPT_INV_DSTIP;
  std::string out = "-A INPUT";
  append_ip_header(out, AF_INET, ip);
  xt_comment_info c{};
  std::strcpy(c.comment, "a \"b\"");
  auto m = xt_match_blob("comment", 0, &c, sizeof c);
  ASSERT_TRUE(append_match_text(out, AF_INET, reinterpret_cast<const xt_entry_match*>(m.data()), ip));
  EXPECT_EQ(out, "-A INPUT ! -d 10.0.0.0/8 -i eth+ -p tcp -m comment --comment \"a \\\"b\\\"\"");
}

}  // namespace
}  // namespace dpscope::netfilter
