// `dpscope snapshot`: the live, read-only snapshot of this node (or of one
// network namespace) -> one snapshot file.
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstring>
#include <iostream>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/phase_timer.h"
#include "cli/host_env.h"
#include "collectors/bpf/bpf.h"
#include "collectors/netfilter/netfilter.h"
#include "collectors/proc/proc.h"
#include "model/json.h"
#include "model/snapshot_writer.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

constexpr const char* kSnapshotHelp = R"(Take a live snapshot of this node's packet dataplane (read-only).

Reads netfilter (nftables and iptables-nft through nf_tables netlink, iptables-legacy
through the kernel's getsockopt interface) and eBPF (programs, maps, links, attach
points, Cilium/Calico service maps) and the dataplane's agents (kube-proxy, cilium-agent,
calico-node, ... found in /proc: RSS, PSS, threads, their memory cgroup's memory.current,
memory.stat and kubelet's working set, and the pod/container the cgroup path names),
and writes one "dpscope.snapshot/v1" JSON file.
Nothing is changed: only plain GET requests are sent (never the *_RESET ones that
zero counters). The nf_tables part is one consistent ruleset generation: when the
ruleset changes during the read, it is read again (netfilter.collection.nft_retries).

--netns runs the netfilter part (and eBPF's per-interface attachments) inside that
network namespace, on a dedicated thread; eBPF objects are global to the kernel.
--host, in a `kubectl debug node/NAME --profile=sysadmin` pod, reads the node itself
(PID 1's network namespace, /host/sys/fs/bpf, /host/sys/fs/cgroup, PID 1's cgroup
namespace for the agents' cgroup paths). Without --host the agents are those of the PID
namespace dpscope runs in.

Needs root (CAP_NET_ADMIN for netfilter, CAP_SYS_ADMIN for eBPF and --netns). A
section that cannot be read is listed under "unavailable" with the errno and a hint,
and the exit code is 3; it is never reported as empty. When no section at all could be
read (no privilege), the file is still written, the reason is said once, and the exit
code is 5.

Examples:
  dpscope snapshot -o node.json
  dpscope snapshot --netns kind-worker -o - | jq '.netfilter.tables[].name'
  dpscope snapshot --netns 4242 --no-ebpf -o pod.json       # the netns of PID 4242
  kubectl debug node/worker-1 -it --profile=sysadmin --image=IMAGE -- dpscope snapshot --host -o -)";

struct SnapshotSettings {
  std::string netns;
  bool host = false;
  bool rules = false;
  bool no_ebpf = false;
  bool no_agents = false;
  bool quiet = false;
  unsigned threads = 0;
  bool receive_only = false;
  std::string output;
};

std::string rfc3339_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string netns_label(const std::string& spec) {
  // "/run/netns/NAME" -> "NAME"; a PID or other path stays as given.
  const std::string prefix = "/run/netns/";
  if (spec.rfind(prefix, 0) == 0) return spec.substr(prefix.size());
  return spec;
}

void report_progress(const model::Snapshot& s) {
  uint64_t chains = 0, rules = 0, sets = 0;
  for (const auto& t : s.netfilter.tables) {
    chains += t.chains.size();
    sets += t.sets.size();
    for (const auto& c : t.chains) rules += c.rule_count;
  }
  if (s.netfilter.collected) {
    std::cerr << "dpscope: netfilter: " << s.netfilter.tables.size() << " tables, " << chains << " chains, " << rules
              << " rules, " << sets << " sets";
    if (s.netfilter.collection.nft_generation) {
      std::cerr << " (nf_tables generation " << *s.netfilter.collection.nft_generation << ", "
                << s.netfilter.collection.nft_retries << " retries)";
    }
    std::cerr << "\n";
  }
  if (s.ebpf.collected) {
    std::cerr << "dpscope: ebpf: " << s.ebpf.programs.size() << " programs, " << s.ebpf.maps.size() << " maps, "
              << s.ebpf.links.size() << " links\n";
  }
  if (s.agents.collected) {
    std::cerr << "dpscope: agents: " << s.agents.processes.size() << " processes in " << s.agents.cgroups.size()
              << " cgroups (cgroup " << (s.agents.cgroup_version.empty() ? "without memory controller" : s.agents.cgroup_version)
              << ")\n";
  }
  // Each reason once: a subsection is not repeated under its unavailable parent.
  for (const auto& u : s.unavailable) {
    bool parent_listed = false;
    for (const auto& p : s.unavailable) {
      parent_listed = parent_listed || u.section.rfind(p.section + ".", 0) == 0;
    }
    if (parent_listed) continue;
    std::cerr << "dpscope: unavailable: " << u.section << ": " << u.reason << "\n";
    if (!u.hint.empty()) std::cerr << "  hint: " << u.hint << "\n";
  }
}

// No section at all could be read (typically: not root). Said once, with every
// distinct hint, and exit 5 instead of 3 so a script tells an empty snapshot
// from one with a missing part.
bool nothing_read(const model::Snapshot& s, bool ebpf_asked) {
  return !s.netfilter.collected && (!ebpf_asked || !s.ebpf.collected);
}

void report_nothing_read(const model::Snapshot& s) {
  std::string sections, hints;
  for (const auto& u : s.unavailable) {
    if (u.section.find('.') != std::string::npos) continue;
    sections += (sections.empty() ? "" : "; ") + u.section + ": " + u.reason;
    if (!u.hint.empty() && hints.find(u.hint) == std::string::npos) hints += (hints.empty() ? "" : "; ") + u.hint;
  }
  std::cerr << "dpscope: nothing could be read (" << sections << ")";
  if (!hints.empty()) std::cerr << ": " << hints;
  std::cerr << ". The snapshot lists every section as unavailable; exit 5.\n";
}

// The kernel command line of the inspected node: /proc/cmdline is the host's
// kernel's in a netns and in a kubectl-debug pod alike.
std::optional<std::string> host_cmdline(const SnapshotSettings&) {
  std::ifstream f("/proc/cmdline");
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return line;
}

// `cgroup.memory=nobpf` (the value is a comma list: "nosocket,nokmem,nobpf").
std::optional<bool> cgroup_memory_nobpf(const std::optional<std::string>& cmdline) {
  if (!cmdline) return std::nullopt;
  std::istringstream words(*cmdline);
  for (std::string w; words >> w;) {
    if (w.rfind("cgroup.memory=", 0) != 0) continue;
    std::istringstream opts(w.substr(14));
    for (std::string o; std::getline(opts, o, ',');) {
      if (o == "nobpf") return true;
    }
  }
  return false;
}

int run_snapshot(const SnapshotSettings& settings) {
  model::Snapshot snapshot;
  utsname uts{};
  uname(&uts);
  snapshot.node.name = uts.nodename;
  snapshot.node.kernel = uts.release;
  snapshot.node.source = "live";
  snapshot.node.environment = settings.netns.empty() ? "host" : "netns:" + netns_label(settings.netns);
  snapshot.node.taken_at = rfc3339_now();
  snapshot.node.tool_version = DPSCOPE_VERSION;
  snapshot.node.cgroup_memory_nobpf = cgroup_memory_nobpf(host_cmdline(settings));

  netfilter::Options nf;
  nf.netns = settings.netns;
  nf.rules = settings.rules;
  nf.threads = settings.threads;
  nf.receive_only = settings.receive_only;
  bpf::Options bpf_options;
  bpf_options.netns = settings.netns;
  proc::Options proc_options;
  std::optional<HostEnv> host;
  if (settings.host) {
    host = resolve_host_env(HostProbe{"/host", "/proc", getenv("NODE_NAME") ? getenv("NODE_NAME") : ""});
    apply_host_env(*host, nf, bpf_options);
    // The node's processes are in our /proc (host PID namespace); their
    // cgroups under the host root, named relative to PID 1's cgroup namespace.
    proc_options.cgroup_ns = "/proc/1/ns/cgroup";
    if (!host->host_root.empty()) {
      proc_options.cgroup_fs = host->host_root + "/sys/fs/cgroup";
      proc_options.host_root = host->host_root;
    }
    for (const auto& note : host->notes) std::cerr << "dpscope: " << note << "\n";
  } else if (settings.netns.empty() && is_kubectl_debug(probe_pod_signals(HostProbe{}))) {
    std::cerr << "dpscope: note: this looks like a kubectl-debug node pod (node root at /host, host PID "
                 "namespace): add --host to snapshot the node itself (its bpffs pins, its name)\n";
  }
  // Fail on a missing namespace before any collection starts.
  if (!nf.netns.empty()) netfilter::open_netns(nf.netns);

  PhaseTimer phase;
  // Rules go to a temporary file as they are read (a 20k-service node's rules
  // would otherwise be most of the memory); without one they stay in memory.
  std::unique_ptr<model::RuleSpool> spool;
  if (!settings.receive_only && getenv("DPSCOPE_NO_SPOOL") == nullptr) {
    try {
      spool = std::make_unique<model::RuleSpool>();
    } catch (const SystemError& e) {
      if (!settings.quiet) std::cerr << "dpscope: note: keeping rules in memory: " << e.what() << "\n";
    }
  }
  nf.spool = spool.get();
  netfilter::collect(snapshot, nf);
  phase("netfilter");
  if (!settings.no_ebpf) bpf::collect(snapshot, bpf_options);
  phase("ebpf");
  if (!settings.no_agents) proc::collect(snapshot, proc_options);
  phase("agents");
  if (host) finish_host_snapshot(*host, snapshot);
  model::canonicalize(snapshot);
  phase("canonicalize");
  const bool empty = nothing_read(snapshot, !settings.no_ebpf);
  if (empty) {
    report_nothing_read(snapshot);  // even with --quiet: it is the result
  } else if (!settings.quiet) {
    report_progress(snapshot);
  }
  if (spool && spool->failure() && !settings.quiet) {
    std::cerr << "dpscope: note: the temporary file for rules stopped taking them (" << std::strerror(spool->failure())
              << "); the rest were kept in memory\n";
  }
  model::save_snapshot(snapshot, settings.output, spool.get());
  phase("write");
  if (empty) return kExitNothingRead;
  return snapshot.unavailable.empty() ? kExitOk : kExitIncomplete;
}

}  // namespace

