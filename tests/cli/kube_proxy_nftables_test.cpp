// kube-proxy's nftables mode counted as kube-proxy names its objects: the
// per-Service chains PREFIX-HASH8-ns/name/proto/port (service-, local-,
// external-, endpoint-, firewall-) and its shared helper chains, on kube-proxy's
// own goldens and on the real kube-proxy v1.30.3 runs (fixtures/upstream/SOURCES.md).
// The oracle is `nft list ruleset` of the same state (the *.nft / nft-ruleset.txt
// files), read here line by line; for the real runs also the iptables-mode node
// of the same cluster state, whose KUBE-SVC/SVL/EXT/SEP chains are the same
// objects under their iptables names.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/nft_text.h"
#include "tests/support/process.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::string kUp = "fixtures/upstream/";

// Chains of every `table ip|ip6 kube-proxy` in `nft list ruleset` text, by kind:
// the per-Service prefixes by kube-proxy's name shape, "base" for a chain whose
// first line is its `type ... hook`, "helper" for the rest.
std::map<std::string, int> chain_kinds_of_listing(const std::string& text) {
  static const std::regex per_service("^(service|local|external|endpoint|firewall)-[A-Z2-7]{8}-[^/]+/[^/]+/[a-z]+/.*$");
  std::map<std::string, int> kinds;
  std::istringstream in(text);
  std::string line, chain;
  bool in_kube_proxy = false;
  while (std::getline(in, line)) {
    if (line.rfind("table ", 0) == 0) {
      in_kube_proxy = line == "table ip kube-proxy {" || line == "table ip6 kube-proxy {";
      continue;
    }
    if (!in_kube_proxy) continue;
    if (line.rfind("\tchain ", 0) == 0) {
      chain = line.substr(7, line.size() - 9);  // "\tchain NAME {"
      std::string next;
      std::getline(in, next);
      std::smatch m;
      if (next.find(" hook ") != std::string::npos) {
        kinds["base"] += 1;
      } else if (std::regex_match(chain, m, per_service)) {
        kinds[m[1]] += 1;
      } else {
        kinds["helper"] += 1;
      }
    }
  }
  return kinds;
}

