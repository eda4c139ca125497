// Issue 18, privilege matrix: one dps-* namespace and bpffs holding an
// iptables-nft ClusterIP (kube-proxy's dispatch), a legacy rule, a native nft
// table and Cilium's LB map, snapshotted by dpscope running with no
// capabilities, CAP_NET_ADMIN only, CAP_BPF+CAP_PERFMON only, CAP_SYS_ADMIN
// only and as full root (setpriv shrinks the bounding set, so even uid 0 keeps
// only what is listed). For every privilege level each part of the snapshot
// is either collected, and then equal to root's, or listed as unavailable with
// a reason and an errno -- never present but empty. The gates `check --expect
// kube-proxy-free` and `verify` never pass on a snapshot that is missing a part.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <iomanip>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/bpf_scenario.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

struct Level {
  std::string name;
  std::string bounding_set;  // setpriv --bounding-set; "" for full root
};

const std::vector<Level> kLevels = {
    {"root", ""},
    {"no capabilities", "-all"},
    {"CAP_NET_ADMIN", "-all,+net_admin"},
    {"CAP_BPF+CAP_PERFMON", "-all,+bpf,+perfmon"},
    {"CAP_SYS_ADMIN", "-all,+sys_admin"},
};

// One part of a snapshot and what it holds.
struct Part {
  std::string section;  // as `unavailable[].section` names it
  std::function<json(const json&)> content;
};

json tables_of(const json& s, const std::string& backend) {
  json out = json::array();
  for (const auto& t : s["netfilter"].value("tables", json::array())) {
    if (t.value("backend", "") == backend) out.push_back(t);
  }
  return out;
}

const std::vector<Part> kParts = {
    {"netfilter.iptables-nft", [](const json& s) { return tables_of(s, "iptables-nft"); }},
    {"netfilter.iptables-legacy", [](const json& s) { return tables_of(s, "iptables-legacy"); }},
    {"netfilter.nftables", [](const json& s) { return tables_of(s, "nftables"); }},
    {"ebpf.programs",
     [](const json& s) {
       // loaded_at is boot time + the kernel's load time, both read per snapshot and
       // rounded to seconds: two snapshots a moment apart may differ by one second.
       json programs = s["ebpf"].value("programs", json::array());
       for (auto& p : programs) p.erase("loaded_at");
       return programs;
     }},
    {"ebpf.maps", [](const json& s) { return s["ebpf"].value("maps", json::array()); }},
    {"ebpf.links", [](const json& s) { return s["ebpf"].value("links", json::array()); }},
    {"ebpf.attachments", [](const json& s) { return s["ebpf"].value("attachments", json::array()); }},
    {"ebpf.services", [](const json& s) { return s["ebpf"].value("services", json::array()); }},
};

// The unavailable entries that concern `part`: the part itself, a section
// containing it ("ebpf" for "ebpf.maps") or a piece of it ("ebpf.attachments.tc").
std::vector<json> unavailable_for(const json& s, const std::string& part) {
  std::vector<json> out;
  for (const auto& u : s.value("unavailable", json::array())) {
    const std::string section = u.value("section", "");
    if (section == part || part.rfind(section + ".", 0) == 0 || section.rfind(part + ".", 0) == 0) out.push_back(u);
  }
  // "netfilter.nftables" (the nf_tables socket) holds the iptables-nft tables too.
  if (part == "netfilter.iptables-nft") {
    for (const auto& u : s.value("unavailable", json::array())) {
      if (u.value("section", "") == "netfilter.nftables") out.push_back(u);
    }
  }
  return out;
}

