// The live eBPF collector against the kernel, with bpftool as the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include <sys/mount.h>
#include <sys/wait.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "collectors/bpf/bpf.h"
#include "collectors/import/bpftool.h"
#include "tests/integration/bpf_scenario.h"

namespace dpscope::test {
namespace {

using bpffix::Scenario;
using nlohmann::json;

json bpftool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"bpftool", "-j"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

model::Snapshot collect(const Scenario& sc) {
  model::Snapshot snap;
  bpf::Options opt;
  opt.netns = sc.ns.name();
  opt.bpffs_roots = {sc.bpffs.path()};
  opt.cgroup_root = sc.cgroup.root();
  bpf::collect(snap, opt);
  model::canonicalize(snap);
  return snap;
}

template <typename T>
const T* by_id(const std::vector<T>& v, uint32_t id) {
  for (const auto& x : v) {
    if (x.id == id) return &x;
  }
  return nullptr;
}

time_t parse_time(const std::string& rfc3339) {
  tm t{};
  strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &t);
  return timegm(&t);
}

std::vector<std::string> bpf_mounts() {
  std::vector<std::string> out;
  std::ifstream f("/proc/self/mounts");
  std::string dev, dir, type, rest;
  while (f >> dev >> dir >> type && std::getline(f, rest)) {
    if (type == "bpf") out.push_back(dir);
  }
  return out;
}

class BpfLive : public ::testing::Test {
 protected:
  void SetUp() override { DPS_REQUIRE_ROOT(); }
};

TEST_F(BpfLive, ProgramsAndMapsEqualBpftool) {
  Scenario sc;
  auto snap = collect(sc);
  ASSERT_TRUE(snap.ebpf.collected);
  for (const auto& u : snap.unavailable) ADD_FAILURE() << "unavailable: " << u.section << ": " << u.reason;
  const json progs = bpftool({"-f", "prog", "show"});
  const json maps = bpftool({"-f", "map", "show"});
  std::map<uint32_t, json> prog_by_id, map_by_id;
  for (const auto& p : progs) prog_by_id[p.at("id").get<uint32_t>()] = p;
  for (const auto& m : maps) map_by_id[m.at("id").get<uint32_t>()] = m;

  const auto prog_ids = sc.prog_ids();
  ASSERT_EQ(prog_ids.size(), 10u);
  for (uint32_t id : prog_ids) {
    SCOPED_TRACE("prog " + std::to_string(id));
    ASSERT_TRUE(prog_by_id.count(id));
    const json& want = prog_by_id[id];
    const model::BpfProgram* got = by_id(snap.ebpf.programs, id);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->type, want.at("type").get<std::string>());
    EXPECT_EQ(got->name, want.at("name").get<std::string>());  // full BTF name, as bpftool prints it
    EXPECT_EQ(got->tag, want.at("tag").get<std::string>());
    EXPECT_EQ(got->bytes_xlated, want.at("bytes_xlated").get<uint32_t>());
    EXPECT_EQ(got->bytes_jited, want.value("bytes_jited", 0u));
    EXPECT_EQ(got->bytes_memlock, want.at("bytes_memlock").get<uint64_t>());
    EXPECT_EQ(got->btf_id, want.value("btf_id", 0u));
    EXPECT_EQ(got->map_ids, want.value("map_ids", std::vector<uint32_t>{}));
    EXPECT_EQ(got->pinned, want.value("pinned", std::vector<std::string>{}));
    EXPECT_FALSE(got->loaded_at.empty());
  }
  const auto map_ids = sc.map_ids();
  ASSERT_GE(map_ids.size(), 18u);
  for (uint32_t id : map_ids) {
    SCOPED_TRACE("map " + std::to_string(id));
    ASSERT_TRUE(map_by_id.count(id));
    const json& want = map_by_id[id];
    const model::BpfMap* got = by_id(snap.ebpf.maps, id);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->type, want.at("type").get<std::string>());
    EXPECT_EQ(got->name, want.value("name", std::string()));
    EXPECT_EQ(got->key_size, want.at("bytes_key").get<uint32_t>());
    EXPECT_EQ(got->value_size, want.at("bytes_value").get<uint32_t>());
    EXPECT_EQ(got->max_entries, want.at("max_entries").get<uint32_t>());
    EXPECT_EQ(got->flags, want.at("flags").get<uint32_t>());
    EXPECT_EQ(got->bytes_memlock, want.at("bytes_memlock").get<uint64_t>());
    EXPECT_EQ(got->btf_id, want.value("btf_id", 0u));
    EXPECT_EQ(got->pinned, want.value("pinned", std::vector<std::string>{}));
  }
  // The kernel cut these names; the collector recovered them from BTF.
  const model::BpfProgram* preamble = nullptr;
  for (const auto& p : snap.ebpf.programs) {
    if (p.id == bpffix::BpfObject::id_of(sc.calico.prog_fd("cali_tc_preamble"))) preamble = &p;
  }
  ASSERT_NE(preamble, nullptr);
  EXPECT_EQ(preamble->name, "cali_tc_preamble");
}

