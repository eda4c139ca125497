// Consistency under churn: while a background loop adds and removes services
// (iptables-nft-restore --noflush, iptables-legacy-restore --noflush, nft -f;
// one transaction per step), 50 live snapshots are taken. Each must show a
// state the loop really produced: the services present are a run the loop
// builds (added in order, removed in order), every service fully there with
// its chains and endpoints, never a torn mix.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "tests/integration/netfilter_support.h"

extern char** environ;

namespace dpscope::test {
namespace {

constexpr int kBase = 50;      // services always present
constexpr int kChurn = 10;     // services kBase .. kBase+kChurn-1 come and go
constexpr int kEndpoints = 2;

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
    present.insert(service_of(r.match.destination ? r.match.destination->cidr : ""));
    if (r.target.rfind("KUBE-SVC-", 0) == 0 && target->rule_count != 1 + kEndpoints) {
      problem = r.target + " has " + std::to_string(target->rule_count) + " rules";
    }
    for (const auto& jump : target->rules) {
      if (jump.target.rfind("KUBE-SEP-", 0) == 0 && model::find_chain(*nat, jump.target) == nullptr) {
        problem = r.target + " jumps to missing " + jump.target;
      }
    }
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
  for (const auto& c : kp->chains) {
    service_chains += c.name.rfind("service-", 0) == 0 && c.name != "service-endpoints-check";
    endpoint_chains += c.name.rfind("endpoint-", 0) == 0;
  }
  for (const auto& set : kp->sets) {
    if (set.name != "service-ips") continue;
    for (const auto& e : set.elements) {
      present.insert(service_of(e.key.substr(0, e.key.find(' '))));
      const std::string chain = e.value.substr(e.value.find(' ') + 1);
      if (model::find_chain(*kp, chain) == nullptr) problem = "service-ips element goes to missing " + chain;
    }
  }
  if (service_chains != present.size() || endpoint_chains != present.size() * kEndpoints) {
    problem = std::to_string(service_chains) + " service chains, " + std::to_string(endpoint_chains) +
              " endpoint chains for " + std::to_string(present.size()) + " services";
  }
  return present;
}

// The background loop, as its own process group so it can be stopped as a whole.
class ChurnLoop {
 public:
  ChurnLoop(const Netns& ns, const std::string& stop_file, const std::string& log) {
    const std::string gen = nf::gen_script();
    const std::string m = std::to_string(kEndpoints);
    std::string step;
    // One service per step: add kBase..end, then remove them in the same order.
    const std::string loop =
        "end=$(( " + std::to_string(kBase + kChurn) + " )); deadline=$(( $(date +%s) + 60 ));"
        "while [ ! -e '" + stop_file + "' ] && [ $(date +%s) -lt $deadline ]; do"
        "  for op in add del; do i=" + std::to_string(kBase) + ";"
        "    while [ $i -lt $end ] && [ ! -e '" + stop_file + "' ]; do"
        "      " + gen + " iptables-$op $i " + m + " | iptables-nft-restore --noflush || exit 1;"
        "      " + gen + " iptables-$op $i " + m + " | iptables-legacy-restore --noflush || exit 1;"
        "      " + gen + " nftables-$op $i " + m + " | nft -f - || exit 1;"
        "      echo $op $i >> '" + log + "'; i=$((i + 1));"
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

TEST(NetfilterChurn, FiftySnapshotsEachAStateTheLoopProduced) {
  DPS_REQUIRE_ROOT();
  Netns ns("nf-churn");
  TempDir dir;
  const std::string gen = nf::gen_script();
  const std::string args = std::to_string(kBase) + " " + std::to_string(kEndpoints);
  ns.sh(gen + " iptables " + args + " > " + dir.file("base.ipt"));
  ns.sh("iptables-nft-restore < " + dir.file("base.ipt") + " && iptables-legacy-restore < " + dir.file("base.ipt"));
  ns.sh(gen + " nftables " + args + " | nft -f -");

  ChurnLoop loop(ns, dir.file("stop"), dir.file("steps.log"));
  ASSERT_TRUE(loop.started());
  uint32_t retries = 0;
  std::set<size_t> counts_nft, counts_legacy, counts_nftables;
  for (int k = 0; k < 50; ++k) {
    const std::string out = dir.file("s.json");
    const RunResult r = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "--no-agents", "-q", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const model::Snapshot s = model::load_snapshot(out);
    retries += s.netfilter.collection.nft_retries;
    std::string problem;
    const auto ipt = iptables_services(s, model::Backend::IptablesNft, problem);
    EXPECT_TRUE(problem.empty()) << "snapshot " << k << " iptables-nft: " << problem;
    EXPECT_TRUE(is_loop_state(ipt)) << "snapshot " << k << " iptables-nft: " << ipt.size() << " services";
    problem.clear();
    const auto legacy = iptables_services(s, model::Backend::IptablesLegacy, problem);
    EXPECT_TRUE(problem.empty()) << "snapshot " << k << " legacy: " << problem;
    EXPECT_TRUE(is_loop_state(legacy)) << "snapshot " << k << " legacy";
    problem.clear();
    const auto nft = nftables_services(s, problem);
    EXPECT_TRUE(problem.empty()) << "snapshot " << k << " nftables: " << problem;
    EXPECT_TRUE(is_loop_state(nft)) << "snapshot " << k << " nftables: " << nft.size() << " services";
    counts_nft.insert(ipt.size());
    counts_legacy.insert(legacy.size());
    counts_nftables.insert(nft.size());
  }
  EXPECT_EQ(loop.stop(dir.file("stop")), 0) << "the churn loop failed";
  const std::string steps = read_text(dir.file("steps.log"));
  const size_t step_count = std::count(steps.begin(), steps.end(), '\n');
  RecordProperty("nft_retries", static_cast<int>(retries));
  RecordProperty("churn_steps", static_cast<int>(step_count));
  std::cout << "[ churn    ] " << step_count << " loop steps, " << retries << " nf_tables retries over 50 snapshots, "
            << counts_nft.size() << "/" << counts_legacy.size() << "/" << counts_nftables.size()
            << " distinct service counts seen (iptables-nft/legacy/nftables)\n";
  // The loop really moved while we read: several states were seen.
  EXPECT_GT(step_count, 5u);
  EXPECT_GT(counts_nft.size() + counts_nftables.size(), 2u);
}

}  // namespace
}  // namespace dpscope::test
