// dpscope verify: kube-proxy's own test objects against the rules kube-proxy
// generated from them (upstream goldens, loaded and saved by the real tools),
// and a real kube-proxy v1.30.3's output with the objects it was fed. A clean
// pair must give no finding; each mutation of the intent exactly its findings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>

#include "tests/support/process.h"
#include "tests/support/verify_findings.h"
#include "tests/support/report.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const char* kOverallIntent = "fixtures/upstream/kube-proxy-intent/overall-rules.intent.json";

// Imports a dataplane dump into a snapshot named `node`.
std::string import(const TempDir& dir, const std::string& name, const std::vector<std::string>& inputs,
                   const std::string& node) {
  std::vector<std::string> argv = {dpscope_bin(), "import"};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  std::string out = dir.file(name);
  argv.insert(argv.end(), {"--node", node, "-o", out});
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

struct Verified {
  int exit_code = -1;
  json report;
  std::string err;
};

Verified verify(const std::string& intent, const std::vector<std::string>& nodes) {
  std::vector<std::string> argv = {dpscope_bin(), "verify", intent};
  argv.insert(argv.end(), nodes.begin(), nodes.end());
  argv.insert(argv.end(), {"--format", "json"});
  auto r = run(argv);
  Verified v;
  v.exit_code = r.exit_code;
  v.err = r.err;
  if (!r.out.empty()) v.report = json::parse(r.out);
  return v;
}

json load(const std::string& rel) { return json::parse(read_text(source_path(rel))); }

json& item(json& list, const std::string& kind, const std::string& ns, const std::string& name) {
  for (auto& i : list["items"]) {
    if (i["kind"] == kind && i["metadata"]["namespace"] == ns && i["metadata"]["name"] == name) return i;
  }
  throw std::runtime_error("no " + kind + " " + ns + "/" + name);
}

void remove_item(json& list, const std::string& kind, const std::string& ns, const std::string& name) {
  auto& items = list["items"];
  for (auto it = items.begin(); it != items.end(); ++it) {
    if ((*it)["kind"] == kind && (*it)["metadata"]["namespace"] == ns && (*it)["metadata"]["name"] == name) {
      items.erase(it);
      return;
    }
  }
  throw std::runtime_error("no " + kind + " " + ns + "/" + name);
}

class KubeProxyOverall : public ::testing::Test {
 protected:
  void SetUp() override {
    // kube-proxy's fake proxier is node "test-node" (proxier_test.go testNodeName).
    iptables_nft = import(dir, "ipt-nft.json",
                          {"--iptables-save", source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt")},
                          "test-node");
    iptables_legacy = import(dir, "ipt-legacy.json",
                             {"--backend", "legacy", "--iptables-save",
                              source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-legacy.txt")},
                             "test-node");
    nftables = import(dir, "nft.json",
                      {"--nft-json", source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.json")},
                      "test-node");
  }
  // Both modes of the same objects; dataplane names carry the mode.
  std::multiset<std::string> mutated(const json& intent, int expect_exit = 1) {
    std::string path = dir.file("intent-" + std::to_string(n++) + ".json");
    write_text(path, intent.dump());
    auto v = verify(path, {iptables_nft, nftables});
    EXPECT_EQ(v.exit_code, expect_exit) << v.err;
    return verify_finding_keys(v.report);
  }
  TempDir dir;
  std::string iptables_nft, iptables_legacy, nftables;
  int n = 0;
};

TEST_F(KubeProxyOverall, GoldenRulesetsMatchTheirObjects) {
  for (const auto& node : {iptables_nft, iptables_legacy, nftables}) {
    auto v = verify(source_path(kOverallIntent), {node});
    EXPECT_EQ(v.exit_code, 0) << node << "\n" << dump_keys(verify_finding_keys(v.report)) << v.err;
    EXPECT_EQ(v.report["ok"], true);
    const auto& planes = v.report["nodes"][0]["dataplanes"];
    ASSERT_EQ(planes.size(), 1u);
    // 6 Services: 6 ClusterIPs, 3 external IPs / LB IPs of svc2 and svc4, LB of svc5, 3 node ports.
    EXPECT_EQ(planes[0]["frontends_expected"], 13);
    EXPECT_EQ(planes[0]["frontends_ok"], 13);
    EXPECT_EQ(planes[0]["services_ok"], 6);
  }
}

TEST_F(KubeProxyOverall, EndpointDroppedFromTheSliceIsAnExtraEndpoint) {
  json intent = load(kOverallIntent);
  auto& eps = item(intent, "EndpointSlice", "ns4", "svc4-1")["endpoints"];
  eps.erase(eps.begin());  // 10.180.0.4
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 // iptables: the ClusterIP and the external IP each forward to it.
                                 "extra-endpoint iptables-nft ns4/svc4:p80 172.30.0.44:80/tcp ClusterIP 10.180.0.4:80",
                                 "extra-endpoint iptables-nft ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                                 // nftables: the frontends' vmaps pick it, the same two.
                                 "extra-endpoint nftables ns4/svc4:p80 172.30.0.44:80/tcp ClusterIP 10.180.0.4:80",
                                 "extra-endpoint nftables ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                             }));
}

TEST_F(KubeProxyOverall, EndpointAddedToTheSliceIsMissing) {
  json intent = load(kOverallIntent);
  item(intent, "EndpointSlice", "ns1", "svc1-1")["endpoints"].push_back({{"addresses", {"10.180.0.9"}}});
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "missing-endpoint iptables-nft ns1/svc1:p80 172.30.0.41:80/tcp ClusterIP 10.180.0.9:80",
                                 "missing-endpoint nftables ns1/svc1:p80 172.30.0.41:80/tcp ClusterIP 10.180.0.9:80",
                             }));
}

TEST_F(KubeProxyOverall, NotReadyEndpointProgrammedIsStale) {
  json intent = load(kOverallIntent);
  item(intent, "EndpointSlice", "ns4", "svc4-1")["endpoints"][0]["conditions"] = {{"ready", false}};
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "stale-endpoint iptables-nft ns4/svc4:p80 172.30.0.44:80/tcp ClusterIP 10.180.0.4:80",
                                 "stale-endpoint iptables-nft ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                                 "stale-endpoint nftables ns4/svc4:p80 172.30.0.44:80/tcp ClusterIP 10.180.0.4:80",
                                 "stale-endpoint nftables ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                             }));
}

TEST_F(KubeProxyOverall, DeletedServiceIsStale) {
  json intent = load(kOverallIntent);
  remove_item(intent, "Service", "ns3", "svc3");
  remove_item(intent, "EndpointSlice", "ns3", "svc3-1");
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "stale-service iptables-nft ns3/svc3:p80 172.30.0.43:80/tcp ClusterIP",
                                 "stale-service iptables-nft ns3/svc3:p80 :3003/tcp NodePort",
                                 "stale-service nftables ns3/svc3:p80 172.30.0.43:80/tcp ClusterIP",
                                 "stale-service nftables ns3/svc3:p80 :3003/tcp NodePort",
                             }));
}