TEST_F(BpfLive, MapEntriesCountedWithoutChangingThem) {
  Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(20, 3);
  const uint32_t services_id = bpffix::BpfObject::id_of(sc.cilium.map_fd("cilium_lb4_services_v2"));
  const uint32_t backends_id = bpffix::BpfObject::id_of(sc.cilium.map_fd("cilium_lb4_backends_v3"));
  const uint32_t calls_id = bpffix::BpfObject::id_of(sc.cilium.map_fd("cilium_calls_00042"));
  auto dump = [&](uint32_t id) { return bpftool({"map", "dump", "id", std::to_string(id)}); };
  const json before_services = dump(services_id), before_backends = dump(backends_id);

  auto snap = collect(sc);
  const json after_services = dump(services_id), after_backends = dump(backends_id);
  EXPECT_EQ(before_services, after_services);
  EXPECT_EQ(before_backends, after_backends);

  // Counts equal what bpftool dumps.
  const model::BpfMap* services = by_id(snap.ebpf.maps, services_id);
  ASSERT_NE(services, nullptr);
  ASSERT_TRUE(services->entries.has_value()) << services->entries_note;
  EXPECT_EQ(*services->entries, after_services.size());
  EXPECT_EQ(*by_id(snap.ebpf.maps, backends_id)->entries, after_backends.size());
  // prog_array: populated slots only.
  const model::BpfMap* calls = by_id(snap.ebpf.maps, calls_id);
  ASSERT_TRUE(calls->entries.has_value()) << calls->entries_note;
  EXPECT_EQ(*calls->entries, 1u);
  // perf_event_array cannot be read from user space: a note, never a zero.
  for (const auto& m : snap.ebpf.maps) {
    if (m.type == "perf_event_array" && m.pinned.size() && m.pinned[0].rfind(sc.bpffs.path(), 0) == 0) {
      EXPECT_FALSE(m.entries.has_value());
      EXPECT_FALSE(m.entries_note.empty());
    }
  }
}

