// The other dataplanes' upstream dumps (fixtures/upstream/dataplanes/, sources in
// SOURCES.md) imported with the real binary: mode, evidence, chain families of
// native nftables tables and the `check` verdict of every expectation that
// applies. Each import holds every netfilter part (an empty iptables-legacy-save
// and an empty nft ruleset stand for the parts the dump does not have), so a
// gate can conclude.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::string kDir = "fixtures/upstream/dataplanes/";
const std::string kEmptyRuleset = R"({"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}]})";

// Imports `inputs` plus empty stand-ins for the netfilter parts not given.
std::string import_node(TempDir& dir, std::vector<std::string> inputs) {
  auto has = [&](const std::string& opt) { return std::find(inputs.begin(), inputs.end(), opt) != inputs.end(); };
  if (!has("--iptables-legacy-save")) {
    write_text(dir.file("empty-legacy.txt"), "");
    inputs.insert(inputs.end(), {"--iptables-legacy-save", dir.file("empty-legacy.txt")});
  }
  if (!has("--nft-json")) {
    write_text(dir.file("empty.json"), kEmptyRuleset);
    inputs.insert(inputs.end(), {"--nft-json", dir.file("empty.json")});
  }
  std::vector<std::string> argv{dpscope_bin(), "import"};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  argv.insert(argv.end(), {"-o", dir.file("node.json")});
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir.file("node.json");
}

struct Verdict {
  int exit_code;
  json result;
  std::vector<std::string> problems;
};

Verdict check(const std::string& snap, const std::string& expect) {
  auto r = run({dpscope_bin(), "check", snap, "--expect", expect, "--format", "json"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  Verdict v{r.exit_code, json::parse(r.out)["results"][0], {}};
  for (const auto& p : v.result["problems"]) v.problems.push_back(p["id"]);
  return v;
}

json compare_json(const std::string& snap) {
  auto r = run({dpscope_bin(), "compare", snap, snap, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// The value of a compare row on the first side ("" when the row is absent).
std::string row_value(const json& cmp, const std::string& id) {
  for (const auto& row : cmp["rows"]) {
    if (row["id"] == id) return row["values"][0].dump();
  }
  return "";
}

std::string evidence(const json& cmp) {
  std::string out;
  for (const auto& e : cmp["sides"][0]["evidence"]) out += e.get<std::string>() + "\n";
  return out;
}

TEST(Dataplanes, CalicoNftablesNodeShowsCalico) {
  TempDir dir;
  const auto snap = import_node(dir, {"--nft-json", source_path(kDir + "calico-nftables-fv-dump.listed-ruleset.json")});
  const auto cmp = compare_json(snap);
  // Chain families count native nftables tables: the 40 chains of ip calico (SOURCES.md).
  EXPECT_EQ(row_value(cmp, "netfilter.family.nft-calico.chains"), "40") << cmp["rows"].dump();
  EXPECT_EQ(row_value(cmp, "netfilter.family.nft-calico.rules"), "62");
  const auto ev = evidence(cmp);
  EXPECT_NE(ev.find("Calico nftables dataplane: nftables table ip calico with 40 chains"), std::string::npos) << ev;
  auto ok = check(snap, "calico-nftables");
  EXPECT_EQ(ok.exit_code, 0) << ok.result.dump(2);
  // Calico's nftables dataplane serves no Services: no kube-proxy here, nothing replaces it.
  auto ipt = check(snap, "kube-proxy-iptables");
  EXPECT_EQ(ipt.problems, std::vector<std::string>{"kube-proxy-missing"});
  auto ebpf = check(snap, "calico-ebpf");
  EXPECT_EQ(ebpf.exit_code, 1);
}

TEST(Dataplanes, AntreaNodeSaysItsServicesAreInOvs) {
  TempDir dir;
  const auto snap = import_node(dir, {"--iptables-save", source_path(kDir + "antrea-route-linux-test-ipv4.saved-nft.txt")});
  const auto cmp = compare_json(snap);
  EXPECT_EQ(cmp["sides"][0]["mode"], "antrea-proxy");
  const std::string label = cmp["sides"][0]["mode_label"];
  EXPECT_NE(label.find("services handled by AntreaProxy in OVS; not visible here"), std::string::npos) << label;
  EXPECT_EQ(label.find("no service dataplane"), std::string::npos) << label;
  // 15 ANTREA-* chain declarations in the dump (SOURCES.md).
  EXPECT_EQ(row_value(cmp, "netfilter.family.ANTREA.chains"), "15");
  auto v = check(snap, "antrea-proxy");
  EXPECT_EQ(v.exit_code, 0) << v.result.dump(2);
  // A kube-proxy-free gate cannot conclude on Services it cannot see, and says why.
  auto free = check(snap, "kube-proxy-free");
  EXPECT_EQ(free.exit_code, 1);
  EXPECT_NE(std::find(free.problems.begin(), free.problems.end(), "replacement-not-visible"), free.problems.end())
      << free.result.dump(2);
  auto ovn = check(snap, "ovn-kubernetes");
  EXPECT_EQ(ovn.problems, std::vector<std::string>{"ovn-kubernetes-missing"});
}

TEST(Dataplanes, OvnKubernetesNodeSaysItsServicesAreOvnLoadBalancers) {
  TempDir dir;
  const auto snap =
      import_node(dir, {"--nft-json", source_path(kDir + "ovn-kubernetes-gateway-init-base.listed-ruleset.json")});
  const auto cmp = compare_json(snap);
  EXPECT_EQ(cmp["sides"][0]["mode"], "ovn-kubernetes");
  const auto ev = evidence(cmp);
  EXPECT_NE(ev.find("OVN-Kubernetes: nftables table inet ovn-kubernetes with 1 chain"), std::string::npos) << ev;
  EXPECT_NE(ev.find("services handled by OVN load balancers in OVS; not visible here"), std::string::npos) << ev;
  EXPECT_EQ(row_value(cmp, "netfilter.family.nft-ovn-kubernetes.chains"), "1");
  EXPECT_EQ(check(snap, "ovn-kubernetes").exit_code, 0);
  EXPECT_EQ(check(snap, "antrea-proxy").problems, std::vector<std::string>{"antrea-missing"});
}

TEST(Dataplanes, KubeProxyNodesKeepTheirVerdicts) {
  // The existing modes are unchanged by the new fingerprints.
  auto kp = check(source_path("fixtures/snapshots/kind-kube-proxy.json"), "kube-proxy-iptables");
  EXPECT_EQ(kp.exit_code, 0) << kp.result.dump(2);
  EXPECT_EQ(kp.result["detected_mode"], "kube-proxy-iptables");
  auto cil = check(source_path("fixtures/snapshots/kind-cilium-kpr.json"), "cilium");
  EXPECT_EQ(cil.exit_code, 0) << cil.result.dump(2);
  auto not_calico = check(source_path("fixtures/snapshots/kind-cilium-kpr.json"), "calico-ebpf");
  EXPECT_EQ(not_calico.problems, std::vector<std::string>{"calico-ebpf-missing"});
  auto not_ipvs = check(source_path("fixtures/snapshots/kind-kube-proxy.json"), "kube-proxy-ipvs");
  EXPECT_EQ(not_ipvs.exit_code, 1);
  EXPECT_NE(std::find(not_ipvs.problems.begin(), not_ipvs.problems.end(), "kube-proxy-missing"), not_ipvs.problems.end());
  EXPECT_NE(std::find(not_ipvs.problems.begin(), not_ipvs.problems.end(), "stale-kube-proxy-iptables"),
            not_ipvs.problems.end());
}

}  // namespace
}  // namespace dpscope::test
