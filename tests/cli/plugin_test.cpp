// packaging/kubectl-dpscope against a stand-in kubectl (tests/cli/plugin_fake_kubectl.sh):
// argument handling, what it asks kubectl to do, output collection out of a
// mixed stdout/stderr pod log, failure reporting, parallelism, pod clean-up.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class Plugin : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir.file("bin"));
    fs::create_directories(dir.file("mode"));
    fs::create_symlink(source_path("tests/cli/plugin_fake_kubectl.sh"), dir.file("bin/kubectl"));
    set_snapshot(snapshot_with_chains(1));
    write_text(dir.file("run_ms"), "150");
  }

  // A real dpscope snapshot; "NODE" is replaced by the node name in the fake pod log.
  static model::Snapshot snapshot_with_chains(int svc_chains) {
    model::Snapshot s;
    s.node.name = "NODE";
    s.node.source = "live";
    s.node.environment = "kubectl-debug";
    s.netfilter.collected = true;
    model::Table nat{model::Backend::IptablesNft, "ip", "nat", {}, {}};
    for (int i = 0; i < svc_chains; ++i) {
      model::Chain c;
      c.name = "KUBE-SVC-" + std::to_string(i);
      nat.chains.push_back(c);
    }
    s.netfilter.tables.push_back(nat);
    return s;
  }
  void set_snapshot(const model::Snapshot& s) {
    snapshot_text = model::to_json(s).dump(2) + "\n";
    write_text(dir.file("snapshot.json"), snapshot_text);
  }
  std::string expected_for(const std::string& node) const {
    std::string text = snapshot_text;
    text.replace(text.find("\"NODE\""), 6, "\"" + node + "\"");
    return text;
  }
  void nodes(const std::string& list) { write_text(dir.file("nodes"), list); }
  void mode(const std::string& node, const std::string& m) { write_text(dir.file("mode/" + node), m); }

  RunResult plugin(std::vector<std::string> args, const std::string& extra_env = "") {
    std::vector<std::string> argv = {"env", "PATH=" + dir.file("bin") + ":" + std::getenv("PATH"),
                                     "FAKE_KUBECTL_DIR=" + dir.path(), "DPSCOPE_POLL_INTERVAL=0.05",
                                     "DPSCOPE_IMAGE=", "TMPDIR=" + dir.path()};
    if (!extra_env.empty()) argv.push_back(extra_env);
    argv.push_back(source_path("packaging/kubectl-dpscope"));
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
  std::vector<std::string> calls() const {
    return fs::exists(dir.file("calls.log")) ? lines_of(read_text(dir.file("calls.log")))
                                             : std::vector<std::string>{};
  }
  // Calls whose kubectl verb (the first word after the global flags) is `verb`.
  std::vector<std::string> calls_with(const std::string& verb) const {
    std::vector<std::string> out;
    for (const auto& c : calls()) {
      std::istringstream words(c);
      std::string w;
      while (words >> w && (w == "--context" || w == "--namespace")) words >> w;
      if (w == verb) out.push_back(c);
    }
    return out;
  }
  size_t live_pods() const {
    if (!fs::exists(dir.file("pods"))) return 0;
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir.file("pods")), fs::directory_iterator()));
  }
  int max_live() const { return fs::exists(dir.file("max_live")) ? std::stoi(read_text(dir.file("max_live"))) : 0; }
  // Leftover work directories of the plugin (it uses TMPDIR = our dir).
  size_t leftover_workdirs() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) {
      if (e.path().filename().string().rfind("kubectl-dpscope.", 0) == 0) ++n;
    }
    return n;
  }

  TempDir dir;
  std::string snapshot_text;
};