TEST_F(BpfLive, DecodesCiliumAndCalicoServices) {
  Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(25, 4);
  // An IPv6 ClusterIP service too.
  auto ids6 = writer.add_backends(true, 2, 0, 9090);
  writer.add_frontend(true, "fd00:96::1", 80, 6, 0, 0, 0, ids6, 2, "ClusterIP");
  auto calico_writer = sc.calico_writer();
  calico_writer.add("10.96.1.1", 80, 6, 2);
  calico_writer.add("10.96.1.2", 443, 6, 3, false, {{"192.0.2.0", 24}, {"198.51.100.0", 25}});
  calico_writer.add("255.255.255.255", 30080, 6, 2);
  calico_writer.add("10.96.1.3", 53, 17, 0, true);
  calico_writer.add("10.96.1.4", 53, 17, 4);

  auto snap = collect(sc);
  const model::LbServices* cilium = nullptr;
  const model::LbServices* calico = nullptr;
  for (const auto& s : snap.ebpf.services) {
    bool ours = std::any_of(s.maps.begin(), s.maps.end(),
                            [&](const std::string& m) { return m.rfind(sc.globals, 0) == 0; });
    if (ours && s.dataplane == "cilium") cilium = &s;
    if (ours && s.dataplane == "calico") calico = &s;
  }
  ASSERT_NE(cilium, nullptr);
  EXPECT_TRUE(cilium->decoded) << cilium->note;
  EXPECT_EQ(cilium->note, "");
  auto want = writer.frontends;
  std::sort(want.begin(), want.end(), bpffix::frontend_less);
  ASSERT_EQ(cilium->frontends.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(cilium->frontends[i], want[i]) << i;
  EXPECT_EQ(cilium->wildcard_skipped, writer.wildcards);
  auto want_backends = writer.backends;
  std::sort(want_backends.begin(), want_backends.end(), [](auto& a, auto& b) { return a.id < b.id; });  // ids unique
  EXPECT_EQ(cilium->backends, want_backends);
  const auto surrogates = std::count_if(cilium->frontends.begin(), cilium->frontends.end(),
                                        [](const auto& f) { return f.surrogate; });
  EXPECT_EQ(surrogates, 5);  // one per NodePort service (s % 5 == 1)
  // lb4_reverse_sk shares the cut name "cilium_lb4_reve" but is not decoded as reverse NAT.
  EXPECT_FALSE(std::any_of(cilium->maps.begin(), cilium->maps.end(),
                           [](const std::string& m) { return m.find("reverse_sk") != std::string::npos; }));

  ASSERT_NE(calico, nullptr);
  EXPECT_TRUE(calico->decoded) << calico->note;
  auto want_calico = calico_writer.frontends;
  std::sort(want_calico.begin(), want_calico.end(), bpffix::frontend_less);
  EXPECT_EQ(calico->frontends, want_calico);
  auto want_calico_backends = calico_writer.backends;
  std::sort(want_calico_backends.begin(), want_calico_backends.end(),
            [](auto& a, auto& b) { return std::tie(a.id, a.address, a.port) < std::tie(b.id, b.address, b.port); });
  EXPECT_EQ(calico->backends, want_calico_backends);
}

TEST_F(BpfLive, AttachPointsEqualBpftoolNetAndCgroup) {
  Scenario sc;
  auto snap = collect(sc);
  // Legacy tc filters: `bpftool net show` in the same netns.
  auto r = run(sc.ns.exec({"bpftool", "-j", "net", "show"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json net = json::parse(r.out);
  std::set<std::tuple<std::string, std::string, uint32_t>> want_tc, got_tc;
  for (const auto& t : net.at(0).at("tc")) {
    std::string kind = t.at("kind").get<std::string>();  // "clsact/ingress"
    want_tc.insert({t.at("devname").get<std::string>(), kind.substr(kind.find('/') + 1), t.at("id").get<uint32_t>()});
  }
  for (const auto& a : snap.ebpf.attachments) {
    if (a.kind == "tc") got_tc.insert({a.target, a.direction, a.prog_id});
  }
  EXPECT_EQ(got_tc, want_tc);
  EXPECT_EQ(want_tc.size(), 3u);
  for (const auto& a : snap.ebpf.attachments) {
    if (a.kind == "tc") {
      EXPECT_TRUE(a.direct_action);
      EXPECT_EQ(a.priority, 1u);
      EXPECT_EQ(a.handle, 1u);
    }
  }
  // tcx and XDP links.
  auto find = [&](const std::string& kind, const std::string& target, const std::string& direction) {
    for (const auto& a : snap.ebpf.attachments) {
      if (a.kind == kind && a.target == target && a.direction == direction) return &a;
    }
    return static_cast<const model::BpfAttachment*>(nullptr);
  };
  const auto* tcx = find("tcx", "lxcdps0", "egress");
  ASSERT_NE(tcx, nullptr);
  EXPECT_EQ(tcx->prog_id, bpffix::BpfObject::id_of(sc.cilium.prog_fd("cil_to_container")));
  EXPECT_EQ(tcx->link_id, sc.tcx_link_id);
  EXPECT_EQ(tcx->prog_name, "cil_to_container");
  ASSERT_NE(find("tcx", "dpsnet0", "ingress"), nullptr);
  const auto* xdp = find("xdp", "dpsnet0", "driver");
  ASSERT_NE(xdp, nullptr) << "XDP on the veth";
  EXPECT_EQ(xdp->link_id, sc.xdp_link_id);
  const model::BpfLink* tcx_link = by_id(snap.ebpf.links, sc.tcx_link_id);
  ASSERT_NE(tcx_link, nullptr);
  EXPECT_EQ(tcx_link->type, "tcx");
  EXPECT_EQ(tcx_link->attach_type, "tcx_egress");
  EXPECT_EQ(tcx_link->interface, "lxcdps0");

  // cgroup: `bpftool cgroup show` on the test cgroup.
  const json cg = bpftool({"cgroup", "show", sc.cgroup.path()});
  std::set<std::pair<std::string, uint32_t>> want_cg, got_cg;
  for (const auto& e : cg) want_cg.insert({e.at("attach_type").get<std::string>(), e.at("id").get<uint32_t>()});
  for (const auto& a : snap.ebpf.attachments) {
    if (a.kind == "cgroup" && a.target == sc.cgroup.relative()) got_cg.insert({a.direction, a.prog_id});
  }
  EXPECT_EQ(got_cg, want_cg);
  EXPECT_EQ(want_cg.size(), 3u);
  const auto* connect = find("cgroup", sc.cgroup.relative(), "cgroup_inet4_connect");
  ASSERT_NE(connect, nullptr);
  EXPECT_TRUE(connect->link_id.has_value());
}

}  // namespace
}  // namespace dpscope::test

namespace dpscope::test {
namespace {

// `bpftool -j` output of the same state, imported, equals the live snapshot
// field by field (entry counts and load times aside: bpftool has no counts and
// prints whole seconds).
TEST_F(BpfLive, LiveSnapshotAgreesWithImportOfBpftool) {
  Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(10, 2);
  auto live = collect(sc);
  TempDir dir;
  auto save = [&](const std::vector<std::string>& argv, const std::string& file) {
    auto r = run(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    write_text(dir.file(file), r.out);
  };
  save({"bpftool", "-j", "-f", "prog", "show"}, "prog.json");
  save({"bpftool", "-j", "-f", "map", "show"}, "map.json");
  save(sc.ns.exec({"bpftool", "-j", "net", "show"}), "net.json");
  importer::BpftoolImport im;
  im.add_progs(dir.file("prog.json"));
  im.add_maps(dir.file("map.json"));
  im.add_net(dir.file("net.json"));
  model::Snapshot imported;
  im.finish(imported);
  ASSERT_TRUE(imported.ebpf.collected);

  for (uint32_t id : sc.prog_ids()) {
    SCOPED_TRACE("prog " + std::to_string(id));
    const auto* a = by_id(live.ebpf.programs, id);
    const auto* b = by_id(imported.ebpf.programs, id);
    ASSERT_TRUE(a && b);
    auto x = *a, y = *b;
    EXPECT_LE(std::abs(std::difftime(parse_time(x.loaded_at), parse_time(y.loaded_at))), 1.0);
    x.loaded_at = y.loaded_at = "";
    EXPECT_EQ(x, y);
  }
  for (uint32_t id : sc.map_ids()) {
    SCOPED_TRACE("map " + std::to_string(id));
    const auto* a = by_id(live.ebpf.maps, id);
    const auto* b = by_id(imported.ebpf.maps, id);
    ASSERT_TRUE(a && b);
    auto x = *a, y = *b;
    x.entries = y.entries = std::nullopt;
    x.entries_note = y.entries_note = "";
    EXPECT_EQ(x, y);
  }
  // tc and XDP attach points of the test netns (bpftool 7.1 does not list tcx).
  auto key = [](const model::BpfAttachment& a) {
    return std::make_tuple(a.kind, a.target, a.direction, a.prog_id, a.prog_name);
  };
  std::set<decltype(key(model::BpfAttachment{}))> from_live, from_import;
  for (const auto& a : live.ebpf.attachments) {
    if (a.kind == "tc" || a.kind == "xdp") from_live.insert(key(a));
  }
  for (const auto& a : imported.ebpf.attachments) from_import.insert(key(a));
  EXPECT_EQ(from_live, from_import);
  EXPECT_EQ(from_import.size(), 4u);
}

// Runs fn in a child process and returns its exit status (fn returns the code).
int in_child(const std::function<int()>& fn) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(BpfLive, UnavailableWithoutPrivilegeNeverZeros) {
  const int rc = in_child([] {
    if (setgid(65534) != 0 || setuid(65534) != 0) return 10;  // drops every capability
    model::Snapshot snap;
    bpf::collect(snap, {});
    if (snap.ebpf.collected || !snap.ebpf.programs.empty() || !snap.ebpf.maps.empty()) return 1;
    if (snap.unavailable.size() != 1 || snap.unavailable[0].section != "ebpf") return 2;
    if (snap.unavailable[0].error != EPERM) return 3;
    if (snap.unavailable[0].hint.find("CAP_SYS_ADMIN") == std::string::npos) return 4;
    return 0;
  });
  EXPECT_EQ(rc, 0) << "child check failed with code " << rc;
}

// No bpffs mounted in this mount namespace: nothing can be pinned here, a
// complete fact (issue 39: it was an unavailable ebpf.pins and exit 3). Only
// when the pins asked for are another namespace's (--host) is it unknown.
TEST_F(BpfLive, NoBpffsMeansNoPinsHereButUnknownPinsElsewhere) {
  const int rc = in_child([] {
    // A private mount namespace without any bpffs.
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 10;
    for (const auto& m : bpf_mounts()) umount2(m.c_str(), MNT_DETACH);
    model::Snapshot snap;
    bpf::Options opt;
    opt.netns = "";
    bpf::collect(snap, opt);
    if (!snap.ebpf.collected) return 1;  // programs and maps are still there
    for (const auto& u : snap.unavailable) {
      if (u.section == "ebpf.pins") return 2;
    }
    for (const auto& p : snap.ebpf.programs) {
      if (!p.pinned.empty()) return 3;
    }
    model::Snapshot node;
    opt.pins_of_other_mount_namespace = true;
    bpf::collect(node, opt);
    bool pins = false;
    for (const auto& u : node.unavailable) pins |= u.section == "ebpf.pins" && u.error == ENOENT && !u.hint.empty();
    return pins ? 0 : 4;
  });
  EXPECT_EQ(rc, 0) << "child check failed with code " << rc;
}

}  // namespace
}  // namespace dpscope::test

namespace dpscope::test {
namespace {

// Reading is bounded: past the time budget a map is "not counted" and its
// service map is refused, never decoded from a partial read.
TEST_F(BpfLive, SpentReadBudgetRefusesInsteadOfGuessing) {
  Scenario sc;
  auto writer = sc.cilium_writer();
  writer.add_services(1200, 2);  // well over one 4,096-entry batch
  model::Snapshot snap;
  bpf::Options opt;
  opt.netns = sc.ns.name();
  opt.bpffs_roots = {sc.bpffs.path()};
  opt.cgroup_root = sc.cgroup.root();
  opt.read_budget = std::chrono::milliseconds(0);
  bpf::collect(snap, opt);
  const uint32_t services_id = bpffix::BpfObject::id_of(sc.cilium.map_fd("cilium_lb4_services_v2"));
  const model::BpfMap* services = by_id(snap.ebpf.maps, services_id);
  ASSERT_NE(services, nullptr);
  EXPECT_FALSE(services->entries.has_value());
  EXPECT_NE(services->entries_note.find("time budget"), std::string::npos) << services->entries_note;
  bool refused = false;
  for (const auto& s : snap.ebpf.services) {
    if (s.dataplane == "cilium" && std::find(s.maps.begin(), s.maps.end(), sc.globals + "/cilium_lb4_services_v2") != s.maps.end()) {
      refused = !s.decoded && s.frontends.empty() && s.note.find("time budget") != std::string::npos;
    }
  }
  EXPECT_TRUE(refused);
}

}  // namespace
}  // namespace dpscope::test
