// The command line behaves like the tools its users already use (issue 17):
// --version / `version -j` with the git commit, libraries and kernel features
// checked against the standard tools; each command's --help with its own
// examples; completion scripts run in real bash, zsh and fish; the man page
// rendered by man(1) without warnings; --color; progress only on a terminal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::vector<std::string> kCommands = {"snapshot", "import",  "compare",    "check", "where",
                                            "scale",    "verify",  "export",     "version", "completion", "man"};

std::string kube_proxy() { return source_path("fixtures/snapshots/kind-kube-proxy.json"); }
std::string cilium() { return source_path("fixtures/snapshots/kind-cilium-kpr.json"); }

bool have(const std::string& tool) { return sh("command -v " + tool + " >/dev/null 2>&1").exit_code == 0; }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// ---------------------------------------------------------------- version

TEST(Version, CommitIsTheCheckoutsAndLibrariesAreNamed) {
  auto r = run({dpscope_bin(), "version", "-j"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json v = json::parse(r.out);
  EXPECT_EQ(v["schema"], "dpscope.version/v1");
  const std::string commit = v["commit"];
  auto git = sh("git -C " + source_path("") + " rev-parse --short=12 HEAD 2>/dev/null");
  if (git.exit_code == 0) {
    // The binary under test is built from this checkout (the commit is taken at each build).
    EXPECT_EQ(commit.substr(0, 12), trim(git.out)) << commit;
  } else {
    EXPECT_EQ(commit, "unknown");
  }
  std::map<std::string, std::string> libs;
  for (const auto& l : v["libraries"]) libs[l["name"]] = l["version"];
  for (const char* name : {"libnftnl", "libmnl", "libbpf", "libzstd", "zlib", "CLI11", "nlohmann-json"}) {
    ASSERT_TRUE(libs.count(name)) << name;
    EXPECT_NE(libs[name], "unknown") << name;
    EXPECT_NE(libs[name], "") << name;
  }
  // The oracle: pkg-config knows the versions the build used.
  for (const char* pc : {"libnftnl", "libmnl"}) {
    auto p = run({"pkg-config", "--modversion", pc});
    if (p.exit_code == 0) {
      EXPECT_EQ(libs[pc], trim(p.out)) << pc;
    }
  }
  auto p = run({"pkg-config", "--modversion", "libbpf"});
  if (p.exit_code == 0) {
    EXPECT_EQ(trim(p.out).rfind(libs["libbpf"], 0), 0u) << libs["libbpf"] << " vs " << p.out;  // 1.1 of 1.1.2
  }
}

TEST(Version, KernelFeaturesMatchThisMachine) {
  auto r = run({dpscope_bin(), "version", "-j"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json v = json::parse(r.out);
  EXPECT_EQ(v["kernel"]["release"], trim(run({"uname", "-r"}).out));
  std::map<std::string, json> f;
  for (const auto& x : v["kernel"]["features"]) f[x["id"]] = x;
  for (const char* id : {"btf", "bpffs", "nf_tables", "ip_tables", "cgroup2"}) {
    ASSERT_TRUE(f.count(id)) << id;
    const std::string state = f[id]["state"];
    EXPECT_TRUE(state == "yes" || state == "no" || state == "unknown") << id << ": " << state;
    if (state != "yes") {
      EXPECT_FALSE(f[id]["detail"].get<std::string>().empty()) << id << ": a no says why";
    }
  }
  EXPECT_EQ(f["btf"]["state"], std::filesystem::exists("/sys/kernel/btf/vmlinux") ? "yes" : "no");
  // findmnt / stat -f are the oracles for the mounts.
  auto bpf = sh("grep -c ' bpf ' /proc/self/mounts");
  EXPECT_EQ(f["bpffs"]["state"], bpf.exit_code == 0 && std::stoi(bpf.out) > 0 ? "yes" : "no");
  auto cg = run({"stat", "-f", "-c", "%T", "/sys/fs/cgroup"});
  if (cg.exit_code == 0) {
    EXPECT_EQ(f["cgroup2"]["state"], trim(cg.out) == "cgroup2fs" ? "yes" : "no") << cg.out;
  }
  EXPECT_EQ(f["nf_tables"]["state"], std::filesystem::exists("/sys/module/nf_tables") ? "yes" : "no");
}

TEST(Version, FlagAndCommandPrintTheSameText) {
  auto flag = run({dpscope_bin(), "--version"});
  auto cmd = run({dpscope_bin(), "version"});
  ASSERT_EQ(flag.exit_code, 0);
  ASSERT_EQ(cmd.exit_code, 0);
  EXPECT_EQ(flag.out, cmd.out);
  EXPECT_EQ(flag.out.rfind("dpscope 0.", 0), 0u) << flag.out;
  for (const char* word : {"commit", "libnftnl", "libmnl", "libbpf", "libzstd", "zlib", "CLI11", "nlohmann-json",
                           "BTF", "bpffs", "nf_tables", "ip_tables", "cgroup v2"}) {
    EXPECT_NE(flag.out.find(word), std::string::npos) << word << "\n" << flag.out;
  }
}

// ---------------------------------------------------------------- help

TEST(Help, TopLevelListsEachCommandOnOneLine) {
  auto r = run({dpscope_bin(), "--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const auto& c : kCommands) {
    size_t n = 0;
    for (const auto& l : lines(r.out)) {
      if (l.rfind("  " + c + " ", 0) == 0) ++n;
    }
    EXPECT_EQ(n, 1u) << c << "\n" << r.out;
  }
  // The long snapshot description is not in the command list.
  EXPECT_EQ(r.out.find("Nothing is changed"), std::string::npos) << r.out;
}

TEST(Help, EachCommandHasItsOwnExamples) {
  for (const auto& c : kCommands) {
    auto r = run({dpscope_bin(), c, "--help"});
    ASSERT_EQ(r.exit_code, 0) << c;
    const size_t ex = r.out.find("Examples:");
    ASSERT_NE(ex, std::string::npos) << c << "\n" << r.out;
    EXPECT_EQ(r.out.find("Examples:", ex + 1), std::string::npos) << c << ": one examples block\n" << r.out;
    // Every example of this command's block is about this command.
    for (const auto& l : lines(r.out.substr(ex))) {
      if (l.rfind("  dpscope ", 0) == 0) {
        EXPECT_EQ(l.rfind("  dpscope " + c, 0), 0u) << c << ": " << l;
      }
    }
    // Not the top level's exit-code footer.
    EXPECT_EQ(r.out.find("Run `dpscope COMMAND --help`"), std::string::npos) << c;
  }
}

TEST(Help, SnapshotShowsTheKubectlFormWithoutATty) {
  auto r = run({dpscope_bin(), "snapshot", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find(" -it "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kubectl debug node/worker-1 -q -i --profile=sysadmin"), std::string::npos) << r.out;
  // The form docs/kubectl-debug.md recommends (the plain one-liner).
  const std::string doc = read_text(source_path("docs/kubectl-debug.md"));
  EXPECT_NE(doc.find("kubectl debug node/worker-1 -q -i --profile=sysadmin"), std::string::npos);
  EXPECT_NE(r.out.find("--node"), std::string::npos);
}

// ---------------------------------------------------------------- completion

std::string script(const std::string& shell, const TempDir& dir) {
  auto r = run({dpscope_bin(), "completion", shell});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string path = dir.file("dpscope." + shell);
  write_text(path, r.out);
  return path;
}

// COMPREPLY after completing `words` (the last one is being completed) in bash.
std::set<std::string> bash_complete(const std::string& file, const std::vector<std::string>& words,
                                    const std::string& cwd = "/") {
  std::string arr;
  for (const auto& w : words) arr += " '" + w + "'";
  const std::string cmd = "cd '" + cwd + "' && source '" + file + "' && COMP_WORDS=(" + arr +
                          ") && COMP_CWORD=" + std::to_string(words.size() - 1) +
                          " && _dpscope && printf '%s\\n' \"${COMPREPLY[@]}\"";
  auto r = run({"bash", "--norc", "--noprofile", "-c", cmd});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::set<std::string> out;
  for (const auto& l : lines(r.out)) {
    if (!l.empty()) out.insert(l);
  }
  return out;
}

TEST(Completion, BashCompletesCommandsFlagsValuesAndFiles) {
  TempDir dir;
  const std::string f = script("bash", dir);
  EXPECT_EQ(bash_complete(f, {"dpscope", "c"}), (std::set<std::string>{"compare", "check", "completion"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", ""}).size(), kCommands.size());
  const auto flags = bash_complete(f, {"dpscope", "compare", "--"});
  for (const char* flag : {"--label", "--format", "--services", "--output", "--color", "--width", "--help"}) {
    EXPECT_TRUE(flags.count(flag)) << flag;
  }
  EXPECT_FALSE(flags.count("--expect")) << "check's flag, not compare's";
  EXPECT_EQ(bash_complete(f, {"dpscope", "check", "--format", ""}),
            (std::set<std::string>{"text", "markdown", "json", "csv"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", "check", "--expect", "kube-proxy-ipt"}),
            (std::set<std::string>{"kube-proxy-iptables"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", "compare", "--color", "=", "al"}), (std::set<std::string>{"always"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", "completion", ""}), (std::set<std::string>{"bash", "zsh", "fish"}));
  write_text(dir.file("node-a.json"), "{}");
  write_text(dir.file("node-b.json.zst"), "");
  EXPECT_EQ(bash_complete(f, {"dpscope", "compare", "node-"}, dir.path()),
            (std::set<std::string>{"node-a.json", "node-b.json.zst"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", "import", "--nft-json", "node-a"}, dir.path()),
            (std::set<std::string>{"node-a.json"}));
  EXPECT_EQ(bash_complete(f, {"dpscope", "compare", "--width", ""}, dir.path()).size(), 0u) << "a number";
}

// zsh: the script sourced (its compdef call recorded; ZshLoadsFromFpathWithCompinit
// checks the real registration), then _dpscope called with the words as the
// completion system sets them, compadd and _files recording what they were offered.
std::set<std::string> zsh_complete(const std::string& file, const std::vector<std::string>& words) {
  std::string arr;
  for (const auto& w : words) arr += " '" + w + "'";
  const std::string cmd = "compdef() { [[ $1 == _dpscope && $2 == dpscope ]] || print -u2 bad compdef $@ }\n"
                          "source '" + file + "'\n"
                          "compadd() { local -a w; w=(\"${@[(r)--,-1]}\"); shift w; print -rl -- $w }\n"
                          "_files() { print -r -- '<files>' }\n"
                          "compset() { : }\n"
                          "words=(" + arr + "); CURRENT=" + std::to_string(words.size()) + "; _dpscope";
  auto r = run({"zsh", "-f", "-c", cmd});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::set<std::string> out;
  for (const auto& l : lines(r.out)) {
    if (!l.empty()) out.insert(l);
  }
  return out;
}

TEST(Completion, ZshCompletesCommandsFlagsValuesAndFiles) {
  if (!have("zsh")) GTEST_SKIP() << "zsh not installed (scripts/deps.sh installs it)";
  TempDir dir;
  const std::string f = script("zsh", dir);
  auto cmds = zsh_complete(f, {"dpscope", ""});
  for (const auto& c : kCommands) EXPECT_TRUE(cmds.count(c)) << c;
  EXPECT_EQ(cmds.size(), kCommands.size());
  const auto flags = zsh_complete(f, {"dpscope", "check", "--"});
  for (const char* flag : {"--expect", "--format", "--output", "-o", "--color", "--width", "--help"}) {
    EXPECT_TRUE(flags.count(flag)) << flag;
  }
  EXPECT_FALSE(flags.count("--services"));
  EXPECT_EQ(zsh_complete(f, {"dpscope", "compare", "--format", ""}),
            (std::set<std::string>{"text", "markdown", "json", "csv", "html"}));
  EXPECT_EQ(zsh_complete(f, {"dpscope", "compare", "a.json", ""}), (std::set<std::string>{"<files>"}));
  EXPECT_EQ(zsh_complete(f, {"dpscope", "snapshot", "-o", ""}), (std::set<std::string>{"<files>"}));
  EXPECT_EQ(zsh_complete(f, {"dpscope", "snapshot", "--threads", ""}).size(), 0u);
}

TEST(Completion, ZshLoadsFromFpathWithCompinit) {
  if (!have("zsh")) GTEST_SKIP() << "zsh not installed (scripts/deps.sh installs it)";
  TempDir dir;
  auto r = run({dpscope_bin(), "completion", "zsh"});
  ASSERT_EQ(r.exit_code, 0);
  std::filesystem::create_directory(dir.file("fn"));
  write_text(dir.file("fn/_dpscope"), r.out);
  auto z = run({"zsh", "-f", "-c",
                "fpath=('" + dir.file("fn") + "' $fpath); autoload -Uz compinit && compinit -u -D && print -r -- "
                "${_comps[dpscope]}"});
  EXPECT_EQ(z.exit_code, 0) << z.err;
  EXPECT_EQ(trim(z.out), "_dpscope") << z.out << z.err;
  EXPECT_EQ(run({"zsh", "-n", dir.file("fn/_dpscope")}).exit_code, 0);
}

// fish has a real completion entry point: complete -C "COMMAND LINE".
std::set<std::string> fish_complete(const std::string& file, const std::string& line, const std::string& cwd = "/") {
  auto r = run({"fish", "--no-config", "-c", "cd '" + cwd + "'; source '" + file + "'; complete -C '" + line + "'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> out;
  for (const auto& l : lines(r.out)) {
    if (!l.empty()) out.insert(l.substr(0, l.find('\t')));
  }
  return out;
}

TEST(Completion, FishCompletesCommandsFlagsValuesAndFiles) {
  if (!have("fish")) GTEST_SKIP() << "fish not installed (scripts/deps.sh installs it)";
  TempDir dir;
  const std::string f = script("fish", dir);
  EXPECT_EQ(fish_complete(f, "dpscope c"), (std::set<std::string>{"compare", "check", "completion"}));
  const auto flags = fish_complete(f, "dpscope scale --");
  for (const char* flag : {"--services", "--endpoints", "--format", "--output", "--width"}) {
    EXPECT_TRUE(flags.count(flag)) << flag;
  }
  EXPECT_EQ(fish_complete(f, "dpscope scale --format "), (std::set<std::string>{"text", "json", "markdown", "html"}));
  write_text(dir.file("node-a.json"), "{}");
  EXPECT_EQ(fish_complete(f, "dpscope compare node-", dir.path()), (std::set<std::string>{"node-a.json"}));
}

TEST(Completion, UnknownShellIsBadUsage) {
  auto r = run({dpscope_bin(), "completion", "tcsh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bash, zsh, fish"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- man

TEST(ManPage, RendersWithoutWarnings) {
  if (!have("man")) GTEST_SKIP() << "man-db not installed (scripts/deps.sh installs it)";
  TempDir dir;
  auto page = run({dpscope_bin(), "man"});
  ASSERT_EQ(page.exit_code, 0);
  write_text(dir.file("dpscope.1"), page.out);
  auto r = sh("MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings=all -E UTF-8 -l '" + dir.file("dpscope.1") +
              "' 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "") << "man/groff warnings:\n" << r.out;
  auto text = sh("MANWIDTH=100 man -E UTF-8 -l '" + dir.file("dpscope.1") + "' 2>/dev/null | col -b");
  ASSERT_EQ(text.exit_code, 0);
  for (const auto& c : kCommands) {
    EXPECT_NE(text.out.find("dpscope " + c), std::string::npos) << c;
  }
  for (const char* word : {"EXIT STATUS", "--expect", "kube-proxy-free", "--color", "NO_COLOR", "SEE ALSO"}) {
    EXPECT_NE(text.out.find(word), std::string::npos) << word;
  }
}

// ---------------------------------------------------------------- colour

TEST(Color, CheckColoursPassAndFailOnlyWhenAsked) {
  auto fail = run({dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free", "--color=always"});
  EXPECT_EQ(fail.exit_code, 1);
  EXPECT_NE(fail.out.find("\x1b[1;31mFAIL\x1b[0m"), std::string::npos) << fail.out;
  auto pass = run({dpscope_bin(), "check", cilium(), "--expect", "kube-proxy-free", "--color", "always"});
  EXPECT_EQ(pass.exit_code, 0);
  EXPECT_NE(pass.out.find("\x1b[32mPASS\x1b[0m"), std::string::npos) << pass.out;
  // auto in a pipe, never, other formats and files: no escape at all.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--color=never"}, {"--color=always", "--format", "json"},
        {"--color=always", "--format", "markdown"}, {"--color=always", "--format", "csv"}}) {
    std::vector<std::string> argv = {dpscope_bin(), "check", kube_proxy(), "--expect", "kube-proxy-free"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  }
  TempDir dir;
  auto file = run({dpscope_bin(), "compare", kube_proxy(), cilium(), "--color=always", "-o", dir.file("r.txt")});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(read_text(dir.file("r.txt")).find('\x1b'), std::string::npos);
  auto bad = run({dpscope_bin(), "compare", kube_proxy(), "--color=sometimes"});
  EXPECT_EQ(bad.exit_code, 2);
}

// A terminal: script(1) gives the command a pty as stdout and stderr.
RunResult on_a_terminal(const std::string& command, const std::string& env = "") {
  return sh(env + " script -qec \"" + command + "\" /dev/null");
}

TEST(Color, AutoColoursATerminalUnlessNoColor) {
  if (!have("script")) GTEST_SKIP() << "script(1) not installed";
  const std::string cmd = dpscope_bin() + " check " + kube_proxy() + " --expect kube-proxy-free";
  auto tty = on_a_terminal(cmd);
  EXPECT_NE(tty.out.find("\x1b[1;31mFAIL"), std::string::npos) << tty.out;
  auto no_color = on_a_terminal(cmd, "NO_COLOR=1");
  EXPECT_NE(no_color.out.find("FAIL"), std::string::npos) << no_color.out;
  EXPECT_EQ(no_color.out.find("\x1b[1;31m"), std::string::npos) << no_color.out;
}

// ---------------------------------------------------------------- progress

TEST(Progress, OnlyOnATerminalAndSilencedByQuiet) {
  if (!have("script")) GTEST_SKIP() << "script(1) not installed";
  TempDir dir;
  const std::string import = dpscope_bin() + " import --iptables-save " +
                             source_path("fixtures/scenarios/kind-kube-proxy.iptables-save.txt") + " -o " +
                             dir.file("n.json");
  auto tty = on_a_terminal(import);
  EXPECT_NE(tty.out.find("dpscope: reading --iptables-save"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("(1 of 1)"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("\r\x1b[K"), std::string::npos) << "the line is cleared at the end";
  for (const char* quiet : {" -q", " --no-progress", " --quiet"}) {
    auto q = on_a_terminal(import + quiet);
    EXPECT_EQ(q.out.find("dpscope: reading"), std::string::npos) << quiet << ": " << q.out;
  }
  // Not a terminal: nothing on stderr.
  auto pipe = sh(import);
  EXPECT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_EQ(pipe.err, "");
  // The snapshot written on a terminal is the same file.
  EXPECT_EQ(json::parse(read_text(dir.file("n.json")))["schema"], "dpscope.snapshot/v2");
}

// ---------------------------------------------------------------- make demo

// The report alone on stdout: the build's lines (ninja's "Re-checking globbed
// directories", "no work to do") go to stderr. On the already built tree this
// runs no compiler.
TEST(MakeDemo, StdoutIsTheReportAlone) {
  if (!have("make")) GTEST_SKIP() << "make not installed";
  // Run as a user would, not as a sub-make of `make test` (which would print "Entering directory").
  auto r = sh("cd '" + source_path("") + "' && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS make demo FORMAT=json BUILD='" DPSCOPE_BUILD_DIR "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report;
  ASSERT_NO_THROW(report = json::parse(r.out)) << r.out.substr(0, 300);
  EXPECT_EQ(report["schema"], "dpscope.compare/v1");
  EXPECT_EQ(r.out.find("ninja"), std::string::npos);
}

}  // namespace
}  // namespace dpscope::test