void register_snapshot(CLI::App& app, Runner& run) {
  auto settings = std::make_shared<SnapshotSettings>();
  auto* sub = app.add_subcommand("snapshot", "Take a live, read-only snapshot of this node (or a network namespace)");
  sub->description(kSnapshotHelp);
  sub->add_option("--netns", settings->netns,
                  "Network namespace for the netfilter part: a name (/run/netns/NAME), a path, or a PID");
  sub->add_flag("--host", settings->host,
                "In a kubectl-debug node pod: snapshot the node (PID 1's netns, /host/sys/fs/bpf)")
      ->excludes("--netns");
  sub->add_flag("--rules", settings->rules,
                "Also read the elements of anonymous nft sets/maps and list those sets (slower on big nodes)");
  sub->add_flag("--no-ebpf", settings->no_ebpf, "Skip the eBPF section (it is then absent, not unavailable)");
  sub->add_flag("--no-agents", settings->no_agents,
                "Skip the agents section (processes and cgroup memory; then absent, not unavailable)");
  sub->add_option("--threads", settings->threads, "Netlink sockets/threads for the per-chain rule dumps (0: cores + 1)")
      ->check(CLI::Range(0u, 64u));
  sub->add_flag("--bench-receive-only", settings->receive_only,
                "Benchmark floor: the per-chain rule dumps without decoding (rules counted, not recorded)")
      ->group("");  // hidden: for bench/run.sh
  sub->add_flag("-q,--quiet", settings->quiet, "No progress summary on stderr");
  sub->add_option("-o,--output", settings->output, "Output file, or - for stdout")->required();
  sub->callback([&run, settings] { run = [settings] { return run_snapshot(*settings); }; });
}

}  // namespace dpscope::cli
