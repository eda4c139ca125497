// A real kube-proxy v1.30.3 nftables node (fixtures/upstream/real-kube-proxy/
// nftables-*, SOURCES.md), loaded into a dps-* namespace as kube-proxy left it
// (load-nft.sh): the default snapshot is the whole ruleset -- every rule's
// text equal to `nft list ruleset`, the numgen endpoint picks' anonymous
// vmaps included -- and verify reads a Service's endpoints from the chains its
// vmap reaches: they equal kube-proxy's own objects (the Services and
// EndpointSlices it was fed), and an endpoint chain no vmap reaches (added
// here) is found as stale. `--light` leaves those elements out and says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "tests/integration/netfilter_support.h"
#include "tests/support/kube_proxy_nft.h"
#include "tests/support/nft_text.h"

namespace dpscope::test {
namespace {

using model::Backend;
using nlohmann::json;

const std::string kUp = "fixtures/upstream/real-kube-proxy/";

json verify_json(const std::string& intent, const std::string& snapshot, int want_exit) {
  const RunResult r = run({dpscope_bin(), "verify", intent, snapshot, "--node", "dpskp-node", "--format", "json"});
  EXPECT_EQ(r.exit_code, want_exit) << r.err << r.out.substr(0, 3000);
  return json::parse(r.out);
}

std::multiset<std::string> finding_ids(const json& report) {
  std::multiset<std::string> out;
  for (const auto& n : report["nodes"]) {
    for (const auto& f : n["findings"]) out.insert(f["id"].get<std::string>());
  }
  return out;
}

class KubeProxyNftComplete : public ::testing::TestWithParam<std::pair<const char*, int>> {};

TEST_P(KubeProxyNftComplete, DefaultSnapshotIsTheWholeRulesetAndVmapsGiveTheEndpoints) {
  DPS_REQUIRE_ROOT();
  const auto [size, services] = GetParam();
  const std::string intent = source_path(kUp + "iptables-" + size + "/kubectl-get-services-endpointslices.json.zst");
  Netns ns("kpnft");
  TempDir dir;
  load_kube_proxy_nft(ns, kUp + "nftables-" + size + "/nft-ruleset.txt.zst");

  // Every rule's text, by default, is nft's line; the numgen picks included.
  const model::Snapshot live = nf::live_snapshot(ns, dir);
  const std::string live_file = dir.file("default.json");
  ASSERT_EQ(std::rename(dir.file("live.json").c_str(), live_file.c_str()), 0);
  EXPECT_FALSE(live.netfilter.collection.nft_light);
  EXPECT_TRUE(live.netfilter.collection.nft_left_out.empty());
  const std::string listing = ns.sh("nft list ruleset");
  const NftTextRules text = nft_text_rules(listing);
  size_t rules = 0, exact = 0, picks = 0, reported = 0;
  for (const auto& t : live.netfilter.tables) {
    ASSERT_EQ(t.backend, Backend::Nftables);
    for (const auto& s : t.sets) {
      EXPECT_TRUE(s.elements_unread.empty()) << s.name << ": " << s.elements_unread;
      EXPECT_TRUE(s.elements_undecoded.empty()) << s.name << ": " << s.elements_undecoded;
      EXPECT_TRUE(s.elements_recorded) << s.name;
    }
    for (const auto& c : t.chains) {
      const auto& lines = text.chains.at({t.family, t.name, c.name});
      ASSERT_EQ(lines.size(), c.rules.size()) << c.name;
      for (size_t i = 0; i < c.rules.size(); ++i) {
        ++rules;
        const model::Rule& r = c.rules[i];
        if (r.text.rfind("numgen random mod ", 0) == 0 && r.text.find(" vmap { 0 : goto endpoint-") != std::string::npos) {
          ++picks;
        }
        if (r.text == lines[i]) {
          ++exact;
        } else if (reported++ < 10) {
          ADD_FAILURE() << c.name << " #" << i + 1 << "\n nft:  " << lines[i] << "\n live: " << r.text << " " << r.raw;
        }
      }
    }
  }
  size_t listed_picks = 0;
  for (size_t at = listing.find("numgen random mod "); at != std::string::npos; at = listing.find("numgen random mod ", at + 1)) {
    ++listed_picks;
  }
  std::printf("%s: %zu rules, %zu with nft's text, %zu numgen endpoint picks with their vmap (nft lists %zu)\n", size,
              rules, exact, picks, listed_picks);
  EXPECT_EQ(exact, rules);
  EXPECT_GT(picks, 0u);
  EXPECT_EQ(picks, listed_picks);

  // Per frontend, the endpoints the vmaps reach are kube-proxy's own objects.
  const json ok = verify_json(intent, live_file, 0);
  EXPECT_TRUE(ok["nodes"][0]["findings"].empty()) << ok["nodes"][0]["findings"].dump().substr(0, 3000);
  ASSERT_EQ(ok["nodes"][0]["dataplanes"].size(), 1u);
  const json& plane = ok["nodes"][0]["dataplanes"][0];
  EXPECT_EQ(plane["dataplane"], "nftables");
  EXPECT_EQ(plane["services_ok"], services);
  EXPECT_EQ(plane["frontends_ok"], plane["frontends_expected"]);
  EXPECT_GT(plane["endpoints_checked"].get<uint64_t>(), static_cast<uint64_t>(services));

  // An endpoint chain of an existing service port, named as kube-proxy names
  // them and holding its rules, that no vmap reaches: stale, and only that.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(listing, m, std::regex("chain service-[A-Z2-7]{8}-(ns-[0-9]+/svc-[0-9]+/tcp/[^ ]*) \\{")));
  const std::string port_name = m[1];
  const std::string stale = "endpoint-ZZZZ2222-" + port_name + "__10.244.250.9/8080";
  ns.sh("nft add chain ip kube-proxy '" + stale + "' && nft add rule ip kube-proxy '" + stale +
        "' ip saddr 10.244.250.9 jump mark-for-masquerade && nft add rule ip kube-proxy '" + stale +
        "' meta l4proto tcp dnat to 10.244.250.9:8080");
  nf::live_snapshot(ns, dir);
  const json found = verify_json(intent, dir.file("live.json"), 1);
  EXPECT_EQ(finding_ids(found), (std::multiset<std::string>{"stale-endpoint-chain"})) << found["nodes"][0]["findings"].dump();
  const json& f = found["nodes"][0]["findings"][0];
  EXPECT_EQ(f["endpoint"], "10.244.250.9:8080");
  EXPECT_NE(f["where"].get<std::string>().find(stale), std::string::npos) << f.dump();
  ns.sh("nft flush chain ip kube-proxy '" + stale + "' && nft delete chain ip kube-proxy '" + stale + "'");

  // --light: the anonymous vmaps and dynamic sets are left out, and said so
  // in the snapshot and in the reports.
  const model::Snapshot light = nf::live_snapshot(ns, dir, {"--light"});
  EXPECT_TRUE(light.netfilter.collection.nft_light);
  ASSERT_EQ(light.netfilter.collection.nft_left_out.size(), 2u);
  size_t dynamic = 0;
  for (const auto& t : live.netfilter.tables) {
    for (const auto& s : t.sets) dynamic += s.declaration && std::count(s.declaration->flags.begin(), s.declaration->flags.end(), "dynamic");
  }
  EXPECT_EQ(light.netfilter.collection.nft_left_out[0],
            "the elements of " + std::to_string(picks) + " anonymous sets and maps: " + std::to_string(picks) +
                " rules over them have no text (kube-proxy's numgen endpoint picks: which endpoint chains they reach "
                "is not known)");
  EXPECT_EQ(light.netfilter.collection.nft_left_out[1],
            "the elements of " + std::to_string(dynamic) +
                " dynamic sets (runtime state the packet path adds, such as kube-proxy's affinity-*): no element count");
  const RunResult where = run({dpscope_bin(), "where", "10.244.250.9", dir.file("live.json"), "--width", "0"});
  EXPECT_NE(where.out.find("left out by snapshot --light: the elements of " + std::to_string(picks)), std::string::npos)
      << where.out << where.err;
  const RunResult compare = run({dpscope_bin(), "compare", live_file, dir.file("live.json"), "--format", "json"});
  EXPECT_NE(compare.out.find("left out by snapshot --light"), std::string::npos) << compare.err;
  // Without the vmaps verify still finds every Service, by the endpoint chains' names.
  const json by_names = verify_json(intent, dir.file("live.json"), 0);
  EXPECT_EQ(by_names["nodes"][0]["dataplanes"][0]["services_ok"], services);
}

// 3000x8 loads in ~25 s as kube-proxy left it (~63 s and ~12 GB of kernel
// memory pre-sized): kept, it is the node of the speed goals (BENCHMARKS.md).
INSTANTIATE_TEST_SUITE_P(RealKubeProxy, KubeProxyNftComplete,
                         ::testing::Values(std::pair<const char*, int>{"300x5", 300},
                                           std::pair<const char*, int>{"3000x8", 3000}),
                         [](const auto& info) { return std::string("S") + (info.index == 0 ? "300x5" : "3000x8"); });

// The pre-sized state: a node restored from `nft list ruleset` as printed
// (its affinity sets loaded with `size 65535`, each hash table allocated for
// that many) is, to nft and to the snapshot, the same ruleset as the state
// kube-proxy left (sets without a size until their rule binds them), which
// load-nft.sh gives. kube-proxy's golden listing: one such set.
TEST(KubeProxyNftPreSized, ListedAsPrintedAndAsKubeProxyLeftItIsOneState) {
  DPS_REQUIRE_ROOT();
  const std::string file = "fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.nft";
  const std::string printed = read_text(source_path(file));
  ASSERT_NE(printed.find("\t\tsize 65535\n"), std::string::npos);
  Netns presized("kpnft-sized"), left("kpnft-left");
  TempDir a, b;
  presized.sh("nft -f '" + source_path(file) + "'");
  load_kube_proxy_nft(left, file);
  EXPECT_EQ(presized.sh("nft list ruleset"), printed);
  EXPECT_EQ(left.sh("nft list ruleset"), printed);
  model::Snapshot x = nf::live_snapshot(presized, a), y = nf::live_snapshot(left, b);
  const model::Table* t = model::find_table(x, Backend::Nftables, "ip", "kube-proxy");
  ASSERT_TRUE(t);
  size_t sized = 0;
  for (const auto& s : t->sets) sized += s.declaration && s.declaration->size == 65535;
  EXPECT_EQ(sized, 1u);
  x.netfilter.collection.nft_generation.reset();
  y.netfilter.collection.nft_generation.reset();
  EXPECT_EQ(x.netfilter, y.netfilter);
}

}  // namespace
}  // namespace dpscope::test
