// util/netns.h and util/netlink.h without root: what a --netns names, a
// namespace that cannot be entered (work not run, errno back), exceptions of
// the work reaching the caller, and a real rtnetlink dump through the one
// socket class (listing links needs no privilege).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>

#include <set>
#include <stdexcept>
#include <string>

#include "util/error.h"
#include "util/netlink.h"
#include "util/netns.h"

namespace dpscope {
namespace {

TEST(Netns, ASpecIsANameAPathOrAPid) {
  EXPECT_EQ(netns_path("dps-x"), "/run/netns/dps-x");
  EXPECT_EQ(netns_path("1234"), "/proc/1234/ns/net");
  EXPECT_EQ(netns_path("/var/run/netns/y"), "/var/run/netns/y");
}

TEST(Netns, AMissingNamespaceIsAUsageError) {
  EXPECT_THROW(open_netns("dps-no-such-netns-" + std::to_string(getpid())), UsageError);
  EXPECT_THROW(open_netns("/proc/self/ns/uts"), UsageError);  // a namespace, not a network one
}

TEST(Netns, WorkRunsInsideOrNotAtAll) {
  bool ran = false;
  EXPECT_EQ(run_in_namespace(UniqueFd(), CLONE_NEWNET, [&] { ran = true; }), 0);
  EXPECT_TRUE(ran);
  // A file that is no namespace: setns fails, the work does not run, its errno comes back.
  UniqueFd not_ns(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(not_ns);
  ran = false;
  EXPECT_EQ(run_in_namespace(not_ns, CLONE_NEWNET, [&] { ran = true; }), EINVAL);
  EXPECT_FALSE(ran);
  EXPECT_THROW(run_in_namespace(UniqueFd(), CLONE_NEWNET, [] { throw std::runtime_error("x"); }), std::runtime_error);
  EXPECT_EQ(netns_enter_failure("dps-x", EPERM), "cannot enter network namespace dps-x: Operation not permitted");
}

TEST(Netlink, ALinkDumpListsLoopback) {
  netlink::Socket rt(NETLINK_ROUTE);
  ASSERT_EQ(rt.open(), 0);
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = rt.next_seq();
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  std::set<std::string> names, in_order;
  ASSERT_EQ(rt.talk(nlh,
                    [&](const nlmsghdr* m) {
                      const auto a = netlink::parse_message<IFLA_MAX>(m, sizeof(ifinfomsg));
                      names.insert(std::string(netlink::str(a[IFLA_IFNAME])));
                      netlink::for_each_attr(m, sizeof(ifinfomsg), [&](const nlattr* attr) {
                        if (mnl_attr_get_type(attr) == IFLA_IFNAME) in_order.insert(std::string(netlink::str(attr)));
                      });
                      return MNL_CB_OK;
                    }),
            0);
  EXPECT_EQ(names.count("lo"), 1u);
  EXPECT_EQ(names, in_order);
  EXPECT_EQ(netlink::u32(nullptr), 0u);
  EXPECT_EQ(netlink::str(nullptr), "");
}

}  // namespace
}  // namespace dpscope
