// Consistency under churn: while a background loop adds and removes services
// (iptables-nft-restore --noflush, iptables-legacy-restore --noflush, nft -f;
// one transaction per step) and rewrites the endpoints of two services the
// way kube-proxy's partial restores do (`:KUBE-SVC-X - [0:0]` flushing the
// chain, new KUBE-SEP chains, `-X` of the old ones; for native nft a flush
// of the service chain, new endpoint chains, delete of the old ones), 100
// live snapshots are taken. Each must either show a state the loop really
// produced -- the services present are a run the loop builds, every jump
// target exists, every service complete with one generation's endpoints --
// or exit 3 with the inconsistent section marked. The test counts both and
// fails on any snapshot that is neither.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "tests/integration/netfilter_support.h"

extern char** environ;

namespace dpscope::test {
namespace {

constexpr int kBase = 50;      // services always present
constexpr int kChurn = 10;     // services kBase .. kBase+kChurn-1 come and go
constexpr int kEndpoints = 2;
// Services whose endpoints the loop rewrites, alternating kEndpoints and
// kEndpoints + 1 (no NodePort, firewall or Local chain: i % 10, i % 40 != 0, 3).
constexpr int kRewritten[] = {1, 2};

bool rewritten(int i) { return i == kRewritten[0] || i == kRewritten[1]; }

// Endpoint address e of service i when it has m endpoints (gen-kube-proxy.sh ep_ip).
std::string endpoint_ip(int i, int m, int e) {
  const int v = 65536 + i * m + e + 1;
  return "10." + std::to_string(v / 65536 % 256) + "." + std::to_string(v / 256 % 256) + "." + std::to_string(v % 256);
}

// The endpoint count whose addresses are exactly `ips` (one generation), or -1.
int generation_of(int i, const std::set<std::string>& ips) {
  for (int m : {kEndpoints, kEndpoints + 1}) {
    std::set<std::string> want;
    for (int e = 0; e < m; ++e) want.insert(endpoint_ip(i, m, e));
    if (ips == want) return m;
  }
  return -1;
}

// Service index from its ClusterIP 172.16.x.y/32 (gen-kube-proxy.sh: ip4(172, 16*65536 + i + 1)).
int service_of(const std::string& cidr) {
  unsigned a, b, c, d;
  if (std::sscanf(cidr.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || a != 172 || b != 16) return -1;
  return static_cast<int>(c * 256 + d) - 1;
}

// The churned services present must be {kBase..kBase+j-1} (adding) or {kBase+j..end} (removing).
bool is_loop_state(const std::set<int>& present) {
  std::vector<int> churned;
  for (int i : present) {
    if (i >= kBase) churned.push_back(i);
  }
  for (int i = 0; i < kBase; ++i) {
    if (!present.count(i)) return false;
  }
  if (churned.empty()) return true;
  for (size_t k = 1; k < churned.size(); ++k) {
    if (churned[k] != churned[k - 1] + 1) return false;
  }
  return churned.front() == kBase || churned.back() == kBase + kChurn - 1;
}

// iptables view of one backend: services from nat KUBE-SERVICES, each one complete.
std::set<int> iptables_services(const model::Snapshot& s, model::Backend backend, std::string& problem) {
  std::set<int> present;
  const model::Table* nat = model::find_table(s, backend, "ip", "nat");
  if (nat == nullptr) {
    problem = "no nat table";
    return present;
  }
  const model::Chain* services = model::find_chain(*nat, "KUBE-SERVICES");
  size_t svc_chains = 0;
  for (const auto& c : nat->chains) svc_chains += c.name.rfind("KUBE-SVC-", 0) == 0;
  size_t svc_rules = 0;
  for (const auto& r : services ? services->rules : std::vector<model::Rule>{}) {
    if (r.target.rfind("KUBE-SVC-", 0) != 0 && r.target.rfind("KUBE-SVL-", 0) != 0) continue;
    ++svc_rules;
    const model::Chain* target = model::find_chain(*nat, r.target);
    if (target == nullptr) {
      problem = "KUBE-SERVICES jumps to missing " + r.target;
      continue;
    }
    const int service = service_of(r.match.destination ? r.match.destination->cidr : "");
    present.insert(service);
    std::set<std::string> endpoints;
    for (const auto& jump : target->rules) {
      if (jump.target.rfind("KUBE-SEP-", 0) != 0) continue;
      const model::Chain* sep = model::find_chain(*nat, jump.target);
      if (sep == nullptr) {
        problem = r.target + " jumps to missing " + jump.target;
        continue;
      }
      for (const auto& dnat : sep->rules) {
        if (dnat.target == "DNAT") endpoints.insert(dnat.target_args.substr(dnat.target_args.rfind(' ') + 1));
      }
      if (sep->rule_count != 2) problem = jump.target + " has " + std::to_string(sep->rule_count) + " rules";
    }
    if (r.target.rfind("KUBE-SVC-", 0) != 0) continue;
    // Every KUBE-SEP of one generation: all of kEndpoints or all of kEndpoints + 1 addresses.
    std::set<std::string> ips;
    for (const auto& e : endpoints) ips.insert(e.substr(0, e.find(':')));
    const int m = rewritten(service) ? generation_of(service, ips) : (generation_of(service, ips) == kEndpoints ? kEndpoints : -1);
    if (m < 0) {
      problem = r.target + " (service " + std::to_string(service) + ") holds endpoints of no single state: " +
                testing::PrintToString(ips);
    } else if (target->rule_count != static_cast<uint64_t>(1 + m)) {
      problem = r.target + " has " + std::to_string(target->rule_count) + " rules for " + std::to_string(m) + " endpoints";
    }
  }
  // Every KUBE-SEP chain is reached from a KUBE-SVC chain (no orphan of an older generation).
  size_t sep_chains = 0, sep_jumps = 0;
  for (const auto& c : nat->chains) {
    sep_chains += c.name.rfind("KUBE-SEP-", 0) == 0;
    if (c.name.rfind("KUBE-SVC-", 0) != 0) continue;
    for (const auto& jump : c.rules) sep_jumps += jump.target.rfind("KUBE-SEP-", 0) == 0;
  }
  if (sep_chains != sep_jumps) {
    problem = std::to_string(sep_chains) + " KUBE-SEP chains, " + std::to_string(sep_jumps) + " jumps to them";
  }
  // Every KUBE-SVC chain belongs to a service rule (KUBE-SVL services still have their KUBE-SVC chain).
  size_t svl = 0;
  for (int i : present) svl += i % 40 == 3;
  if (svc_chains != svc_rules) {
    problem = std::to_string(svc_chains) + " KUBE-SVC chains for " + std::to_string(svc_rules) + " service rules (" +
              std::to_string(svl) + " local)";
  }
  return present;
}

std::set<int> nftables_services(const model::Snapshot& s, std::string& problem) {
  std::set<int> present;
  const model::Table* kp = model::find_table(s, model::Backend::Nftables, "ip", "kube-proxy");
  if (kp == nullptr) {
    problem = "no kube-proxy table";
    return present;
  }
  size_t service_chains = 0, endpoint_chains = 0;
  std::map<int, std::set<std::string>> endpoints;  // service -> endpoint addresses, from the chain names
  for (const auto& c : kp->chains) {
    service_chains += c.name.rfind("service-", 0) == 0 && c.name != "service-endpoints-check";
    if (c.name.rfind("endpoint-", 0) != 0) continue;
    ++endpoint_chains;
    // endpoint-HASH-nsN/svcI/tcp/p80__10.1.0.11/80
    const size_t svc = c.name.find("/svc"), ip = c.name.find("__");
    if (svc == std::string::npos || ip == std::string::npos) continue;
    const int service = std::atoi(c.name.c_str() + svc + 4);
    endpoints[service].insert(c.name.substr(ip + 2, c.name.rfind('/') - ip - 2));
  }
  size_t expected_endpoint_chains = 0;
  for (const auto& set : kp->sets) {
    if (set.name != "service-ips") continue;
    for (const auto& e : set.elements) {
      const int service = service_of(e.key.substr(0, e.key.find(' ')));
      present.insert(service);
      const std::string chain = e.value.substr(e.value.find(' ') + 1);
      const model::Chain* target = model::find_chain(*kp, chain);
      if (target == nullptr) problem = "service-ips element goes to missing " + chain;
      const int m = generation_of(service, endpoints[service]);
      if (m < 0 || (m != kEndpoints && !rewritten(service))) {
        problem = chain + " has endpoint chains of no single state: " + testing::PrintToString(endpoints[service]);
      } else if (target && target->rule_count != 2) {
        problem = chain + " has " + std::to_string(target->rule_count) + " rules";
      }
      expected_endpoint_chains += m < 0 ? 0 : static_cast<size_t>(m);
    }
  }
  if (service_chains != present.size() || endpoint_chains != expected_endpoint_chains) {
    problem = std::to_string(service_chains) + " service chains, " + std::to_string(endpoint_chains) +
              " endpoint chains for " + std::to_string(present.size()) + " services (" +
              std::to_string(expected_endpoint_chains) + " endpoints)";
  }
  return present;
}

// kube-proxy-like partial restores of service i's endpoints, one transaction
// each: DIR/grow-I.{ipt,nft} (kEndpoints -> kEndpoints + 1) and DIR/shrink-I.*
// (back). iptables: `:KUBE-SVC-X` and `:KUBE-SEP-*` lines flush the chains, the
// rules are written anew, a KUBE-SEP no longer used is flushed and `-X`ed (what
// kube-proxy writes with --noflush). nft: the service chain is flushed and
// refilled, the new endpoint chains added, the old ones deleted.
void write_rewrites(const Netns& ns, const std::string& dir) {
  const std::string gen = nf::gen_script();
  const std::string body = "grep -E '^(:KUBE-SVC-|:KUBE-SEP-|-A KUBE-SVC-|-A KUBE-SEP-)'";
  for (int i : kRewritten) {
    const std::string I = std::to_string(i), small = std::to_string(kEndpoints), big = std::to_string(kEndpoints + 1);
    const std::string last_sep = gen + " iptables-add " + I + " " + big + " | grep '^:KUBE-SEP-' | tail -n 1";
    ns.sh("{ echo '*nat'; " + gen + " iptables-add " + I + " " + big + " | " + body + " | grep '^:';" +  //
          gen + " iptables-add " + I + " " + big + " | " + body + " | grep '^-A'; echo COMMIT; } > " + dir + "/grow-" + I + ".ipt");
    ns.sh("{ echo '*nat'; " + gen + " iptables-add " + I + " " + small + " | " + body + " | grep '^:'; " + last_sep + ";" +
          gen + " iptables-add " + I + " " + small + " | " + body + " | grep '^-A'; " + last_sep +
          " | sed 's/^:\\(KUBE-SEP-[A-Z0-9]*\\) .*/-X \\1/'; echo COMMIT; } > " + dir + "/shrink-" + I + ".ipt");
    for (const auto& [name, to, from] : {std::tuple{"grow", big, small}, std::tuple{"shrink", small, big}}) {
      ns.sh("{ " + gen + " nftables-add " + I + " " + to +
            " | grep '^add chain ip kube-proxy service-' | sed 's/^add/flush/'; " +  //
            gen + " nftables-add " + I + " " + to + " | grep -v '^add element'; " +  //
            gen + " nftables-add " + I + " " + from +
            " | grep '^add chain ip kube-proxy endpoint-' | sed 's/^add/delete/'; } > " + dir + "/" + name + "-" + I +
            ".nft");
    }
  }
}

// The background loop, as its own process group so it can be stopped as a whole.
class ChurnLoop {
 public:
  // `dir` holds the rewrite inputs (write_rewrites); the loop reads them.
  ChurnLoop(const Netns& ns, const std::string& dir, const std::string& stop_file, const std::string& log) {
    const std::string gen = nf::gen_script();
    const std::string m = std::to_string(kEndpoints);
    std::string rewrite;
    for (int i : kRewritten) {
      const std::string f = dir + "/$how-" + std::to_string(i);
      rewrite += "iptables-nft-restore --noflush < " + f + ".ipt || exit 1;"
                 "iptables-legacy-restore --noflush < " + f + ".ipt || exit 1;"
                 "nft -f " + f + ".nft || exit 1;";
    }
    // One service per step: add kBase..end, then remove them in the same order;
    // with each step the rewritten services go to kEndpoints + 1 endpoints and back.
    const std::string loop =
        "end=$(( " + std::to_string(kBase + kChurn) + " )); deadline=$(( $(date +%s) + 120 )); how=shrink;"
        "while [ ! -e '" + stop_file + "' ] && [ $(date +%s) -lt $deadline ]; do"
        "  for op in add del; do i=" + std::to_string(kBase) + ";"
        "    while [ $i -lt $end ] && [ ! -e '" + stop_file + "' ]; do"
        "      " + gen + " iptables-$op $i " + m + " | iptables-nft-restore --noflush || exit 1;"
        "      " + gen + " iptables-$op $i " + m + " | iptables-legacy-restore --noflush || exit 1;"
        "      " + gen + " nftables-$op $i " + m + " | nft -f - || exit 1;"
        "      if [ $how = grow ]; then how=shrink; else how=grow; fi;"
        "      " + rewrite +
        "      echo $op $i $how >> '" + log + "'; i=$((i + 1));"
        "    done;"
        "  done;"
        "done";
    std::vector<std::string> argv = {"ip", "netns", "exec", ns.name(), "/bin/sh", "-c", loop};
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    if (posix_spawnp(&pid_, "ip", nullptr, &attr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attr);
  }
  // Stops the loop (it checks the stop file between steps) and returns its exit status.
  int stop(const std::string& stop_file) {
    if (pid_ <= 0) return -1;
    write_text(stop_file, "stop\n");
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~ChurnLoop() {
    if (pid_ > 0) {
      kill(-pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

TEST(NetfilterChurn, HundredSnapshotsEachAStateTheLoopProducedOrFlagged) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-churn");
  TempDir dir;
  const std::string gen = nf::gen_script();
  const std::string args = std::to_string(kBase) + " " + std::to_string(kEndpoints);
  ns.sh(gen + " iptables " + args + " > " + dir.file("base.ipt"));
  ns.sh("iptables-nft-restore < " + dir.file("base.ipt") + " && iptables-legacy-restore < " + dir.file("base.ipt"));
  ns.sh(gen + " nftables " + args + " | nft -f -");
  write_rewrites(ns, dir.path());
  // The rewrites are valid on their own: grow then shrink returns to the state loaded.
  const std::string loaded = ns.sh("iptables-nft-save -t nat | grep -v '^#'") + ns.sh("nft list table ip kube-proxy");
  for (const char* how : {"grow", "shrink"}) {
    for (int i : kRewritten) {
      const std::string f = dir.file(std::string(how) + "-" + std::to_string(i));
      ns.sh("iptables-nft-restore --noflush < " + f + ".ipt && iptables-legacy-restore --noflush < " + f +
            ".ipt && nft -f " + f + ".nft");
    }
    if (std::string(how) == "grow") {
      const model::Snapshot grown = nf::live_snapshot(ns, dir, {"--no-agents"});
      for (auto backend : {model::Backend::IptablesNft, model::Backend::IptablesLegacy}) {
        std::string problem;
        iptables_services(grown, backend, problem);
        EXPECT_TRUE(problem.empty()) << "after grow: " << problem;
      }
      std::string problem;
      nftables_services(grown, problem);
      EXPECT_TRUE(problem.empty()) << "after grow: " << problem;
    }
  }
  (void)loaded;  // byte identity after grow+shrink does not hold (chain order changes); the state checks below do

  ChurnLoop loop(ns, dir.path(), dir.file("stop"), dir.file("steps.log"));
  ASSERT_TRUE(loop.started());
  uint32_t retries = 0;
  size_t consistent = 0, flagged = 0;
  std::set<size_t> counts_nft, counts_legacy, counts_nftables;
  for (int k = 0; k < 100; ++k) {
    const std::string out = dir.file("s.json");
    const RunResult r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "--no-agents", "-q", "-o", out});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
    const model::Snapshot s = model::load_snapshot(out);
    retries += s.netfilter.collection.nft_retries;
    // Exit 3 is allowed only with the nf_tables read marked inconsistent; then
    // its tables are a best-effort read and only the legacy ones are checked.
    const bool marked = model::is_unavailable(s, "netfilter.consistency");
    if (r.exit_code == 3) {
      EXPECT_TRUE(marked) << "snapshot " << k << " exit 3 without the inconsistent section marked: " << r.err;
      ++flagged;
    } else {
      EXPECT_FALSE(marked) << "snapshot " << k;
    }
    std::string problem;
    bool ok = true;
    if (!marked) {
      const auto ipt = iptables_services(s, model::Backend::IptablesNft, problem);
      EXPECT_TRUE(problem.empty()) << "snapshot " << k << " iptables-nft: " << problem;
      EXPECT_TRUE(is_loop_state(ipt)) << "snapshot " << k << " iptables-nft: " << ipt.size() << " services";
      ok = ok && problem.empty() && is_loop_state(ipt);
      counts_nft.insert(ipt.size());
      problem.clear();
      const auto nft = nftables_services(s, problem);
      EXPECT_TRUE(problem.empty()) << "snapshot " << k << " nftables: " << problem;
      EXPECT_TRUE(is_loop_state(nft)) << "snapshot " << k << " nftables: " << nft.size() << " services";
      ok = ok && problem.empty() && is_loop_state(nft);
      counts_nftables.insert(nft.size());
      problem.clear();
    }
    const auto legacy = iptables_services(s, model::Backend::IptablesLegacy, problem);
    EXPECT_TRUE(problem.empty()) << "snapshot " << k << " legacy: " << problem;
    EXPECT_TRUE(is_loop_state(legacy)) << "snapshot " << k << " legacy";
    ok = ok && problem.empty() && is_loop_state(legacy);
    counts_legacy.insert(legacy.size());
    consistent += ok && !marked;
  }
  EXPECT_EQ(loop.stop(dir.file("stop")), 0) << "the churn loop failed";
  const std::string steps = read_text(dir.file("steps.log"));
  const size_t step_count = std::count(steps.begin(), steps.end(), '\n');
  RecordProperty("nft_retries", static_cast<int>(retries));
  RecordProperty("churn_steps", static_cast<int>(step_count));
  std::cout << "[ churn    ] 100 snapshots: " << consistent << " one generation, " << flagged
            << " exit 3 with netfilter.consistency marked, " << (100 - consistent - flagged) << " neither; "
            << step_count << " loop steps (each: one add/del and 2 endpoint rewrites, 3 backends), " << retries
            << " nf_tables re-reads, " << counts_nft.size() << "/" << counts_legacy.size() << "/"
            << counts_nftables.size() << " distinct service counts seen (iptables-nft/legacy/nftables)\n";
  EXPECT_EQ(consistent + flagged, 100u);
  // The loop really moved while we read: several states were seen.
  EXPECT_GT(step_count, 5u);
  EXPECT_GT(counts_nft.size() + counts_nftables.size(), 2u);
}

}  // namespace
}  // namespace dpscope::test
