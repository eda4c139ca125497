// Output hygiene and the one-node / many-nodes forms (issue 17): -o checked
// before anything is read, JSON errors in dpscope's words with FILE:LINE:COLUMN,
// the `dpscope import` hint for a tool's dump given as a snapshot, folders for
// compare / check / where / scale / verify with stray files skipped, one-node compare, --node,
// duplicate labels (snapshot --node: tests/integration/snapshot_cli_test.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

std::string kube_proxy() { return source_path("fixtures/snapshots/kind-kube-proxy.json"); }
std::string cilium() { return source_path("fixtures/snapshots/kind-cilium-kpr.json"); }
std::string save_text() { return source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt"); }

void copy(const std::string& from, const std::string& to) { std::filesystem::copy_file(from, to); }

// A cluster folder: the two kind nodes.
// An intent the kind nodes do not all program: verify's findings (exit 1) are not the point here.
const std::string kAnyIntent = std::string(DPSCOPE_SOURCE_DIR) + "/fixtures/upstream/kube-proxy-intent/overall-rules.intent.json";

void kind_cluster(const std::string& dir) {
  std::filesystem::create_directories(dir);
  copy(kube_proxy(), dir + "/kind-kube-proxy.json");
  copy(cilium(), dir + "/kind-cilium-kpr.json");
}

// ---------------------------------------------------------------- -o checked first

struct Destination {
  std::string path;
  std::string says;
};

std::vector<Destination> bad_destinations(const TempDir& dir) {
  return {
      {"/nonexistent-dps-dir/x/node.json", "/nonexistent-dps-dir/x: No such file or directory"},
      {dir.path(), "is a folder"},
      {"/proc/dps-cannot-write.json", "cannot write in folder /proc"},
  };
}

TEST(OutputFirst, ImportRefusesABadDestinationBeforeReading) {
  TempDir dir;
  for (const auto& d : bad_destinations(dir)) {
    // The input does not exist: the destination is checked first, so its error is the one said.
    auto r = run({dpscope_bin(), "import", "--iptables-save", dir.file("no-such-input.txt"), "-o", d.path});
    EXPECT_EQ(r.exit_code, 2) << d.path;
    EXPECT_NE(r.err.find("-o " + d.path + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(d.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no-such-input"), std::string::npos) << "read before checking -o: " << r.err;
  }
}

TEST(OutputFirst, SnapshotRefusesABadDestinationBeforeCollecting) {
  TempDir dir;
  for (const auto& d : bad_destinations(dir)) {
    // A network namespace that does not exist would fail the collection: -o fails first.
    auto r = run({dpscope_bin(), "snapshot", "--netns", "/nonexistent-dps-netns", "--no-agents", "-o", d.path});
    EXPECT_EQ(r.exit_code, 2) << d.path << ": " << r.err;
    EXPECT_NE(r.err.find(d.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("nonexistent-dps-netns"), std::string::npos) << r.err;
  }
}

TEST(OutputFirst, ReportCommandsRefuseABadDestinationBeforeReading) {
  TempDir dir;
  const std::string missing = dir.file("missing.json");
  for (const auto& d : bad_destinations(dir)) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{dpscope_bin(), "compare", missing, "-o", d.path},
          {dpscope_bin(), "check", missing, "--expect", "kube-proxy-free", "-o", d.path},
          {dpscope_bin(), "where", "10.96.0.10", missing, "-o", d.path},
          {dpscope_bin(), "scale", missing, "-o", d.path}}) {
      auto r = run(argv);
      EXPECT_EQ(r.exit_code, 2) << argv[1] << " " << d.path;
      EXPECT_NE(r.err.find(d.says), std::string::npos) << argv[1] << ": " << r.err;
    }
  }
}

TEST(OutputFirst, UnwritableFolderForAnUnprivilegedUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to run the command as nobody)";
  if (run({"setpriv", "--help"}).exit_code != 0) GTEST_SKIP() << "setpriv not installed";
  TempDir dir;
  std::filesystem::create_directory(dir.file("ro"));
  chmod(dir.path().c_str(), 0755);
  chmod(dir.file("ro").c_str(), 0555);
  copy(kube_proxy(), dir.file("a.json"));
  chmod(dir.file("a.json").c_str(), 0644);
  auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", dpscope_bin(), "compare",
                dir.file("a.json"), "-o", dir.file("ro/report.txt")});
  if (r.err.find("Permission denied") == std::string::npos && r.exit_code == 126) {
    GTEST_SKIP() << "nobody cannot run the build's binary here: " << r.err;
  }
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot write in folder " + dir.file("ro") + ": Permission denied"), std::string::npos)
      << r.err;
}

