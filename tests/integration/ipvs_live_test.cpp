// IPVS, live, on this machine's kernel. Without ip_vs (this VM's kernel has
// none) the snapshot says so -- loaded false, with the reason -- and ip_vs is
// still not loaded afterwards: the family lookup is a dump of the registered
// generic netlink families, never the by-name get that makes the kernel load
// the module. With ip_vs present, services ipvsadm(8) restores into a dps-*
// namespace equal what ipvsadm-save -n prints there. On a kernel without it the
// same comparison runs on Debian's 6.1 kernel in a VM: vm_ipvs_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/ipvs_compare.h"
#include "tests/integration/netfilter_support.h"

namespace dpscope::test {
namespace {

bool ip_vs_loaded() { return std::filesystem::exists("/sys/module/ip_vs"); }

TEST(IpvsLive, AKernelWithoutIpvsSaysSoAndIsNotMadeToLoadIt) {
  DPS_REQUIRE_ROOT();
  if (ip_vs_loaded()) GTEST_SKIP() << "ip_vs is loaded on this kernel: IpvsLive.RestoredServicesEqualIpvsadmSave covers it";
  Netns ns("ipvs-none");
  TempDir dir;
  const auto live = nf::live_snapshot(ns, dir);
  ASSERT_TRUE(live.ipvs.collected);
  EXPECT_FALSE(live.ipvs.loaded);
  EXPECT_NE(live.ipvs.reason.find("ip_vs module is not loaded"), std::string::npos) << live.ipvs.reason;
  EXPECT_TRUE(live.ipvs.services.empty());
  ASSERT_TRUE(live.ipvs.interface_addresses.has_value());  // read, and none: no kube-ipvs0 here
  EXPECT_TRUE(live.ipvs.interface_addresses->empty());
  EXPECT_FALSE(ip_vs_loaded()) << "the snapshot made the kernel load ip_vs";
  for (const auto& u : live.unavailable) EXPECT_NE(u.section, "ipvs") << u.reason;
}

TEST(IpvsLive, RestoredServicesEqualIpvsadmSave) {
  DPS_REQUIRE_ROOT();
  if (!ip_vs_loaded()) GTEST_SKIP() << "SKIPPED: no ip_vs on this kernel: the ipvsadm-save comparison needs a kernel with IPVS";
  if (run({"sh", "-c", "command -v ipvsadm"}).exit_code != 0) GTEST_SKIP() << "no ipvsadm (Debian ipvsadm)";
  Netns ns("ipvs");
  TempDir dir;
  ns.sh("ipvsadm -R", read_text(source_path("fixtures/ipvs/services.ipvsadm-rules")));
  const auto live = nf::live_snapshot(ns, dir);
  const std::string save = ns.sh("ipvsadm-save -n");
  write_text(dir.file("save.txt"), save);
  const auto r = run({dpscope_bin(), "import", "--ipvsadm-save", dir.file("save.txt"), "-o", dir.file("imp.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto imported = model::load_snapshot(dir.file("imp.json"));
  ipvs::expect_same_services(live.ipvs, imported.ipvs);
  EXPECT_EQ(live.ipvs.services.size(), ipvs::count_services(save));
}

}  // namespace
}  // namespace dpscope::test
