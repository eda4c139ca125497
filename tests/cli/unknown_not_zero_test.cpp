// Issue 14, "unknown is never zero": every cell a measured fact or the reason
// it is not one. One test per case of the issue, each on the exact input, the
// cell / Finding text and the exit code. The live halves (real privileges,
// real bpftool map dumps, cgroups) are in tests/integration/unknown_not_zero_live_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

json load(const std::string& rel) { return json::parse(read_text(source_path(rel))); }

// compare A B --format json, A and B written to a temp dir.
json compare_json(const json& a, const json& b, RunResult* raw = nullptr) {
  TempDir dir;
  write_text(dir.file("a.json"), a.dump());
  write_text(dir.file("b.json"), b.dump());
  auto r = run({dpscope_bin(), "compare", dir.file("a.json"), dir.file("b.json"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (raw) *raw = r;
  return json::parse(r.out);
}

std::string compare_text(const json& a, const json& b) {
  TempDir dir;
  write_text(dir.file("a.json"), a.dump());
  write_text(dir.file("b.json"), b.dump());
  auto r = run({dpscope_bin(), "compare", dir.file("a.json"), dir.file("b.json"), "--width", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

json cell(const json& report, const std::string& row, size_t side) { return report_row(report, row)["values"][side]; }

bool any_contains(const json& list, const std::string& needle) {
  for (const auto& s : list) {
    if (s.get<std::string>().find(needle) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> problem_ids(const json& check) {
  std::vector<std::string> out;
  for (const auto& p : check["problems"]) out.push_back(p["id"]);
  return out;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

const std::string kBpftool = "fixtures/upstream/bpftool/";

// ---- case 1: an import of `bpftool prog/map/net show` from a Cilium node
// (GKE Dataplane V2 objects): map show has no entries, so the frontends are
// not known; 76 Cilium programs and 82 Cilium maps are not "no dataplane".
TEST(UnknownNotZero, Case1BpftoolImportWithoutMapContentsIsNotCollected) {
  TempDir dir;
  auto imp = run({dpscope_bin(), "import", "--bpftool-prog", source_path(kBpftool + "cilium-prog_show.json"),
                  "--bpftool-map", source_path(kBpftool + "cilium-map_show.json"), "--bpftool-net",
                  source_path(kBpftool + "cilium-net_show.json"), "-o", dir.file("gke.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  json gke = json::parse(read_text(dir.file("gke.json")));
  json report = compare_json(gke, load("fixtures/snapshots/kind-kube-proxy.json"));
  // Was: 0 frontends.
  for (const char* row : {"services.cilium", "ebpf.cilium.frontends", "ebpf.cilium.backends"}) {
    json c = cell(report, row, 0);
    ASSERT_TRUE(c.is_object()) << row << ": " << c.dump();
    EXPECT_TRUE(c["value"].is_null()) << row;
    EXPECT_NE(c["not_collected"].get<std::string>().find("not imported"), std::string::npos) << c.dump();
  }
  EXPECT_EQ(cell(report, "ebpf.programs", 0), 76);
  EXPECT_EQ(cell(report, "ebpf.maps", 0), 82);
  // Was: "no service dataplane found".
  const json& side = report["sides"][0];
  EXPECT_EQ(side["mode_label"], "Cilium eBPF (service map entries not read)");
  EXPECT_TRUE(any_contains(side["evidence"], "76 Cilium programs and 82 Cilium maps")) << side["evidence"].dump(1);
  EXPECT_TRUE(any_contains(side["evidence"], "cilium_lb4_serv")) << side["evidence"].dump(1);
  EXPECT_TRUE(any_contains(report["findings"], "the eBPF service maps are listed but their entries were not collected"))
      << report["findings"].dump(1);
  // Was: exit 1 with no-ebpf-service-map although cilium_lb4_services_v2 is listed.
  auto chk = run({dpscope_bin(), "check", dir.file("gke.json"), "--expect", "kube-proxy-free", "--format", "json"});
  EXPECT_EQ(chk.exit_code, 1);
  json c = json::parse(chk.out)["results"][0];
  auto ids = problem_ids(c);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "no-ebpf-service-map"), 0) << chk.out;
  bool entries_missing = false;
  for (const auto& p : c["problems"]) {
    entries_missing |= p["message"].get<std::string>().find("eBPF service maps' entries (not imported") != std::string::npos;
  }
  EXPECT_TRUE(entries_missing) << chk.out;
}

// Without --bpftool-net only the attachments are missing: program, map and
// memory counts are complete numbers, not "(incomplete)".
TEST(UnknownNotZero, Case1ImportWithoutNetMarksOnlyAttachments) {
  TempDir dir;
  auto imp = run({dpscope_bin(), "import", "--bpftool-prog", source_path(kBpftool + "cilium-prog_show.json"),
                  "--bpftool-map", source_path(kBpftool + "cilium-map_show.json"), "-o", dir.file("gke.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  json report = compare_json(json::parse(read_text(dir.file("gke.json"))), load("fixtures/snapshots/kind-cilium-kpr.json"));
  EXPECT_EQ(cell(report, "ebpf.programs", 0), 76);  // was {"value": 76, "incomplete": "ebpf.attachments: ..."}
  EXPECT_EQ(cell(report, "ebpf.maps", 0), 82);
  EXPECT_TRUE(cell(report, "ebpf.memlock_bytes", 0).is_number()) << cell(report, "ebpf.memlock_bytes", 0).dump();
  json att = cell(report, "ebpf.attachments.cgroup", 0);
  ASSERT_TRUE(att.is_object()) << att.dump();
  EXPECT_TRUE(att["value"].is_null());
}

// A bad map dump is FILE:LINE: what, exit 2; a dump of a map the listing does
// not hold is refused, not guessed.
TEST(UnknownNotZero, Case1MapDumpErrors) {
  TempDir dir;
  write_text(dir.file("dump.json"), "[{\"key\": [\"0x0a\"],\n \"value\": [\"zz\"]}]\n");
  auto r = run({dpscope_bin(), "import", "--bpftool-map", source_path(kBpftool + "cilium-map_show.json"),
                "--bpftool-map-dump", "cilium_lb4_services_v2=" + dir.file("dump.json"), "-o", dir.file("o.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.file("dump.json") + ":1: \"value\" is not an array of hex bytes"), std::string::npos) << r.err;
  write_text(dir.file("formatted.json"), "[{\"formatted\": {\"key\": {}, \"value\": {}}}]\n");
  r = run({dpscope_bin(), "import", "--bpftool-map", source_path(kBpftool + "cilium-map_show.json"),
           "--bpftool-map-dump", "cilium_lb4_services_v2=" + dir.file("formatted.json"), "-o", dir.file("o.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("only \"formatted\""), std::string::npos) << r.err;
  write_text(dir.file("empty.json"), "[]\n");
  r = run({dpscope_bin(), "import", "--bpftool-map", source_path(kBpftool + "cilium-map_show.json"),
           "--bpftool-map-dump", "no_such_map=" + dir.file("empty.json"), "-o", dir.file("o.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no map of that pin path or name"), std::string::npos) << r.err;
}

// ---- case 2: nft -j of an iptables-nft node (kube-proxy's 2 ClusterIP
// services loaded with iptables-nft-restore): nft prints the xt matches
// without their addresses, so the service IPs are not visible in this source.
TEST(UnknownNotZero, Case2NftJsonOfIptablesNftNodeSaysNotVisible) {
  TempDir dir;
  const std::string nft = source_path("fixtures/upstream/kube-proxy-iptables/syncrepeated-step1-two-clusterip.listed-nft.json");
  auto imp = run({dpscope_bin(), "import", "--nft-json", nft, "-o", dir.file("node.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  json node = json::parse(read_text(dir.file("node.json")));
  json report = compare_json(node, load("fixtures/snapshots/kind-kube-proxy.json"));
  for (const char* row : {"services.iptables", "netfilter.service_ip_rules"}) {
    json c = cell(report, row, 0);
    ASSERT_TRUE(c.is_object()) << row << ": " << c.dump();  // was 0 / "none"
    EXPECT_TRUE(c["value"].is_null());
    EXPECT_EQ(c["unavailable"].get<std::string>().rfind("not visible in this source", 0), 0u) << c.dump();
  }
  // Chain names are visible; the legacy backend is not in an nft -j input.
  EXPECT_EQ(cell(report, "netfilter.chains.kube_svc", 0)["value"], 2);
  EXPECT_EQ(cell(report, "netfilter.chains.kube_svc", 0)["incomplete"],
            "netfilter.iptables-legacy: not imported: no iptables-legacy-save input");
  EXPECT_FALSE(any_contains(report["findings"], "0 service-IP rules")) << report["findings"].dump(1);
  EXPECT_TRUE(any_contains(report["findings"], "KUBE-SERVICES rules whose addresses are not visible in this source"))
      << report["findings"].dump(1);
  std::string text = compare_text(node, load("fixtures/snapshots/kind-kube-proxy.json"));
  EXPECT_NE(text.find("not visible in this source"), std::string::npos);
  // where: was exit 0, "programmed nowhere".
  auto w = run({dpscope_bin(), "where", "172.30.0.41", dir.file("node.json"), "--format", "json"});
  EXPECT_EQ(w.exit_code, 1) << w.out;
  json wj = json::parse(w.out);
  EXPECT_FALSE(wj["nodes"][0]["found"].get<bool>());
  EXPECT_TRUE(any_contains(wj["nodes"][0]["not_searched"], "counted, not recorded (not visible in this source)"))
      << w.out;
  auto wt = run({dpscope_bin(), "where", "172.30.0.41", dir.file("node.json")});
  EXPECT_NE(wt.out.find("programmed nowhere that was searched"), std::string::npos) << wt.out;
}

// ---- case 3: a snapshot whose nf_tables generation moved during every read
// (0 of 87,047 rules read): cells say incomplete, and no Finding, gate or fit
// is built on it.
json churned() {
  json s = load("fixtures/snapshots/kind-kube-proxy.json");
  s["node"]["name"] = "churn2";
  s["netfilter"]["tables"] = json::array();
  s["unavailable"].push_back({{"section", "netfilter.consistency"},
                              {"reason", "the nf_tables generation moved during every attempt; tables are a "
                                         "best-effort read of generation 5123"},
                              {"errno", 11},
                              {"hint", "retry when the ruleset is quieter"}});
  return s;
}

TEST(UnknownNotZero, Case3NoConclusionFromAnIncompleteSection) {
  json big = load("fixtures/snapshots/kind-kube-proxy.json");
  json report = compare_json(big, churned());
  EXPECT_FALSE(any_contains(report["findings"], "iptables rules: 67 on kind-worker, 0 on churn2")) << report["findings"].dump(1);
  EXPECT_FALSE(any_contains(report["findings"], "walks up to 0 rules"));
  EXPECT_TRUE(any_contains(report["findings"], "churn2: netfilter was incomplete (netfilter.consistency"))
      << report["findings"].dump(1);
  json c = cell(report, "netfilter.rules.iptables", 1);
  EXPECT_EQ(c["incomplete"].get<std::string>().rfind("netfilter.consistency:", 0), 0u) << c.dump();
  TempDir dir;
  write_text(dir.file("churn.json"), churned().dump());
  for (const char* expect : {"kube-proxy-iptables", "kube-proxy-free"}) {
    auto r = run({dpscope_bin(), "check", dir.file("churn.json"), "--expect", expect, "--format", "json"});
    EXPECT_EQ(r.exit_code, 1) << expect;  // never passes on an incomplete section
    json j = json::parse(r.out)["results"][0];
    auto ids = problem_ids(j);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), "kube-proxy-missing"), 0) << r.out;  // was: concluded from 0 rules
    EXPECT_EQ(std::count(ids.begin(), ids.end(), "section-incomplete"), 1) << r.out;
    EXPECT_TRUE(j["passed"].empty()) << r.out;  // was: "only one iptables backend holds rules", ...
  }
  auto sc = run({dpscope_bin(), "scale", dir.file("churn.json"), "--format", "json"});
  ASSERT_EQ(sc.exit_code, 0) << sc.err;
  json sj = json::parse(sc.out);
  EXPECT_FALSE(sj["nodes"][0]["fitted"].get<bool>());
  EXPECT_NE(sj["nodes"][0]["why_not"].get<std::string>().find("netfilter incomplete"), std::string::npos) << sc.out;
}

// ---- case 4: a snapshot where nothing could be read: the errno and hint
// once per section of the report, not in every cell.
json unprivileged() {
  json s = load("fixtures/snapshots/kind-kube-proxy.json");
  s["node"]["name"] = "nobody";
  s["node"]["source"] = "live";
  s["netfilter"] = {{"collected", false}, {"collection", {{"nft_retries", 0}}}, {"tables", json::array()}};
  s["ebpf"] = {{"collected", false}};
  const std::string hint = "reading nf_tables needs CAP_NET_ADMIN: run as root";
  s["unavailable"] = json::array(
      {{{"section", "netfilter.nftables"}, {"reason", "nfnetlink dump: Operation not permitted"}, {"errno", 1}, {"hint", hint}},
       {{"section", "netfilter.iptables-legacy"}, {"reason", "socket(SOCK_RAW) for iptables-legacy: Operation not permitted"}, {"errno", 1}, {"hint", "reading iptables-legacy tables needs CAP_NET_ADMIN (and CAP_NET_RAW): run as root"}},
       {{"section", "netfilter"}, {"reason", "nfnetlink dump: Operation not permitted"}, {"errno", 1}, {"hint", hint}},
       {{"section", "ebpf"}, {"reason", "BPF_PROG_GET_NEXT_ID failed"}, {"errno", 1}, {"hint", "needs CAP_SYS_ADMIN (or CAP_BPF): run as root"}}});
  return s;
}

TEST(UnknownNotZero, Case4ReasonOncePerSectionNotInEveryCell) {
  std::string text = compare_text(load("fixtures/snapshots/kind-kube-proxy.json"), unprivileged());
  size_t lines = 0;
  for (size_t p = 0; p < text.size();) {
    size_t e = text.find('\n', p);
    if (text.substr(p, e - p).find("CAP_NET_ADMIN: run as root") != std::string::npos) ++lines;
    p = e == std::string::npos ? text.size() : e + 1;
  }
  // One line per report section holding netfilter rows (5), the mode evidence
  // and the Finding; was one per netfilter cell (60+).
  EXPECT_LE(lines, 8u) << text;
  EXPECT_GE(lines, 1u);
  EXPECT_NE(text.find("\n  [2] nobody: unavailable: nfnetlink dump: Operation not permitted (reading nf_tables needs "
                      "CAP_NET_ADMIN: run as root)\n"),
            std::string::npos)
      << text;
  json report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), unprivileged());
  EXPECT_TRUE(cell(report, "netfilter.rules.iptables", 1)["value"].is_null());
  EXPECT_EQ(report["sides"][1]["mode_label"], "unknown (netfilter and eBPF not collected)");
}

// ---- case 5: part of the privileges: legacy tables unreadable (the node
// has 8 legacy rules), netfilter unreadable next to a Cilium service map.
TEST(UnknownNotZero, Case5UnreadableLegacyHasNoNumberInAnyFormat) {
  json s = load("fixtures/snapshots/kind-kube-proxy.json");
  s["unavailable"].push_back({{"section", "netfilter.iptables-legacy"},
                              {"reason", "socket(SOCK_RAW) for iptables-legacy: Operation not permitted"},
                              {"errno", 1},
                              {"hint", "reading iptables-legacy tables needs CAP_NET_ADMIN (and CAP_NET_RAW): run as root"}});
  json report = compare_json(load("fixtures/snapshots/kind-cilium-kpr.json"), s);
  json c = cell(report, "netfilter.rules.iptables_legacy", 1);
  ASSERT_TRUE(c.is_object()) << c.dump();  // was {"value": 0, "incomplete": ...}
  EXPECT_TRUE(c.contains("value") && c["value"].is_null()) << c.dump();
  EXPECT_NE(c["unavailable"].get<std::string>().find("CAP_NET_RAW"), std::string::npos);
  EXPECT_EQ(cell(report, "netfilter.rules.iptables_nft", 1), 67);  // the part that was read
  std::string text = compare_text(load("fixtures/snapshots/kind-cilium-kpr.json"), s);
  const size_t row = text.find("  rules, iptables-legacy backend ");
  ASSERT_NE(row, std::string::npos);
  const std::string line = text.substr(row, text.find('\n', row) - row);
  EXPECT_EQ(line.substr(line.size() - 13), "  unavailable") << line;  // was "0 (incomplete)"
  TempDir dir;
  write_text(dir.file("a.json"), load("fixtures/snapshots/kind-cilium-kpr.json").dump());
  write_text(dir.file("b.json"), s.dump());
  auto md = run({dpscope_bin(), "compare", dir.file("a.json"), dir.file("b.json"), "--format", "markdown"});
  EXPECT_NE(md.out.find("| rules, iptables-legacy backend | 0 | unavailable |"), std::string::npos) << md.out;
  auto csv = run({dpscope_bin(), "compare", dir.file("a.json"), dir.file("b.json"), "--format", "csv"});
  EXPECT_NE(csv.out.find("\"netfilter.rules.iptables_legacy\",\"netfilter\",\"rules, iptables-legacy backend\",0,\"unavailable\""),
            std::string::npos)
      << csv.out;
}

TEST(UnknownNotZero, Case5ModeSaysWhatItCouldNotSee) {
  json s = load("fixtures/snapshots/kind-cilium-kpr.json");
  s["netfilter"] = {{"collected", false}, {"collection", {{"nft_retries", 0}}}, {"tables", json::array()}};
  s["unavailable"] = json::array({{{"section", "netfilter"},
                                   {"reason", "nfnetlink dump: Operation not permitted"},
                                   {"errno", 1},
                                   {"hint", "reading nf_tables needs CAP_NET_ADMIN: run as root"}}});
  json report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), s);
  const json& side = report["sides"][1];
  EXPECT_NE(side["mode_label"], "Cilium kube-proxy replacement");  // was
  EXPECT_EQ(side["mode"], "cilium-kpr-unconfirmed");
  EXPECT_EQ(side["mode_label"], "Cilium eBPF services (netfilter not seen: kube-proxy not ruled out)");
  EXPECT_TRUE(any_contains(side["evidence"], "not seen: netfilter unavailable (nfnetlink dump: Operation not permitted"))
      << side["evidence"].dump(1);
  EXPECT_FALSE(any_contains(report["findings"], "has no service-IP rule in iptables")) << report["findings"].dump(1);
}

// ---- case 7: fill levels only for maps whose entries come and go.
TEST(UnknownNotZero, Case7FullestMapsSkipArraysFullByConstruction) {
  json s = load("fixtures/snapshots/kind-cilium-kpr.json");
  auto add = [&](uint32_t id, const std::string& name, const std::string& type, uint32_t max) {
    s["ebpf"]["maps"].push_back({{"id", id}, {"type", type}, {"name", name}, {"bytes_key", 4}, {"bytes_value", 8},
                                 {"max_entries", max}, {"flags", 0}, {"bytes_memlock", 4096}, {"btf_id", 0},
                                 {"pinned", json::array()}, {"entries", max}, {"entries_note", ""}});
  };
  add(9001, ".rodata.config", "array", 1);
  add(9002, "cilium_runtime_", "array", 256);
  add(9003, "cilium_calls_00", "prog_array", 64);
  json report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), s);
  const json& fill = report["sides"][1]["fullest_maps"];
  ASSERT_FALSE(fill.empty());
  EXPECT_FALSE(any_contains(fill, ".rodata.config")) << fill.dump(1);  // was first, at 100%
  EXPECT_FALSE(any_contains(fill, "cilium_runtime_"));
  EXPECT_FALSE(any_contains(fill, "cilium_calls_00"));
  EXPECT_EQ(fill[0], "cilium_lb4_serv (hash, cilium): 16 / 65536 entries (0.02%)");
}

// ---- case 8: what fdinfo memlock means, by the snapshot's kernel.
TEST(UnknownNotZero, Case8MemlockMeaningFollowsTheKernel) {
  struct Band {
    const char* kernel;
    const char* id;
    const char* cell;
  };
  for (const Band& b : {Band{"5.10.209", "rlimit-pages", "RLIMIT_MEMLOCK pages (<5.11)"},
                        Band{"5.11.0", "estimate", "max_entries estimate (5.11-6.3)"},
                        Band{"6.3.13", "estimate", "max_entries estimate (5.11-6.3)"},
                        Band{"6.4.0-rc1", "map-mem-usage", "map_mem_usage (>=6.4)"},
                        Band{"", "unknown", "unknown kernel"}}) {
    json s = load("fixtures/snapshots/kind-cilium-kpr.json");
    s["node"]["kernel"] = b.kernel;
    json report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), s);
    EXPECT_EQ(report["sides"][1]["memlock_band"], b.id) << b.kernel;
    EXPECT_EQ(cell(report, "ebpf.memlock_band", 1), b.cell) << b.kernel;
    // Was "programs + maps; not seen by kubectl top" for every kernel.
    EXPECT_EQ(report_row(report, "ebpf.memlock_bytes")["note"].get<std::string>().find("not seen by kubectl top"),
              std::string::npos);
  }
  json s = load("fixtures/snapshots/kind-cilium-kpr.json");
  s["node"]["kernel"] = "6.1.0-18-amd64";
  s["node"]["cgroup_memory_nobpf"] = true;
  json report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), s);
  EXPECT_TRUE(any_contains(report["sides"][1]["memory_notes"], "cgroup.memory=nobpf is set on this node"));
  s["node"]["cgroup_memory_nobpf"] = false;
  report = compare_json(load("fixtures/snapshots/kind-kube-proxy.json"), s);
  EXPECT_TRUE(any_contains(report["sides"][1]["memory_notes"],
                           "since 5.11 charged to the memory cgroup of the process that created each map"));
  EXPECT_TRUE(any_contains(report["sides"][1]["memory_notes"], "not the running agent's when an earlier container "
                                                               "created pinned maps"));
  EXPECT_TRUE(any_contains(report["findings"], "What the figure is: an estimate from max_entries"))
      << report["findings"].dump(1);
}

// ---- case 9: what kube-proxy does.
TEST(UnknownNotZero, Case9WordingIsWhatKubeProxyDoes) {
  auto r = dpscope_in_source("compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format json");
  ASSERT_EQ(r.exit_code, 0);
  json report = json::parse(r.out);
  EXPECT_EQ(report_row(report, "netfilter.chains.kube_svc")["note"], "one per service port with endpoints");
  EXPECT_EQ(report_row(report, "netfilter.chains.kube_sep")["note"], "one per (service port, endpoint)");
  EXPECT_EQ(report_row(report, "netfilter.chains.kubelet")["label"], "KUBE-* chains owned by kubelet or kube-proxy");
  EXPECT_FALSE(any_contains(report["findings"], "kubelet's (KUBE-FIREWALL"));
}

// ---- case 10: the smaller cases.
TEST(UnknownNotZero, Case10CheckSaysBackendAndWhatEachCountCounts) {
  auto r = run({dpscope_bin(), "check", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--expect",
                "kube-proxy-free", "--width", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("iptables-nft: 5 KUBE-SVC chains, 8 KUBE-SEP chains, 6 rules in KUBE-SERVICES (filter and "
                       "nat): 5 of them service-IP rules"),
            std::string::npos)
      << r.out;
}

TEST(UnknownNotZero, Case10WhereExitsOneOnNowhereWithSeparateFields) {
  auto none = run({dpscope_bin(), "where", "10.96.123.123", source_path("fixtures/snapshots/kind-kube-proxy.json")});
  EXPECT_EQ(none.exit_code, 1) << none.out;  // was 0
  EXPECT_NE(none.out.find("programmed nowhere that was searched"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("not searched: eBPF service maps: not collected"), std::string::npos) << none.out;
  auto found = run({dpscope_bin(), "where", "10.96.0.1:443", source_path("fixtures/snapshots/kind-kube-proxy.json"),
                    "--format", "json"});
  EXPECT_EQ(found.exit_code, 0);
  json j = json::parse(found.out);
  bool rule = false;
  for (const auto& p : j["nodes"][0]["places"]) {
    if (p["where"].get<std::string>().rfind("ip nat KUBE-SERVICES #", 0) == 0) {
      rule = true;
      EXPECT_EQ(p["table"], "ip nat");
      EXPECT_EQ(p["chain"], "KUBE-SERVICES");
      EXPECT_GT(p["position"].get<int>(), 0);
    }
  }
  EXPECT_TRUE(rule) << found.out;
}

TEST(UnknownNotZero, Case10ScaleRefusesFewerEndpointsThanServices) {
  auto r = run({dpscope_bin(), "scale", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--services", "5000",
                "--endpoints", "5"});
  EXPECT_EQ(r.exit_code, 2);  // was 0, with an impossible node projected
  EXPECT_NE(r.err.find("--endpoints is the total number of endpoints over all service ports"), std::string::npos) << r.err;
  auto ok = run({dpscope_bin(), "scale", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--services", "5000",
                 "--endpoints", "25000"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // The README example is one that runs.
  const std::string readme = read_text(source_path("README.md"));
  EXPECT_EQ(readme.find("--services 5000 --endpoints 5 "), std::string::npos);
  EXPECT_NE(readme.find("--services 5000 --endpoints 25000"), std::string::npos);
}

TEST(UnknownNotZero, Case10NewerMinorSchemaWarnsAboutUnknownFields) {
  TempDir dir;
  json s = load("fixtures/snapshots/kind-kube-proxy.json");
  s["schema"] = "dpscope.snapshot/v2.4";
  write_text(dir.file("plain.json"), s.dump());
  auto quiet = run({dpscope_bin(), "check", dir.file("plain.json"), "--expect", "kube-proxy-iptables"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");  // nothing unknown: nothing to say
  s["node"]["zone"] = "europe-west1-b";
  s["netfilter"]["collection"]["nft_sets_retries"] = 2;
  write_text(dir.file("newer.json"), s.dump());
  for (std::vector<std::string> argv :
       {std::vector<std::string>{"check", dir.file("newer.json"), "--expect", "kube-proxy-iptables"},
        {"compare", dir.file("newer.json"), dir.file("plain.json")},
        {"where", "10.96.0.1", dir.file("newer.json")},
        {"scale", dir.file("newer.json")}}) {
    argv.insert(argv.begin(), dpscope_bin());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << argv[1] << r.err;
    EXPECT_NE(r.err.find("dpscope: warning: " + dir.file("newer.json") +
                         ": schema \"dpscope.snapshot/v2.4\" is newer than this dpscope's \"dpscope.snapshot/v2.3\": 2 "
                         "unknown fields ignored (/netfilter/collection/nft_sets_retries, /node/zone)"),
              std::string::npos)
        << argv[1] << ": " << r.err;
  }
  // The same warning from a cluster folder (nodes are read in parallel there).
  const std::string cluster = dir.file("cluster");
  std::filesystem::create_directory(cluster);
  std::filesystem::copy_file(dir.file("newer.json"), cluster + "/node-a.json");
  std::filesystem::copy_file(dir.file("plain.json"), cluster + "/node-b.json");
  const std::string other = dir.file("other");
  std::filesystem::create_directory(other);
  std::filesystem::copy_file(dir.file("plain.json"), other + "/node-c.json");
  auto r = run({dpscope_bin(), "compare", cluster, other});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dpscope: warning: " + cluster + "/node-a.json: schema \"dpscope.snapshot/v2.4\" is newer"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("node-b.json"), std::string::npos) << r.err;
}

TEST(UnknownNotZero, Case10CsvKeepsALoneDash) {
  auto r = dpscope_in_source("compare fixtures/snapshots/kind-kube-proxy.json fixtures/snapshots/kind-cilium-kpr.json --format csv");
  ASSERT_EQ(r.exit_code, 0);
  // node.kernel is "-" for imports: was written as '-.
  EXPECT_NE(r.out.find("\"node.kernel\",\"node\",\"kernel\",\"-\",\"-\","), std::string::npos) << r.out.substr(0, 600);
  EXPECT_EQ(r.out.find("\"'-\""), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test

namespace dpscope::test {
namespace {

// An iptables-save import shows neither the legacy backend (iptables-nft-save
// does not list it) nor native nftables (only nft -j does): those rows are
// "not collected (not imported: ...)", never 0; totals over every backend say
// a part is left out; mode, Findings and check do not rule kube-proxy out there.
json import_then_compare(const std::vector<std::string>& inputs, TempDir& dir, const std::string& name) {
  std::vector<std::string> args{dpscope_bin(), "import"};
  for (const auto& i : inputs) args.push_back(i);
  for (const std::string a : {"--node", name.c_str(), "-o"}) args.push_back(a);
  args.push_back(dir.file(name + ".json"));
  auto imp = run(args);
  EXPECT_EQ(imp.exit_code, 0) << imp.err;
  auto r = run({dpscope_bin(), "compare", dir.file(name + ".json"), dir.file(name + ".json"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(UnknownNotZero, IptablesSaveImportLeavesLegacyAndNativeNftNotCollected) {
  TempDir dir;
  const std::string kp = source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt");
  json only = import_then_compare({"--iptables-save", kp}, dir, "only");
  EXPECT_TRUE(cell(only, "netfilter.rules.iptables_legacy", 0)["value"].is_null());
  EXPECT_EQ(cell(only, "netfilter.rules.iptables_legacy", 0)["not_collected"],
            "not imported: no iptables-legacy-save input (add --iptables-legacy-save (iptables-legacy-save output) "
            "to cover the legacy backend)");
  EXPECT_TRUE(cell(only, "netfilter.rules.nftables", 0)["value"].is_null());
  EXPECT_TRUE(cell(only, "services.nftables", 0)["value"].is_null());
  // The imported part is complete; a total over every backend is not the node's.
  EXPECT_EQ(cell(only, "netfilter.rules.iptables_nft", 0), 67);
  EXPECT_EQ(cell(only, "netfilter.rules", 0)["value"], 67);
  EXPECT_NE(cell(only, "netfilter.rules", 0)["incomplete"].get<std::string>().find("netfilter.iptables-legacy: not imported"),
            std::string::npos);
  EXPECT_TRUE(any_contains(only["sides"][0]["evidence"], "not seen: netfilter.iptables-legacy: not imported"));

  // With every part in the input the same rows are numbers.
  json whole = import_then_compare({"--iptables-save", kp, "--iptables-legacy-save",
                                    source_path("fixtures/scenarios/kind-kube-proxy.iptables-legacy-save.txt"),
                                    "--nft-json", source_path("fixtures/scenarios/kind-kube-proxy.nft.json")},
                                   dir, "whole");
  EXPECT_EQ(cell(whole, "netfilter.rules.iptables_legacy", 0), 0);
  EXPECT_EQ(cell(whole, "netfilter.rules.nftables", 0), 0);
  EXPECT_EQ(cell(whole, "netfilter.rules", 0), 67);
  EXPECT_FALSE(any_contains(whole["sides"][0]["evidence"], "not seen: netfilter"));
}

TEST(UnknownNotZero, EmptyIptablesSaveIsANodeWithoutTables) {
  TempDir dir;
  // iptables-legacy-save on a node without legacy tables: an empty file.
  json r = import_then_compare({"--iptables-legacy-save", source_path("fixtures/scenarios/empty.iptables-save.txt")},
                               dir, "empty");
  EXPECT_EQ(cell(r, "netfilter.rules.iptables_legacy", 0), 0);
  EXPECT_TRUE(cell(r, "netfilter.rules.nftables", 0)["value"].is_null());
  // iptables-nft-save's header and footer around no table.
  r = import_then_compare({"--iptables-save", source_path("fixtures/scenarios/comments-only.iptables-save.txt")}, dir,
                          "comments");
  EXPECT_EQ(cell(r, "netfilter.rules.iptables_nft", 0), 0);
  EXPECT_TRUE(cell(r, "netfilter.rules.iptables_legacy", 0)["value"].is_null());
}

TEST(UnknownNotZero, CiliumImportWithoutLegacyIsNotConfirmedKubeProxyFree) {
  TempDir dir;
  const std::string cil = source_path("fixtures/scenarios/kind-cilium-kpr.iptables-save.txt");
  auto imp = run({dpscope_bin(), "import", "--iptables-save", cil, "-o", dir.file("c.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  // The demo snapshot's eBPF side on the partial netfilter import.
  json snap = json::parse(read_text(dir.file("c.json")));
  snap["ebpf"] = load("fixtures/snapshots/kind-cilium-kpr.json")["ebpf"];
  write_text(dir.file("c.json"), snap.dump());
  auto chk = run({dpscope_bin(), "check", dir.file("c.json"), "--expect", "kube-proxy-free", "--format", "json"});
  EXPECT_EQ(chk.exit_code, 1) << chk.out;
  json c = json::parse(chk.out)["results"][0];
  auto ids = problem_ids(c);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "section-missing"), ids.end()) << chk.out;
  EXPECT_EQ(c["detected_mode"], "cilium-kpr-unconfirmed");
  // The demo snapshot holds every part: the same gate passes there.
  auto demo = run({dpscope_bin(), "check", source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--expect",
                   "kube-proxy-free"});
  EXPECT_EQ(demo.exit_code, 0) << demo.out;
}

}  // namespace
}  // namespace dpscope::test