void load_state(bpffix::Scenario& sc) {
  bpffix::load_double_programmed_cluster_ip(sc);
  sc.ns.sh("iptables-legacy-restore", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j ACCEPT\nCOMMIT\n");
  sc.ns.sh("nft -f -", "table inet dps-matrix {\n  chain in {\n    type filter hook input priority 10;\n    accept\n  }\n}\n");
}

// The intent of the one Service, with the backends root's snapshot decoded from Cilium's map.
std::string intent_for(const json& root) {
  json endpoints = json::array();
  for (const auto& svc : root["ebpf"]["services"]) {
    for (const auto& b : svc["backends"]) {
      endpoints.push_back({{"addresses", {b["address"]}}, {"conditions", {{"ready", true}}}});
    }
  }
  const json list = {
      {"apiVersion", "v1"},
      {"kind", "List"},
      {"items",
       {{{"kind", "Service"},
         {"metadata", {{"name", "web"}, {"namespace", "default"}}},
         {"spec",
          {{"type", "ClusterIP"},
           {"clusterIP", "10.96.77.7"},
           {"ports", {{{"name", "http"}, {"port", 80}, {"protocol", "TCP"}, {"targetPort", 8080}}}}}}},
        {{"kind", "EndpointSlice"},
         {"metadata", {{"name", "web-1"}, {"namespace", "default"}, {"labels", {{"kubernetes.io/service-name", "web"}}}}},
         {"addressType", "IPv4"},
         {"ports", {{{"name", "http"}, {"port", 8080}, {"protocol", "TCP"}}}},
         {"endpoints", endpoints}}}}};
  return list.dump(1);
}

class PrivilegeMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    DPS_REQUIRE_ROOT();
    if (run({"setpriv", "--version"}).exit_code != 0) GTEST_SKIP() << "SKIPPED: needs setpriv (util-linux)";
  }

  struct Taken {
    int exit_code = -1;
    std::string file, err;
    json snapshot;
  };

  Taken take(const bpffix::Scenario& sc, const Level& level, const TempDir& dir, const std::string& tag) {
    std::vector<std::string> argv;
    if (!level.bounding_set.empty()) {
      argv = {"setpriv", "--bounding-set=" + level.bounding_set, "--inh-caps=-all"};
    }
    // --no-agents: the host's process list moves under the other tests running at the same time.
    for (const std::string& a : {dpscope_bin(), std::string("snapshot"), std::string("--no-agents"), std::string("-q"),
                                 std::string("-o"), std::string("-")}) {
      argv.push_back(a);
    }
    Taken t;
    auto r = run(sc.ns.exec(argv));
    t.exit_code = r.exit_code;
    t.err = r.err;
    t.file = dir.file(tag + ".json");
    write_text(t.file, r.out);
    t.snapshot = json::parse(r.out, nullptr, false);
    return t;
  }
};

TEST_F(PrivilegeMatrix, EachPartCollectedAsRootOrUnavailableWithItsReason) {
  bpffix::Scenario sc;
  load_state(sc);
  TempDir dir;
  std::map<std::string, Taken> taken;
  for (const auto& level : kLevels) taken[level.name] = take(sc, level, dir, "s" + std::to_string(taken.size()));
  const Taken& root = taken["root"];
  ASSERT_FALSE(root.snapshot.is_discarded()) << root.err;
  // Root reads every part, and every part holds something (the test could not pass on empty parts) --
  // except what the machine itself lacks (no cgroup2 mount: cgroup attachments), never for privilege.
  for (const auto& part : kParts) {
    const auto reasons = unavailable_for(root.snapshot, part.section);
    for (const auto& u : reasons) EXPECT_NE(u.value("errno", 0), EPERM) << "root: " << u.dump();
    if (reasons.empty()) EXPECT_FALSE(part.content(root.snapshot).empty()) << "root: " << part.section << " is empty";
  }
  EXPECT_EQ(root.exit_code, root.snapshot["unavailable"].empty() ? 0 : 3) << root.err;

  std::ostringstream table;
  table << std::left << std::setw(22) << "[ matrix   ] part";
  for (const auto& level : kLevels) table << " | " << std::setw(20) << level.name;
  table << "\n";
  size_t unavailable_cells = 0, equal_cells = 0;
  for (const auto& part : kParts) {
    table << "[ matrix   ] " << std::setw(26) << part.section;
    for (const auto& level : kLevels) {
      SCOPED_TRACE(level.name + " / " + part.section);
      const Taken& t = taken[level.name];
      ASSERT_FALSE(t.snapshot.is_discarded()) << "exit " << t.exit_code << ": " << t.err;
      const auto reasons = unavailable_for(t.snapshot, part.section);
      std::string cell;
      if (level.name != "root" && !unavailable_for(root.snapshot, part.section).empty()) {
        // Root could not read it either (the machine lacks it): it must be unavailable here too.
        EXPECT_FALSE(reasons.empty());
      }
      if (reasons.empty()) {
        // Collected: what root saw, object by object.
        EXPECT_EQ(part.content(t.snapshot), part.content(root.snapshot));
        cell = part.content(t.snapshot) == part.content(root.snapshot) ? "= root" : "DIFFERS";
        ++equal_cells;
      } else {
        for (const auto& u : reasons) {
          EXPECT_FALSE(u.value("reason", "").empty()) << u.dump();
          EXPECT_GT(u.value("errno", 0), 0) << u.dump();
        }
        const int err = reasons.front().value("errno", 0);
        cell = std::string("unavail. ") + (err > 0 ? strerrorname_np(err) ? strerrorname_np(err) : "?" : "errno 0");
        ++unavailable_cells;
      }
      table << " | " << std::setw(20) << cell;
    }
    table << "\n";
  }
  table << "[ matrix   ] " << std::setw(26) << "snapshot exit code";
  for (const auto& level : kLevels) {
    const Taken& t = taken[level.name];
    table << " | " << std::setw(20) << t.exit_code;
    // Exit 3 when anything is unavailable (5 when nothing could be read at all), 0 otherwise.
    if (t.snapshot.value("unavailable", json::array()).empty()) {
      EXPECT_EQ(t.exit_code, 0) << level.name;
    } else {
      EXPECT_TRUE(t.exit_code == 3 || t.exit_code == 5) << level.name << ": " << t.exit_code;
    }
  }
  table << "\n";
  std::cout << table.str();
  // The matrix is not trivially "all equal": the limited levels lose parts.
  EXPECT_GT(unavailable_cells, 0u);
  EXPECT_GT(equal_cells, kParts.size());
}