json compare_json(const TempDir& dir, const std::vector<std::string>& import_args) {
  std::vector<std::string> argv = {dpscope_bin(), "import"};
  argv.insert(argv.end(), import_args.begin(), import_args.end());
  const std::string snap = dir.file("node.json");
  argv.insert(argv.end(), {"-o", snap});
  auto imp = run(argv);
  EXPECT_EQ(imp.exit_code, 0) << imp.err;
  auto r = run({dpscope_bin(), "compare", snap, snap, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

uint64_t row_value(const json& report, const std::string& id) {
  return report_row(report, id)["values"][0].get<uint64_t>();
}

void expect_chain_rows_equal_listing(const json& report, const std::map<std::string, int>& listed) {
  for (const char* kind : {"service", "local", "external", "endpoint", "firewall", "helper"}) {
    auto it = listed.find(kind);
    EXPECT_EQ(row_value(report, std::string("nftables.kube_proxy.chains.") + kind), it == listed.end() ? 0 : it->second)
        << kind;
  }
}

TEST(KubeProxyNftChains, GoldensCountedAsKubeProxyNamesThem) {
  for (const char* name : {"overall-nftables-rules", "knftables-fake-kubeproxy-ipv4-example",
                           "knftables-fake-kubeproxy-ipv6-example"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const std::string base = source_path(kUp + "kube-proxy-nftables/" + std::string(name) + ".listed-ruleset");
    json report = compare_json(dir, {"--nft-json", base + ".json"});
    auto listed = chain_kinds_of_listing(read_text(base + ".nft"));
    ASSERT_GT(listed["base"], 0);
    expect_chain_rows_equal_listing(report, listed);
  }
  // The figures SOURCES.md records for the overall golden: service x5,
  // endpoint x6, external x4, firewall x1; its helpers are not among them.
  TempDir dir;
  json report = compare_json(
      dir, {"--nft-json", source_path(kUp + "kube-proxy-nftables/overall-nftables-rules.listed-ruleset.json")});
  EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.service"), 5u);
  EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.endpoint"), 6u);
  EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.external"), 4u);
  EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.firewall"), 1u);
  EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.local"), 0u);
}

// ":KUBE-SVC-X - [0:0]" lines of iptables-save text, by kind, counted once per chain name.
std::map<std::string, int> kube_chains_of_save(const std::string& text) {
  std::map<std::string, std::set<std::string>> names;
  std::istringstream in(text);
  std::string line;
  for (const char* kind : {"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-SEP-"}) names[kind];
  while (std::getline(in, line)) {
    if (line.rfind(":KUBE-", 0) != 0) continue;
    std::string chain = line.substr(1, line.find(' ') - 1);
    for (auto& [kind, set] : names) {
      if (chain.rfind(kind, 0) == 0) set.insert(chain);
    }
  }
  std::map<std::string, int> out;
  for (const auto& [kind, set] : names) out[kind] = static_cast<int>(set.size());
  return out;
}

std::string unzstd(const std::string& path) {
  auto r = run({"zstd", "-dc", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(KubeProxyNftChains, RealRunsEqualTheirListingAndTheIptablesNodeOfTheSameState) {
  for (const char* size : {"300x5", "3000x8"}) {
    SCOPED_TRACE(size);
    TempDir dir;
    const std::string nft = source_path(kUp + "real-kube-proxy/nftables-" + std::string(size) + "/");
    const std::string ipt = source_path(kUp + "real-kube-proxy/iptables-" + std::string(size) + "/");
    json report = compare_json(dir, {"--nft-json", nft + "nft-ruleset.json.zst"});
    auto listed = chain_kinds_of_listing(unzstd(nft + "nft-ruleset.txt.zst"));
    expect_chain_rows_equal_listing(report, listed);
    // The same Services and endpoints in iptables mode (IPv4 and IPv6 tables).
    auto save = kube_chains_of_save(unzstd(ipt + "iptables-save.txt.zst") + unzstd(ipt + "ip6tables-save.txt.zst"));
    ASSERT_GT(save["KUBE-SVC-"], 0);
    EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.service"), save["KUBE-SVC-"]);
    EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.local"), save["KUBE-SVL-"]);
    EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.external"), save["KUBE-EXT-"]);
    EXPECT_EQ(row_value(report, "nftables.kube_proxy.chains.endpoint"), save["KUBE-SEP-"]);
  }
}

// `where` on an nftables-mode node: every map or set element keyed by the
// address (read from nft's own JSON) and every rule naming it (read from
// `nft list ruleset`): `ip daddr A` with that port or none, `ip saddr A`,
// `dnat to A:P`.
size_t nft_places(const std::string& nft_json, const std::string& listing, const std::string& addr,
                  const std::string& port) {
  size_t n = 0;
  const json doc = json::parse(nft_json);
  for (const auto& item : doc["nftables"]) {
    const json* set = item.contains("set") ? &item["set"] : item.contains("map") ? &item["map"] : nullptr;
    if (set == nullptr || !set->contains("elem")) continue;
    const bool is_map = item.contains("map");
    for (const auto& e : (*set)["elem"]) {
      json key = is_map ? e[0] : e;
      if (key.is_object() && key.contains("elem")) key = key["elem"]["val"];
      std::vector<std::string> parts;
      if (key.is_object() && key.contains("concat")) {
        for (const auto& p : key["concat"]) parts.push_back(p.is_string() ? p.get<std::string>() : p.dump());
      } else {
        parts.push_back(key.is_string() ? key.get<std::string>() : key.dump());
      }
      const bool key_match = parts[0] == addr && (port.empty() || parts.size() < 3 || parts.back() == port);
      const bool value_match = is_map && e[1].dump().find(addr) != std::string::npos;
      n += key_match || value_match;
    }
  }
  const std::string a = std::regex_replace(addr, std::regex("\\."), "\\.");
  const std::regex daddr("(^| )ip daddr " + a + "( |$)"), saddr("(^| )ip saddr " + a + "( |$)");
  const std::regex nat("(^| )(dnat|snat) (ip )?to " + a + (port.empty() ? "(:[0-9]+)?" : ":" + port) + "( |$)");
  const std::regex dport(" dport ([0-9]+)");
  for (const auto& [chain, rules] : nft_text_rules(listing).chains) {
    for (const auto& r : rules) {
      std::smatch m;
      const bool port_ok = port.empty() || !std::regex_search(r, m, dport) || m[1] == port;
      n += (std::regex_search(r, daddr) && port_ok) || std::regex_search(r, saddr) || std::regex_search(r, nat);
    }
  }
  return n;
}

TEST(KubeProxyNftWhere, FindsMapElementsAndNativeRules) {
  TempDir dir;
  const std::string base = source_path(kUp + "real-kube-proxy/nftables-300x5/");
  const std::string nft_json = unzstd(base + "nft-ruleset.json.zst"), listing = unzstd(base + "nft-ruleset.txt.zst");
  auto imp = run({dpscope_bin(), "import", "--nft-json", base + "nft-ruleset.json.zst", "-o", dir.file("n.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  // A ClusterIP with its port, an endpoint with its port, each without a port,
  // all taken from rules kube-proxy wrote.
  std::smatch svc, ep;
  ASSERT_TRUE(std::regex_search(listing, svc, std::regex(R"(ip daddr ([0-9.]+) (tcp|udp) dport ([0-9]+) )")));
  ASSERT_TRUE(std::regex_search(listing, ep, std::regex(R"(dnat to ([0-9.]+):([0-9]+))")));
  struct Q {
    std::string addr, port;
  };
  for (const Q& q : std::vector<Q>{{svc[1], svc[3]}, {svc[1], ""}, {ep[1], ep[2]}, {ep[1], ""}}) {
    const std::string arg = q.port.empty() ? q.addr : q.addr + ":" + q.port;
    auto r = run({dpscope_bin(), "where", arg, dir.file("n.json"), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    const size_t want = nft_places(nft_json, listing, q.addr, q.port);
    EXPECT_GE(want, 2u) << arg;  // a map element and a rule, or an endpoint's saddr and dnat rules
    EXPECT_EQ(j["nodes"][0]["places"].size(), want) << arg << "\n" << j["nodes"][0].dump(1);
  }
  // The endpoint's dnat rule is named in the text report.
  auto text = run({dpscope_bin(), "where", std::string(ep[1]) + ":" + std::string(ep[2]), dir.file("n.json")});
  EXPECT_NE(text.out.find("-> dnat to " + std::string(ep[1]) + ":" + std::string(ep[2])), std::string::npos) << text.out;
}

// compare --services of the iptables-mode and the nftables-mode node of one
// cluster state (kube-proxy v1.30.3, same Services and EndpointSlices): every
// service port is a row on both sides with the same endpoint count (cluster
// vs local endpoints, the terminating fallback of a Local policy) and the same
// label whichever side comes first (an unnamed port is "ns/svc" on both).
TEST(KubeProxyNftServices, EveryServiceRowEqualAcrossTheModesOfOneClusterState) {
  for (const auto& [size, rows] : std::vector<std::pair<std::string, size_t>>{{"300x5", 612}, {"3000x8", 5935}}) {
    SCOPED_TRACE(size);
    TempDir dir;
    const std::string up = source_path(kUp + "real-kube-proxy/");
    const std::string ipt = dir.file("ipt.json"), nft = dir.file("nft.json");
    ASSERT_EQ(run({dpscope_bin(), "import", "--iptables-save", up + "iptables-" + size + "/iptables-save.txt.zst",
                   "--ip6tables-save", up + "iptables-" + size + "/ip6tables-save.txt.zst", "-o", ipt})
                  .exit_code,
              0);
    ASSERT_EQ(run({dpscope_bin(), "import", "--nft-json", up + "nftables-" + size + "/nft-ruleset.json.zst", "-o", nft})
                  .exit_code,
              0);
    auto services = [&](const std::string& a, const std::string& b) {
      auto r = run({dpscope_bin(), "compare", a, b, "--services", "--format", "json"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      return json::parse(r.out)["services"];
    };
    const json forward = services(ipt, nft), backward = services(nft, ipt);
    ASSERT_EQ(forward.size(), rows);
    ASSERT_EQ(backward.size(), rows);
    std::map<std::string, std::string> label_forward, label_backward;
    size_t unnamed_ports = 0, differing = 0;
    for (const auto& r : forward) {
      label_forward[r["address"]] = r["service"];
      const std::string label = r["service"];
      unnamed_ports += label.find(':') == std::string::npos;
      ASSERT_EQ(r["sides"][0].size(), 1u) << r.dump();
      ASSERT_EQ(r["sides"][1].size(), 1u) << r.dump();
      EXPECT_EQ(r["sides"][0][0]["dataplane"], "iptables");
      EXPECT_EQ(r["sides"][1][0]["dataplane"], "nftables");
      if (r["sides"][0][0]["endpoints"] != r["sides"][1][0]["endpoints"] && differing++ < 10) {
        ADD_FAILURE() << "endpoints differ: " << r.dump();
      }
    }
    for (const auto& r : backward) label_backward[r["address"]] = r["service"];
    EXPECT_EQ(label_forward, label_backward);
    EXPECT_GT(unnamed_ports, 0u);  // the fixture has unnamed ports: the label case is exercised
  }
}

// Service frontends (address, port, protocol) of kube-proxy's, with or without
// endpoints, read from iptables-save text: nat KUBE-SERVICES jumps to a
// service chain, filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES REJECT or DROP.
std::pair<std::set<std::string>, std::set<std::string>> iptables_frontends(const std::string& save) {
  std::set<std::string> forwarded, verdicts;
  static const std::regex rule(R"(^-A (KUBE-SERVICES|KUBE-EXTERNAL-SERVICES) .*)");
  static const std::regex d(R"( -d ([0-9a-f:.]+)/(32|128) )"), port(R"(--dport ([0-9]+))"), proto(R"( -p (\w+) )"),
      jump(R"( -j (\S+))");
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    std::smatch m, a, p, pr, j;
    if (!std::regex_match(line, m, rule) || !std::regex_search(line, a, d) || !std::regex_search(line, p, port) ||
        !std::regex_search(line, pr, proto) || !std::regex_search(line, j, jump)) {
      continue;
    }
    const std::string key = std::string(a[1]) + ":" + std::string(p[1]) + "/" + std::string(pr[1]);
    const std::string target = j[1];
    if (table == "nat" && m[1] == "KUBE-SERVICES" && std::regex_match(target, std::regex("KUBE-(SVC|SVL|EXT|FW)-.*"))) {
      forwarded.insert(key);
    }
    if (table == "filter" && (target == "REJECT" || target == "DROP")) verdicts.insert(key);
  }
  return {forwarded, verdicts};
}

// The same from nft's JSON: keys of service-ips and of no-endpoint-services.
std::pair<std::set<std::string>, std::set<std::string>> nft_frontends(const std::string& nft_json) {
  std::set<std::string> forwarded, verdicts;
  const json doc = json::parse(nft_json);  // held: a range-for over a temporary's member dangles
  for (const auto& item : doc["nftables"]) {
    if (!item.contains("map")) continue;
    const auto& m = item["map"];
    if (m["name"] != "service-ips" && m["name"] != "no-endpoint-services") continue;
    for (const auto& e : m.value("elem", json::array())) {
      json k = e[0].contains("elem") ? e[0]["elem"]["val"] : e[0];
      const auto& c = k["concat"];
      const std::string key = c[0].get<std::string>() + ":" + c[2].dump() + "/" + c[1].get<std::string>();
      (m["name"] == "service-ips" ? forwarded : verdicts).insert(key);
    }
  }
  return {forwarded, verdicts};
}

// Imports of a whole node: the other parts given as empty inputs, so the
// Findings (drawn only from whole sections) are there.
struct WholeNodes {
  TempDir dir;
  std::string ipt, nft;
  explicit WholeNodes(const std::string& size) {
    const std::string up = source_path(kUp + "real-kube-proxy/");
    write_text(dir.file("empty.txt"), "");
    write_text(dir.file("empty.json"), R"({"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}]})");
    ipt = dir.file("ipt.json");
    nft = dir.file("nft.json");
    auto a = run({dpscope_bin(), "import", "--iptables-save", up + "iptables-" + size + "/iptables-save.txt.zst",
                  "--ip6tables-save", up + "iptables-" + size + "/ip6tables-save.txt.zst", "--iptables-legacy-save",
                  dir.file("empty.txt"), "--nft-json", dir.file("empty.json"), "--node", "iptables-node", "-o", ipt});
    EXPECT_EQ(a.exit_code, 0) << a.err;
    auto b = run({dpscope_bin(), "import", "--nft-json", up + "nftables-" + size + "/nft-ruleset.json.zst",
                  "--iptables-save", dir.file("empty.txt"), "--iptables-legacy-save", dir.file("empty.txt"), "--node",
                  "nftables-node", "-o", nft});
    EXPECT_EQ(b.exit_code, 0) << b.err;
  }
};

TEST(KubeProxyNftServices, ServicesPerDataplaneCountTheSameFrontendsInBothModes) {
  for (const char* size : {"300x5", "3000x8"}) {
    SCOPED_TRACE(size);
    WholeNodes nodes(size);
    const std::string up = source_path(kUp + "real-kube-proxy/");
    auto [ipt_fwd, ipt_verdict] = iptables_frontends(unzstd(up + "iptables-" + std::string(size) + "/iptables-save.txt.zst") +
                                                     unzstd(up + "iptables-" + std::string(size) + "/ip6tables-save.txt.zst"));
    auto [nft_fwd, nft_verdict] = nft_frontends(unzstd(up + "nftables-" + std::string(size) + "/nft-ruleset.json.zst"));
    std::set<std::string> ipt_all = ipt_fwd, nft_all = nft_fwd;
    ipt_all.insert(ipt_verdict.begin(), ipt_verdict.end());
    nft_all.insert(nft_verdict.begin(), nft_verdict.end());
    ASSERT_EQ(ipt_all, nft_all);  // the oracle: the same frontends in both tools' output
    size_t without = 0;
    for (const auto& k : ipt_all) without += !ipt_fwd.count(k);
    ASSERT_GT(without, 0u);
    auto r = run({dpscope_bin(), "compare", nodes.ipt, nodes.nft, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json report = json::parse(r.out);
    auto cell = [&](const std::string& id, size_t side) { return report_row(report, id)["values"][side]; };
    EXPECT_EQ(cell("services.iptables", 0), ipt_all.size());
    EXPECT_EQ(cell("services.iptables.without_endpoints", 0), without);
    EXPECT_EQ(cell("services.nftables", 1), nft_all.size());
    EXPECT_EQ(cell("services.nftables.without_endpoints", 1), without);
    EXPECT_EQ(cell("services.iptables", 1), 0);
    EXPECT_EQ(cell("services.nftables", 0), 0);
  }
}

// Findings open with every rule of every table and backend, then the same per
// dataplane, for every side (three here), before any per-side sentence.
TEST(KubeProxyNftFindings, TotalRulesFirstThenPerDataplaneForEverySide) {
  WholeNodes nodes("300x5");
  auto r = run({dpscope_bin(), "compare", nodes.ipt, nodes.nft, nodes.ipt, "--label", "a", "--label", "b", "--label",
                "c", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  auto rules = [&](const std::string& id, size_t side) {
    return std::to_string(report_row(report, id)["values"][side].get<uint64_t>());
  };
  // Oracle: the rule lines of the tools' own output.
  const std::string up = source_path(kUp + "real-kube-proxy/");
  size_t ipt_rules = 0;
  {
    std::istringstream in(unzstd(up + "iptables-300x5/iptables-save.txt.zst") + unzstd(up + "iptables-300x5/ip6tables-save.txt.zst"));
    std::string line;
    while (std::getline(in, line)) ipt_rules += line.rfind("-A ", 0) == 0;
  }
  size_t nft_rules = 0;
  const json nft_doc = json::parse(unzstd(up + "nftables-300x5/nft-ruleset.json.zst"));
  for (const auto& item : nft_doc["nftables"]) {
    nft_rules += item.contains("rule");
  }
  EXPECT_EQ(rules("netfilter.rules", 0), std::to_string(ipt_rules));
  EXPECT_EQ(rules("netfilter.rules", 1), std::to_string(nft_rules));
  const auto& f = report["findings"];
  ASSERT_GE(f.size(), 5u) << f.dump(1);
  const long d = static_cast<long>(nft_rules) - static_cast<long>(ipt_rules);
  EXPECT_EQ(f[0], "rules in all tables and backends: " + std::to_string(ipt_rules) + " on a, " +
                      std::to_string(nft_rules) + " on b (" + std::to_string(d) + "), " + std::to_string(ipt_rules) +
                      " on c (0).");
  EXPECT_EQ(f[1], "rules per dataplane: a " + std::to_string(ipt_rules) + " iptables, 0 native nftables; b 0 iptables, " +
                      std::to_string(nft_rules) + " native nftables; c " + std::to_string(ipt_rules) +
                      " iptables, 0 native nftables.");
  // The per-side sentences count the same frontends on both modes.
  const std::string frontends = std::to_string(report_row(report, "services.iptables")["values"][0].get<uint64_t>());
  EXPECT_EQ(f[2].get<std::string>().rfind("a programs " + frontends + " service frontends", 0), 0u) << f[2];
  EXPECT_EQ(f[3].get<std::string>().rfind("b programs " + frontends + " service frontends", 0), 0u) << f[3];
}

TEST(KubeProxyNftCheck, NftablesNodePassesAndIptablesLeftoversFailNamingTheBackend) {
  WholeNodes nodes("300x5");
  auto ok = run({dpscope_bin(), "check", nodes.nft, "--expect", "kube-proxy-nftables", "--format", "json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  const json pass = json::parse(ok.out)["results"][0];
  EXPECT_TRUE(pass["problems"].empty()) << ok.out;
  bool wording = false;
  for (const auto& p : pass["passed"]) {
    const std::string s = p;
    EXPECT_EQ(s.find("only one iptables backend"), std::string::npos) << s;  // none holds rules here
    wording = wording || s.rfind("no iptables backend holds rules (only native nftables: ", 0) == 0;
  }
  EXPECT_TRUE(wording) << ok.out;

  // The nftables node with kube-proxy's iptables-mode chains left in the legacy
  // backend, empty (as after a flush) -- no KUBE-SVC/SEP, no rules: still leftovers.
  TempDir dir;
  write_text(dir.file("legacy.txt"),
             "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-POSTROUTING - [0:0]\n"
             "COMMIT\n*filter\n:INPUT ACCEPT [0:0]\n:KUBE-FIREWALL - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n");
  write_text(dir.file("empty.txt"), "");
  const std::string left = dir.file("left.json");
  ASSERT_EQ(run({dpscope_bin(), "import", "--nft-json", source_path(kUp + "real-kube-proxy/nftables-300x5/nft-ruleset.json.zst"),
                 "--iptables-save", dir.file("empty.txt"), "--iptables-legacy-save", dir.file("legacy.txt"), "-o", left})
                .exit_code,
            0);
  auto bad = run({dpscope_bin(), "check", left, "--expect", "kube-proxy-nftables", "--format", "json"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  const json fail = json::parse(bad.out)["results"][0];
  std::vector<std::string> stale;
  for (const auto& p : fail["problems"]) {
    if (p["id"] == "stale-kube-proxy-chains") stale.push_back(p["message"]);
  }
  ASSERT_EQ(stale.size(), 1u) << bad.out;
  // kube-proxy's three, not kubelet's KUBE-FIREWALL / KUBE-KUBELET-CANARY.
  EXPECT_EQ(stale[0], "iptables-legacy: 3 chains of kube-proxy's iptables mode are left (empty ones included): "
                      "KUBE-MARK-MASQ, KUBE-POSTROUTING, KUBE-SERVICES");
  // The iptables node itself, checked as an nftables node: its leftovers named by backend.
  auto ipt = run({dpscope_bin(), "check", nodes.ipt, "--expect", "kube-proxy-nftables"});
  EXPECT_EQ(ipt.exit_code, 1);
  EXPECT_NE(ipt.out.find("problem [stale-kube-proxy-chains]: iptables-nft: "), std::string::npos) << ipt.out;
  EXPECT_NE(ipt.out.find("problem [kube-proxy-missing]"), std::string::npos) << ipt.out;
}

// The review of the migration itself: kube-proxy v1.30.3's iptables-mode node
// vs its nftables-mode node of the same 300 Services, in every format, against
// tests/golden/compare-kube-proxy-modes.* (JSON as data). Run in the snapshots'
// folder so the report names them by file name. To refresh after an intended change:
//   DPSCOPE_UPDATE_GOLDEN=1 build/tests/dpscope_cli_tests --gtest_filter='KubeProxyModesGolden*'
class KubeProxyModesGolden : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(KubeProxyModesGolden, MatchesGolden) {
  WholeNodes nodes("300x5");
  const auto [format, golden] = GetParam();
  auto r = run({"sh", "-c", "cd '" + nodes.dir.file("") + "' && '" + dpscope_bin() +
                                "' compare ipt.json nft.json --format " + format});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string here = nodes.dir.file("");
  EXPECT_EQ(r.out.find(here.substr(0, here.size() - 1)), std::string::npos);  // no path of this machine
  expect_golden(format, golden, r.out);
}

INSTANTIATE_TEST_SUITE_P(Formats, KubeProxyModesGolden,
                         ::testing::Values(std::pair{"text", "compare-kube-proxy-modes.txt"},
                                           std::pair{"markdown", "compare-kube-proxy-modes.md"},
                                           std::pair{"json", "compare-kube-proxy-modes.json"},
                                           std::pair{"html", "compare-kube-proxy-modes.html"}));

// scale on an nftables-mode node: rules and map elements as functions of
// services (service- chains) and endpoints (endpoint- chains), fitted from the
// node's own composition. At its own size the fit gives back nft's own counts;
// fitted at 300 Services it projects the real 3,000-Service node of the same
// kind of cluster state within 2% (rules) and 5% (map elements).
TEST(KubeProxyNftScale, FittedFromTheNodeAndProjectingTheLargerRun) {
  const std::string up = source_path(kUp + "real-kube-proxy/");
  struct Counted {
    uint64_t rules = 0, elements = 0, service_chains = 0, endpoint_chains = 0;
  };
  auto counted = [&](const std::string& size) {
    Counted c;
    const json doc = json::parse(unzstd(up + "nftables-" + size + "/nft-ruleset.json.zst"));
    static const std::regex service("^service-[A-Z2-7]{8}-.*"), endpoint("^endpoint-[A-Z2-7]{8}-.*");
    for (const auto& item : doc["nftables"]) {
      c.rules += item.contains("rule");
      for (const char* kind : {"set", "map"}) {
        if (item.contains(kind) && item[kind]["table"] == "kube-proxy") c.elements += item[kind].value("elem", json::array()).size();
      }
      if (item.contains("chain")) {
        const std::string name = item["chain"]["name"];
        c.service_chains += std::regex_match(name, service);
        c.endpoint_chains += std::regex_match(name, endpoint);
      }
    }
    return c;
  };
  const Counted small = counted("300x5"), large = counted("3000x8");
  WholeNodes nodes("300x5");
  auto scale = [&](const std::string& file, uint64_t services, uint64_t endpoints) {
    auto r = run({dpscope_bin(), "scale", file, "--services", std::to_string(services), "--endpoints",
                  std::to_string(endpoints), "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["nodes"][0];
  };
  const json own = scale(nodes.nft, small.service_chains, small.endpoint_chains);
  ASSERT_TRUE(own["nftables"]["fitted"]) << own.dump(1);
  EXPECT_EQ(own["nftables"]["now"]["rules"], small.rules);
  EXPECT_EQ(own["nftables"]["now"]["map_elements"], small.elements);
  EXPECT_EQ(own["nftables"]["projection"][0]["rules"], small.rules);
  EXPECT_EQ(own["nftables"]["projection"][0]["map_elements"], small.elements);
  const json big = scale(nodes.nft, large.service_chains, large.endpoint_chains)["nftables"]["projection"][0];
  const double rules = big["rules"].get<double>(), elements = big["map_elements"].get<double>();
  std::printf("fit at 300x5 projected to 3000x8: %.0f rules (real %llu), %.0f map elements (real %llu)\n", rules,
              static_cast<unsigned long long>(large.rules), elements, static_cast<unsigned long long>(large.elements));
  EXPECT_NEAR(rules, static_cast<double>(large.rules), 0.02 * static_cast<double>(large.rules));
  EXPECT_NEAR(elements, static_cast<double>(large.elements), 0.05 * static_cast<double>(large.elements));
  // The iptables-mode node has no nftables fit, and says why.
  const json ipt = scale(nodes.ipt, 100, 500);
  EXPECT_FALSE(ipt["nftables"]["fitted"]);
  EXPECT_NE(ipt["nftables"]["why_not"].get<std::string>().find("not kube-proxy nftables mode"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
