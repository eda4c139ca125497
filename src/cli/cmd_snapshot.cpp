// `dpscope snapshot`: the live, read-only snapshot of this node (or of one
// network namespace) -> one snapshot file.
#include <malloc.h>
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
#include "cli/host_env.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/phase_timer.h"
#include "cli/progress.h"
#include "collectors/bpf/attach.h"
#include "collectors/bpf/bpf.h"
#include "collectors/ipvs/ipvs.h"
#include "collectors/netfilter/ipset.h"
#include "collectors/netfilter/netfilter.h"
#include "collectors/proc/proc.h"
#include "model/json.h"
#include "model/snapshot_writer.h"
#include "util/error.h"
#include "util/netns.h"

namespace dpscope::cli {

namespace {

struct SnapshotSettings {
  std::string netns;
  bool host = false;
  bool rules = false;  // the default since --light exists; still accepted
  bool light = false;
  bool no_ebpf = false;
  bool no_agents = false;
  bool quiet = false;
  bool no_progress = false;
  std::string node;
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
    for (const auto& left : s.netfilter.collection.nft_left_out) {
      std::cerr << "dpscope: netfilter: --light left out " << left << "\n";
    }
    bool nft_unavailable = false;
    for (const auto& u : s.unavailable) nft_unavailable = nft_unavailable || u.section.rfind("netfilter", 0) == 0;
    if (!s.netfilter.collection.nft_generation && !nft_unavailable) {
      std::cerr << "dpscope: netfilter: this kernel has no nf_tables loaded: not asked (asking would load it); "
                   "no iptables-nft or nftables tables\n";
    }
    uint64_t without_text = 0;
    for (const auto& t : s.netfilter.tables) {
      if (t.backend == model::Backend::Nftables) continue;
      for (const auto& c : t.chains) {
        for (const auto& r : c.rules) without_text += r.text.empty();
      }
    }
    if (without_text > 0) {
      const std::string why = netfilter::rule_text_problem();
      std::cerr << "dpscope: warning: " << without_text << " iptables rules have no iptables-save text ("
                << (why.empty() ? "an extension libxtables has no object for" : why)
                << "): their fields are recorded; compare --rules and export cannot use them\n";
    }
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
  check_output_destination("-o", settings.output);
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
  nf.light = settings.light;
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
  if (!nf.netns.empty()) open_netns(nf.netns);