TEST_F(Plugin, UsageErrorsExitTwoWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{}, "Usage:"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"node", "--image", "img"}, "is not a node name"},
      {{"node", "../etc", "--image", "img"}, "'../etc' is not a node name"},
      {{"node", "Upper", "--image", "img"}, "'Upper' is not a node name"},
      {{"node", "a", "b", "--image", "img"}, "unexpected argument 'b'"},
      {{"node", "a", "--image"}, "--image needs a value"},
      {{"node", "a", "--bogus", "--image", "img"}, "unknown option --bogus"},
      {{"node", "a"}, "no dpscope image"},
      {{"node", "a", "--image", "img", "--timeout", "0"}, "--timeout must be a positive number"},
      {{"cluster", "--image", "img"}, "-o DIR is required"},
      {{"cluster", "-o", "-", "--image", "img"}, "needs a directory"},
      {{"cluster", "-o", "out", "--image", "img", "--parallel", "0"}, "--parallel must be a positive integer"},
      {{"cluster", "-o", "out", "--image", "img", "--parallel", "x2"}, "--parallel must be a positive integer"},
      {{"cluster", "-o", "out", "--image", "img", "extra"}, "unexpected argument 'extra'"},
  };
  for (const auto& c : cases) {
    RunResult r = plugin(c.args);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << joined << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << joined;
  }
  // Nothing was asked of kubectl for any of them.
  EXPECT_TRUE(calls().empty());
  RunResult help = plugin({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "kubectl dpscope cluster -o DIR"));
}

TEST_F(Plugin, NodeWritesTheSnapshotAndDeletesThePod) {
  nodes("worker-1\n");
  RunResult r = plugin({"node", "worker-1", "--image", "reg.example/dpscope:1", "-o", dir.file("w1.json"),
                        "--context", "prod", "-n", "debug"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_text(dir.file("w1.json")), expected_for("worker-1"));
  // dpscope's own messages from the pod log reach stderr, marked with the node.
  EXPECT_TRUE(contains(r.err, "worker-1: dpscope: kubectl-debug pod on node worker-1")) << r.err;
  // What kubectl was asked: a sysadmin debug pod with the image, the node name
  // for dpscope, the host snapshot to stdout; every call with the context and namespace.
  auto debug = calls_with("debug");
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0],
            "--context prod --namespace debug debug node/worker-1 --image=reg.example/dpscope:1 "
            "--profile=sysadmin --env=NODE_NAME=worker-1 -- /usr/local/bin/dpscope snapshot --host -o -");
  for (const auto& c : calls()) EXPECT_EQ(c.rfind("--context prod --namespace debug ", 0), 0u) << c;
  EXPECT_EQ(calls_with("logs").size(), 1u);
  EXPECT_EQ(calls_with("delete").size(), 1u);
  EXPECT_EQ(live_pods(), 0u);
  EXPECT_EQ(leftover_workdirs(), 0u);
}

TEST_F(Plugin, NodeToStdoutKeepsMessagesOutOfTheJson) {
  // A stderr line landed inside the JSON in the pod log: it goes to stderr.
  mode("n1", "interleaved");
  RunResult r = plugin({"node", "n1", "--image=img"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_for("n1"));
  EXPECT_TRUE(contains(r.err, "n1: hint: run as root")) << r.err;
  auto parsed = model::from_json_text(r.out, "stdout");
  EXPECT_EQ(parsed.node.name, "n1");
  EXPECT_EQ(live_pods(), 0u);
}

TEST_F(Plugin, NodeFailuresAreReportedAndLeaveNoFileNorPod) {
  struct Case {
    std::string mode;
    int exit_code;
    std::string message;
  };
  std::vector<Case> cases = {
      {"debug-fails", 1, "kubectl debug failed: error: nodes \"n1\" not found"},
      {"exit4", 1, "dpscope exited 4: dpscope: internal error: boom on n1"},
      {"no-json", 1, "no complete snapshot JSON in the log of pod node-debugger-n1-"},
      {"image-pull", 1, "cannot start: ErrImagePull (image img)"},
  };
  for (const auto& c : cases) {
    mode("n1", c.mode);
    std::string out = dir.file("n1-" + c.mode + ".json");
    RunResult r = plugin({"node", "n1", "--image", "img", "-o", out});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.mode << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "kubectl-dpscope: n1: ")) << c.mode << ": " << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.mode << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.mode;
    EXPECT_EQ(live_pods(), 0u) << c.mode;
  }
  // Every pod that was created was deleted.
  EXPECT_EQ(calls_with("delete").size(), 3u);
  EXPECT_EQ(leftover_workdirs(), 0u);
}

