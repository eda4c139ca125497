// Issue 14 on the real kernel: snapshots taken with part of the privileges
// (capsh / setpriv), Cilium-layout service maps dumped by the real bpftool and
// imported, socket-LB programs on a test-made child cgroup, and the memlock
// band of this machine's kernel. Each test drives the dpscope binary, so the
// same test run against the previous binary shows the old behaviour.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/integration/bpf_scenario.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

bool any_contains(const json& list, const std::string& needle) {
  for (const auto& s : list) {
    if (s.get<std::string>().find(needle) != std::string::npos) return true;
  }
  return false;
}

json compare_json(const std::string& a, const std::string& b) {
  auto r = run({dpscope_bin(), "compare", a, b, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

json cell(const json& report, const std::string& row, size_t side) { return report_row(report, row)["values"][side]; }

// dpscope snapshot run by `prefix` (capsh / setpriv ...) inside netns `ns`; stdout is the snapshot.
RunResult snapshot_with(const Netns& ns, const std::string& capsh_drop, const std::string& extra = "") {
  return run(ns.exec({"capsh", "--drop=" + capsh_drop, "--", "-c", dpscope_bin() + " snapshot -o - " + extra}));
}

class UnknownNotZeroLive : public ::testing::Test {
 protected:
  void SetUp() override { DPS_REQUIRE_ROOT(); }
};

// ---- case 1: `bpftool map dump -j pinned ...` of Cilium's and Calico's
// service maps, imported with the map list, is decoded by the live
// collector's decoders into what the live snapshot of the same maps says.
TEST_F(UnknownNotZeroLive, Case1BpftoolMapDumpImportEqualsLiveDecode) {
  bpffix::Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(12, 3);
  auto ids6 = writer.add_backends(true, 2, 0, 9090);
  writer.add_frontend(true, "fd00:96::7", 80, 6, 0, 0, 0, ids6, 2, "ClusterIP");
  auto calico = sc.calico_writer();
  calico.add("10.96.7.1", 80, 6, 2);
  calico.add("10.96.7.2", 53, 17, 3, false, {{"192.0.2.0", 24}});
  TempDir dir;
  auto live = run({dpscope_bin(), "snapshot", "--netns", sc.ns.name(), "-q", "-o", dir.file("live.json")});
  ASSERT_TRUE(live.exit_code == 0 || live.exit_code == 3) << live.err;
  auto save = [&](const std::vector<std::string>& argv, const std::string& file) {
    auto r = run(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    write_text(dir.file(file), r.out);
  };
  save({"bpftool", "-j", "-f", "prog", "show"}, "prog.json");
  save({"bpftool", "-j", "-f", "map", "show"}, "map.json");
  save(sc.ns.exec({"bpftool", "-j", "net", "show"}), "net.json");
  std::vector<std::string> argv = {dpscope_bin(), "import", "--bpftool-prog", dir.file("prog.json"), "--bpftool-map",
                                   dir.file("map.json"), "--bpftool-net", dir.file("net.json")};
  for (const char* map : {"cilium_lb4_services_v2", "cilium_lb4_backends_v3", "cilium_lb4_reverse_nat",
                          "cilium_lb6_services_v2", "cilium_lb6_backends_v3", "cilium_lb6_reverse_nat",
                          "cali_v4_nat_fe3", "cali_v4_nat_be"}) {
    const std::string pin = sc.globals + "/" + map;
    save({"bpftool", "-j", "map", "dump", "pinned", pin}, std::string(map) + ".json");
    argv.insert(argv.end(), {"--bpftool-map-dump", pin + "=" + dir.file(std::string(map) + ".json")});
  }
  argv.insert(argv.end(), {"-o", dir.file("imported.json")});
  auto imp = run(argv);
  ASSERT_EQ(imp.exit_code, 0) << imp.err;

  auto ours = [&](const std::string& file, const std::string& dataplane) {
    json s = json::parse(read_text(dir.file(file)));
    for (const auto& svc : s["ebpf"]["services"]) {
      if (svc["dataplane"] != dataplane) continue;
      for (const auto& m : svc["maps"]) {
        if (m.get<std::string>().rfind(sc.globals, 0) == 0) return svc;
      }
    }
    ADD_FAILURE() << "no " << dataplane << " services of " << sc.globals << " in " << file;
    return json::object();
  };
  for (const char* dp : {"cilium", "calico"}) {
    SCOPED_TRACE(dp);
    json a = ours("live.json", dp), b = ours("imported.json", dp);
    EXPECT_TRUE(b["decoded"].get<bool>()) << b.dump(1);
    EXPECT_EQ(a["frontends"], b["frontends"]);
    EXPECT_EQ(a["backends"], b["backends"]);
    EXPECT_EQ(a["wildcard_skipped"], b["wildcard_skipped"]);
  }
  // The oracle is the state written, not only the live decode.
  EXPECT_EQ(ours("imported.json", "cilium")["frontends"].size(), writer.frontends.size());
  EXPECT_EQ(ours("imported.json", "calico")["frontends"].size(), calico.frontends.size());
  // The dumped maps carry bpftool's entry count.
  json imported = json::parse(read_text(dir.file("imported.json")));
  const uint32_t services_id = bpffix::BpfObject::id_of(sc.cilium.map_fd("cilium_lb4_services_v2"));
  json dump = json::parse(read_text(dir.file("cilium_lb4_services_v2.json")));
  bool counted = false;
  for (const auto& m : imported["ebpf"]["maps"]) {
    if (m["id"] == services_id) counted = m.value("entries", -1) == static_cast<int>(dump.size());
  }
  EXPECT_TRUE(counted);
}

// ---- case 4: as an unprivileged user nothing can be read: exit 5 (not the
// 3 of a mostly good snapshot), the reason once on stderr.
TEST_F(UnknownNotZeroLive, Case4UnprivilegedSnapshotExitsFiveAndSaysItOnce) {
  auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", dpscope_bin(), "snapshot", "-o", "-"});
  EXPECT_EQ(r.exit_code, 5) << r.err;  // was 3
  size_t lines = std::count(r.err.begin(), r.err.end(), '\n');
  EXPECT_EQ(lines, 1u) << r.err;
  EXPECT_EQ(r.err.rfind("dpscope: nothing could be read (", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("netfilter: NFT_MSG_GETGEN: Operation not permitted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ebpf: cannot enumerate BPF objects"), std::string::npos) << r.err;
  json snap = json::parse(r.out);
  EXPECT_FALSE(snap["netfilter"]["collected"].get<bool>());
  EXPECT_FALSE(snap["ebpf"]["collected"].get<bool>());
  TempDir dir;
  write_text(dir.file("nobody.json"), r.out);
  auto text = run({dpscope_bin(), "compare", source_path("fixtures/snapshots/kind-kube-proxy.json"), dir.file("nobody.json"),
                   "--width", "0"});
  ASSERT_EQ(text.exit_code, 0);
  size_t with_errno = 0;
  for (size_t p = 0; p < text.out.size();) {
    size_t e = text.out.find('\n', p);
    if (text.out.substr(p, e - p).find("Operation not permitted") != std::string::npos) ++with_errno;
    p = e == std::string::npos ? text.out.size() : e + 1;
  }
  EXPECT_LE(with_errno, 12u) << text.out;  // once per section; was once per cell (100+)
}

// ---- case 5: part of the privileges, in a dps-* netns holding legacy and
// nft rules and kube-proxy's Services.
TEST_F(UnknownNotZeroLive, Case5WithoutNetRawLegacyRowsHaveNoNumber) {
  Netns ns("unz");
  ns.sh("iptables-nft-restore", read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt")));
  for (int i = 0; i < 8; ++i) ns.sh("iptables-legacy -A INPUT -s 192.0.2." + std::to_string(i + 1) + "/32 -j ACCEPT");
  auto r = snapshot_with(ns, "cap_net_raw", "--no-ebpf");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  TempDir dir;
  write_text(dir.file("partial.json"), r.out);
  json report = compare_json(source_path("fixtures/snapshots/kind-kube-proxy.json"), dir.file("partial.json"));
  json legacy = cell(report, "netfilter.rules.iptables_legacy", 1);
  ASSERT_TRUE(legacy.is_object()) << legacy.dump();  // was {"value": 0, "incomplete": ...}; the node has 8
  EXPECT_TRUE(legacy["value"].is_null());
  EXPECT_NE(legacy["unavailable"].get<std::string>().find("Operation not permitted"), std::string::npos);
  // The nft side was read: its count equals iptables-nft-save's.
  auto saved = run(ns.exec({"iptables-nft-save"}));
  size_t appended = 0;
  for (size_t p = saved.out.find("\n-A "); p != std::string::npos; p = saved.out.find("\n-A ", p + 1)) ++appended;
  EXPECT_EQ(cell(report, "netfilter.rules.iptables_nft", 1), appended);
}

TEST_F(UnknownNotZeroLive, Case5WithoutNetAdminModeSaysNetfilterNotSeen) {
  bpffix::Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(4, 2);
  sc.ns.sh("iptables-nft-restore", read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt")));
  auto r = snapshot_with(sc.ns, "cap_net_admin");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  TempDir dir;
  write_text(dir.file("partial.json"), r.out);
  json snap = json::parse(r.out);
  bool nf_tables_unreadable = false;
  for (const auto& u : snap["unavailable"]) nf_tables_unreadable |= u["section"] == "netfilter.nftables";
  ASSERT_TRUE(nf_tables_unreadable) << snap["unavailable"].dump(1);  // no CAP_NET_ADMIN: no nf_tables
  ASSERT_TRUE(snap["ebpf"]["collected"].get<bool>());
  json report = compare_json(source_path("fixtures/snapshots/kind-kube-proxy.json"), dir.file("partial.json"));
  const json& side = report["sides"][1];
  EXPECT_NE(side["mode_label"], "Cilium kube-proxy replacement") << side.dump(1);  // was, with kube-proxy's rules there
  EXPECT_EQ(side["mode_label"], "Cilium eBPF services (netfilter not fully seen: kube-proxy not ruled out)");
  EXPECT_TRUE(any_contains(side["evidence"], "not seen in full: netfilter incomplete (netfilter.nftables"))
      << side["evidence"].dump(1);
  EXPECT_FALSE(any_contains(report["findings"], "has no service-IP rule in iptables")) << report["findings"].dump(1);
  EXPECT_TRUE(cell(report, "netfilter.rules.iptables_nft", 1)["value"].is_null());  // kube-proxy's rules are there
}

TEST_F(UnknownNotZeroLive, Case5WithoutBpfPrivilegeEbpfRowsHaveNoNumber) {
  Netns ns("unz");
  ns.sh("iptables-nft-restore", read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt")));
  auto r = snapshot_with(ns, "cap_sys_admin,cap_bpf,cap_perfmon");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  TempDir dir;
  write_text(dir.file("partial.json"), r.out);
  json report = compare_json(source_path("fixtures/snapshots/kind-cilium-kpr.json"), dir.file("partial.json"));
  for (const char* row : {"ebpf.programs", "ebpf.maps", "ebpf.memlock_bytes", "services.cilium"}) {
    json c = cell(report, row, 1);
    ASSERT_TRUE(c.is_object()) << row << c.dump();
    EXPECT_TRUE(c["value"].is_null()) << row;
  }
  EXPECT_EQ(report["sides"][1]["mode"], "kube-proxy-iptables");
  EXPECT_TRUE(any_contains(report["sides"][1]["evidence"], "not seen: eBPF unavailable"));
  EXPECT_EQ(cell(report, "netfilter.chains.kube_svc", 1), 5);
}

// ---- case 6: Cilium's socket-LB programs on an empty child cgroup are not
// node-wide socket LB, and the report says where they are.
TEST_F(UnknownNotZeroLive, Case6SocketLbOnAChildCgroupIsNotNodeWide) {
  bpffix::Scenario sc;  // cil_sock4_connect / cil_sock4_sendmsg on a dps-* child cgroup
  TempDir dir;
  auto r = run({dpscope_bin(), "snapshot", "--netns", sc.ns.name(), "-q", "-o", dir.file("node.json")});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  // Oracle: bpftool says the programs are on the child cgroup.
  auto cg = run({"bpftool", "-j", "cgroup", "show", sc.cgroup.path()});
  ASSERT_EQ(cg.exit_code, 0);
  ASSERT_NE(cg.out.find("cil_sock4_connect"), std::string::npos) << cg.out;
  json report = compare_json(dir.file("node.json"), source_path("fixtures/snapshots/kind-kube-proxy.json"));
  const json& ev = report["sides"][0]["evidence"];
  EXPECT_TRUE(any_contains(ev, "to cgroup " + sc.cgroup.relative() +
                                   ": not the cgroup root or the pods' cgroup, so not node-wide socket LB"))
      << ev.dump(1);
  // Was claimed for any cgroup.
  EXPECT_FALSE(any_contains(ev, "attached to the cgroup root")) << ev.dump(1);
}

// ---- case 8: this machine's kernel and its memlock band, in the snapshot
// and in the report.
TEST_F(UnknownNotZeroLive, Case8MemlockBandOfThisKernel) {
  utsname u{};
  uname(&u);
  const std::string release = u.release;
  unsigned major = 0, minor = 0;
  ASSERT_EQ(sscanf(u.release, "%u.%u", &major, &minor), 2);
  const std::string band = major * 1000 + minor < 5011 ? "rlimit-pages" : major * 1000 + minor < 6004 ? "estimate" : "map-mem-usage";
  std::ifstream f("/proc/cmdline");
  std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const bool nobpf = cmdline.find("cgroup.memory=") != std::string::npos && cmdline.find("nobpf") != std::string::npos;
  TempDir dir;
  auto r = run({dpscope_bin(), "snapshot", "--no-ebpf", "-q", "-o", dir.file("a.json")});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  json a = json::parse(read_text(dir.file("a.json")));
  EXPECT_EQ(a["node"]["kernel"], release);
  ASSERT_TRUE(a["node"].contains("cgroup_memory_nobpf")) << a["node"].dump();
  EXPECT_EQ(a["node"]["cgroup_memory_nobpf"].get<bool>(), nobpf);
  bpffix::Scenario sc;  // some maps to measure
  auto s = run({dpscope_bin(), "snapshot", "--netns", sc.ns.name(), "-q", "-o", dir.file("b.json")});
  ASSERT_TRUE(s.exit_code == 0 || s.exit_code == 3) << s.err;
  json report = compare_json(dir.file("b.json"), source_path("fixtures/snapshots/kind-kube-proxy.json"));
  EXPECT_EQ(report["sides"][0]["memlock_band"], band) << release;
  EXPECT_TRUE(any_contains(report["sides"][0]["memory_notes"], "(kernel " + release)) << report["sides"][0].dump(1);
  EXPECT_TRUE(any_contains(report["findings"], "What the figure is: ")) << report["findings"].dump(1);
}

}  // namespace
}  // namespace dpscope::test