  PhaseTimer phase;
  // Rules go to a temporary file as they are read (a 20k-service node's rules
  // would otherwise be most of the memory); without one they stay in memory.
  std::unique_ptr<model::RuleSpool> spool;
  if (!settings.receive_only && getenv("DPSCOPE_NO_SPOOL") == nullptr) {
    try {
      spool = std::make_unique<model::RuleSpool>();
      // What the snapshot then holds at once is small, but glibc raises its
      // trim threshold to twice the largest block freed (a long chain's text:
      // megabytes) and keeps that much freed heap: a fixed threshold (the
      // default value, 128 KiB) stops the raising. Real kube-proxy 3000x8:
      // peak RSS 26.7-28.0 MB -> 25.1-25.3 MB.
      mallopt(M_TRIM_THRESHOLD, 128 << 10);
    } catch (const SystemError& e) {
      if (!settings.quiet) std::cerr << "dpscope: note: keeping rules in memory: " << e.what() << "\n";
    }
  }
  nf.spool = spool.get();
  Progress progress(!settings.quiet && !settings.no_progress);
  progress.phase("reading netfilter" + (settings.netns.empty() ? "" : " in netns " + netns_label(settings.netns)));
  netfilter::collect(snapshot, nf);
  progress.phase("reading ipsets");
  netfilter::collect_ipsets(snapshot, nf.netns);
  progress.phase("reading IPVS");
  ipvs::collect(snapshot, nf.netns);
  phase("netfilter");
  if (!settings.no_ebpf) {
    progress.phase("reading eBPF");
    bpf::collect(snapshot, bpf_options);
  }
  phase("ebpf");
  if (!settings.no_agents) {
    progress.phase("reading agents");
    proc::collect(snapshot, proc_options);
  }
  phase("agents");
  if (host) finish_host_snapshot(*host, snapshot);
  // After --host's NODE_NAME: the name asked for on the command line wins.
  if (!settings.node.empty()) snapshot.node.name = settings.node;
  progress.phase("ordering");
  model::canonicalize(snapshot);
  phase("canonicalize");
  progress.done();  // the summary and any error start on a clean line
  const bool empty = nothing_read(snapshot, !settings.no_ebpf);
  if (empty) {
    report_nothing_read(snapshot);  // even with --quiet: it is the result
  } else if (!settings.quiet) {
    report_progress(snapshot);
    // Not unavailable (exit 3): no bpffs here is no pin here, a fact. Said so
    // the pin-less objects are not taken for the node's whole story.
    if (snapshot.ebpf.collected && bpf_options.bpffs_roots.empty() && !bpf_options.pins_of_other_mount_namespace &&
        bpf::mounts_of_type("bpf").empty()) {
      std::cerr << "dpscope: ebpf: no bpffs is mounted in this mount namespace, so nothing is pinned here"
                << (settings.host ? "" : " (a node pod's pins: --host)") << "\n";
    }
  }
  if (spool && spool->failure() && !settings.quiet) {
    std::cerr << "dpscope: note: the temporary file for rules stopped taking them (" << std::strerror(spool->failure())
              << "); the rest were kept in memory\n";
  }
  {
    Progress writing(!settings.quiet && !settings.no_progress);
    writing.phase("writing " + (settings.output == "-" ? std::string("stdout") : settings.output));
    model::save_snapshot(snapshot, settings.output, spool.get());
  }
  phase("write");
  if (empty) return kExitNothingRead;
  return snapshot.unavailable.empty() ? kExitOk : kExitIncomplete;
}

}  // namespace

void add_snapshot(CLI::App* sub, Runner& run, CLI::App&) {
  auto settings = std::make_shared<SnapshotSettings>();
  sub->add_option("--netns", settings->netns,
                  "Network namespace for the netfilter part: a name (/run/netns/NAME), a path, or a PID")
      ->type_name("NAME|PATH|PID");
  sub->add_flag("--host", settings->host,
                "In a kubectl-debug node pod: snapshot the node (PID 1's netns, /host/sys/fs/bpf)")
      ->excludes("--netns");
  sub->add_option("--node", settings->node,
                  "Node name to record (default: the host name, or $NODE_NAME with --host); name a --netns "
                  "snapshot after what it stands for")
      ->type_name("NAME");
  auto* rules = sub->add_flag("--rules", settings->rules,
                              "The default (accepted for older scripts): every rule's text and every set's and map's "
                              "elements, anonymous and dynamic ones included");
  sub->add_flag("--light", settings->light,
                "Fleet mode: leave out the elements of anonymous nft sets/maps (their rules, such as kube-proxy's "
                "numgen endpoint picks, then carry no text) and of dynamic sets such as kube-proxy's affinity-* "
                "(runtime state). The snapshot records what was left out (netfilter.collection.nft_left_out) and "
                "reports say it. Faster on big nodes: the kernel finds each set by name")
      ->excludes(rules);
  sub->add_flag("--no-ebpf", settings->no_ebpf, "Skip the eBPF section (it is then absent, not unavailable)");
  sub->add_flag("--no-agents", settings->no_agents,
                "Skip the agents section (processes and cgroup memory; then absent, not unavailable)");
  sub->add_option("--threads", settings->threads,
                  "Netlink sockets/threads for the per-chain rule dumps, 0 to 64 (0: cores + 1)")
      ->type_name("N")
      ->check(CLI::Range(0u, 64u).description(""));
  sub->add_flag("--bench-receive-only", settings->receive_only,
                "Benchmark floor: the per-chain rule dumps without decoding (rules counted, not recorded)")
      ->group("");  // hidden: for bench/run.sh
  sub->add_flag("-q,--quiet", settings->quiet, "No progress line and no summary on stderr");
  sub->add_flag("--no-progress", settings->no_progress,
                "No progress line (shown only when stderr is a terminal); the summary stays");
  add_output_option(sub, settings->output, "Output file (.json, .json.zst, .json.gz), or - for stdout")->required();
  sub->callback([&run, settings] { run = [settings] { return run_snapshot(*settings); }; });
}

}  // namespace dpscope::cli
