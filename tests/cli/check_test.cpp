// dpscope check: exit codes and problem lists on a clean replacement node, a
// node with kube-proxy leftovers, a mixed-backend node, a double-programmed
// node and an orphan nftables table. The bad nodes are the kind Cilium node
// with one defect added to its snapshot.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

json cilium_node() { return json::parse(read_text(source_path("fixtures/snapshots/kind-cilium-kpr.json"))); }

json chain(const std::string& name, json rules = json::array()) {
  for (size_t i = 0; i < rules.size(); ++i) rules[i]["position"] = i + 1;
  return {{"name", name}, {"rule_count", rules.size()}, {"rules_recorded", true}, {"rules", rules}};
}

json& table(json& snap, const std::string& backend, const std::string& name) {
  for (auto& t : snap["netfilter"]["tables"]) {
    if (t["backend"] == backend && t["name"] == name) return t;
  }
  snap["netfilter"]["tables"].push_back(
      {{"backend", backend}, {"family", "ip"}, {"name", name}, {"chains", json::array()}, {"sets", json::array()}});
  return snap["netfilter"]["tables"].back();
}

struct Outcome {
  int exit_code;
  json result;
};

Outcome check(const json& snap, const std::string& expect) {
  TempDir dir;
  write_text(dir.file("node.json"), snap.dump());
  auto r = run({dpscope_bin(), "check", dir.file("node.json"), "--expect", expect, "--format", "json"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return {r.exit_code, json::parse(r.out)["results"][0]};
}

std::vector<std::string> ids(const json& result) {
  std::vector<std::string> out;
  for (const auto& p : result["problems"]) out.push_back(p["id"]);
  return out;
}

TEST(CheckGate, CleanReplacementNodePasses) {
  auto o = check(cilium_node(), "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_TRUE(o.result["ok"]);
  EXPECT_TRUE(o.result["problems"].empty()) << o.result.dump(2);
  EXPECT_EQ(o.result["detected_mode"], "cilium-kpr");
}

TEST(CheckGate, KubeProxyNodeIsNotKubeProxyFree) {
  auto r = run({dpscope_bin(), "check", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--expect",
                "kube-proxy-free"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
  EXPECT_NE(r.out.find("5 KUBE-SVC chains, 8 KUBE-SEP chains"), std::string::npos) << r.out;
  auto ok = run({dpscope_bin(), "check", source_path("fixtures/snapshots/kind-kube-proxy.json"), "--expect",
                 "kube-proxy-iptables"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST(CheckGate, KubeProxyLeftoversFail) {
  json snap = cilium_node();
  auto& nat = table(snap, "iptables-nft", "nat");
  for (const char* name : {"KUBE-SERVICES", "KUBE-SVC-KDFSL4OQJO7CGXMY", "KUBE-SEP-M6HIKCVIDQCC5X5Y", "KUBE-NODEPORTS"}) {
    nat["chains"].push_back(chain(name));
  }
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(ids(o.result), std::vector<std::string>{"stale-kube-proxy-iptables"}) << o.result.dump(2);
  EXPECT_NE(o.result["problems"][0]["message"].get<std::string>().find("1 KUBE-SVC chain, 1 KUBE-SEP chain"),
            std::string::npos);
}

TEST(CheckGate, EmptyKubeProxyChainsAreLeftoversToo) {
  json snap = cilium_node();
  auto& filter = table(snap, "iptables-nft", "filter");
  filter["chains"].push_back(chain("KUBE-PROXY-FIREWALL"));
  filter["chains"].push_back(chain("KUBE-EXTERNAL-SERVICES"));
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(ids(o.result), std::vector<std::string>{"stale-kube-proxy-chains"});
}

TEST(CheckGate, MixedBackendsFail) {
  json snap = cilium_node();
  auto& legacy = table(snap, "iptables-legacy", "filter");
  json rule = {{"match", json::object()}, {"verdict_kind", "verdict"}, {"target", "ACCEPT"}};
  json input = chain("INPUT", json::array({rule}));
  input["base"] = {{"hook", "input"}, {"type", "filter"}, {"priority", 0}, {"policy", "ACCEPT"}};
  legacy["chains"].push_back(input);
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(ids(o.result), std::vector<std::string>{"mixed-backends"});
  EXPECT_NE(o.result["problems"][0]["message"].get<std::string>().find("41 rules in iptables-nft and 1 rule in "
                                                                       "iptables-legacy"),
            std::string::npos)
      << o.result.dump(2);
}

TEST(CheckGate, DoubleProgrammedServiceFails) {
  json snap = cilium_node();
  auto& nat = table(snap, "iptables-nft", "nat");
  json rule = {{"match", {{"destination", {{"cidr", "10.96.225.41/32"}, {"negated", false}}}, {"protocol", "tcp"},
                          {"dport", "80"}}},
               {"verdict_kind", "jump"},
               {"target", "KUBE-SVC-KDFSL4OQJO7CGXMY"}};
  nat["chains"].push_back(chain("KUBE-SERVICES", json::array({rule})));
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  auto got = ids(o.result);
  EXPECT_NE(std::find(got.begin(), got.end(), "double-programmed"), got.end()) << o.result.dump(2);
  for (const auto& p : o.result["problems"]) {
    if (p["id"] == "double-programmed") {
      EXPECT_NE(p["message"].get<std::string>().find("10.96.225.41"), std::string::npos);
    }
  }
}

TEST(CheckGate, OrphanNftablesTableFails) {
  json snap = cilium_node();
  auto& kp = table(snap, "nftables", "kube-proxy");
  kp["chains"].push_back(chain("services"));
  kp["sets"].push_back({{"name", "service-ips"}, {"is_map", true}, {"element_count", 0}});
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(ids(o.result), std::vector<std::string>{"orphan-kube-proxy-nft-table"});
}

TEST(CheckGate, MissingEbpfSectionCannotPassAReplacementGate) {
  json snap = cilium_node();
  snap.erase("ebpf");
  auto o = check(snap, "kube-proxy-free");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(ids(o.result), std::vector<std::string>{"section-missing"});
  snap["unavailable"] = json::array({{{"section", "ebpf"}, {"reason", "EPERM"}, {"errno", 1}, {"hint", "root"}}});
  auto u = check(snap, "kube-proxy-free");
  EXPECT_EQ(ids(u.result), std::vector<std::string>{"section-unavailable"});
}

TEST(CheckGate, BadUsageExitsTwo) {
  auto r = run({dpscope_bin(), "check", source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--expect", "ipvs"});
  EXPECT_EQ(r.exit_code, 2);
  auto m = run({dpscope_bin(), "check", "/nonexistent.json", "--expect", "kube-proxy-free"});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find("/nonexistent.json"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