// ---------------------------------------------------------------- JSON errors

TEST(JsonErrors, SaidInDpscopesWordsWithTheirLineAndColumn) {
  TempDir dir;
  write_text(dir.file("bad.json"), "{\n  \"schema\": \"dpscope.snapshot/v1\",\n  \"node\": x\n}\n");
  // Compressed, the reader counts in the decompressed text.
  ASSERT_EQ(run({"zstd", "-q", dir.file("bad.json"), "-o", dir.file("bad.json.zst")}).exit_code, 0);
  for (const std::string file : {dir.file("bad.json"), dir.file("bad.json.zst")}) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{dpscope_bin(), "compare", file},
          {dpscope_bin(), "check", file, "--expect", "kube-proxy-free"},
          {dpscope_bin(), "where", "10.0.0.1", file},
          {dpscope_bin(), "scale", file}}) {
      auto r = run(argv);
      EXPECT_EQ(r.exit_code, 2) << argv[1];
      EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
      // Line 3, column 11: the "x" of `  "node": x`.
      EXPECT_NE(r.err.find(file + ":3:11: invalid JSON: syntax error while parsing value: invalid literal"),
                std::string::npos)
          << r.err;
    }
  }
  // A field of the wrong type.
  json snap = json::parse(read_text(kube_proxy()));
  snap["node"]["name"] = 42;
  write_text(dir.file("type.json"), snap.dump());
  auto t = run({dpscope_bin(), "compare", dir.file("type.json")});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_EQ(t.err.find("json.exception"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find(dir.file("type.json")), std::string::npos) << t.err;
  // The importers too.
  write_text(dir.file("nft.json"), "{\"nftables\": [ {\"table\": } ]}\n");
  auto i = run({dpscope_bin(), "import", "--nft-json", dir.file("nft.json"), "-o", dir.file("out.json")});
  EXPECT_EQ(i.exit_code, 2);
  EXPECT_EQ(i.err.find("json.exception"), std::string::npos) << i.err;
  EXPECT_NE(i.err.find(dir.file("nft.json") + ":1:26: invalid JSON"), std::string::npos) << i.err;  // the "}"
  write_text(dir.file("prog.json"), "[{\"id\": 1,}]");
  auto b = run({dpscope_bin(), "import", "--bpftool-prog", dir.file("prog.json"), "-o", dir.file("out.json")});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(b.err.find("json.exception"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find(dir.file("prog.json") + ":1:11: invalid JSON"), std::string::npos) << b.err;  // the "}"
  // And verify's intent input.
  write_text(dir.file("intent.json"), "{\"kind\": \"List\",\n \"items\": [,]}\n");
  auto v = run({dpscope_bin(), "verify", dir.file("intent.json"), kube_proxy()});
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.err.find("json.exception"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find(dir.file("intent.json") + ":2:12: invalid JSON"), std::string::npos) << v.err;  // the ","
}

// ---------------------------------------------------------------- import hints

struct Dump {
  std::string file;
  std::string flag;
};

TEST(ImportHint, ToolDumpsGivenAsSnapshotsNameTheImportFlag) {
  TempDir dir;
  write_text(dir.file("filter.S.txt"), "-P INPUT ACCEPT\n-P FORWARD DROP\n-N KUBE-FORWARD\n-A FORWARD -j KUBE-FORWARD\n");
  write_text(dir.file("map-dump.json"), "[{\"key\": [\"0x0a\"], \"value\": [\"0x01\"]}]\n");
  const std::vector<Dump> dumps = {
      {save_text(), "--iptables-save"},
      {source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.json"), "--nft-json"},
      {source_path("fixtures/upstream/bpftool/cilium-prog_show.json"), "--bpftool-prog"},
      {source_path("fixtures/upstream/bpftool/cilium-map_show.json"), "--bpftool-map"},
      {source_path("fixtures/upstream/bpftool/cilium-net_show.json"), "--bpftool-net"},
      {dir.file("filter.S.txt"), "--iptables-S TABLE="},
      {dir.file("map-dump.json"), "--bpftool-map map.json --bpftool-map-dump PIN="},
  };
  for (const auto& d : dumps) {
    for (const char* cmd : {"compare", "check", "where", "scale"}) {
      std::vector<std::string> argv = {dpscope_bin(), cmd};
      if (std::string(cmd) == "where") argv.push_back("10.96.0.10");
      argv.push_back(d.file);
      if (std::string(cmd) == "check") argv.insert(argv.end(), {"--expect", "kube-proxy-free"});
      auto r = run(argv);
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << d.file;
      EXPECT_NE(r.err.find("hint: "), std::string::npos) << cmd << " " << d.file << ": " << r.err;
      EXPECT_NE(r.err.find("dpscope import " + d.flag), std::string::npos) << cmd << ": " << r.err;
      EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    }
  }
}

TEST(ImportHint, AlsoForCompressedDumps) {
  TempDir dir;
  copy(save_text(), dir.file("ipt.txt"));
  ASSERT_EQ(run({"zstd", "-q", dir.file("ipt.txt"), "-o", dir.file("ipt.txt.zst")}).exit_code, 0);
  ASSERT_EQ(sh("gzip -c '" + source_path("fixtures/upstream/bpftool/cilium-map_show.json") + "' > '" +
               dir.file("map.json.gz") + "'").exit_code, 0);
  auto z = run({dpscope_bin(), "compare", dir.file("ipt.txt.zst")});
  EXPECT_EQ(z.exit_code, 2);
  EXPECT_NE(z.err.find("dpscope import --iptables-save " + dir.file("ipt.txt.zst")), std::string::npos) << z.err;
  auto g = run({dpscope_bin(), "compare", dir.file("map.json.gz"), kube_proxy()});
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_NE(g.err.find("dpscope import --bpftool-map"), std::string::npos) << g.err;
}

TEST(ImportHint, NoHintForADamagedSnapshot) {
  TempDir dir;
  std::string text = read_text(kube_proxy());
  write_text(dir.file("cut.json"), text.substr(0, text.size() / 2));
  auto r = run({dpscope_bin(), "compare", dir.file("cut.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("hint:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir.file("cut.json") + ":"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- folders

TEST(Folders, CheckWhereScaleReadAClusterFolder) {
  TempDir dir;
  kind_cluster(dir.file("c"));
  auto check = run({dpscope_bin(), "check", dir.file("c"), "--expect", "kube-proxy-free", "--format", "json"});
  EXPECT_EQ(check.exit_code, 1) << "the kube-proxy node fails: " << check.err;
  const json c = json::parse(check.out);
  EXPECT_EQ(c["schema"], "dpscope.check/v2");
  ASSERT_EQ(c["results"].size(), 2u);
  EXPECT_EQ(c["passed_nodes"], 1);
  EXPECT_FALSE(c["ok"]);
  // Each node's result is what check of that file alone says.
  for (const auto& r : c["results"]) {
    auto one = run({dpscope_bin(), "check", r["source"], "--expect", "kube-proxy-free", "--format", "json"});
    EXPECT_EQ(json::parse(one.out)["results"][0], r);
  }
  auto text = run({dpscope_bin(), "check", dir.file("c"), "--expect", "kube-proxy-free"});
  EXPECT_NE(text.out.find("FAIL (1 of 2 nodes pass)"), std::string::npos) << text.out;

  auto where = run({dpscope_bin(), "where", "10.96.0.10:53", dir.file("c"), "--format", "json"});
  EXPECT_EQ(where.exit_code, 0) << where.err;
  const json w = json::parse(where.out);
  ASSERT_EQ(w["nodes"].size(), 2u);
  auto where_files = run({dpscope_bin(), "where", "10.96.0.10:53", dir.file("c/kind-cilium-kpr.json"),
                          dir.file("c/kind-kube-proxy.json"), "--format", "json"});
  EXPECT_EQ(json::parse(where_files.out)["nodes"], w["nodes"]) << "a folder is its files, in name order";

  auto scale = run({dpscope_bin(), "scale", dir.file("c"), "--format", "json"});
  EXPECT_EQ(scale.exit_code, 0) << scale.err;
  auto scale_files = run({dpscope_bin(), "scale", dir.file("c/kind-cilium-kpr.json"),
                          dir.file("c/kind-kube-proxy.json"), "--format", "json"});
  EXPECT_EQ(scale.out, scale_files.out);
}

TEST(Folders, AStrayReportIsSkippedWithAWarning) {
  TempDir dir;
  kind_cluster(dir.file("a"));
  kind_cluster(dir.file("b"));
  // A saved report in the folder, as `compare -o DIR/report.json` leaves it.
  auto saved = run({dpscope_bin(), "compare", dir.file("a"), dir.file("b"), "--format", "json"});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  write_text(dir.file("a/report.json"), saved.out);
  write_text(dir.file("a/notes.json"), "[\"not a snapshot\"]");
  auto r = run({dpscope_bin(), "compare", dir.file("a"), dir.file("b"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, saved.out) << "the same report as without the stray files";
  EXPECT_NE(r.err.find("warning: " + dir.file("a/notes.json") + ": not a node snapshot"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: " + dir.file("a/report.json") + ": not a node snapshot"), std::string::npos) << r.err;
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{dpscope_bin(), "check", dir.file("a"), "--expect", "kube-proxy-iptables"},
        {dpscope_bin(), "where", "10.96.0.10", dir.file("a")},
        {dpscope_bin(), "scale", dir.file("a")},
        {dpscope_bin(), "verify", kAnyIntent, dir.file("a")}}) {
    auto x = run(argv);
    EXPECT_NE(x.exit_code, 2) << argv[1] << ": " << x.err;
    EXPECT_NE(x.err.find(dir.file("a/report.json") + ": not a node snapshot"), std::string::npos) << x.err;
  }
}

TEST(Folders, ADamagedSnapshotInAFolderIsStillAnError) {
  TempDir dir;
  kind_cluster(dir.file("a"));
  const std::string text = read_text(kube_proxy());
  write_text(dir.file("a/cut.json"), text.substr(0, text.size() / 2));
  auto r = run({dpscope_bin(), "compare", dir.file("a")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.file("a/cut.json")), std::string::npos) << r.err;
  auto c = run({dpscope_bin(), "check", dir.file("a"), "--expect", "kube-proxy-free"});
  EXPECT_EQ(c.exit_code, 2) << c.err;
  auto v = run({dpscope_bin(), "verify", kAnyIntent, dir.file("a")});
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_NE(v.err.find(dir.file("a/cut.json")), std::string::npos) << v.err;
}

TEST(Folders, AFolderWithoutSnapshotsIsAnError) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("e"));
  write_text(dir.file("e/report.json"), "{\"schema\": \"dpscope.compare/v1\"}");
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{dpscope_bin(), "compare", dir.file("e")},
        {dpscope_bin(), "check", dir.file("e"), "--expect", "kube-proxy-free"},
        {dpscope_bin(), "where", "10.0.0.1", dir.file("e")},
        {dpscope_bin(), "scale", dir.file("e")},
        {dpscope_bin(), "verify", kAnyIntent, dir.file("e")}}) {
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[1];
    EXPECT_NE(r.err.find(dir.file("e") + ": no node snapshots"), std::string::npos) << r.err;
  }
}

// ---------------------------------------------------------------- one node, labels, --node

TEST(OneNode, CompareOfOneSnapshotIsItsReport) {
  auto one = run({dpscope_bin(), "compare", kube_proxy(), "--format", "json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const json j = json::parse(one.out);
  ASSERT_EQ(j["sides"].size(), 1u);
  auto two = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--format", "json"});
  const json k = json::parse(two.out);
  // Its rows hold the values the first side has in a two-side report (which
  // also has the rows only the other side needs).
  std::map<std::string, json> two_rows;
  for (const auto& r : k["rows"]) two_rows[r["id"]] = r;
  size_t matched = 0;
  for (const auto& r : j["rows"]) {
    ASSERT_EQ(r["values"].size(), 1u) << r["id"];
    ASSERT_TRUE(two_rows.count(r["id"])) << r["id"];
    EXPECT_EQ(r["values"][0], two_rows[r["id"]]["values"][0]) << r["id"];
    ++matched;
  }
  EXPECT_GT(matched, 50u);
  // No finding that compares two sides.
  for (const auto& f : j["findings"]) {
    EXPECT_EQ(f.get<std::string>().find(" on kind-worker, "), std::string::npos) << f;
  }
  auto text = run({dpscope_bin(), "compare", kube_proxy(), "--width", "0"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out.find(" vs "), std::string::npos) << text.out.substr(0, 200);
  for (const char* f : {"markdown", "csv", "html"}) {
    EXPECT_EQ(run({dpscope_bin(), "compare", kube_proxy(), "--format", f}).exit_code, 0) << f;
  }
  TempDir dir;
  kind_cluster(dir.file("c"));
  auto cluster = run({dpscope_bin(), "compare", dir.file("c"), "--format", "json"});
  EXPECT_EQ(cluster.exit_code, 0) << cluster.err;
  EXPECT_EQ(json::parse(cluster.out)["sides"].size(), 1u);
}

TEST(Labels, DuplicateLabelsAreRefused) {
  auto r = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--label", "node", "--label", "node"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--label node is given twice"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace dpscope::test
