// packaging/kubectl-dpscope against a stand-in kubectl (tests/cli/plugin_fake_kubectl.sh):
// argument handling, what it asks kubectl to do, the snapshot copied out of
// the pod (not out of its log, which the stand-in rotates at 10 MiB as kubelet
// does) and checked, -o formats, version, failure reporting, parallelism, pod
// clean-up.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

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
  // The plain JSON of a snapshot file the plugin wrote (zstd -d for .zst: the standard tool).
  static std::string plain(const std::string& path) {
    if (path.ends_with(".zst")) return run({"zstd", "-q", "-d", "-c", path}).out;
    if (path.ends_with(".gz")) return run({"gzip", "-d", "-c", path}).out;
    return read_text(path);
  }
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
      while (words >> w && (w == "--kubeconfig" || w == "--context" || w == "--as" || w == "--request-timeout" ||
                            w == "--namespace")) {
        words >> w;
      }
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
      // -o is a format, as in kubectl; the old `-o FILE` gets the new spelling.
      {{"node", "a", "--image", "img", "-o", "a.json"}, "-o is the output format (json, yaml, name, wide), as in kubectl; write the snapshot to a file with --file a.json"},
      {{"cluster", "--image", "img", "-o", "out"}, "put the snapshots in a folder with --dir out"},
      {{"node", "a", "--image", "img", "-o", "yaml"}, "a snapshot has no YAML form"},
      {{"node", "a", "--image", "img", "-o", "name"}, "-o name describes the snapshot file, so it needs --file FILE"},
      {{"node", "a", "--image", "img", "--dir", "d"}, "--dir is for cluster and collect"},
      {{"node", "a", "--image", "img", "--compress", "gzip"}, "the --file name says the compression"},
      {{"cluster", "--image", "img"}, "--dir DIR is required"},
      {{"cluster", "--image", "img", "--file", "x.json"}, "--file is for node"},
      {{"cluster", "--dir", "-", "--image", "img"}, "needs a directory"},
      {{"cluster", "--dir", "out", "--image", "img", "--compress", "xz"}, "--compress is zstd, gzip or none, not 'xz'"},
      {{"collect", "--dir", "out", "--compress", "gzip"}, "keep the DaemonSet's compression"},
      {{"cluster", "--dir", "out", "--image", "img", "--parallel", "0"}, "--parallel must be a positive integer"},
      {{"cluster", "--dir", "out", "--image", "img", "--parallel", "x2"}, "--parallel must be a positive integer"},
      {{"cluster", "--dir", "out", "--image", "img", "extra"}, "unexpected argument 'extra'"},
      {{"version", "-o", "yaml"}, "version: -o json or no -o"},
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
  EXPECT_TRUE(contains(help.out, "\n  cluster ")) << help.out;
  EXPECT_TRUE(contains(help.out, "\n  version ")) << help.out;
  EXPECT_TRUE(contains(help.out, "kubectl dpscope COMMAND --help")) << help.out;
}

