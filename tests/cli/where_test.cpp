// dpscope where: every rule naming the address (counted independently from
// the fixture text) and every eBPF LB entry (from the eBPF fixture JSON).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

int rules_naming(const std::string& fixture, const std::string& addr, const std::string& port) {
  std::string text = read_text(source_path(fixture));
  std::string a = std::regex_replace(addr, std::regex("\\."), "\\.");
  // The address as a host (/32), or as ADDR:PORT in a DNAT target.
  std::regex host("(^| )" + a + "(/32 |:" + (port.empty() ? "[0-9]+" : port) + "( |$))");
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("-A ", 0) != 0 || !std::regex_search(line, host)) continue;
    // A port given: a destination rule must be for that port (or any port).
    std::smatch m;
    if (!port.empty() && std::regex_search(line, m, std::regex("-d " + a + "/32 .*--dport ([0-9]+)")) &&
        m[1] != port) {
      continue;
    }
    ++n;
  }
  return n;
}

int ebpf_entries(const std::string& addr, const std::string& port) {
  json e = json::parse(read_text(source_path("fixtures/scenarios/kind-cilium-kpr.ebpf.json")));
  int n = 0;
  for (const auto& svc : e["ebpf"]["services"]) {
    for (const char* kind : {"frontends", "backends"}) {
      for (const auto& x : svc[kind]) {
        if (x["address"] == addr && (port.empty() || std::to_string(x["port"].get<int>()) == port)) ++n;
      }
    }
  }
  return n;
}

TEST(WhereAddress, FindsEveryRuleAndLbEntry) {
  struct Q {
    std::string addr, port;
  };
  for (const Q& q : std::vector<Q>{{"10.96.218.179", ""}, {"10.96.225.41", "80"}, {"10.244.1.2", "80"},
                                   {"10.244.1.234", ""}, {"10.96.0.10", "53"}, {"10.96.0.10", ""},
                                   {"10.96.0.1", "443"}, {"10.244.0.2", "9153"}}) {
    std::string arg = q.port.empty() ? q.addr : q.addr + ":" + q.port;
    auto r = run({dpscope_bin(), "where", arg, source_path("fixtures/snapshots/kind-kube-proxy.json"),
                  source_path("fixtures/snapshots/kind-cilium-kpr.json"), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    ASSERT_EQ(j["nodes"].size(), 2u);
    int kp = rules_naming("fixtures/scenarios/kind-kube-proxy.iptables-save.txt", q.addr, q.port);
    int cil_rules = rules_naming("fixtures/scenarios/kind-cilium-kpr.iptables-save.txt", q.addr, q.port);
    EXPECT_EQ(j["nodes"][0]["places"].size(), static_cast<size_t>(kp)) << arg << "\n" << j["nodes"][0].dump(1);
    EXPECT_EQ(j["nodes"][1]["places"].size(), static_cast<size_t>(cil_rules + ebpf_entries(q.addr, q.port)))
        << arg << "\n" << j["nodes"][1].dump(1);
    // The kube-proxy import has no eBPF section: say so instead of "nowhere".
    EXPECT_EQ(j["nodes"][0]["not_searched"], json::array({"eBPF service maps: not collected"}));
  }
}

TEST(WhereAddress, SeedServiceIsInIptablesOnOneNodeAndInTheMapOnTheOther) {
  auto r = run({dpscope_bin(), "where", "10.96.218.179", source_path("fixtures/snapshots/kind-kube-proxy.json")});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("ip nat KUBE-SERVICES #5  [destination]  -> KUBE-SVC-KDFSL4OQJO7CGXMY"), std::string::npos)
      << r.out;
  auto c = run({dpscope_bin(), "where", "10.96.225.41:80", source_path("fixtures/snapshots/kind-cilium-kpr.json")});
  EXPECT_NE(c.out.find("cilium  service 6  [frontend]  10.96.225.41:80/tcp ClusterIP, 1 backend"), std::string::npos)
      << c.out;
}

// IPVS, from what the tools printed on Debian's 6.1 kernel (fixtures/ipvs/debian-6.1,
// tests/vm/ipvs.sh): each virtual service at the address, each real server that
// is it, the dummy interface holding it; counted here from the tools' text.
TEST(WhereAddress, FindsIpvsVirtualServicesRealServersAndKubeIpvs0) {
  TempDir dir;
  const std::string fx = source_path("fixtures/ipvs/debian-6.1/");
  auto imp = run({dpscope_bin(), "import", "--ipvsadm-save", fx + "ipvsadm-save-n.txt", "--ip-addr", fx + "ip-o-addr.txt",
                  "-o", dir.file("ipvs.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  const std::string save = read_text(fx + "ipvsadm-save-n.txt");
  const std::string addrs = read_text(fx + "ip-o-addr.txt");
  auto count = [](const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  for (const std::string addr : {"10.0.0.10", "172.17.0.4", "172.17.0.2"}) {
    auto r = run({dpscope_bin(), "where", addr, dir.file("ipvs.json"), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json places = json::parse(r.out)["nodes"][0]["places"];
    size_t vs = 0, rs = 0, on_if = 0;
    for (const auto& p : places) {
      EXPECT_EQ(p["dataplane"], "ipvs");
      vs += p["field"] == "virtual service";
      rs += p["field"] == "real server";
      on_if += p["field"] == "interface address";
    }
    EXPECT_EQ(vs, count(save, "-A -t " + addr + ":") + count(save, "-A -u " + addr + ":")) << addr << places.dump(1);
    EXPECT_EQ(rs, count(save, "-r " + addr + ":")) << addr << places.dump(1);
    EXPECT_EQ(on_if, count(addrs, "inet " + addr + "/")) << addr << places.dump(1);
    EXPECT_EQ(places.size(), vs + rs + on_if);
  }
}

TEST(WhereAddress, BadQueriesExitTwo) {
  for (const char* q : {"10.96.0", "10.96.0.1:http", "10.96.0.1:70000", "[fd00::1", "example.com"}) {
    auto r = run({dpscope_bin(), "where", q, source_path("fixtures/snapshots/kind-kube-proxy.json")});
    EXPECT_EQ(r.exit_code, 2) << q;
  }
  auto none = run({dpscope_bin(), "where", "10.96.0.1"});
  EXPECT_EQ(none.exit_code, 2);
  auto ok6 = run({dpscope_bin(), "where", "[fd00::1]:443", source_path("fixtures/snapshots/kind-kube-proxy.json")});
  EXPECT_EQ(ok6.exit_code, 1) << ok6.err;  // a valid query programmed nowhere: 1, like grep
  EXPECT_NE(ok6.out.find("programmed nowhere"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