// kube-proxy-free: root FAILs (double programming), and after kube-proxy's
// rules are gone root PASSes; no limited snapshot PASSes either time. verify
// of the intent root's snapshot matches: root exits 0, no limited one does.
TEST_F(PrivilegeMatrix, GatesNeverPassOnAMissingPart) {
  bpffix::Scenario sc;
  load_state(sc);
  TempDir dir;
  std::ostringstream table;
  table << "[ gates    ] level                | kube-proxy-free (both) | kube-proxy-free (eBPF only) | verify\n";
  std::map<std::string, Taken> first, second;
  for (const auto& level : kLevels) first[level.name] = take(sc, level, dir, "a" + std::to_string(first.size()));
  sc.ns.sh("iptables-nft -t nat -F && iptables-nft -t nat -X");
  for (const auto& level : kLevels) second[level.name] = take(sc, level, dir, "b" + std::to_string(second.size()));
  const std::string intent = dir.file("intent.json");
  write_text(intent, intent_for(second["root"].snapshot));
  // The sections root could not read either (the machine lacks them, e.g. no cgroup2 mount).
  std::set<std::string> machine_lacks;
  for (const auto& u : first["root"].snapshot.value("unavailable", json::array())) machine_lacks.insert(u.value("section", ""));
  for (const auto& level : kLevels) {
    SCOPED_TRACE(level.name);
    bool complete = true;  // nothing unavailable beyond what root lacks too
    for (const auto& u : first[level.name].snapshot.value("unavailable", json::array())) {
      complete = complete && machine_lacks.count(u.value("section", "")) > 0;
    }
    auto gate = [&](const Taken& t) {
      return run({dpscope_bin(), "check", t.file, "--expect", "kube-proxy-free", "--format", "json"});
    };
    const auto both = gate(first[level.name]);
    const auto ebpf_only = gate(second[level.name]);
    const auto verified = run({dpscope_bin(), "verify", intent, second[level.name].file});
    table << "[ gates    ] " << std::left << std::setw(20) << level.name << " | exit " << std::setw(17) << both.exit_code
          << " | exit " << std::setw(22) << ebpf_only.exit_code << " | exit " << verified.exit_code << "\n";
    // With double programming nobody passes.
    EXPECT_EQ(both.exit_code, 1) << both.out;
    if (level.name == "root") {
      ASSERT_TRUE(complete) << first[level.name].snapshot["unavailable"].dump();
      EXPECT_NE(both.out.find("double-programmed"), std::string::npos) << both.out;
      EXPECT_EQ(ebpf_only.exit_code, 0) << ebpf_only.out;
      EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
      continue;
    }
    ASSERT_FALSE(complete) << level.name << " read everything; the matrix tests nothing for it";
    // A limited snapshot: the gate fails on what it could not read, and says so.
    EXPECT_EQ(ebpf_only.exit_code, 1) << ebpf_only.out;
    EXPECT_NE(ebpf_only.out.find("section-unavailable"), std::string::npos) << ebpf_only.out;
    EXPECT_EQ(ebpf_only.out.find("\"PASS\""), std::string::npos) << ebpf_only.out;
    EXPECT_EQ(verified.exit_code, 1) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("not verified"), std::string::npos) << verified.out;
  }
  std::cout << table.str();
}

}  // namespace
}  // namespace dpscope::test
