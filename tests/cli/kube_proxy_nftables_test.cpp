// kube-proxy's nftables mode counted as kube-proxy names its objects: the
// per-Service chains PREFIX-HASH8-ns/name/proto/port (service-, local-,
// external-, endpoint-, firewall-) and its shared helper chains, on kube-proxy's
// own goldens and on the real kube-proxy v1.30.3 runs (fixtures/upstream/SOURCES.md).
// The oracle is `nft list ruleset` of the same state (the *.nft / nft-ruleset.txt
// files), read here line by line; for the real runs also the iptables-mode node
// of the same cluster state, whose KUBE-SVC/SVL/EXT/SEP chains are the same
// objects under their iptables names.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

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

}  // namespace
}  // namespace dpscope::test