// kubectl's own flags, spelled as kubectl spells them, reach every kubectl call.
TEST_F(Plugin, KubectlFlagsArePassedToEveryKubectlCall) {
  nodes("a\nb\n");
  const std::string flags = "--kubeconfig " + dir.file("kc.yaml") + " --context prod --as admin@example.org "
                            "--request-timeout 30s --namespace debug ";
  RunResult r = plugin({"node", "a", "--image", "img", "--file", dir.file("a.json"), "--kubeconfig", dir.file("kc.yaml"),
                        "--context", "prod", "--as", "admin@example.org", "--request-timeout", "30s", "-n", "debug"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(calls().empty());
  for (const auto& c : calls()) EXPECT_EQ(c.rfind(flags, 0), 0u) << c;
  fs::remove(dir.file("calls.log"));
  // The --flag=value spellings, on cluster (whose nodes run in xargs' children).
  RunResult c = plugin({"cluster", "--dir", dir.file("c"), "--image", "img", "--kubeconfig=" + dir.file("kc.yaml"),
                        "--context=prod", "--as=admin@example.org", "--request-timeout=30s", "--namespace=debug"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_GE(calls_with("debug").size(), 2u);
  for (const auto& call : calls()) EXPECT_EQ(call.rfind(flags, 0), 0u) << call;
  // collect too, with its own default namespace unless -n says otherwise.
  write_text(dir.file("ds-pods"), "dpscope-x1 n1\n");
  fs::remove(dir.file("calls.log"));
  RunResult k = plugin({"collect", "--dir", dir.file("k"), "--kubeconfig", dir.file("kc.yaml"), "--as", "me"});
  ASSERT_EQ(k.exit_code, 0) << k.err;
  for (const auto& call : calls()) {
    if (call.rfind("\"}{end}", 0) == 0) continue;  // the rest of get pods' jsonpath, after its "\n"
    EXPECT_EQ(call.rfind("--kubeconfig " + dir.file("kc.yaml") + " --as me --namespace dpscope ", 0), 0u) << call;
  }
  // kubectl's duration syntax; anything else is refused before kubectl is asked.
  fs::remove(dir.file("calls.log"));
  for (const char* bad : {"soon", "30x", "-1", "1m-"}) {
    RunResult b = plugin({"node", "a", "--image", "img", "--request-timeout", bad});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_TRUE(contains(b.err, "--request-timeout is a number of seconds or a duration")) << b.err;
  }
  EXPECT_TRUE(calls().empty());
  for (const char* good : {"0", "45", "1m30s", "1.5h"}) {
    RunResult g = plugin({"node", "a", "--image", "img", "--file", dir.file("g.json"), "--request-timeout", good});
    EXPECT_EQ(g.exit_code, 0) << good << g.err;
  }
}

// `kubectl dpscope COMMAND --help` is that command's help, the same as `help
// COMMAND`; every option it lists is one the command takes.
TEST_F(Plugin, EachCommandHasItsOwnHelp) {
  const std::map<std::string, std::string> usage_line = {
      {"node", "Usage: kubectl dpscope node NODE "},
      {"cluster", "Usage: kubectl dpscope cluster --dir DIR "},
      {"collect", "Usage: kubectl dpscope collect --dir DIR "},
      {"verify", "Usage: kubectl dpscope verify --dir DIR "},
      {"version", "Usage: kubectl dpscope version "},
  };
  for (const auto& [command, line] : usage_line) {
    RunResult h = plugin({command, "--help"});
    EXPECT_EQ(h.exit_code, 0) << command;
    EXPECT_EQ(h.out.rfind(line, 0), 0u) << command << ":\n" << h.out;
    for (const auto& [other, other_line] : usage_line) {
      if (other != command) EXPECT_FALSE(contains(h.out, other_line)) << command << " shows " << other << "'s help";
    }
    EXPECT_EQ(plugin({"help", command}).out, h.out) << command;
    EXPECT_EQ(plugin({command, "-h"}).out, h.out) << command;
    if (command != "version") {
      for (const char* flag : {"--kubeconfig FILE", "--context NAME", "-n, --namespace NS", "--as USER",
                               "--request-timeout T", "Exit codes"}) {
        EXPECT_TRUE(contains(h.out, flag)) << command << " lacks " << flag;
      }
    }
  }
  RunResult unknown = plugin({"help", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "help: unknown command 'frobnicate'")) << unknown.err;
  // A usage error points at the command's own help.
  RunResult bad = plugin({"cluster", "--bogus"});
  EXPECT_TRUE(contains(bad.err, "see 'kubectl dpscope cluster --help'")) << bad.err;
  EXPECT_TRUE(calls().empty());
}

// Completion as kubectl asks for it (kubectl_complete-dpscope WORDS..., cobra's
// __complete answer: candidates, then ":DIRECTIVE").
TEST_F(Plugin, CompletesCommandsFlagsValuesAndNodeNames) {
  nodes("worker-1\nworker-2\ncontrol-plane\n");
  write_text(dir.file("contexts"), "kind-a\nprod\n");
  write_text(dir.file("namespaces"), "default\ndebug\n");
  auto complete = [&](std::vector<std::string> words) {
    std::vector<std::string> argv = {"env", "PATH=" + dir.file("bin") + ":" + std::getenv("PATH"),
                                     "FAKE_KUBECTL_DIR=" + dir.path(), source_path("packaging/kubectl_complete-dpscope")};
    argv.insert(argv.end(), words.begin(), words.end());
    RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> values;
    for (const auto& l : lines_of(r.out)) values.push_back(l.substr(0, l.find('\t')));
    return values;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(complete({""}), (V{"node", "cluster", "collect", "verify", "version", "help", ":4"}));
  EXPECT_EQ(complete({"c"}), (V{"cluster", "collect", ":4"}));
  EXPECT_EQ(complete({"node", "w"}), (V{"worker-1", "worker-2", ":4"}));
  EXPECT_EQ(complete({"node", "--context", ""}), (V{"kind-a", "prod", ":4"}));
  EXPECT_EQ(complete({"cluster", "-n", "d"}), (V{"default", "debug", ":4"}));
  EXPECT_EQ(complete({"cluster", "--compress", ""}), (V{"zstd", "gzip", "none", ":4"}));
  EXPECT_EQ(complete({"node", "a", "-o", ""}), (V{"json", "yaml", "name", "wide", ":4"}));
  EXPECT_EQ(complete({"verify", "--format", "m"}), (V{"markdown", ":4"}));
  EXPECT_EQ(complete({"node", "a", "--file", ""}), (V{":0"}));     // file names
  EXPECT_EQ(complete({"cluster", "--dir", ""}), (V{":16"}));      // directories
  EXPECT_EQ(complete({"help", "v"}), (V{"verify", "version", ":4"}));
  // The kubectl flags already typed apply to the lookup.
  fs::remove(dir.file("calls.log"));
  complete({"node", "--kubeconfig", dir.file("kc.yaml"), "--context", "prod", ""});
  ASSERT_EQ(calls().size(), 1u);
  EXPECT_EQ(calls()[0], "--kubeconfig " + dir.file("kc.yaml") + " --context prod get nodes -o name");
  // Every command's flags, each of them one the command accepts.
  for (const char* command : {"node", "cluster", "collect", "verify", "version"}) {
    V flags = complete({command, "--"});
    ASSERT_GT(flags.size(), 2u) << command;
    EXPECT_EQ(flags.back(), ":4");
    flags.pop_back();
    EXPECT_NE(std::find(flags.begin(), flags.end(), "--help"), flags.end()) << command;
    if (std::string(command) != "version") {
      for (const char* kubectl_flag : {"--kubeconfig", "--context", "--namespace", "--as", "--request-timeout"}) {
        EXPECT_NE(std::find(flags.begin(), flags.end(), kubectl_flag), flags.end()) << command << " " << kubectl_flag;
      }
    }
    for (const auto& f : flags) {
      RunResult r = plugin({command, f, "x", "--help"});  // --help: nothing runs
      EXPECT_FALSE(contains(r.err, "unknown option")) << command << " " << f << ": " << r.err;
    }
  }
}

// One exit-code contract for node, cluster, collect and verify: the worst
// node outcome wins, 1 (failed) > 5 (nothing readable) > 3 (incomplete) > 0,
// so a one-node cluster exits as `node` does.
TEST_F(Plugin, OneExitCodeContractForEveryCommand) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> nodes;  // name, mode
    int exit_code;
  };
  const std::vector<Case> cases = {
      {{{"a", "ok"}, {"b", "ok"}}, 0},
      {{{"a", "incomplete"}, {"b", "incomplete"}}, 3},
      {{{"a", "ok"}, {"b", "incomplete"}}, 3},
      {{{"a", "nothing"}, {"b", "incomplete"}}, 5},
      {{{"a", "nothing"}, {"b", "exit4"}}, 1},
      {{{"a", "incomplete"}, {"b", "debug-fails"}}, 1},
  };
  write_text(dir.file("run_ms"), "20");  // the outcomes matter here, not the waiting
  int n = 0;
  for (const auto& c : cases) {
    std::string list;
    for (const auto& [name, m] : c.nodes) {
      list += name + "\n";
      mode(name, m);
    }
    nodes(list);
    const std::string out = dir.file("cluster-" + std::to_string(n++));
    RunResult r = plugin({"cluster", "--dir", out, "--image", "img", "-o", "json"});
    EXPECT_EQ(r.exit_code, c.exit_code) << list << r.err;
    // The collection result says which node is which.
    const auto doc = nlohmann::json::parse(r.out);
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      const std::string& m = c.nodes[i].second;
      const std::string want = m == "ok" ? "ok" : m == "incomplete" ? "incomplete" : m == "nothing" ? "unreadable" : "failed";
      EXPECT_EQ(doc["nodes"][i]["status"], want) << m;
    }
  }
  // One node: `node` and a one-node `cluster` (and `collect` of one pod) agree.
  for (const char* m : {"ok", "incomplete", "nothing", "exit4"}) {
    mode("solo", m);
    nodes("solo\n");
    RunResult one = plugin({"node", "solo", "--image", "img", "--file", dir.file(std::string("solo-") + m + ".json")});
    RunResult all = plugin({"cluster", "--dir", dir.file(std::string("solo-") + m), "--image", "img"});
    EXPECT_EQ(one.exit_code, all.exit_code) << m << "\n" << one.err << "\n" << all.err;
    if (std::string(m) == "nothing") continue;  // a DaemonSet pod is never "nothing" in the stand-in
    write_text(dir.file("ds-pods"), "dpscope-solo solo\n");
    RunResult ds = plugin({"collect", "--dir", dir.file(std::string("ds-") + m)});
    EXPECT_EQ(ds.exit_code, one.exit_code) << m << "\n" << ds.err;
  }
  EXPECT_EQ(plugin({"node", "solo", "--image", "img", "--file", dir.file("x.json")}).exit_code, 1);
  // The contract is written in every command's help.
  for (const char* command : {"node", "cluster", "collect", "verify"}) {
    EXPECT_TRUE(contains(plugin({command, "--help"}).out, "the worst node outcome wins")) << command;
  }
}

TEST_F(Plugin, NodeWritesTheSnapshotAndDeletesThePod) {
  nodes("worker-1\n");
  RunResult r = plugin({"node", "worker-1", "--image", "reg.example/dpscope:1", "--file", dir.file("w1.json.zst"),
                        "--context", "prod", "-n", "debug"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // Compressed as it travelled: the very bytes the pod wrote.
  EXPECT_EQ(read_text(dir.file("w1.json.zst")), read_text(dir.file("files/worker-1.snapshot.json.zst")));
  EXPECT_EQ(plain(dir.file("w1.json.zst")), expected_for("worker-1"));
  // dpscope's own messages from the pod log reach stderr, marked with the node;
  // dpscope-once's end line is the plugin's, not the user's.
  EXPECT_TRUE(contains(r.err, "worker-1: dpscope: kubectl-debug pod on node worker-1")) << r.err;
  EXPECT_FALSE(contains(r.err, "dpscope-once:")) << r.err;
  // What kubectl was asked: a sysadmin debug pod with the image, the node name
  // for dpscope, the host snapshot into a file in the pod that dpscope-once
  // reports on and keeps until it is copied out with exec; every call with the
  // context and namespace.
  auto debug = calls_with("debug");
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0],
            "--context prod --namespace debug debug node/worker-1 --image=reg.example/dpscope:1 "
            "--profile=sysadmin --env=NODE_NAME=worker-1 -- /usr/local/bin/dpscope-once --result "
            "/tmp/snapshot.json.zst /usr/local/bin/dpscope snapshot --host -o /tmp/snapshot.json.zst");
  for (const auto& c : calls()) EXPECT_EQ(c.rfind("--context prod --namespace debug ", 0), 0u) << c;
  auto exec = calls_with("exec");
  ASSERT_EQ(exec.size(), 1u);
  EXPECT_TRUE(contains(exec[0], " -c debugger -- /usr/local/bin/dpscope-once --cat /tmp/snapshot.json.zst"))
      << exec[0];
  EXPECT_EQ(calls_with("delete").size(), 1u);
  EXPECT_EQ(live_pods(), 0u);
  EXPECT_EQ(leftover_workdirs(), 0u);
}

TEST_F(Plugin, NodeWritesPlainOrGzipAsTheFileNameSays) {
  // Plain JSON (file or stdout): carried gzip-compressed, decompressed here.
  RunResult r = plugin({"node", "n1", "--image=img", "--file", dir.file("n1.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(dir.file("n1.json")), expected_for("n1"));
  EXPECT_TRUE(contains(calls_with("debug").back(), "-o /tmp/snapshot.json.gz")) << calls_with("debug").back();
  RunResult gz = plugin({"node", "n2", "--image=img", "--file", dir.file("n2.json.gz")});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_EQ(read_text(dir.file("n2.json.gz")), read_text(dir.file("files/n2.snapshot.json.gz")));
  EXPECT_EQ(model::load_snapshot(dir.file("n2.json.gz")).node.name, "n2");
}

TEST_F(Plugin, NodeToStdoutIsPlainJsonAndMessagesGoToStderr) {
  RunResult r = plugin({"node", "n1", "--image=img"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_for("n1"));
  auto parsed = model::from_json_text(r.out, "stdout");
  EXPECT_EQ(parsed.node.name, "n1");
  // -o json without --file is the snapshot itself, as kubectl -o json is the object.
  RunResult j = plugin({"node", "n1", "--image=img", "-o", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.out, expected_for("n1"));
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
      {"no-file", 1, "dpscope exited 0 but pod node-debugger-n1-"},
      {"image-pull", 1, "cannot start: ErrImagePull (image img)"},
      {"short-copy", 1, "transfer cut short"},
      {"corrupt-copy", 1, "is corrupt: "},
      {"ends", 1, "without dpscope-once's last line: is img built from this version"},
  };
  for (const auto& c : cases) {
    mode("n1", c.mode);
    for (const char* suffix : {".json.zst", ".json"}) {
      if (c.mode == "corrupt-copy" && std::string(suffix) == ".json") continue;  // below, with gzip
      std::string out = dir.file("n1-" + c.mode + suffix);
      RunResult r = plugin({"node", "n1", "--image", "img", "--file", out});
      EXPECT_EQ(r.exit_code, c.exit_code) << c.mode << ": " << r.err;
      EXPECT_TRUE(contains(r.err, "kubectl-dpscope: n1: ")) << c.mode << ": " << r.err;
      EXPECT_TRUE(contains(r.err, c.message)) << c.mode << suffix << ": " << r.err;
      EXPECT_FALSE(fs::exists(out)) << c.mode;
      EXPECT_EQ(live_pods(), 0u) << c.mode;
    }
  }
  // A changed byte in a gzip copy: gzip's CRC catches it.
  mode("n1", "corrupt-copy");
  RunResult r = plugin({"node", "n1", "--image", "img", "--file", dir.file("n1.json.gz")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "is corrupt: gzip: ")) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("n1.json.gz")));
  // Every pod that was created was deleted.
  EXPECT_EQ(calls_with("delete").size(), 12u);
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
  RunResult r = plugin({"node", "n1", "--image", "img", "--file", dir.file("n1.json")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(read_text(dir.file("n1.json")), expected_for("n1"));
  EXPECT_TRUE(contains(r.err, "n1: dpscope: snapshot incomplete: 1 section unavailable")) << r.err;
  EXPECT_TRUE(contains(r.err, "snapshot incomplete")) << r.err;
}

TEST_F(Plugin, NothingReadableIsItsOwnFailureWithExitFive) {
  mode("n1", "nothing");
  RunResult r = plugin({"node", "n1", "--image", "img", "--file", dir.file("n1.json")});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("n1.json")));
  EXPECT_TRUE(contains(r.err, "n1: nothing could be read on the node (dpscope exit 5: every section unavailable; "
                              "the pod needs kubectl debug --profile=sysadmin or the DaemonSet's privileges): "
                              "dpscope: nothing could be read (netfilter, ebpf): EPERM: run as root"))
      << r.err;
}

TEST_F(Plugin, ClusterCollectsEveryNodeReportsFailuresAndSummarises) {
  nodes("a\nb\nc\nd\ne\nf\n");
  mode("b", "debug-fails");
  mode("d", "exit4");
  mode("e", "incomplete");
  mode("f", "short-copy");
  write_text(dir.file("run_ms"), "400");
  std::string out = dir.file("cluster-a");
  RunResult r = plugin({"cluster", "--dir", out, "--image", "img", "--parallel", "2", "--context", "kind-a"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  // Snapshots of the nodes that worked, zstd-compressed, byte for byte what
  // the pods wrote, and nothing else.
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(out)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{".dpscope", "a.json.zst", "c.json.zst", "e.json.zst"}));
  for (const char* n : {"a", "c", "e"}) {
    EXPECT_EQ(read_text(out + "/" + n + ".json.zst"), read_text(dir.file(std::string("files/") + n + ".snapshot.json.zst")));
    EXPECT_EQ(plain(out + "/" + n + ".json.zst"), expected_for(n)) << n;
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
  EXPECT_TRUE(contains(r.err, "  f: copy of /tmp/snapshot.json.zst from pod node-debugger-f-")) << r.err;
  EXPECT_TRUE(contains(lines_of(r.err).back(), "summary: 6 nodes: 2 ok, 1 incomplete, 0 unreadable, 3 failed")) << r.err;
  EXPECT_TRUE(contains(read_text(out + "/.dpscope/d.log"), "dpscope: internal error: boom on d"));
  EXPECT_TRUE(contains(read_text(out + "/.dpscope/e.log"), "dpscope: snapshot incomplete"));
  // Never more than --parallel pods at once, and it did run them side by side.
  EXPECT_EQ(max_live(), 2);
  EXPECT_EQ(live_pods(), 0u);
  EXPECT_EQ(calls_with("delete").size(), 5u);  // every pod created (b's never was)
  for (const auto& c : calls()) EXPECT_EQ(c.rfind("--context kind-a ", 0), 0u) << c;
  EXPECT_EQ(leftover_workdirs(), 0u);
}

// -o as in kubectl: json and yaml (the collection result, for scripts), name, wide.
TEST_F(Plugin, OutputFormatsDescribeTheCollection) {
  nodes("a\nb\nc\n");
  mode("b", "exit4");
  mode("c", "incomplete");
  RunResult j = plugin({"cluster", "--dir", dir.file("j"), "--image", "img", "-o", "json", "--compress", "gzip"});
  EXPECT_EQ(j.exit_code, 1) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["schema"], "dpscope.collection/v1");
  ASSERT_EQ(doc["nodes"].size(), 3u);
  EXPECT_EQ(doc["nodes"][0]["node"], "a");
  EXPECT_EQ(doc["nodes"][0]["status"], "ok");
  EXPECT_EQ(doc["nodes"][0]["file"], dir.file("j/a.json.gz"));
  EXPECT_EQ(doc["nodes"][0]["bytes"], fs::file_size(dir.file("j/a.json.gz")));
  EXPECT_TRUE(doc["nodes"][0]["reason"].is_null());
  EXPECT_TRUE(doc["nodes"][0]["seconds"].is_number());
  EXPECT_EQ(doc["nodes"][1]["status"], "failed");
  EXPECT_TRUE(doc["nodes"][1]["bytes"].is_null());  // unknown, not 0
  EXPECT_TRUE(doc["nodes"][1]["file"].is_null());
  EXPECT_EQ(doc["nodes"][1]["reason"], "dpscope exited 4: dpscope: internal error: boom on b");
  EXPECT_EQ(doc["nodes"][2]["status"], "incomplete");
  EXPECT_EQ(doc["summary"], nlohmann::json::parse(R"({"nodes": 3, "ok": 1, "incomplete": 1, "unreadable": 0, "failed": 1})"));
  EXPECT_EQ(model::load_snapshot(dir.file("j/a.json.gz")).node.name, "a");

  RunResult y = plugin({"cluster", "--dir", dir.file("y"), "--image", "img", "-o", "yaml", "--compress", "none"});
  EXPECT_EQ(y.exit_code, 1);
  EXPECT_TRUE(contains(y.out, "schema: dpscope.collection/v1\nnodes:\n- node: \"a\"\n  status: ok\n  file: \"" +
                                  dir.file("y/a.json") + "\"\n  bytes: " +
                                  std::to_string(fs::file_size(dir.file("y/a.json"))) + "\n"))
      << y.out;
  EXPECT_TRUE(contains(y.out, "  bytes: null\n")) << y.out;
  EXPECT_TRUE(contains(y.out, "summary:\n  nodes: 3\n  ok: 1\n  incomplete: 1\n  unreadable: 0\n  failed: 1\n")) << y.out;
  EXPECT_EQ(read_text(dir.file("y/a.json")), expected_for("a"));

  RunResult n = plugin({"cluster", "--dir", dir.file("n"), "--image", "img", "-o", "name"});
  EXPECT_EQ(n.out, "node/a\nnode/c\n");
  RunResult w = plugin({"cluster", "--dir", dir.file("w"), "--image", "img", "-o", "wide"});
  auto rows = lines_of(w.out);
  ASSERT_EQ(rows.size(), 4u) << w.out;
  EXPECT_EQ(rows[0].rfind("NODE ", 0), 0u);
  EXPECT_TRUE(contains(rows[0], "STATUS") && contains(rows[0], "SIZE") && contains(rows[0], "SECONDS")) << rows[0];
  EXPECT_TRUE(contains(rows[1], dir.file("w/a.json.zst"))) << rows[1];
  EXPECT_TRUE(contains(rows[2], "failed") && contains(rows[2], "boom on b")) << rows[2];
  // node with --file: the same result for one node.
  RunResult one = plugin({"node", "a", "--image", "img", "--file", dir.file("a.json.zst"), "-o", "name"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "node/a\n");
}

TEST_F(Plugin, ClusterRunsNodesInParallel) {
  nodes("n1\nn2\nn3\nn4\n");
  write_text(dir.file("run_ms"), "300");
  RunResult serial = plugin({"cluster", "--dir", dir.file("s"), "--image", "img", "--parallel", "1"});
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  EXPECT_EQ(max_live(), 1);
  fs::remove(dir.file("max_live"));
  // Long enough that all four pods are alive together even on a busy machine.
  write_text(dir.file("run_ms"), "1500");
  RunResult wide = plugin({"cluster", "--dir", dir.file("p"), "--image", "img", "--parallel", "4"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(max_live(), 4);
  EXPECT_TRUE(contains(lines_of(wide.err).back(), "summary: 4 nodes: 4 ok, 0 incomplete, 0 unreadable, 0 failed")) << wide.err;
}

TEST_F(Plugin, ClusterWithoutNodesOrApiAccessFails) {
  nodes("");
  RunResult none = plugin({"cluster", "--dir", dir.file("o"), "--image", "img"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(contains(none.err, "no nodes")) << none.err;
  write_text(dir.file("get-nodes-fails"), "");
  RunResult denied = plugin({"cluster", "--dir", dir.file("o"), "--image", "img", "-l", "role=worker"});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_TRUE(contains(denied.err, "kubectl get nodes failed: error: You must be logged in")) << denied.err;
  EXPECT_TRUE(contains(calls().back(), "get nodes -l role=worker -o name")) << calls().back();
}

TEST_F(Plugin, CollectCopiesTheDaemonSetPodsSnapshots) {
  write_text(dir.file("ds-pods"),
             "dpscope-x1 n1\ndpscope-x2 n2\ndpscope-x3 n3\ndpscope-x4 n4\ndpscope-x5 n5\ndpscope-x6 Bad_Node\n");
  mode("n2", "exit4");
  mode("n3", "incomplete");
  mode("n4", "short-copy");
  mode("n5", "running");
  std::string out = dir.file("ds");
  RunResult r = plugin({"collect", "--dir", out, "--parallel", "3", "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(out)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{".dpscope", "n1.json.zst", "n3.json.zst"}));
  EXPECT_EQ(plain(out + "/n1.json.zst"), expected_for("n1"));
  EXPECT_EQ(plain(out + "/n3.json.zst"), expected_for("n3"));
  EXPECT_TRUE(contains(r.err, "skipping pod dpscope-x6: node 'Bad_Node' is not a node name")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n2: dpscope exited 4: dpscope: internal error: boom on n2")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n4: copy of /tmp/snapshot.json.zst from pod dpscope-x4 is ")) << r.err;
  EXPECT_TRUE(contains(r.err, "  n5: timed out after 1s waiting for pod dpscope-x5")) << r.err;
  EXPECT_TRUE(contains(lines_of(r.err).back(), "summary: 5 nodes: 1 ok, 1 incomplete, 0 unreadable, 3 failed")) << r.err;
  // The DaemonSet's namespace by default; its pods are never deleted by collect.
  EXPECT_TRUE(contains(calls().front(), "--namespace dpscope get pods -l app.kubernetes.io/name=dpscope"))
      << calls().front();
  EXPECT_TRUE(contains(calls_with("exec").front(), " -c dpscope -- /usr/local/bin/dpscope-once --cat /tmp/snapshot.json.zst"));
  EXPECT_TRUE(calls_with("delete").empty());
  EXPECT_TRUE(calls_with("debug").empty());
}

// packaging/dpscope-once, the pods' PID 1: runs the command once, says how it
// ended (and the size of its result file) as its last stderr line, stays up
// until SIGTERM; `--cat FILE` hands the file out through kubectl exec.
TEST(DpscopeOnce, RunsOnceReportsTheExitCodeAndResultAndWaitsForTerm) {
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
  const std::string result = dir.file("out.json.zst");
  RunResult with = run({"timeout", "-s", "TERM", "1", dir.file("dpscope-once"), "--result", result, "/bin/sh", "-c",
                        "printf 'twelve bytes' > " + result});
  EXPECT_EQ(with.exit_code, 124);
  EXPECT_EQ(with.err, "dpscope-once: /bin/sh exited 0; result " + result + " 12 bytes\n");
  RunResult none = run({"timeout", "-s", "TERM", "1", dir.file("dpscope-once"), "--result", dir.file("nope"),
                        "/bin/sh", "-c", "exit 4"});
  EXPECT_EQ(none.err, "dpscope-once: /bin/sh exited 4; result " + dir.file("nope") + " missing\n");
  // --cat: the file's bytes, all of them (binary too).
  std::string binary;
  for (int i = 0; i < 200000; ++i) binary += static_cast<char>(i * 7);
  write_text(dir.file("blob"), binary);
  RunResult cat = run({dir.file("dpscope-once"), "--cat", dir.file("blob")});
  EXPECT_EQ(cat.exit_code, 0);
  EXPECT_TRUE(cat.out == binary);
  RunResult gone = run({dir.file("dpscope-once"), "--cat", dir.file("nope")});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.err, "dpscope-once: " + dir.file("nope") + ": No such file or directory\n");
  RunResult missing = run({"timeout", "-s", "TERM", "1", dir.file("dpscope-once"), dir.file("no-such-binary")});
  EXPECT_EQ(missing.exit_code, 124);
  EXPECT_TRUE(contains(missing.err, "dpscope-once: " + dir.file("no-such-binary") + " exited 127")) << missing.err;
  EXPECT_EQ(run({dir.file("dpscope-once")}).exit_code, 2);
  EXPECT_EQ(run({dir.file("dpscope-once"), "--result", "x"}).exit_code, 2);
}

// The manifest and `kubectl dpscope collect` agree, and the manifest asks for
// what --host needs and no more write access than that.
TEST(DaemonSetManifest, MatchesWhatCollectAndHostModeExpect) {
  std::string yaml = read_text(source_path("packaging/daemonset.yaml"));
  for (const char* needed : {
           "kind: DaemonSet", "namespace: dpscope",          // collect's default namespace
           "app.kubernetes.io/name: dpscope",                  // collect's default selector
           "hostPID: true",                                    // PID 1 is the node's init
           // One snapshot into a compressed file that dpscope-once reports on and keeps.
           "- /usr/local/bin/dpscope-once\n            - --result\n            - /tmp/snapshot.json.zst\n"
           "            - /usr/local/bin/dpscope\n            - snapshot\n"
           "            - --host\n            - -o\n            - /tmp/snapshot.json.zst\n",
           "name: dpscope\n          image:",                  // container name collect reads (-c dpscope)
           "mountPath: /host\n              readOnly: true",   // host root, read-only
           "path: /\n",                                        // ... of the whole node
           "fieldPath: spec.nodeName",                          // NODE_NAME
           "- operator: Exists",                                // every node
           "- name: tmp\n              mountPath: /tmp",         // the snapshot and the rule spool under a read-only root
           "emptyDir:",
       }) {
    EXPECT_TRUE(contains(yaml, needed)) << "packaging/daemonset.yaml lacks: " << needed;
  }
  std::string plugin = read_text(source_path("packaging/kubectl-dpscope"));
  EXPECT_TRUE(contains(plugin, "sel=${selector:-app.kubernetes.io/name=dpscope}"));
  EXPECT_TRUE(contains(plugin, "DPS_NAMESPACE=${DPS_NAMESPACE:-dpscope}"));
  EXPECT_TRUE(contains(plugin, "wait_for_end \"$pod\" dpscope \"$work\" no"));
}

// What the plugin collects is what compare reads: node files, side by side.
TEST_F(Plugin, CompareReadsCollectedNodeSnapshots) {
  nodes("w1\nw2\n");
  set_snapshot(snapshot_with_chains(3));
  ASSERT_EQ(plugin({"cluster", "--dir", dir.file("before"), "--image", "img"}).exit_code, 0);
  fs::remove_all(dir.file("files"));
  set_snapshot(snapshot_with_chains(0));
  ASSERT_EQ(plugin({"cluster", "--dir", dir.file("after"), "--image", "img", "--compress", "gzip"}).exit_code, 0);
  RunResult cmp = run({dpscope_bin(), "compare", dir.file("before/w1.json.zst"), dir.file("after/w1.json.gz"),
                       "--format", "csv"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_TRUE(contains(cmp.out, "w1")) << cmp.out;
}

// `dpscope compare DIR_A DIR_B` on two collected clusters: DIR holds
// NODE.json.zst files and a hidden .dpscope/ folder of logs that compare skips.
TEST_F(Plugin, CompareWorksOnTwoCollectedClusters) {
  nodes("w1\nw2\n");
  set_snapshot(snapshot_with_chains(3));
  ASSERT_EQ(plugin({"cluster", "--dir", dir.file("before"), "--image", "img"}).exit_code, 0);
  fs::remove_all(dir.file("files"));
  set_snapshot(snapshot_with_chains(0));
  ASSERT_EQ(plugin({"cluster", "--dir", dir.file("after"), "--image", "img"}).exit_code, 0);
  RunResult cmp = run({dpscope_bin(), "compare", dir.file("before"), dir.file("after"), "--format", "csv"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  // Both clusters, and the KUBE-SVC chains that went away (3 per node before, 0 after).
  EXPECT_TRUE(contains(cmp.out, "before")) << cmp.out;
  EXPECT_TRUE(contains(cmp.out, "after")) << cmp.out;
  EXPECT_TRUE(contains(cmp.out, "\"KUBE-SVC chains: total\",6,0,")) << cmp.out;
}

// `kubectl dpscope verify`: the cluster's Services and EndpointSlices from
// kubectl, every node's snapshot as cluster takes it, then the local dpscope
// verify of the one against the other (kube-proxy's own overall test objects
// and the rules it generated from them).
TEST_F(Plugin, VerifyComparesTheClusterIntentWithEveryNode) {
  nodes("test-node\n");
  fs::create_directories(dir.file("node-file"));
  const std::string imported = dir.file("imported.json");
  ASSERT_EQ(run({dpscope_bin(), "import", "--iptables-save",
                 source_path("fixtures/upstream/kube-proxy-iptables/overall-iptables-rules.saved-nft.txt"), "--node",
                 "test-node", "-o", imported})
                .exit_code,
            0);
  ASSERT_EQ(run({"zstd", "-q", imported, "-o", dir.file("node-file/test-node")}).exit_code, 0);
  const std::string intent = read_text(source_path("fixtures/upstream/kube-proxy-intent/overall-rules.intent.json"));
  write_text(dir.file("intent.json"), intent);
  RunResult r = plugin({"verify", "--dir", dir.file("c"), "--image", "img", "--format", "json"},
                       "DPSCOPE_BIN=" + dpscope_bin());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "\"schema\": \"dpscope.verify/v1\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"services_ok_everywhere\": 6")) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("c/.dpscope/intent.json")));
  bool asked = false;
  for (const auto& c : calls_with("get")) asked = asked || contains(c, "get services,endpointslices -A -o json");
  EXPECT_TRUE(asked);
  // The exit-code contract: verified, but from an incomplete snapshot: 3, as cluster says.
  mode("test-node", "incomplete");
  RunResult partial = plugin({"verify", "--dir", dir.file("c1"), "--image", "img"}, "DPSCOPE_BIN=" + dpscope_bin());
  EXPECT_EQ(partial.exit_code, 3) << partial.out << partial.err;
  EXPECT_TRUE(contains(partial.err, "some snapshots are incomplete (see above): verified as far as they go")) << partial.err;
  fs::remove(dir.file("mode/test-node"));

  // The cluster moved on (svc3 deleted): the node still programs it.
  nlohmann::json without = nlohmann::json::parse(intent);
  auto& items = without["items"];
  items.erase(std::find_if(items.begin(), items.end(), [](const nlohmann::json& i) {
    return i["kind"] == "Service" && i["metadata"]["name"] == "svc3";
  }));
  write_text(dir.file("intent.json"), without.dump());
  fs::remove_all(dir.file("files"));
  r = plugin({"verify", "--dir", dir.file("c2"), "--image", "img"}, "DPSCOPE_BIN=" + dpscope_bin());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "stale-service")) << r.out;
  EXPECT_TRUE(contains(r.out, "ns3/svc3:p80")) << r.out;

  EXPECT_EQ(plugin({"cluster", "--dir", dir.file("c3"), "--image", "img", "--format", "json"}).exit_code, 2);
}

// `kubectl dpscope version`: the plugin's version (the project's) and the
// local dpscope's own --version output, as text or JSON.
TEST_F(Plugin, VersionPrintsThePluginAndTheDpscopeVersions) {
  const std::string cmake = read_text(source_path("CMakeLists.txt"));
  const size_t at = cmake.find("project(dpscope VERSION ");
  ASSERT_NE(at, std::string::npos);
  const std::string version = cmake.substr(at + 24, cmake.find(' ', at + 24) - at - 24);
  const RunResult dps = run({dpscope_bin(), "--version"});
  ASSERT_EQ(dps.exit_code, 0);
  RunResult r = plugin({"version"}, "DPSCOPE_BIN=" + dpscope_bin());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kubectl-dpscope " + version + "\n" + dps.out);
  EXPECT_EQ(plugin({"--version"}, "DPSCOPE_BIN=" + dpscope_bin()).out, r.out);
  RunResult j = plugin({"version", "-o", "json"}, "DPSCOPE_BIN=" + dpscope_bin());
  EXPECT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["plugin"]["version"], version);
  EXPECT_EQ(doc["dpscope"]["path"], dpscope_bin());
  EXPECT_EQ(doc["dpscope"]["version"].get<std::string>() + "\n", dps.out);
  RunResult none = plugin({"version"}, "DPSCOPE_BIN=" + dir.file("no-dpscope"));
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_TRUE(contains(none.out, "dpscope: not found")) << none.out;
  EXPECT_TRUE(nlohmann::json::parse(plugin({"version", "-o", "json"}, "DPSCOPE_BIN=" + dir.file("no-dpscope")).out)["dpscope"].is_null());
  EXPECT_TRUE(calls().empty());  // no cluster needed
}

// A 20k-service kube-proxy node (fixtures/scenarios/gen-kube-proxy.sh, through
// dpscope import): ~80 MB of JSON, eight times the 10 MiB log rotation. The old
// way (the JSON through the pod log) loses its start; the plugin copies the
// compressed file out of the pod intact, and dpscope reads it back.
class PluginLargeNode : public Plugin {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new TempDir;
    RunResult gen = sh(source_path("fixtures/scenarios/gen-kube-proxy.sh") + " iptables 20000 5 > " +
                       fixture_->file("save.txt"));
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    RunResult im = run({dpscope_bin(), "import", "--iptables-save", fixture_->file("save.txt"), "--node", "big",
                        "-o", fixture_->file("big.json.zst")});
    ASSERT_EQ(im.exit_code, 0) << im.err;
  }
  static void TearDownTestSuite() { delete fixture_; }
  static TempDir* fixture_;
};
TempDir* PluginLargeNode::fixture_ = nullptr;

TEST_F(PluginLargeNode, A20kServiceNodeIsCollectedIntactCompressed) {
  const std::string source = fixture_->file("big.json.zst");
  const std::string json = plain(source);
  ASSERT_GT(json.size(), 7u * 10485760);
  fs::create_directories(dir.file("node-file"));
  fs::copy_file(source, dir.file("node-file/big"));
  nodes("big\n");
  RunResult r = plugin({"cluster", "--dir", dir.file("c"), "--image", "img", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The very bytes, compressed (a few MB, not ~80).
  EXPECT_TRUE(read_text(dir.file("c/big.json.zst")) == read_text(source));
  EXPECT_LT(fs::file_size(dir.file("c/big.json.zst")) * 10, json.size());
  EXPECT_EQ(nlohmann::json::parse(r.out)["nodes"][0]["bytes"], fs::file_size(source));
  // Read back: every Service's chain is there.
  RunResult where = run({dpscope_bin(), "where", "172.16.78.31", dir.file("c/big.json.zst")});
  EXPECT_NE(where.exit_code, 2) << where.err;
  const model::Snapshot s = model::load_snapshot(dir.file("c/big.json.zst"));
  size_t svc = 0;
  for (const auto& t : s.netfilter.tables) {
    for (const auto& c : t.chains) svc += c.name.rfind("KUBE-SVC-", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(svc, 20000u);

  // The old way, against the same stand-in: the JSON through the pod's log
  // comes back as its last rotated file only -- no complete snapshot.
  RunResult debug = run({"env", "FAKE_KUBECTL_DIR=" + dir.path(), dir.file("bin/kubectl"), "debug", "node/big",
                         "--image=img", "--profile=sysadmin", "--", "/usr/local/bin/dpscope", "snapshot", "--host",
                         "-o", "-"});
  ASSERT_EQ(debug.exit_code, 0) << debug.err;
  const std::string pod = debug.out.substr(23, debug.out.find(' ', 23) - 23);
  usleep(300 * 1000);
  RunResult log = run({"env", "FAKE_KUBECTL_DIR=" + dir.path(), dir.file("bin/kubectl"), "logs", pod, "-c", "debugger"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_LE(log.out.size(), 10485760u);
  EXPECT_GT(log.out.size(), 0u);
  // The document's opening "{" line (what the old plugin looked for) is gone.
  EXPECT_NE(log.out[0], '{');
  EXPECT_EQ(log.out.find("\n{"), std::string::npos) << "the log still holds the JSON's start";
}

}  // namespace
}  // namespace dpscope::test
