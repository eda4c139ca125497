// The "Resident cost" section of compare (reports/resident_cost.cpp) on
// snapshots with an agents section: per agent, per dataplane, per node, the
// seed question's sentence, what kubectl top misses, and unknown never 0.
#include <gtest/gtest.h>

#include "reports/cluster.h"
#include "reports/comparison.h"
#include "reports/render.h"

namespace dpscope::reports {
namespace {

constexpr uint64_t MiB = 1024 * 1024;

model::AgentProcess process(uint32_t pid, const std::string& agent, const std::string& dataplane,
                            const std::string& cgroup, uint64_t rss, uint64_t pss, const std::string& started) {
  model::AgentProcess p;
  p.pid = pid;
  p.agent = agent;
  p.dataplane = dataplane;
  p.matched_by = "exe";
  p.comm = agent;
  p.rss_bytes = rss;
  p.pss_bytes = pss;
  p.threads = 10;
  p.cgroup = cgroup;
  p.started_at = started;
  return p;
}

model::AgentCgroup cgroup(const std::string& path, uint64_t current, uint64_t inactive, uint64_t kernel, uint32_t procs) {
  model::AgentCgroup c;
  c.path = path;
  c.memory_current_bytes = current;
  c.inactive_file_bytes = inactive;
  c.working_set_bytes = current - inactive;
  c.anon_bytes = current / 2;
  c.file_bytes = current / 4;
  c.kernel_bytes = kernel;
  c.sock_bytes = 0;
  c.procs = procs;
  return c;
}

model::Snapshot kube_proxy_node(const std::string& name, uint64_t ws_mib) {
  model::Snapshot s;
  s.node = {name, "6.1.0", "live", "host", "2026-12-01T00:00:00Z", "0.1.0", {}};
  s.ebpf.collected = true;
  s.agents.collected = true;
  s.agents.cgroup_version = "v2";
  s.agents.processes.push_back(process(10, "kube-proxy", "kube-proxy", "/kp", 60 * MiB, 50 * MiB, "2026-11-30T10:00:00Z"));
  s.agents.cgroups.push_back(cgroup("/kp", (ws_mib + 10) * MiB, 10 * MiB, 1 * MiB, 1));
  return s;
}

model::Snapshot cilium_node(const std::string& name, const std::string& agent_started) {
  model::Snapshot s;
  s.node = {name, "6.1.0", "live", "host", "2026-12-01T00:00:00Z", "0.1.0", {}};
  s.ebpf.collected = true;
  model::BpfMap m;
  m.id = 7;
  m.type = "hash";
  m.name = "cilium_lb4_serv";
  m.bytes_memlock = 400 * MiB;
  s.ebpf.maps.push_back(m);
  model::BpfProgram p;
  p.id = 3;
  p.type = "sched_cls";
  p.name = "cil_from_netdev";
  p.loaded_at = "2026-11-30T09:00:00Z";
  p.bytes_memlock = 12 * MiB;
  p.map_ids = {7};
  s.ebpf.programs.push_back(p);
  s.agents.collected = true;
  s.agents.cgroup_version = "v2";
  s.agents.processes.push_back(process(20, "cilium-agent", "cilium", "/ca", 236 * MiB, 200 * MiB, agent_started));
  s.agents.processes.push_back(process(21, "cilium-envoy", "cilium", "/ce", 30 * MiB, 25 * MiB, agent_started));
  s.agents.cgroups.push_back(cgroup("/ca", 1137 * MiB + 100 * MiB, 100 * MiB, 300 * MiB, 1));
  s.agents.cgroups.push_back(cgroup("/ce", 20 * MiB, 0, 1 * MiB, 3));  // holds 2 more processes
  return s;
}

uint64_t number(const Comparison& c, const std::string& id, size_t side) {
  const Row* r = c.find(id);
  EXPECT_NE(r, nullptr) << id;
  if (!r) return 0;
  EXPECT_EQ(r->values.at(side).kind, Cell::Kind::Number) << id << ": " << r->values.at(side).shown();
  return r->values.at(side).number;
}

bool has_finding(const Comparison& c, const std::string& part) {
  for (const auto& f : c.findings) {
    if (f.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(ResidentCost, SeedQuestionFromTwoNodes) {
  const model::Snapshot a = kube_proxy_node("kp-node", 46);
  const model::Snapshot b = cilium_node("cilium-node", "2026-11-30T08:00:00Z");
  const Comparison c = compare({{"", "a.json", &a}, {"", "b.json", &b}});
  EXPECT_EQ(number(c, "resident.agent.kube-proxy.working_set_bytes", 0), 46 * MiB);
  EXPECT_EQ(number(c, "resident.agent.kube-proxy.rss_bytes", 0), 60 * MiB);
  EXPECT_EQ(number(c, "resident.agent.kube-proxy.pss_bytes", 0), 50 * MiB);
  EXPECT_EQ(c.find("resident.agent.kube-proxy.working_set_bytes")->values[1].shown(), "not running");
  EXPECT_EQ(number(c, "resident.agent.cilium-agent.working_set_bytes", 1), 1137 * MiB);
  EXPECT_EQ(number(c, "resident.dataplane.cilium.working_set_bytes", 1), 1157 * MiB);
  EXPECT_EQ(number(c, "resident.dataplane.cilium.ebpf_memlock_bytes", 1), 412 * MiB);
  EXPECT_EQ(number(c, "resident.dataplane.cilium.total_bytes", 1), 1569 * MiB);
  EXPECT_EQ(number(c, "resident.dataplane.kube-proxy.ebpf_memlock_bytes", 0), 0u);
  EXPECT_EQ(number(c, "resident.total_bytes", 0), 46 * MiB);
  EXPECT_EQ(number(c, "resident.total_bytes", 1), 1569 * MiB);
  EXPECT_TRUE(has_finding(c, "networking stack memory: kube-proxy 46.0 MiB (kp-node) vs cilium-agent 1.1 GiB + "
                             "cilium-envoy 20.0 MiB + eBPF maps 400.0 MiB + eBPF programs 12.0 MiB = 1.5 GiB "
                             "(cilium-node)."))
      << c.findings.back();
  // Agent started before its programs were loaded: its cgroup was charged (6.1 >= 5.11).
  EXPECT_TRUE(has_finding(c, "cilium-node: this kernel charges eBPF map memory to the memory cgroup"));
  EXPECT_FALSE(has_finding(c, "kubectl top does not attribute"));
  EXPECT_TRUE(has_finding(c, "cgroup /ce holds 3 processes, 1 of them agents"));
  EXPECT_EQ(c.find("resident.ebpf_charged_to_cgroup")->values[0].shown(), "yes: the creating process's (Linux 5.11+)");
}

TEST(ResidentCost, AgentRestartedAfterItsMapsIsNotChargedByKubectlTop) {
  const model::Snapshot a = kube_proxy_node("kp-node", 46);
  const model::Snapshot b = cilium_node("cilium-node", "2026-11-30T11:00:00Z");  // after the 09:00 load
  const Comparison c = compare({{"", "a.json", &a}, {"", "b.json", &b}});
  EXPECT_TRUE(has_finding(c, "cilium-node: the cilium agents started (2026-11-30T11:00:00Z) after its oldest eBPF "
                             "program was loaded (2026-11-30T09:00:00Z)"));
  EXPECT_TRUE(has_finding(c, "kubectl top does not attribute their memory to the running agent"));
}

TEST(ResidentCost, UnknownIsNeverZero) {
  model::Snapshot a = kube_proxy_node("kp-node", 46);
  a.agents.cgroups[0].working_set_bytes.reset();
  a.agents.cgroups[0].unavailable.push_back({"working_set_bytes", "no memory.current", 0});
  model::Snapshot b = cilium_node("cilium-node", "2026-11-30T08:00:00Z");
  b.ebpf = {};  // --no-ebpf: cilium's half unknown
  model::Snapshot old = a;   // from before the section
  old.agents = {};
  model::Snapshot hidden = a;
  hidden.agents = {};
  hidden.unavailable.push_back({"agents", "/proc is mounted with hidepid=2", 13, "run as root"});
  const Comparison c = compare({{"", "a", &a}, {"", "b", &b}, {"", "old", &old}, {"", "hidden", &hidden}});
  const Row* ws = c.find("resident.agent.kube-proxy.working_set_bytes");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->values[0].kind, Cell::Kind::Unavailable);
  EXPECT_NE(ws->values[0].text.find("no memory.current"), std::string::npos);
  EXPECT_EQ(c.find("resident.total_bytes")->values[0].kind, Cell::Kind::Unavailable);
  EXPECT_EQ(number(c, "resident.agent.kube-proxy.rss_bytes", 0), 60 * MiB);  // the rest still shows
  EXPECT_EQ(c.find("resident.dataplane.cilium.ebpf_memlock_bytes")->values[1].kind, Cell::Kind::Unavailable);
  EXPECT_EQ(c.find("resident.dataplane.cilium.total_bytes")->values[1].kind, Cell::Kind::Unavailable);
  EXPECT_EQ(number(c, "resident.dataplane.cilium.working_set_bytes", 1), 1157 * MiB);
  EXPECT_EQ(c.find("resident.total_bytes")->values[2].kind, Cell::Kind::NotCollected);
  EXPECT_EQ(c.find("resident.total_bytes")->values[3].kind, Cell::Kind::Unavailable);
  EXPECT_NE(c.find("resident.total_bytes")->values[3].text.find("hidepid"), std::string::npos);
  EXPECT_TRUE(has_finding(c, "kube-proxy 60.0 MiB RSS (working set unavailable)"));
}

TEST(ResidentCost, NoSectionForSnapshotsWithoutAgents) {
  model::Snapshot a = kube_proxy_node("a", 46), b = cilium_node("b", "2026-11-30T08:00:00Z");
  a.agents = {};
  b.agents = {};
  const Comparison c = compare({{"", "a", &a}, {"", "b", &b}});
  for (const auto& r : c.rows) EXPECT_NE(r.section, "resident") << r.id;
  EXPECT_EQ(render_html(c).find("Resident cost"), std::string::npos);
}

TEST(ResidentCost, ClustersMinMedianMaxPerNode) {
  // A cluster folder keeps each node analysed, as load_cluster() does.
  auto analysed = [](const model::Snapshot& s) { return analyze_input({"", s.node.name, &s}); };
  ClusterInput kp{"kube-proxy", "kp", {"n1", "n2", "n3"},
                  {analysed(kube_proxy_node("n1", 40)), analysed(kube_proxy_node("n2", 50)),
                   analysed(kube_proxy_node("n3", 70))}};
  ClusterInput cil{"cilium", "cil", {"c1", "c2"},
                   {analysed(cilium_node("c1", "2026-11-30T08:00:00Z")), analysed(kube_proxy_node("c2", 30))}};  // c2 drifts
  const Comparison c = compare_clusters({kp, cil});
  EXPECT_EQ(number(c, "cluster.resident.total_bytes.min", 0), 40 * MiB);
  EXPECT_EQ(number(c, "cluster.resident.total_bytes.median", 0), 50 * MiB);
  EXPECT_EQ(number(c, "cluster.resident.total_bytes.max", 0), 70 * MiB);
  EXPECT_EQ(number(c, "cluster.resident.total_bytes.median", 1), (1569 + 30) * MiB / 2);
  // An agent's figures over the nodes running it.
  EXPECT_EQ(number(c, "cluster.resident.agent.cilium-agent.working_set_bytes.median", 1), 1137 * MiB);
  EXPECT_EQ(c.find("cluster.resident.agent.cilium-agent.working_set_bytes.median")->values[1].shown(),
            "1.1 GiB (1 of 2 nodes)");
  EXPECT_EQ(c.find("cluster.resident.agent.cilium-agent.working_set_bytes.median")->values[0].shown(), "not running");
  const std::string html = render_html(c);
  EXPECT_NE(html.find("Networking stack memory per dataplane"), std::string::npos);
  EXPECT_NE(html.find("(median per node)"), std::string::npos);
}

TEST(ResidentCost, HtmlChartAndJsonIds) {
  const model::Snapshot a = kube_proxy_node("kp-node", 46);
  const model::Snapshot b = cilium_node("cilium-node", "2026-11-30T08:00:00Z");
  const Comparison c = compare({{"", "a.json", &a}, {"", "b.json", &b}});
  const std::string html = render_html(c);
  EXPECT_NE(html.find("<h3>Resident cost</h3>"), std::string::npos);
  EXPECT_NE(html.find(">cilium<"), std::string::npos);       // a dataplane bar's label
  EXPECT_NE(html.find(">1.5 GiB<"), std::string::npos);      // its value
  EXPECT_NE(html.find("Resident cost: agent memory and eBPF kernel memory"), std::string::npos);
  const auto j = to_json(c);
  EXPECT_NE(j.dump().find("\"resident.dataplane.cilium.total_bytes\""), std::string::npos);
}

}  // namespace
}  // namespace dpscope::reports
