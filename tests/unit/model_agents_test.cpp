// The agents section through the snapshot's JSON form: written by the
// streaming writer, read back by the streaming reader unchanged; absent from
// older snapshots, which still load; a wrong field named by its pointer.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "model/json.h"
#include "model/snapshot_writer.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

Snapshot with_agents() {
  Snapshot s;
  s.node = {"node-1", "6.1.0", "live", "host", "2026-12-01T00:00:00Z", "0.1.0", {}};
  s.agents.collected = true;
  s.agents.cgroup_version = "v2";
  s.agents.cgroup_mount = "/sys/fs/cgroup";
  AgentProcess p;
  p.pid = 4242;
  p.agent = "cilium-agent";
  p.dataplane = "cilium";
  p.matched_by = "exe";
  p.exe = "/usr/bin/cilium-agent";
  p.comm = "cilium-agent";
  p.cmdline = {"cilium-agent", "--config-dir=/tmp/cilium/config-map", "quote\"and\\back"};
  p.started_at = "2026-11-30T10:00:00Z";
  p.rss_bytes = 247463936;
  p.threads = 31;
  p.cgroup = "/kubepods/burstable/pod0c1f5f0a-3c8e-4c38-9f38-5cbb4a2b7d11/4b7c";
  p.unavailable.push_back({"pss_bytes", "/proc/4242/smaps_rollup: Permission denied", 13});
  s.agents.processes.push_back(p);
  AgentCgroup c;
  c.path = p.cgroup;
  c.pod_uid = "0c1f5f0a-3c8e-4c38-9f38-5cbb4a2b7d11";
  c.qos_class = "burstable";
  c.memory_current_bytes = 1192230912;
  c.anon_bytes = 900000000;
  c.file_bytes = 250000000;
  c.sock_bytes = 0;
  c.inactive_file_bytes = 100000000;
  c.working_set_bytes = 1092230912;
  c.procs = 3;
  c.unavailable.push_back({"kernel_bytes", "memory.stat has no 'kernel' line", 0});
  s.agents.cgroups.push_back(c);
  s.unavailable.push_back({"agents.processes", "1 figure of 1 agent processes could not be read", 13, "run as root"});
  return s;
}

std::string written(const Snapshot& s) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  write_snapshot(s, f);
  std::fclose(f);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

TEST(ModelAgents, SurvivesWritingAndReading) {
  const Snapshot s = with_agents();
  const std::string text = written(s);
  EXPECT_NE(text.find("\"agents\""), std::string::npos);
  EXPECT_EQ(from_json_text(text, "mem"), s);
  EXPECT_EQ(from_json(nlohmann::json::parse(text), "mem"), s);
  // The streamed text is the model's JSON.
  EXPECT_EQ(nlohmann::json::parse(text), to_json(s));
}

TEST(ModelAgents, AbsentWhenNotCollected) {
  Snapshot s = with_agents();
  s.agents = {};
  EXPECT_EQ(written(s).find("\"agents\""), std::string::npos);  // imports keep their exact form
}

TEST(ModelAgents, SnapshotsFromBeforeTheSectionStillLoad) {
  for (const char* rel : {"fixtures/snapshots/kind-kube-proxy.json", "fixtures/snapshots/kind-cilium-kpr.json"}) {
    SCOPED_TRACE(rel);
    const Snapshot s = load_snapshot(test::source_path(rel));
    EXPECT_FALSE(s.agents.collected);
    EXPECT_TRUE(s.agents.processes.empty());
    EXPECT_FALSE(s.netfilter.tables.empty());
  }
}

TEST(ModelAgents, WrongFieldsNameTheirPointer) {
  auto error_of = [](const std::string& agents) {
    const std::string text = R"({"schema": "dpscope.snapshot/v1", "agents": )" + agents + "}";
    try {
      from_json_text(text, "f.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"({"processes": [{"pid": "x"}]})").find("/agents/processes/0/pid: expected a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"processes": [{"pid": 1, "rss_bytes": -5}]})").find("/agents/processes/0/rss_bytes"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cgroups": [{"pod_uid": "x"}]})").find("/agents/cgroups/0: missing key 'path'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cgroup": {"version": "v3"}})").find("/agents/cgroup/version: unknown cgroup version"),
            std::string::npos);
  EXPECT_NE(error_of(R"([])").find("/agents: expected an object"), std::string::npos);
  EXPECT_NE(error_of(R"({"processes": [{"pid": 1, "threads": 99999999999}]})").find("integer out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace dpscope::model
