// A newcomer's first hour (issue 39): each case is the exact command, what it
// prints on stdout and stderr, and its exit code, run on the real binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::string kKubeProxy = "fixtures/snapshots/kind-kube-proxy.json";
const std::string kCilium = "fixtures/snapshots/kind-cilium-kpr.json";

std::string kube_proxy() { return source_path(kKubeProxy); }
std::string cilium() { return source_path(kCilium); }

// The binary run in `dir` (relative -o paths land there).
RunResult run_in(const std::string& dir, const std::string& args) {
  return sh("cd '" + dir + "' && '" + dpscope_bin() + "' " + args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// ---------------------------------------------------------------- 1. -o is a file

TEST(FirstUse, OutputGivenAFormatNameIsRefused) {
  TempDir dir;
  auto r = run_in(dir.path(), "compare '" + kube_proxy() + "' -o json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "dpscope: compare: -o json: \"json\" is a format name, and -o names the output file here (kubectl's -o "
            "is dpscope's --format): use --format json (to write a file named json, say -o ./json)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("json")));
  // What the format is called elsewhere, and a format the command does not have.
  auto md = run_in(dir.path(), "check '" + kube_proxy() + "' --expect cilium -o md");
  EXPECT_EQ(md.exit_code, 2);
  EXPECT_NE(md.err.find("use --format markdown"), std::string::npos) << md.err;
  auto yaml = run_in(dir.path(), "where 10.96.0.10 '" + kube_proxy() + "' -o yaml");
  EXPECT_EQ(yaml.exit_code, 2);
  EXPECT_NE(yaml.err.find("there is no yaml output; --format is one of text, markdown, json, csv"), std::string::npos)
      << yaml.err;
  // snapshot has no --format: refused before anything is read (no root needed to see it).
  auto snap = run_in(dir.path(), "snapshot -o json");
  EXPECT_EQ(snap.exit_code, 2);
  EXPECT_NE(snap.err.find("dpscope: snapshot: -o json: \"json\" is a format name"), std::string::npos) << snap.err;
  EXPECT_NE(snap.err.find("give a file name (-o node.json) or - for stdout"), std::string::npos) << snap.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("json")));
  // A file really named json: ./json.
  auto file = run_in(dir.path(), "compare '" + kube_proxy() + "' -o ./json");
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.err, "");
  EXPECT_EQ(read_text(dir.file("json")).rfind("dpscope compare: kind-worker", 0), 0u);
  // verify checked no -o at all before.
  auto verify = run_in(dir.path(), "verify '" + source_path("fixtures/upstream/kube-proxy-intent/overall-rules.intent.json") +
                                       "' '" + kube_proxy() + "' -o csv");
  EXPECT_EQ(verify.exit_code, 2) << verify.err;
  EXPECT_NE(verify.err.find("dpscope: verify: -o csv: \"csv\" is a format name"), std::string::npos) << verify.err;
}

// ---------------------------------------------------------------- 2. typos, -V, help CMD

