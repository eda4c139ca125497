// IPVS, live, on Debian's 6.1 kernel with ip_vs loaded (tests/vm/vm.sh; this
// machine's kernel has no IPVS). The guest lays out what kube-proxy's IPVS mode
// programs -- VIPs on the kube-ipvs0 dummy interface, the virtual services of
// fixtures/ipvs/services.ipvsadm-rules (TCP, UDP, IPv6, fwmark, persistence with
// a netmask, the sh scheduler's flags, masq/route/tunnel real servers, a
// weight-0 one) -- and prints ipvsadm-save -n, ipvsadm -Ln and ip -o addr next
// to dpscope's snapshot. The oracle is those tools, object by object; and the
// snapshot changed nothing (ipvsadm -S -n equal before and after).
// Skips loudly when qemu or the kernel package cannot be had.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/json.h"
#include "tests/integration/ipvs_compare.h"
#include "tests/integration/vm_support.h"

namespace dpscope::test {
namespace {

model::Snapshot import_text(TempDir& dir, const std::string& flag, const std::string& name, const std::string& text) {
  write_text(dir.file(name), text);
  const auto r = run({dpscope_bin(), "import", flag, dir.file(name), "-o", dir.file(name + ".json")});
  EXPECT_EQ(r.exit_code, 0) << flag << ": " << r.err;
  return model::load_snapshot(dir.file(name + ".json"));
}

TEST(VmIpvs, LiveServicesEqualIpvsadmOnDebianKernel) {
  DPS_REQUIRE_ROOT();
  for (const char* tool : {"ipvsadm", "ipvsadm-save"}) {
    if (run({"sh", "-c", std::string("command -v ") + tool}).exit_code != 0)
      GTEST_SKIP() << "SKIPPED: IPVS VM tier: no " << tool << " here (Debian ipvsadm)";
  }
  TempDir dir;
  DPS_RUN_VM("tests/vm/ipvs.sh",
             "VM_MODULES='ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh dummy' VM_TOOLS='ipvsadm ipvsadm-save ip' "
             "VM_FILES='" + source_path("fixtures/ipvs/services.ipvsadm-rules") + "'",
             dir.file("out.txt"));
  auto s = vm::sections(read_text(dir.file("out.txt")));
  ASSERT_EQ(vm::guest_kernel(s).rfind("6.1.", 0), 0u) << read_text(dir.file("out.txt"));
  ASSERT_TRUE(s.count("snapshot") && s.count("save") && s.count("list")) << read_text(dir.file("out.txt"));
  EXPECT_EQ(s["stderr"].find("ipvs"), std::string::npos) << s["stderr"];

  write_text(dir.file("snap.json"), s["snapshot"]);
  const auto live = model::load_snapshot(dir.file("snap.json"));
  // This guest loads no netfilter module: nf_tables and ip_set are not there,
  // so their sections are complete and empty -- not unavailable, and not asked
  // (asking would load the modules). No cgroup2 is mounted in the guest.
  for (const auto& u : live.unavailable) EXPECT_EQ(u.section, "ebpf.attachments.cgroup") << u.reason;
  EXPECT_TRUE(live.netfilter.collected);
  EXPECT_TRUE(live.netfilter.tables.empty());
  EXPECT_TRUE(live.ipsets.collected && live.ipsets.sets.empty());
  EXPECT_NE(s["stderr"].find("no nf_tables loaded"), std::string::npos) << s["stderr"];

  // ipvsadm-save -n: every service, its scheduler, flags, persistence, real servers.
  const auto saved = import_text(dir, "--ipvsadm-save", "save.txt", s["save"]);
  ipvs::expect_same_services(live.ipvs, saved.ipvs);
  EXPECT_EQ(live.ipvs.services.size(), ipvs::count_services(s["save"]));
  EXPECT_EQ(live.ipvs.services.size(), ipvs::count_services(read_text(source_path("fixtures/ipvs/services.ipvsadm-rules"))));

  // ipvsadm -Ln: the header's version and table size, local vs route, counters.
  const auto listed = import_text(dir, "--ipvsadm-list", "list.txt", s["list"]);
  EXPECT_EQ(live.ipvs.version, listed.ipvs.version);
  EXPECT_EQ(live.ipvs.conn_table_size, listed.ipvs.conn_table_size);
  ASSERT_EQ(live.ipvs.services.size(), listed.ipvs.services.size());
  for (size_t i = 0; i < live.ipvs.services.size(); ++i) {
    const auto& a = live.ipvs.services[i];
    const auto& b = listed.ipvs.services[i];
    SCOPED_TRACE(model::ipvs_service_key(a));
    EXPECT_EQ(model::ipvs_service_key(a), model::ipvs_service_key(b));
    EXPECT_EQ(a.scheduler, b.scheduler);
    ASSERT_EQ(a.destinations.size(), b.destinations.size());
    for (size_t j = 0; j < a.destinations.size(); ++j) {
      EXPECT_EQ(a.destinations[j].address, b.destinations[j].address);
      EXPECT_EQ(a.destinations[j].port, b.destinations[j].port);
      EXPECT_EQ(a.destinations[j].forward, b.destinations[j].forward);
      EXPECT_EQ(a.destinations[j].weight, b.destinations[j].weight);
      EXPECT_EQ(a.destinations[j].active_conns, b.destinations[j].active_conns);
      EXPECT_EQ(a.destinations[j].inactive_conns, b.destinations[j].inactive_conns);
    }
  }

  // ip -o addr show dev kube-ipvs0: the VIPs, the dummy interface they are on.
  const auto addrs = import_text(dir, "--ip-addr", "addr.txt", s["addr"]);
  ASSERT_TRUE(live.ipvs.interface_addresses.has_value());
  ASSERT_TRUE(addrs.ipvs.interface_addresses.has_value());
  EXPECT_EQ(*live.ipvs.interface_addresses, *addrs.ipvs.interface_addresses);
  EXPECT_EQ(live.ipvs.interface_addresses->size(), 4u);

  // Read-only: the table is what it was before the snapshot.
  std::string before = s["save"];
  EXPECT_EQ(s["save after"], before);
}

}  // namespace
}  // namespace dpscope::test