TEST_F(KubeProxyOverall, ChangedPortIsAWrongPort) {
  json intent = load(kOverallIntent);
  item(intent, "Service", "ns1", "svc1")["spec"]["ports"][0]["port"] = 8080;
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "wrong-port iptables-nft ns1/svc1:p80 172.30.0.41:8080/tcp ClusterIP",
                                 "wrong-port nftables ns1/svc1:p80 172.30.0.41:8080/tcp ClusterIP",
                             }));
}

TEST_F(KubeProxyOverall, ChangedProtocolIsAWrongProtocol) {
  json intent = load(kOverallIntent);
  item(intent, "Service", "ns1", "svc1")["spec"]["ports"][0]["protocol"] = "UDP";
  item(intent, "EndpointSlice", "ns1", "svc1-1")["ports"][0]["protocol"] = "UDP";
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "wrong-protocol iptables-nft ns1/svc1:p80 172.30.0.41:80/udp ClusterIP",
                                 "wrong-protocol nftables ns1/svc1:p80 172.30.0.41:80/udp ClusterIP",
                             }));
}

TEST_F(KubeProxyOverall, ExternalTrafficPolicyFlipped) {
  // svc5 Cluster -> Local: its only endpoint is on another node, so outside
  // traffic to the LB IP and the node port must be dropped; the node forwards.
  json intent = load(kOverallIntent);
  item(intent, "Service", "ns5", "svc5")["spec"]["externalTrafficPolicy"] = "Local";
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "wrong-action iptables-nft ns5/svc5:p80 5.6.7.8:80/tcp LoadBalancer",
                                 "wrong-action iptables-nft ns5/svc5:p80 :3002/tcp NodePort",
                                 "wrong-action nftables ns5/svc5:p80 5.6.7.8:80/tcp LoadBalancer",
                                 "wrong-action nftables ns5/svc5:p80 :3002/tcp NodePort",
                             }));
  // svc4 Cluster -> Local with its endpoint 10.180.0.5 on this node: forwards
  // through the cluster chain where the local one is expected; 10.180.0.4 is
  // another node's.
  intent = load(kOverallIntent);
  item(intent, "Service", "ns4", "svc4")["spec"]["externalTrafficPolicy"] = "Local";
  EXPECT_EQ(mutated(intent), (std::multiset<std::string>{
                                 "wrong-policy iptables-nft ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP",
                                 "stale-endpoint iptables-nft ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                                 "wrong-policy nftables ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP",
                                 // nftables too: the cluster chain's vmap picks it for that frontend.
                                 "stale-endpoint nftables ns4/svc4:p80 192.168.99.33:80/tcp ExternalIP 10.180.0.4:80",
                             }));
}