TEST(FirstUse, UnknownCommandSuggestsTheNearest) {
  auto r = run({dpscope_bin(), "compre", "x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "dpscope: unknown command \"compre\"\ndid you mean compare?\nsee 'dpscope --help'\n");
  auto far = run({dpscope_bin(), "frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err, "dpscope: unknown command \"frobnicate\"\nsee 'dpscope --help'\n");
  auto prefix = run({dpscope_bin(), "verif", "x"});
  EXPECT_EQ(prefix.err, "dpscope: unknown command \"verif\"\ndid you mean verify?\nsee 'dpscope --help'\n");
  auto none = run({dpscope_bin()});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err.rfind("dpscope: no command given (snapshot, import, compare, check, where, scale, verify, "
                           "export, version, completion, man)\n",
                           0),
            0u)
      << none.err;
}

TEST(FirstUse, DashCapitalVIsTheVersion) {
  auto v = run({dpscope_bin(), "-V"});
  auto version = run({dpscope_bin(), "--version"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out, version.out);
  EXPECT_EQ(v.out.rfind("dpscope ", 0), 0u) << v.out;
}

TEST(FirstUse, HelpCommandIsThatCommandsHelp) {
  for (const char* cmd : {"compare", "check", "snapshot", "verify"}) {
    auto help = run({dpscope_bin(), "help", cmd});
    auto own = run({dpscope_bin(), cmd, "--help"});
    EXPECT_EQ(help.exit_code, 0) << cmd << help.err;
    EXPECT_EQ(help.out, own.out) << cmd;
    EXPECT_EQ(help.err, "");
  }
  EXPECT_EQ(run({dpscope_bin(), "help"}).out, run({dpscope_bin(), "--help"}).out);
  auto bad = run({dpscope_bin(), "help", "compre"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "dpscope: unknown command \"compre\"\ndid you mean compare?\nsee 'dpscope --help'\n");
}

// ---------------------------------------------------------------- 3. one voice

TEST(FirstUse, ParseErrorsSpeakLikeDpscope) {
  auto bogus = run({dpscope_bin(), "check", kube_proxy(), "--expect", "cilium", "--bogus"});
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_EQ(bogus.out, "");
  EXPECT_EQ(bogus.err, "dpscope: check: unknown option --bogus\nsee 'dpscope check --help'\n");
  auto required = run({dpscope_bin(), "check", kube_proxy()});
  EXPECT_EQ(required.exit_code, 2);
  EXPECT_EQ(required.err, "dpscope: check: --expect is required\nsee 'dpscope check --help'\n");
  auto top = run({dpscope_bin(), "--bogus"});
  EXPECT_EQ(top.exit_code, 2);
  EXPECT_EQ(top.err, "dpscope: unknown option --bogus\nsee 'dpscope --help'\n");
  // dpscope's own usage errors carry the same prefix, once.
  auto labels = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--label", "a", "--label", "a"});
  EXPECT_EQ(labels.exit_code, 2);
  EXPECT_EQ(labels.err, "dpscope: compare: --label a is given twice: each side needs its own label\n");
  auto dest = run({dpscope_bin(), "where", "10.96.0.10", kube_proxy(), "-o", "/nonexistent-dps/x.txt"});
  EXPECT_EQ(dest.exit_code, 2);
  EXPECT_EQ(dest.err.rfind("dpscope: where: -o /nonexistent-dps/x.txt: cannot write there", 0), 0u) << dest.err;
}

// ---------------------------------------------------------------- 4. help text

TEST(FirstUse, HelpShowsEachValueOnceAndNothingRunsIntoTheText) {
  for (const char* cmd :
       {"snapshot", "import", "compare", "check", "where", "scale", "verify", "export", "version", "completion", "man"}) {
    auto r = run({dpscope_bin(), cmd, "--help"});
    ASSERT_EQ(r.exit_code, 0) << cmd;
    for (const auto& line : lines_of(r.out)) {
      if (line.rfind("  -", 0) != 0) continue;  // option lines
      EXPECT_EQ(line.find("}:{"), std::string::npos) << cmd << ": " << line;
      EXPECT_EQ(line.find("UINT"), std::string::npos) << cmd << ": " << line;
      EXPECT_EQ(line.find("TEXT"), std::string::npos) << cmd << ": " << line;
      EXPECT_EQ(line.find("Excludes:"), std::string::npos) << cmd << ": " << line;
      EXPECT_EQ(line.find("nft|legacy:"), std::string::npos) << cmd << ": " << line;
    }
  }
  const std::string snapshot = run({dpscope_bin(), "snapshot", "--help"}).out;
  EXPECT_NE(snapshot.find("--threads N"), std::string::npos) << snapshot;
  EXPECT_NE(snapshot.find("0 to 64 (0: cores + 1)"), std::string::npos) << snapshot;
  EXPECT_NE(snapshot.find("/host/sys/fs/bpf) (not with --netns)"), std::string::npos) << snapshot;
  const std::string exp = run({dpscope_bin(), "export", "--help"}).out;
  EXPECT_NE(exp.find("--format {iptables-save,ip6tables-save,nft}=iptables-save\n"), std::string::npos) << exp;
  EXPECT_NE(exp.find("--backend {nft,legacy}"), std::string::npos) << exp;
}

TEST(FirstUse, NegativeWidthIsRefused) {
  auto r = run({dpscope_bin(), "compare", kube_proxy(), "--width", "-3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "dpscope: compare: --width: a number of columns, 0 for no limit, not -3\n"
                   "see 'dpscope compare --help'\n");
}

// ---------------------------------------------------------------- 5. one shape

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

TEST(FirstUse, CheckHasOneShapeForOneNodeOrMany) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("one"));
  std::filesystem::copy_file(kube_proxy(), dir.file("one/a.json"));
  auto one = run({dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free", "--format", "json"});
  auto two = run({dpscope_bin(), "check", kube_proxy(), cilium(), "--expect", "kube-proxy-free", "--format", "json"});
  auto folder = run({dpscope_bin(), "check", dir.file("one"), "--expect", "kube-proxy-free", "--format", "json"});
  ASSERT_EQ(one.exit_code, 1) << one.err;
  ASSERT_EQ(two.exit_code, 1) << two.err;
  ASSERT_EQ(folder.exit_code, 1) << folder.err;
  const json j1 = json::parse(one.out), j2 = json::parse(two.out), jf = json::parse(folder.out);
  EXPECT_EQ(j1["schema"], "dpscope.check/v2");
  EXPECT_EQ(keys(j1), keys(j2));
  EXPECT_EQ(keys(j1), keys(jf));
  EXPECT_EQ(j1["nodes"], 1);
  EXPECT_EQ(j2["nodes"], 2);
  ASSERT_EQ(j1["results"].size(), 1u);
  ASSERT_EQ(j2["results"].size(), 2u);
  EXPECT_EQ(j1["results"][0], j2["results"][0]);
  EXPECT_EQ(keys(j1["results"][0]), keys(j2["results"][1]));
  // The same script, `.results[] | select(.ok | not) | .node`, for one node and for two.
  EXPECT_EQ(j1["results"][0]["node"], "kind-worker");
  EXPECT_FALSE(j1["results"][0]["ok"]);
  EXPECT_TRUE(j2["results"][1]["ok"]);
  // CSV: one header.
  auto c1 = run({dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free", "--format", "csv"});
  auto c2 = run({dpscope_bin(), "check", kube_proxy(), cilium(), "--expect", "kube-proxy-free", "--format", "csv"});
  EXPECT_EQ(lines_of(c1.out).at(0), "\"node\",\"source\",\"kind\",\"id\",\"message\"\r");
  EXPECT_EQ(lines_of(c1.out).at(0), lines_of(c2.out).at(0));
}

TEST(FirstUse, EveryCommandOfSeveralInputsHasOneJsonShape) {
  const std::string intent = source_path("fixtures/upstream/kube-proxy-intent/overall-rules.intent.json");
  struct Case {
    std::vector<std::string> one, two;
  };
  const std::vector<Case> cases = {
      {{"compare", kube_proxy()}, {"compare", kube_proxy(), cilium()}},
      {{"where", "10.96.0.10", kube_proxy()}, {"where", "10.96.0.10", kube_proxy(), cilium()}},
      {{"scale", kube_proxy()}, {"scale", kube_proxy(), cilium()}},
      {{"verify", intent, kube_proxy()}, {"verify", intent, kube_proxy(), cilium()}},
      {{"check", kube_proxy(), "--expect", "cilium"}, {"check", kube_proxy(), cilium(), "--expect", "cilium"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> a = {dpscope_bin()}, b = {dpscope_bin()};
    a.insert(a.end(), c.one.begin(), c.one.end());
    b.insert(b.end(), c.two.begin(), c.two.end());
    for (auto* v : {&a, &b}) {
      v->push_back("--format");
      v->push_back("json");
    }
    auto r1 = run(a), r2 = run(b);
    ASSERT_LE(r1.exit_code, 1) << c.one[0] << r1.err;
    ASSERT_LE(r2.exit_code, 1) << c.one[0] << r2.err;
    const json j1 = json::parse(r1.out), j2 = json::parse(r2.out);
    EXPECT_EQ(keys(j1), keys(j2)) << c.one[0];
    EXPECT_EQ(j1["schema"], j2["schema"]) << c.one[0];
  }
}

// ---------------------------------------------------------------- 7. where, through the rules

// An nftables set of addresses without ports, used by one rule that also asks
// for tcp dport 8080 (nft -j list ruleset, nft 1.0.6's form).
std::string set_and_rule_ruleset() {
  json set_elem = json::array({"10.96.0.10"});
  json rule_expr = json::array(
      {{{"match", {{"op", "=="}, {"left", {{"payload", {{"protocol", "ip"}, {"field", "daddr"}}}}}, {"right", "@svc"}}}},
       {{"match", {{"op", "=="}, {"left", {{"payload", {{"protocol", "tcp"}, {"field", "dport"}}}}}, {"right", 8080}}}},
       {{"accept", nullptr}}});
  json j = {{"nftables",
             json::array({{{"metainfo", {{"version", "1.0.6"}, {"release_name", "Lester Gooch #5"}, {"json_schema_version", 1}}}},
                          {{"table", {{"family", "ip"}, {"name", "dps"}, {"handle", 1}}}},
                          {{"set", {{"family", "ip"}, {"name", "svc"}, {"table", "dps"}, {"type", "ipv4_addr"}, {"handle", 2},
                                    {"elem", set_elem}}}},
                          {{"chain", {{"family", "ip"}, {"table", "dps"}, {"name", "input"}, {"handle", 3}, {"type", "filter"},
                                      {"hook", "input"}, {"prio", 0}, {"policy", "accept"}}}},
                          {{"rule", {{"family", "ip"}, {"table", "dps"}, {"chain", "input"}, {"handle", 4}, {"expr", rule_expr}}}}})}};
  return j.dump();
}

TEST(FirstUse, WhereResolvesASetElementThroughTheRulesUsingIt) {
  TempDir dir;
  write_text(dir.file("nft.json"), set_and_rule_ruleset());
  auto imp = run({dpscope_bin(), "import", "--nft-json", dir.file("nft.json"), "--node", "n", "-o", dir.file("n.json")});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  // The only rule using the set asks for 8080: 9999 is programmed nowhere.
  auto other = run({dpscope_bin(), "where", "10.96.0.10:9999", dir.file("n.json")});
  EXPECT_EQ(other.exit_code, 1) << other.out;
  EXPECT_NE(other.out.find("programmed nowhere"), std::string::npos) << other.out;
  EXPECT_EQ(other.out.find("set element"), std::string::npos) << other.out;
  // 8080 is, and the place names the rule.
  auto port = run({dpscope_bin(), "where", "10.96.0.10:8080", dir.file("n.json"), "--format", "json"});
  ASSERT_EQ(port.exit_code, 0) << port.err;
  const json places = json::parse(port.out)["nodes"][0]["places"];
  ASSERT_EQ(places.size(), 1u) << places.dump(1);
  EXPECT_EQ(places[0]["field"], "set element");
  EXPECT_EQ(places[0]["detail"], "10.96.0.10, used by ip dps input #1 (dport 8080)");
  // The protocol form where prints: /tcp takes it, /udp does not.
  EXPECT_EQ(run({dpscope_bin(), "where", "10.96.0.10:8080/tcp", dir.file("n.json")}).exit_code, 0);
  EXPECT_EQ(run({dpscope_bin(), "where", "10.96.0.10:8080/udp", dir.file("n.json")}).exit_code, 1);
  // No port asked: the element, with its rule.
  auto any = run({dpscope_bin(), "where", "10.96.0.10", dir.file("n.json")});
  EXPECT_EQ(any.exit_code, 0);
  EXPECT_NE(any.out.find("[set element]  10.96.0.10, used by ip dps input #1 (dport 8080)"), std::string::npos)
      << any.out;
}

TEST(FirstUse, WhereTakesTheFormItPrints) {
  auto r = run({dpscope_bin(), "where", "10.96.225.41:80", cilium()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\\[frontend\\]  ([0-9.]+:[0-9]+/tcp)"))) << r.out;
  auto again = run({dpscope_bin(), "where", m[1].str(), cilium()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.substr(again.out.find('\n')), r.out.substr(r.out.find('\n')));
  auto udp = run({dpscope_bin(), "where", "10.96.225.41:80/udp", cilium()});
  EXPECT_EQ(udp.exit_code, 1) << udp.out;
  auto bad = run({dpscope_bin(), "where", "10.96.225.41/tcp", cilium()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "dpscope: where: '10.96.225.41/tcp': a protocol goes after a port (IP:PORT/proto, "
                     "[IPv6]:PORT/proto)\n");
}

// ---------------------------------------------------------------- 8. check names the leftovers

// kube-proxy's chains in the fixture's own text: every ":KUBE-..." of the
// iptables-save text but kubelet's three.
std::set<std::string> kube_proxy_chains_in_fixture() {
  std::set<std::string> out;
  std::istringstream in(read_text(source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt")));
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(":KUBE-", 0) != 0) continue;
    const std::string name = l.substr(1, l.find(' ') - 1);
    if (name != "KUBE-FIREWALL" && name != "KUBE-KUBELET-CANARY" && name != "KUBE-IPTABLES-HINT") out.insert(name);
  }
  return out;
}

TEST(FirstUse, CheckListsLeftoverChainsAndTheDocumentedCleanup) {
  const std::set<std::string> want = kube_proxy_chains_in_fixture();
  ASSERT_GT(want.size(), 10u);
  auto j = run({dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free", "--format", "json"});
  ASSERT_EQ(j.exit_code, 1) << j.err;
  const json r = json::parse(j.out)["results"][0];
  ASSERT_EQ(r["leftovers"].size(), 1u) << r.dump(1);
  EXPECT_EQ(r["leftovers"][0]["backend"], "iptables-nft");
  EXPECT_EQ(r["leftovers"][0]["count"], want.size());
  EXPECT_EQ(r["leftovers"][0]["names"].get<std::set<std::string>>(), want);
  std::vector<std::string> commands;
  for (const auto& c : r["cleanup"]) commands.push_back(c["command"]);
  EXPECT_EQ(commands, (std::vector<std::string>{"kube-proxy --cleanup", "iptables-save | grep -v KUBE | iptables-restore"}));
  EXPECT_NE(r["cleanup"][1]["source"].get<std::string>().find("docs.cilium.io/en/stable/network/kubernetes/kubeproxy-free/"),
            std::string::npos);
  // Text: the first ten names and a count, and the commands as lines to copy.
  auto t = run({dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free", "--width", "0"});
  EXPECT_EQ(t.exit_code, 1);
  std::string first;
  size_t i = 0;
  for (const auto& n : want) {
    if (i++ == 10) break;
    first += (first.empty() ? "" : ", ") + n;
  }
  EXPECT_NE(t.out.find("  left over in iptables-nft (" + std::to_string(want.size()) + " chains): " + first + ", ... (" +
                       std::to_string(want.size() - 10) + " more)\n"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("\n    kube-proxy --cleanup\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\n    iptables-save | grep -v KUBE | iptables-restore\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("dpscope runs nothing"), std::string::npos) << t.out;
  // A clean node: nothing left, nothing to clean.
  auto ok = run({dpscope_bin(), "check", cilium(), "--expect", "kube-proxy-free", "--format", "json"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_TRUE(json::parse(ok.out)["results"][0]["leftovers"].empty());
  EXPECT_TRUE(json::parse(ok.out)["results"][0]["cleanup"].empty());
}

// ---------------------------------------------------------------- 9. differences only, width on a pipe

TEST(FirstUse, CompareDiffOnlyHidesAndCountsEqualRows) {
  auto full = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--format", "json"});
  auto diff = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--format", "json", "--diff-only"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const json f = json::parse(full.out), d = json::parse(diff.out);
  // The oracle: a row is equal when both values are the same plain number or string.
  std::vector<std::string> differing;
  size_t equal = 0;
  for (const auto& row : f["rows"]) {
    const auto& v = row["values"];
    const bool plain = (v[0].is_number() || v[0].is_string()) && (v[1].is_number() || v[1].is_string());
    if (plain && v[0] == v[1]) {
      ++equal;
    } else {
      differing.push_back(row["id"]);
    }
  }
  ASSERT_GT(equal, 5u);
  std::vector<std::string> kept;
  for (const auto& row : d["rows"]) kept.push_back(row["id"]);
  EXPECT_EQ(kept, differing);
  EXPECT_EQ(d["equal_rows_hidden"], equal);
  EXPECT_FALSE(f.contains("equal_rows_hidden"));
  auto text = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--diff-only"});
  EXPECT_NE(text.out.find("  --diff-only: " + std::to_string(equal) + " rows equal on every side are hidden\n"),
            std::string::npos)
      << text.out;
  auto html = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--format", "html", "--diff-only"});
  EXPECT_NE(html.out.find("<p class=\"hidden-rows\">--diff-only: " + std::to_string(equal) +
                          " rows equal on every side are hidden</p>"),
            std::string::npos);
  auto one = run({dpscope_bin(), "compare", kube_proxy(), "--diff-only"});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.err, "dpscope: compare: --diff-only needs two sides or more (with one, every row is equal to itself)\n");
}

TEST(FirstUse, TextOnAPipeFitsOneHundredColumnsAndLosesNothing) {
  auto r = run({dpscope_bin(), "compare", kube_proxy(), cilium()});  // stdout is a pipe here
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t widest = 0;
  for (const auto& l : lines_of(r.out)) widest = std::max(widest, l.size());
  EXPECT_LE(widest, 100u) << r.out;
  // Every note is still there, in full: the unlimited form holds the same words.
  auto unlimited = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--width", "0"});
  auto words = [](const std::string& text) {
    std::multiset<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.insert(w);
    return out;
  };
  const auto narrow = words(r.out), wide = words(unlimited.out);
  for (const auto& w : wide) {
    EXPECT_TRUE(narrow.count(w)) << "lost on a pipe: " << w;
  }
}

}  // namespace
}  // namespace dpscope::test

namespace dpscope::test {
namespace {

// ---------------------------------------------------------------- 13. docs that agree with the binary

// The lines of a text between a line starting with `begin` and the next line starting with `end`.
std::string between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t b = text.find("\n" + begin);
  if (b == std::string::npos) return "";
  const size_t from = text.find('\n', b + 1) + 1;
  const size_t to = text.find("\n" + end, from);
  return to == std::string::npos ? "" : text.substr(from, to + 1 - from);
}

TEST(FirstUse, ReadmeDemoExcerptIsTheRealOutput) {
  auto made = sh("DPSCOPE='" + dpscope_bin() + "' sh '" + source_path("scripts/readme-demo.sh") + "'");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_NE(made.out.find("\nNode\n"), std::string::npos) << made.out;
  const std::string readme = read_text(source_path("README.md"));
  const std::string block = between(readme, "<!-- demo-excerpt:begin", "<!-- demo-excerpt:end");
  EXPECT_EQ(block, "```\n" + made.out + "```\n") << "README.md's demo excerpt is stale: run scripts/readme-demo.sh --write";
}

TEST(FirstUse, ExitCodesAreOneTextInHelpManPageAndCliMd) {
  const std::string help = run({dpscope_bin(), "--help"}).out;
  const size_t at = help.find("Exit codes:\n");
  ASSERT_NE(at, std::string::npos) << help;
  const std::string codes = help.substr(at, help.find("\n\n", at) + 1 - at);
  EXPECT_NE(codes.find("  1  a gate failed: check"), std::string::npos) << codes;
  EXPECT_NE(codes.find("verify"), std::string::npos) << codes;
  EXPECT_EQ(codes.find("comparison"), std::string::npos) << codes;  // compare has no gate: it exits 0
  const std::string cli_md = read_text(source_path("docs/cli.md"));
  EXPECT_NE(cli_md.find("```\n" + codes + "```\n"), std::string::npos) << "docs/cli.md's exit codes differ from --help:\n"
                                                                        << codes;
  const std::string man = run({dpscope_bin(), "man"}).out;
  std::istringstream in(codes);
  std::string line;
  std::getline(in, line);  // the title
  while (std::getline(in, line)) {
    std::string roff;
    for (char c : line.substr(2)) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(man.find("\n" + roff + "\n"), std::string::npos) << "dpscope(1) lacks: " << roff;
  }
}

TEST(FirstUse, CliMdTableHasEveryCommand) {
  const std::string help = run({dpscope_bin(), "--help"}).out;
  const std::string cli_md = read_text(source_path("docs/cli.md"));
  const std::string subcommands = between(help, "Subcommands:", "\n");
  size_t commands = 0;
  for (const auto& l : lines_of(subcommands)) {
    std::istringstream w(l);
    std::string name;
    if (!(w >> name)) continue;
    ++commands;
    EXPECT_NE(cli_md.find("\n| `" + name + "` | "), std::string::npos) << "docs/cli.md's table lacks " << name;
  }
  EXPECT_EQ(commands, 11u) << subcommands;
}

TEST(FirstUse, ReadmeSaysThePluginWasNotRunOnALiveCluster) {
  // Wherever the README offers the plugin, the same paragraph or block says so.
  const std::string readme = read_text(source_path("README.md"));
  size_t offers = 0;
  for (size_t at = readme.find("kubectl-dpscope"); at != std::string::npos; at = readme.find("kubectl-dpscope", at + 1)) {
    const size_t start = readme.rfind("\n\n", at), end = readme.find("\n\n", at);
    const std::string paragraph = readme.substr(start, end - start);
    EXPECT_NE(paragraph.find("live cluster"), std::string::npos) << paragraph;
    ++offers;
  }
  EXPECT_GE(offers, 2u);
}

}  // namespace
}  // namespace dpscope::test

namespace dpscope::test {
namespace {

// ---------------------------------------------------------------- 6. no bpffs is no pin

// A mount namespace of its own with every bpffs unmounted, and a dps-* network
// namespace for the netfilter part: the snapshot is complete (exit 0), says
// why there are no pins, and lists no ebpf.pins as unavailable.
TEST(FirstUse, SnapshotWithoutBpffsIsCompleteAndSaysWhy) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a mount namespace and a network namespace of its own)";
  if (sh("command -v unshare >/dev/null && command -v ip >/dev/null").exit_code != 0) GTEST_SKIP() << "no unshare/ip";
  const std::string ns = "dps-firstuse-" + std::to_string(getpid());
  ASSERT_EQ(sh("ip netns add " + ns).exit_code, 0);
  TempDir dir;
  auto r = sh("unshare --mount --propagation private sh -c '"
              "for m in $(awk \"\\$3 == \\\"bpf\\\" {print \\$2}\" /proc/self/mounts); do umount -l \"$m\"; done; "
              "exec \"$0\" snapshot --netns " + ns + " --no-agents -o \"$1\"' '" + dpscope_bin() + "' '" +
              dir.file("s.json") + "'");
  sh("ip netns delete " + ns);
  const json s = json::parse(read_text(dir.file("s.json")));
  for (const auto& u : s["unavailable"]) EXPECT_NE(u["section"], "ebpf.pins") << u.dump();
  if (s["unavailable"].empty()) EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dpscope: ebpf: no bpffs is mounted in this mount namespace, so nothing is pinned here"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace dpscope::test
