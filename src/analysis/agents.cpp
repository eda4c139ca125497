#include "analysis/agents.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "analysis/analysis.h"

namespace dpscope::analysis {

Figure& Figure::operator+=(const Figure& o) {
  if (!bytes) return *this;
  if (!o.bytes) {
    *this = o;
    return *this;
  }
  *bytes += *o.bytes;
  return *this;
}

std::optional<bool> kernel_at_least(const std::string& release, int major, int minor) {
  int a = 0, b = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &a, &b) != 2) return std::nullopt;
  return a != major ? a > major : b >= minor;
}

namespace {

// Why the process or cgroup has no `field`, from its unavailable list.
std::string why_missing(const std::vector<model::ValueUnavailable>& list, const std::string& field,
                        const std::string& who) {
  for (const auto& u : list) {
    if (u.field == field) return who + ": " + u.reason;
  }
  return who + ": " + field + " not recorded";
}

Figure process_figure(const model::AgentProcess& p, const std::optional<uint64_t>& v, const std::string& field) {
  if (v) return Figure::of(*v);
  return Figure::missing(why_missing(p.unavailable, field, "pid " + std::to_string(p.pid)));
}

Figure cgroup_figure(const model::AgentCgroup* c, const model::AgentProcess& p, bool kernel) {
  if (c == nullptr) return Figure::missing(why_missing(p.unavailable, "cgroup", "pid " + std::to_string(p.pid)));
  const auto& v = kernel ? c->kernel_bytes : c->working_set_bytes;
  if (v) return Figure::of(*v);
  return Figure::missing(why_missing(c->unavailable, kernel ? "kernel_bytes" : "working_set_bytes", c->path));
}

time_t parse_rfc3339(const std::string& s) {
  std::tm tm{};
  if (s.empty() || strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return 0;
  return timegm(&tm);
}

// Sums a cgroup figure over the distinct cgroups of `procs`.
template <typename Pick>
Figure over_cgroups(const std::vector<const model::AgentProcess*>& procs,
                    const std::map<std::string, const model::AgentCgroup*>& by_path, Pick pick) {
  Figure sum = Figure::of(0);
  std::set<std::string> seen;
  for (const auto* p : procs) {
    auto it = by_path.find(p->cgroup);
    const model::AgentCgroup* c = p->cgroup.empty() || it == by_path.end() ? nullptr : it->second;
    if (c && !seen.insert(c->path).second) continue;
    sum += pick(c, *p);
  }
  return sum;
}

}  // namespace

AgentsAnalysis analyze_agents(const model::Snapshot& s, const EbpfAnalysis& ebpf, const Availability& availability) {
  AgentsAnalysis a;
  a.collected = availability.collected;
  a.unavailable = availability.unavailable;
  a.reason = availability.reason;
  a.incomplete = availability.incomplete;
  a.cgroup_version = s.agents.cgroup_version;
  if (auto charged = kernel_at_least(s.node.kernel, 5, 11)) a.bpf_memcg_charged = *charged ? "yes" : "no";
  if (!a.usable()) return a;

  std::map<std::string, const model::AgentCgroup*> by_path;
  for (const auto& c : s.agents.cgroups) by_path[c.path] = &c;
  std::map<std::pair<std::string, std::string>, std::vector<const model::AgentProcess*>> by_agent;
  std::map<std::string, std::vector<const model::AgentProcess*>> by_dataplane;
  for (const auto& p : s.agents.processes) {
    by_agent[{p.dataplane, p.agent}].push_back(&p);
    by_dataplane[p.dataplane].push_back(&p);
  }
  auto working_set = [](const model::AgentCgroup* c, const model::AgentProcess& p) { return cgroup_figure(c, p, false); };
  auto kernel = [](const model::AgentCgroup* c, const model::AgentProcess& p) { return cgroup_figure(c, p, true); };
  auto earliest = [](const std::vector<const model::AgentProcess*>& procs) {
    std::string first;
    for (const auto* p : procs) {
      if (p->started_at.empty()) return std::string();  // one unknown start: no earliest to claim
      if (first.empty() || p->started_at < first) first = p->started_at;
    }
    return first;
  };

  for (const auto& [key, procs] : by_agent) {
    AgentUse u;
    u.dataplane = key.first;
    u.agent = key.second;
    u.processes = static_cast<uint32_t>(procs.size());
    u.rss = u.pss = Figure::of(0);
    std::set<std::string> cgroups;
    for (const auto* p : procs) {
      u.rss += process_figure(*p, p->rss_bytes, "rss_bytes");
      u.pss += process_figure(*p, p->pss_bytes, "pss_bytes");
      if (!p->cgroup.empty()) cgroups.insert(p->cgroup);
    }
    u.working_set = over_cgroups(procs, by_path, working_set);
    u.cgroup_kernel = over_cgroups(procs, by_path, kernel);
    u.started_at = earliest(procs);
    for (const auto& path : cgroups) {
      u.cgroups.push_back(path);
      auto it = by_path.find(path);
      if (it == by_path.end()) continue;
      const auto& c = *it->second;
      if (!c.pod_uid.empty()) {
        std::string pod = "pod " + c.pod_uid;
        if (!c.container_id.empty()) {
          pod += ", container " + c.container_id.substr(0, 12) +
                 (c.container_runtime.empty() ? "" : " (" + c.container_runtime + ")");
        }
        u.pods.push_back(pod);
      }
      size_t agents_in = 0;
      for (const auto& p : s.agents.processes) agents_in += p.cgroup == path;
      if (c.procs && *c.procs > agents_in) {
        u.notes.push_back("cgroup " + path + " holds " + std::to_string(*c.procs) + " processes, " +
                          std::to_string(agents_in) + " of them agents: its working set includes the others");
      }
    }
    a.agents.push_back(std::move(u));
  }

  std::set<std::string> owners;
  for (const auto& r : owner_rules()) owners.insert(std::string(r.owner));
  const bool ebpf_known = ebpf.availability.usable();
  a.working_set = a.ebpf_memlock = a.total = Figure::of(0);
  for (const auto& [dp, procs] : by_dataplane) {
    DataplaneUse d;
    d.dataplane = dp;
    for (const auto& u : a.agents) {
      if (u.dataplane == dp) d.agents.push_back(u.agent);
    }
    d.rss = d.pss = Figure::of(0);
    for (const auto* p : procs) {
      d.rss += process_figure(*p, p->rss_bytes, "rss_bytes");
      d.pss += process_figure(*p, p->pss_bytes, "pss_bytes");
    }
    d.working_set = over_cgroups(procs, by_path, working_set);
    d.cgroup_kernel = over_cgroups(procs, by_path, kernel);
    d.started_at = earliest(procs);
    d.ebpf_owner = owners.count(dp) > 0;
    if (!d.ebpf_owner) {
      d.ebpf_memlock = d.ebpf_map_memlock = Figure::of(0);  // a dataplane that loads no eBPF objects of its own
    } else if (!ebpf_known) {
      const std::string why =
          ebpf.availability.unavailable ? "eBPF unavailable: " + ebpf.availability.reason : "eBPF not collected";
      d.ebpf_memlock = d.ebpf_map_memlock = Figure::missing(why);
    } else {
      auto it = ebpf.owners.find(dp);
      d.ebpf_memlock = Figure::of(it == ebpf.owners.end() ? 0 : it->second.memlock_bytes);
      d.ebpf_map_memlock = Figure::of(it == ebpf.owners.end() ? 0 : it->second.map_memlock_bytes);
      if (it != ebpf.owners.end()) d.ebpf_first_loaded_at = it->second.first_loaded_at;
      // Load and start times come from two clocks (bpf's boot-time offset,
      // /proc/stat btime) rounded to seconds: a margin of 2 s.
      const time_t started = parse_rfc3339(d.started_at), loaded = parse_rfc3339(d.ebpf_first_loaded_at);
      d.started_after_ebpf = started != 0 && loaded != 0 && started > loaded + 2;
    }
    d.total = d.working_set;
    d.total += d.ebpf_memlock;
    a.working_set += d.working_set;
    a.ebpf_memlock += d.ebpf_memlock;
    a.total += d.total;
    a.dataplanes.push_back(std::move(d));
  }
  // A dataplane's eBPF objects stay when no agent of it runs (a crashed or
  // removed agent): still the node's networking memory.
  if (ebpf_known) {
    for (const auto& [owner, stats] : ebpf.owners) {
      if (owner == "system" || owner == "other" || !owners.count(owner) || by_dataplane.count(owner)) continue;
      if (stats.memlock_bytes == 0) continue;
      DataplaneUse d;
      d.dataplane = owner;
      d.ebpf_owner = true;
      d.rss = d.pss = d.working_set = d.cgroup_kernel = Figure::of(0);
      d.ebpf_memlock = Figure::of(stats.memlock_bytes);
      d.ebpf_map_memlock = Figure::of(stats.map_memlock_bytes);
      d.ebpf_first_loaded_at = stats.first_loaded_at;
      d.total = d.ebpf_memlock;
      a.ebpf_memlock += d.ebpf_memlock;
      a.total += d.total;
      a.dataplanes.push_back(std::move(d));
    }
    std::sort(a.dataplanes.begin(), a.dataplanes.end(),
              [](const DataplaneUse& x, const DataplaneUse& y) { return x.dataplane < y.dataplane; });
  }
  return a;
}

}  // namespace dpscope::analysis