TEST(VerifyBadInput, NamesTheJsonPointer) {
  TempDir dir;
  json intent = load(kOverallIntent);
  intent["items"][3]["spec"]["ports"][0]["port"] = "eighty";
  write_text(dir.file("bad.json"), intent.dump());
  auto r = run({dpscope_bin(), "verify", dir.file("bad.json"), source_path("fixtures/snapshots/kind-kube-proxy.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.json: /items/3/spec/ports/0/port: expected a port number"), std::string::npos) << r.err;
  write_text(dir.file("trunc.json"), read_text(source_path(kOverallIntent)).substr(0, 500));
  r = run({dpscope_bin(), "verify", dir.file("trunc.json"), source_path("fixtures/snapshots/kind-kube-proxy.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("invalid JSON"), std::string::npos) << r.err;
  r = run({dpscope_bin(), "verify", source_path(kOverallIntent)});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(KubeProxyOverall, SeparateFilesSingleObjectsAndCompression) {
  // kubectl get services -A -o json > a; each slice as its own object file; one gzipped, one zstd.
  json intent = load(kOverallIntent);
  json services = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
  std::vector<std::string> files = {dir.file("services.json")};
  int k = 0;
  for (const auto& i : intent["items"]) {
    if (i["kind"] == "Service") {
      services["items"].push_back(i);
      continue;
    }
    std::string f = dir.file("slice" + std::to_string(k++) + ".json");
    write_text(f, i.dump());
    if (k == 1) {
      ASSERT_EQ(run({"gzip", f}).exit_code, 0);
      f += ".gz";
    } else if (k == 2) {
      ASSERT_EQ(run({"zstd", "-q", "--rm", f}).exit_code, 0);
      f += ".zst";
    }
    files.push_back(f);
  }
  write_text(files[0], services.dump());
  std::vector<std::string> argv = {dpscope_bin(), "verify", "--intent"};
  argv.insert(argv.end(), files.begin(), files.end());
  argv.insert(argv.end(), {"--", iptables_nft, nftables});
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("6 of 6 Services fully programmed on every node"), std::string::npos) << r.out;
}

TEST_F(KubeProxyOverall, FormatsCarryTheSameFindings) {
  json intent = load(kOverallIntent);
  remove_item(intent, "Service", "ns3", "svc3");
  // A name from the cluster is untrusted text in every format.
  item(intent, "Service", "ns1", "svc1")["spec"]["ports"][0]["name"] = "<b>|x";
  write_text(dir.file("m.json"), intent.dump());
  auto j = verify(dir.file("m.json"), {iptables_nft});
  ASSERT_EQ(j.exit_code, 1) << j.err;
  const size_t n = j.report["summary"]["findings"];
  // svc3: 2 stale frontends; svc1's port "<b>|x" has no slice port of its name: reject expected, forwards.
  EXPECT_EQ(verify_finding_keys(j.report), (std::multiset<std::string>{
                                    "stale-service iptables-nft ns3/svc3:p80 172.30.0.43:80/tcp ClusterIP",
                                    "stale-service iptables-nft ns3/svc3:p80 :3003/tcp NodePort",
                                    "wrong-action iptables-nft ns1/svc1:<b>|x 172.30.0.41:80/tcp ClusterIP",
                                }));
  auto fmt = [&](const std::string& f) {
    auto r = run({dpscope_bin(), "verify", dir.file("m.json"), iptables_nft, "--format", f});
    EXPECT_EQ(r.exit_code, 1) << f << r.err;
    return r.out;
  };
  std::string csv = fmt("csv"), md = fmt("markdown"), html = fmt("html"), text = fmt("text");
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), n + 1);
  EXPECT_EQ(html.find("<b>|x"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;|x"), std::string::npos);
  EXPECT_EQ(md.find("<b>|x"), std::string::npos);
  size_t rows = 0;
  for (size_t p = 0; (p = md.find("\n| ", p)) != std::string::npos; ++p) ++rows;
  EXPECT_EQ(rows, n + 1);  // header + one row per finding
  EXPECT_NE(text.find("MISMATCH"), std::string::npos);
}

// compare --intent: each side's verify summary as rows, in every format; the
// counts are those `verify` reports for the same pair.
TEST_F(KubeProxyOverall, CompareWithIntentAddsEachSidesVerifySummary) {
  json intent = load(kOverallIntent);
  remove_item(intent, "Service", "ns3", "svc3");  // 2 stale frontends on every node
  auto& eps = item(intent, "EndpointSlice", "ns4", "svc4-1")["endpoints"];
  eps.erase(eps.begin());  // 10.180.0.4: an extra endpoint
  write_text(dir.file("m.json"), intent.dump());
  auto compare = [&](const std::string& intent_file, const std::string& format) {
    return run({dpscope_bin(), "compare", iptables_nft, nftables, "--intent", intent_file, "--format", format});
  };
  auto clean = compare(source_path(kOverallIntent), "json");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  const json c = json::parse(clean.out);
  for (size_t side = 0; side < 2; ++side) {
    EXPECT_EQ(report_row(c, "intent.services")["values"][side], 6) << side;
    EXPECT_EQ(report_row(c, "intent.services_ok")["values"][side], 6) << side;
    EXPECT_EQ(report_row(c, "intent.findings")["values"][side], 0) << side;
  }
  auto r = compare(dir.file("m.json"), "json");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // compare reports, it does not gate
  const json m = json::parse(r.out);
  const std::vector<std::string> sides = {iptables_nft, nftables};
  for (size_t side = 0; side < 2; ++side) {
    auto v = verify(dir.file("m.json"), {sides[side]});
    ASSERT_EQ(v.exit_code, 1) << v.err;
    const json& by_id = v.report["summary"]["findings_by_id"];
    auto count = [&](std::initializer_list<const char*> ids) {
      uint64_t n = 0;
      for (const char* id : ids) n += by_id.contains(id) ? by_id[id].get<uint64_t>() : 0;
      return n;
    };
    EXPECT_EQ(report_row(m, "intent.services")["values"][side], 5) << side;
    EXPECT_EQ(report_row(m, "intent.services_ok")["values"][side], v.report["nodes"][0]["dataplanes"][0]["services_ok"]) << side;
    EXPECT_EQ(report_row(m, "intent.services_ok")["values"][side], 4) << side;  // svc4 has the extra endpoint
    EXPECT_EQ(report_row(m, "intent.stale_services")["values"][side], count({"stale-service"})) << side;
    EXPECT_EQ(report_row(m, "intent.stale_services")["values"][side], 2) << side;
    EXPECT_EQ(report_row(m, "intent.endpoint_findings")["values"][side],
              count({"missing-endpoint", "extra-endpoint", "stale-endpoint", "endpoint-count"})) << side;
    EXPECT_GE(report_row(m, "intent.endpoint_findings")["values"][side].get<uint64_t>(), 1u) << side;
    EXPECT_EQ(report_row(m, "intent.missing_frontends")["values"][side], 0) << side;
    EXPECT_EQ(report_row(m, "intent.findings")["values"][side], v.report["summary"]["findings"]) << side;
    EXPECT_EQ(report_row(m, "intent.nodes_ok")["values"][side], 0) << side;
  }
  // Every format carries the section.
  for (const std::string f : {"text", "markdown", "csv", "html"}) {
    auto out = compare(dir.file("m.json"), f);
    ASSERT_EQ(out.exit_code, 0) << f << out.err;
    EXPECT_NE(out.out.find("Services programmed but not in the cluster"), std::string::npos) << f << out.out;
    if (f == "csv") EXPECT_NE(out.out.find("intent.stale_services"), std::string::npos) << out.out;
  }
  // A cluster folder side: its nodes summed.
  const std::string folder = dir.file("cluster");
  ASSERT_EQ(run({"mkdir", folder}).exit_code, 0);
  ASSERT_EQ(run({"cp", iptables_nft, iptables_legacy, folder}).exit_code, 0);
  auto cl = run({dpscope_bin(), "compare", folder, "--intent", dir.file("m.json"), "--format", "json"});
  ASSERT_EQ(cl.exit_code, 0) << cl.err;
  const json cj = json::parse(cl.out);
  EXPECT_EQ(report_row(cj, "intent.stale_services")["values"][0], 4);  // 2 per node
  EXPECT_EQ(report_row(cj, "intent.services_ok")["values"][0], 4);
  // A bad intent is bad input, as in verify.
  write_text(dir.file("bad.json"), "{\"kind\": \"List\", \"items\": [");
  auto bad = compare(dir.file("bad.json"), "json");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("bad.json:1:28: invalid JSON"), std::string::npos) << bad.err;
}

TEST_F(KubeProxyOverall, NothingReadIsNotVerifiedNotMissing) {
  // nft -j of iptables-nft tables: KUBE-SERVICES rules counted, not described.
  std::string hidden = import(dir, "hidden.json",
                              {"--nft-json", source_path("fixtures/upstream/kube-proxy-iptables/syncrepeated-step1-two-clusterip.listed-nft.json")},
                              "test-node");
  auto v = verify(source_path(kOverallIntent), {hidden});
  EXPECT_EQ(v.exit_code, 1);
  auto f = verify_finding_keys(v.report);
  ASSERT_FALSE(f.empty());
  for (const auto& x : f) EXPECT_EQ(x.rfind("not-verified", 0), 0u) << x;
  // A node with no service dataplane at all.
  write_text(dir.file("bare.txt"), "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n");
  std::string bare = import(dir, "bare.json", {"--iptables-save", dir.file("bare.txt")}, "test-node");
  v = verify(source_path(kOverallIntent), {bare});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(verify_finding_keys(v.report), (std::multiset<std::string>{"no-dataplane   "}));
}

// ---------------------------------------------------------------- real kube-proxy

// fixtures/upstream/real-kube-proxy/: kube-proxy v1.30.3's own output and its
// inputs (fixtures/upstream/SOURCES.md), zstd-compressed as dpscope reads them.
std::string real(const std::string& rel) { return source_path("fixtures/upstream/real-kube-proxy/" + rel); }

class RealKubeProxy : public ::testing::Test {
 protected:
  TempDir dir;
};

TEST_F(RealKubeProxy, Small300NoFindingsBothModes) {
  std::string ipt = import(dir, "ipt.json",
                           {"--iptables-save", real("iptables-300x5/iptables-save.txt.zst"), "--ip6tables-save",
                            real("iptables-300x5/ip6tables-save.txt.zst")},
                           "dpskp-node");
  std::string nft = import(dir, "nft.json", {"--nft-json", real("nftables-300x5/nft-ruleset.json.zst")}, "dpskp-node");
  const std::string intent = real("iptables-300x5/kubectl-get-services-endpointslices.json.zst");
  auto v = verify(intent, {ipt, nft});
  EXPECT_EQ(v.exit_code, 0) << dump_keys(verify_finding_keys(v.report)) << v.err;
  EXPECT_EQ(v.report["intent"]["services_to_program"], 300);
  for (const auto& n : v.report["nodes"]) {
    ASSERT_EQ(n["dataplanes"].size(), 1u);
    EXPECT_EQ(n["dataplanes"][0]["services_ok"], 300);
    EXPECT_GT(n["dataplanes"][0]["frontends_expected"], 300);
    EXPECT_EQ(n["dataplanes"][0]["frontends_expected"], n["dataplanes"][0]["frontends_ok"]);
  }

  // Mutations of the intent, each found exactly, in both modes.
  json base = json::parse(run({"zstd", "-dc", intent}).out);
  auto check = [&](const json& mutated, const std::multiset<std::string>& want) {
    write_text(dir.file("m.json"), mutated.dump());
    auto m = verify(dir.file("m.json"), {ipt, nft});
    EXPECT_EQ(m.exit_code, 1) << m.err;
    EXPECT_EQ(verify_finding_keys(m.report), want) << dump_keys(verify_finding_keys(m.report));
  };
  // The first Service with a ready endpoint on another node and a single ClusterIP frontend.
  std::string ns, name, slice, ep_addr, port_name, proto, cluster_ip;
  int ep_port = 0, svc_port = 0;
  for (const auto& s : base["items"]) {
    if (s["kind"] != "Service" || s["spec"]["type"] != "ClusterIP" || s["spec"].contains("externalIPs") ||
        s["spec"]["ports"].size() != 1 || s["spec"].value("internalTrafficPolicy", "Cluster") != "Cluster") {
      continue;
    }
    for (const auto& es : base["items"]) {
      if (es["kind"] != "EndpointSlice" || es["metadata"]["namespace"] != s["metadata"]["namespace"] ||
          es["metadata"]["labels"]["kubernetes.io/service-name"] != s["metadata"]["name"] || es["endpoints"].size() < 2) {
        continue;
      }
      bool all_ready = true;
      for (const auto& e : es["endpoints"]) all_ready = all_ready && e["conditions"].value("ready", true);
      if (!all_ready) continue;
      ns = s["metadata"]["namespace"];
      name = s["metadata"]["name"];
      slice = es["metadata"]["name"];
      ep_addr = es["endpoints"][0]["addresses"][0];
      ep_port = es["ports"][0]["port"];
      port_name = s["spec"]["ports"][0]["name"];
      proto = s["spec"]["ports"][0]["protocol"] == "UDP" ? "udp" : "tcp";
      svc_port = s["spec"]["ports"][0]["port"];
      cluster_ip = s["spec"]["clusterIP"];
      break;
    }
    if (!ns.empty()) break;
  }
  ASSERT_FALSE(ns.empty());
  const std::string svc = ns + "/" + name + (port_name.empty() ? "" : ":" + port_name);
  const std::string fe = cluster_ip + ":" + std::to_string(svc_port) + "/" + proto + " ClusterIP";
  const std::string ep = ep_addr + ":" + std::to_string(ep_port);

  json m = base;
  auto& eps = item(m, "EndpointSlice", ns, slice)["endpoints"];
  eps.erase(eps.begin());
  check(m, {"extra-endpoint iptables-nft " + svc + " " + fe + " " + ep,
            "extra-endpoint nftables " + svc + " " + fe + " " + ep});

  m = base;
  remove_item(m, "Service", ns, name);
  check(m, {"stale-service iptables-nft " + svc + " " + fe, "stale-service nftables " + svc + " " + fe});

  m = base;
  item(m, "Service", ns, name)["spec"]["ports"][0]["port"] = svc_port + 10000;
  const std::string moved = cluster_ip + ":" + std::to_string(svc_port + 10000) + "/" + proto + " ClusterIP";
  check(m, {"wrong-port iptables-nft " + svc + " " + moved, "wrong-port nftables " + svc + " " + moved});
}

// 3,000 Services x up to 8 endpoints (119k iptables rules; 37,609 nft chains):
// the same objects kube-proxy was fed give no finding in either mode, and a
// Local-policy Service whose local endpoint is declared on another node is
// found in both.
TEST_F(RealKubeProxy, Large3000NoFindingsBothModes) {
  std::string ipt = import(dir, "ipt.json",
                           {"--iptables-save", real("iptables-3000x8/iptables-save.txt.zst"), "--ip6tables-save",
                            real("iptables-3000x8/ip6tables-save.txt.zst")},
                           "dpskp-node");
  std::string nft = import(dir, "nft.json", {"--nft-json", real("nftables-3000x8/nft-ruleset.json.zst")}, "dpskp-node");
  const std::string intent = real("iptables-3000x8/kubectl-get-services-endpointslices.json.zst");
  auto v = verify(intent, {ipt, nft});
  EXPECT_EQ(v.exit_code, 0) << dump_keys(verify_finding_keys(v.report)) << v.err;
  EXPECT_EQ(v.report["intent"]["services_to_program"], 3000);
  for (const auto& n : v.report["nodes"]) EXPECT_EQ(n["dataplanes"][0]["services_ok"], 3000);

  // The node name given is another node's: every Local-policy frontend of the
  // cluster now expects that node's endpoints, so findings appear in both modes.
  std::vector<std::string> argv = {dpscope_bin(), "verify", intent, ipt, "--node", "dpskp-remote-0", "--format", "json"};
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto f = verify_finding_keys(json::parse(r.out));
  EXPECT_FALSE(f.empty());
  for (const auto& x : f) {
    // Only policy-dependent findings: nothing about Cluster-policy frontends or stale Services.
    EXPECT_TRUE(x.rfind("wrong-action", 0) == 0 || x.rfind("stale-endpoint", 0) == 0 ||
                x.rfind("missing-endpoint", 0) == 0 || x.rfind("wrong-policy", 0) == 0)
        << x;
  }
}

// ---------------------------------------------------------------- IPVS

// kube-proxy's ipvs mode: kubernetes' own README listing (ipvsadm -Ln, real
// output) and the two Services it shows (fixtures/ipvs/README.md). The VIPs
// are on kube-ipvs0, as kube-proxy binds them; `ip -o addr` prints them so.
class IpvsReadme : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(dir.file("addr.txt"),
               "5: kube-ipvs0    inet 10.0.0.1/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n"
               "5: kube-ipvs0    inet 10.0.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n");
    node = import(dir, "ipvs.json",
                  {"--ipvsadm-list", source_path("fixtures/upstream/ipvs/kubernetes-readme-ipvsadm-ln.txt"), "--ip-addr",
                   dir.file("addr.txt")},
                  "ipvs-node");
    intent = load("fixtures/ipvs/kubernetes-readme.intent.json");
  }
  std::multiset<std::string> mutated(const json& j, int expect_exit = 1) {
    const std::string path = dir.file("intent-" + std::to_string(n++) + ".json");
    write_text(path, j.dump());
    auto v = verify(path, {node});
    EXPECT_EQ(v.exit_code, expect_exit) << v.err;
    return verify_finding_keys(v.report);
  }
  TempDir dir;
  std::string node;
  json intent;
  int n = 0;
};

TEST_F(IpvsReadme, ListingMatchesItsServices) {
  auto v = verify(source_path("fixtures/ipvs/kubernetes-readme.intent.json"), {node});
  EXPECT_EQ(v.exit_code, 0) << v.report.dump(1);
  EXPECT_TRUE(verify_finding_keys(v.report).empty()) << dump_keys(verify_finding_keys(v.report));
  ASSERT_EQ(v.report["nodes"].size(), 1u);
  const auto& planes = v.report["nodes"][0]["dataplanes"];
  ASSERT_EQ(planes.size(), 1u) << planes.dump(1);
  EXPECT_EQ(planes[0]["dataplane"], "ipvs");
  EXPECT_EQ(planes[0]["frontends_programmed"], 3);
  EXPECT_EQ(planes[0]["frontends_ok"], 3);
}

TEST_F(IpvsReadme, EachMutationIsFoundInIpvs) {
  json j = intent;
  item(j, "EndpointSlice", "kube-system", "kube-dns-1")["endpoints"].push_back(
      {{"addresses", {"172.17.0.9"}}, {"conditions", {{"ready", true}}}});
  EXPECT_EQ(mutated(j), (std::multiset<std::string>{"missing-endpoint ipvs kube-system/kube-dns:dns 10.0.0.10:53/udp ClusterIP 172.17.0.9:53",
                                                    "missing-endpoint ipvs kube-system/kube-dns:dns-tcp 10.0.0.10:53/tcp ClusterIP 172.17.0.9:53"}));
  j = intent;
  remove_item(j, "EndpointSlice", "default", "kubernetes");
  EXPECT_EQ(mutated(j), (std::multiset<std::string>{"wrong-action ipvs default/kubernetes:https 10.0.0.1:443/tcp ClusterIP"}));
  j = intent;
  remove_item(j, "Service", "default", "kubernetes");
  remove_item(j, "EndpointSlice", "default", "kubernetes");
  EXPECT_EQ(mutated(j), (std::multiset<std::string>{"stale-service ipvs  10.0.0.1:443/tcp"}));
  j = intent;
  item(j, "Service", "default", "kubernetes")["spec"]["ports"][0]["port"] = 8443;
  EXPECT_EQ(mutated(j), (std::multiset<std::string>{"wrong-port ipvs default/kubernetes:https 10.0.0.1:8443/tcp ClusterIP"}));
}

// Without kube-ipvs0's addresses, a NodePort's virtual services look like any
// other: verify says the IPVS side is not verified rather than guessing.
TEST_F(IpvsReadme, WithoutTheDummyInterfaceIpvsIsNotVerified) {
  const std::string bare = import(dir, "bare.json",
                                  {"--ipvsadm-list", source_path("fixtures/upstream/ipvs/kubernetes-readme-ipvsadm-ln.txt")},
                                  "ipvs-node");
  auto v = verify(source_path("fixtures/ipvs/kubernetes-readme.intent.json"), {bare});
  EXPECT_EQ(v.exit_code, 1);
  auto keys = verify_finding_keys(v.report);
  ASSERT_EQ(keys.size(), 1u) << dump_keys(keys);
  EXPECT_EQ(keys.begin()->rfind("not-verified", 0), 0u) << dump_keys(keys);
}

}  // namespace
}  // namespace dpscope::test