TEST_F(Plugin, NodeTimesOutAndStillDeletesThePod) {
  write_text(dir.file("run_ms"), "60000");
  RunResult r = plugin({"node", "slow", "--image", "img", "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "timed out after 1s waiting for pod node-debugger-slow-")) << r.err;
  EXPECT_EQ(live_pods(), 0u);
}

TEST_F(Plugin, PodThatVanishesIsReportedAfterTheTimeout) {
  // The pod is gone (deleted by someone else): every status query fails.
  write_text(dir.file("run_ms"), "60000");
  mode("gone", "vanishes");
  RunResult r = plugin({"node", "gone", "--image", "img", "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "timed out after 1s waiting for pod node-debugger-gone-")) << r.err;
  EXPECT_TRUE(contains(r.err, "(kubectl get pod: Error from server (NotFound)")) << r.err;
}

TEST_F(Plugin, IncompleteSnapshotIsKeptWithExitThree) {
  mode("n1", "incomplete");
  RunResult r = plugin({"node", "n1", "--image", "img", "-o", dir.file("n1.json")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(read_text(dir.file("n1.json")), expected_for("n1"));
  EXPECT_TRUE(contains(r.err, "snapshot incomplete")) << r.err;
}

TEST_F(Plugin, ClusterCollectsEveryNodeReportsFailuresAndSummarises) {
  nodes("a\nb\nc\nd\ne\nf\n");
  mode("b", "debug-fails");
  mode("d", "exit4");
  mode("e", "incomplete");
  mode("f", "interleaved");
  write_text(dir.file("run_ms"), "400");
  std::string out = dir.file("cluster-a");
  RunResult r = plugin({"cluster", "-o", out, "--image", "img", "--parallel", "2", "--context", "kind-a"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  // Snapshots of the nodes that worked, byte for byte, and nothing else.
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(out)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{".dpscope", "a.json", "c.json", "e.json", "f.json"}));
  for (const char* n : {"a", "c", "e", "f"}) {
    EXPECT_EQ(read_text(out + "/" + n + ".json"), expected_for(n)) << n;
  }
  // Progress: one line per node, counted up to 6/6.
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) {
    EXPECT_TRUE(contains(r.err, std::string("] ") + n + ": ")) << n << "\n" << r.err;
  }
  EXPECT_TRUE(contains(r.err, "[6/6] ")) << r.err;
  EXPECT_TRUE(contains(r.err, "kubectl-dpscope: 6 nodes, 2 at a time"));
  // Failures listed per node with the reason and where the log is.
  EXPECT_TRUE(contains(r.err, "failed nodes:\n  b: kubectl debug failed: error: nodes \"b\" not found (log: " + out +
                                  "/.dpscope/b.log)\n  d: dpscope exited 4: dpscope: internal error: boom on d"))
      << r.err;
  EXPECT_TRUE(contains(lines_of(r.err).back(), "summary: 6 nodes: 3 ok, 1 incomplete, 2 failed")) << r.err;
  EXPECT_TRUE(contains(read_text(out + "/.dpscope/d.log"), "dpscope: internal error: boom on d"));
  EXPECT_TRUE(contains(read_text(out + "/.dpscope/f.log"), "hint: run as root"));
  // Never more than --parallel pods at once, and it did run them side by side.
  EXPECT_EQ(max_live(), 2);
  EXPECT_EQ(live_pods(), 0u);
  EXPECT_EQ(calls_with("delete").size(), 5u);  // every pod created (b's never was)
  for (const auto& c : calls()) EXPECT_EQ(c.rfind("--context kind-a ", 0), 0u) << c;
  EXPECT_EQ(leftover_workdirs(), 0u);
}

TEST_F(Plugin, ClusterRunsNodesInParallel) {
  nodes("n1\nn2\nn3\nn4\n");
  write_text(dir.file("run_ms"), "300");
  RunResult serial = plugin({"cluster", "-o", dir.file("s"), "--image", "img", "--parallel", "1"});
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  EXPECT_EQ(max_live(), 1);
  fs::remove(dir.file("max_live"));
  // Long enough that all four pods are alive together even on a busy machine.
  write_text(dir.file("run_ms"), "1500");
  RunResult wide = plugin({"cluster", "-o", dir.file("p"), "--image", "img", "--parallel", "4"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(max_live(), 4);
  EXPECT_TRUE(contains(lines_of(wide.err).back(), "summary: 4 nodes: 4 ok, 0 incomplete, 0 failed")) << wide.err;
}

TEST_F(Plugin, ClusterWithoutNodesOrApiAccessFails) {
  nodes("");
  RunResult none = plugin({"cluster", "-o", dir.file("o"), "--image", "img"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(contains(none.err, "no nodes")) << none.err;
  write_text(dir.file("get-nodes-fails"), "");
  RunResult denied = plugin({"cluster", "-o", dir.file("o"), "--image", "img", "-l", "role=worker"});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_TRUE(contains(denied.err, "kubectl get nodes failed: error: You must be logged in")) << denied.err;
  EXPECT_TRUE(contains(calls().back(), "get nodes -l role=worker -o name")) << calls().back();
}

TEST_F(Plugin, CollectReadsTheDaemonSetPodsLogs) {
  write_text(dir.file("ds-pods"),
             "dpscope-x1 n1\ndpscope-x2 n2\ndpscope-x3 n3\ndpscope-x4 n4\ndpscope-x5 n5\ndpscope-x6 Bad_Node\n");
  mode("n2", "exit4");
  mode("n3", "incomplete");
  mode("n4", "truncated");
  mode("n5", "running");
  std::string out = dir.file("ds");
  RunResult r = plugin({"collect", "-o", out, "--parallel", "3", "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(out)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{".dpscope", "n1.json", "n3.json"}));
  EXPECT_EQ(read_text(out + "/n1.json"), expected_for("n1"));
  EXPECT_EQ(read_text(out + "/n3.json"), expected_for("n3"));
  EXPECT_TRUE(contains(r.err, "skipping pod dpscope-x6: node 'Bad_Node' is not a node name")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n2: dpscope exited 4: dpscope: internal error: boom on n2")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n4: no complete snapshot JSON in the log of pod dpscope-x4")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n5: timed out after 1s waiting for pod dpscope-x5")) << r.err;
  EXPECT_TRUE(contains(lines_of(r.err).back(), "summary: 5 nodes: 1 ok, 1 incomplete, 3 failed")) << r.err;
  // The DaemonSet's namespace by default; its pods are never deleted by collect.
  EXPECT_TRUE(contains(calls().front(), "--namespace dpscope get pods -l app.kubernetes.io/name=dpscope"))
      << calls().front();
  EXPECT_TRUE(calls_with("delete").empty());
  EXPECT_TRUE(calls_with("debug").empty());
}

// packaging/dpscope-once, the DaemonSet's PID 1: runs the command once, says
// how it ended as its last stderr line, then stays up until SIGTERM.
TEST(DpscopeOnce, RunsOnceReportsTheExitCodeAndWaitsForTerm) {
  TempDir dir;
  RunResult cc = run({"cc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", dir.file("dpscope-once"),
                      source_path("packaging/dpscope-once.c")});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  // timeout exits 124 only when it had to send the signal: dpscope-once was still up.
  RunResult r = run({"timeout", "-s", "TERM", "1", dir.file("dpscope-once"), "/bin/sh", "-c",
                     "echo '{\"json\": 1}'; echo 'dpscope: note' >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_EQ(r.out, "{\"json\": 1}\n");
  EXPECT_EQ(r.err, "dpscope: note\ndpscope-once: /bin/sh exited 3\n");
  RunResult missing = run({"timeout", "-s", "TERM", "1", dir.file("dpscope-once"), dir.file("no-such-binary")});
  EXPECT_EQ(missing.exit_code, 124);
  EXPECT_TRUE(contains(missing.err, "dpscope-once: " + dir.file("no-such-binary") + " exited 127")) << missing.err;
  EXPECT_EQ(run({dir.file("dpscope-once")}).exit_code, 2);
}

// The manifest and `kubectl dpscope collect` agree, and the manifest asks for
// what --host needs and no more write access than that.
TEST(DaemonSetManifest, MatchesWhatCollectAndHostModeExpect) {
  std::string yaml = read_text(source_path("packaging/daemonset.yaml"));
  for (const char* needed : {
           "kind: DaemonSet", "namespace: dpscope",          // collect's default namespace
           "app.kubernetes.io/name: dpscope",                  // collect's default selector
           "hostPID: true",                                    // PID 1 is the node's init
           "- /usr/local/bin/dpscope-once\n            - /usr/local/bin/dpscope\n            - snapshot\n"
           "            - --host\n            - -o\n            - \"-\"",
           "name: dpscope\n          image:",                  // container name collect reads (-c dpscope)
           "mountPath: /host\n              readOnly: true",   // host root, read-only
           "path: /\n",                                        // ... of the whole node
           "fieldPath: spec.nodeName",                          // NODE_NAME
           "- operator: Exists",                                // every node
           "- name: tmp\n              mountPath: /tmp",         // the rule spool under a read-only root
           "emptyDir:",
       }) {
    EXPECT_TRUE(contains(yaml, needed)) << "packaging/daemonset.yaml lacks: " << needed;
  }
  std::string plugin = read_text(source_path("packaging/kubectl-dpscope"));
  EXPECT_TRUE(contains(plugin, "sel=${selector:-app.kubernetes.io/name=dpscope}"));
  EXPECT_TRUE(contains(plugin, "DPS_NAMESPACE=${DPS_NAMESPACE:-dpscope}"));
  EXPECT_TRUE(contains(plugin, "kc logs \"$pod\" -c dpscope"));
}

// What the plugin collects is what compare reads: node files, side by side.
TEST_F(Plugin, CompareReadsCollectedNodeSnapshots) {
  nodes("w1\nw2\n");
  set_snapshot(snapshot_with_chains(3));
  ASSERT_EQ(plugin({"cluster", "-o", dir.file("before"), "--image", "img"}).exit_code, 0);
  set_snapshot(snapshot_with_chains(0));
  ASSERT_EQ(plugin({"cluster", "-o", dir.file("after"), "--image", "img"}).exit_code, 0);
  RunResult cmp = run({dpscope_bin(), "compare", dir.file("before/w1.json"), dir.file("after/w1.json"), "--format",
                       "csv"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_TRUE(contains(cmp.out, "w1")) << cmp.out;
}

// `dpscope compare DIR_A DIR_B` on two collected clusters: DIR holds NODE.json
// files and a hidden .dpscope/ folder of logs that compare skips.
TEST_F(Plugin, CompareWorksOnTwoCollectedClusters) {
  nodes("w1\nw2\n");
  set_snapshot(snapshot_with_chains(3));
  ASSERT_EQ(plugin({"cluster", "-o", dir.file("before"), "--image", "img"}).exit_code, 0);
  set_snapshot(snapshot_with_chains(0));
  ASSERT_EQ(plugin({"cluster", "-o", dir.file("after"), "--image", "img"}).exit_code, 0);
  RunResult cmp = run({dpscope_bin(), "compare", dir.file("before"), dir.file("after"), "--format", "csv"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  // Both clusters, and the KUBE-SVC chains that went away (3 per node before, 0 after).
  EXPECT_TRUE(contains(cmp.out, "before")) << cmp.out;
  EXPECT_TRUE(contains(cmp.out, "after")) << cmp.out;
  EXPECT_TRUE(contains(cmp.out, "KUBE-SVC")) << cmp.out;
}

}  // namespace
}  // namespace dpscope::test
