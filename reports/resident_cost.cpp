#include "reports/resident_cost.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "reports/html_chart.h"

namespace dpscope::reports {

using analysis::AgentsAnalysis;
using analysis::Figure;
using analysis::NodeAnalysis;

namespace {

constexpr const char* kNotRunning = "not running";

Cell bytes_cell(const Figure& f) {
  if (!f.bytes) return Cell::unavailable(f.unavailable);
  return Cell::num(*f.bytes, human_bytes(*f.bytes));
}

// The section's state on one node: a cell when it has no figures to give.
std::optional<Cell> section_cell(const AgentsAnalysis& a) {
  if (a.unavailable) return Cell::unavailable(a.reason);
  if (!a.collected) return Cell::not_collected();
  return std::nullopt;
}

// "kube-proxy 46.8 MiB" / "cilium-agent 236.0 MiB + eBPF maps 412.0 MiB" / "no agent found".
std::string stack_sentence(const AgentsAnalysis& a) {
  std::vector<std::string> parts;
  for (const auto& u : a.agents) {
    if (u.working_set.bytes) {
      parts.push_back(u.agent + " " + human_bytes(*u.working_set.bytes));
    } else if (u.rss.bytes) {
      parts.push_back(u.agent + " " + human_bytes(*u.rss.bytes) + " RSS (working set unavailable)");
    } else {
      parts.push_back(u.agent + " unavailable");
    }
  }
  uint64_t maps = 0, programs = 0;
  bool ebpf_missing = false;
  for (const auto& d : a.dataplanes) {
    if (!d.ebpf_owner) continue;
    if (!d.ebpf_memlock.bytes || !d.ebpf_map_memlock.bytes) {
      ebpf_missing = true;
      continue;
    }
    maps += *d.ebpf_map_memlock.bytes;
    programs += *d.ebpf_memlock.bytes - *d.ebpf_map_memlock.bytes;
  }
  if (ebpf_missing) {
    parts.push_back("eBPF unavailable");
  } else {
    if (maps > 0) parts.push_back("eBPF maps " + human_bytes(maps));
    if (programs > 0) parts.push_back("eBPF programs " + human_bytes(programs));
  }
  if (parts.empty()) return "no dataplane agent found";
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? " + " : "") + parts[i];
  if (parts.size() > 1 && a.total.bytes) s += " = " + human_bytes(*a.total.bytes);
  return s;
}

}  // namespace

void add_resident_cost(const std::vector<NodeAnalysis>& nodes, Comparison& cmp) {
  const bool any = std::any_of(nodes.begin(), nodes.end(),
                               [](const NodeAnalysis& n) { return n.agents.collected || n.agents.unavailable; });
  if (!any) return;
  auto add = [&](std::string id, std::string label, const std::function<Cell(const AgentsAnalysis&)>& f,
                 std::string note = {}, bool headline = false) {
    Row r{std::move(id), "resident", std::move(label), {}, std::move(note), headline};
    for (const auto& n : nodes) r.values.push_back(section_cell(n.agents).value_or(f(n.agents)));
    cmp.rows.push_back(std::move(r));
  };

  add("resident.summary", "networking stack memory", [](const AgentsAnalysis& a) { return Cell::str(stack_sentence(a)); },
      "agents' working set + the eBPF memory their dataplane owns", true);
  add("resident.total_bytes", "networking stack memory, all in",
      [](const AgentsAnalysis& a) { return bytes_cell(a.total); },
      "working set of the agents' cgroups + eBPF fdinfo memlock of their dataplanes", true);
  add("resident.working_set_bytes", "agents' working set (kubectl top)",
      [](const AgentsAnalysis& a) { return bytes_cell(a.working_set); }, "each cgroup once");
  add("resident.ebpf_memlock_bytes", "dataplanes' eBPF kernel memory (fdinfo memlock)",
      [](const AgentsAnalysis& a) { return bytes_cell(a.ebpf_memlock); }, "not in any working set kubectl top shows");
  add("resident.cgroup_version", "agents' memory cgroups", [](const AgentsAnalysis& a) {
    return Cell::str(a.cgroup_version.empty() ? "no memory controller" : "cgroup " + a.cgroup_version);
  });
  add("resident.ebpf_charged_to_cgroup", "eBPF map memory charged to a memory cgroup", [&](const AgentsAnalysis& a) {
    if (a.bpf_memcg_charged == "yes") return Cell::str("yes: the creating process's (Linux 5.11+)");
    if (a.bpf_memcg_charged == "no") return Cell::str("no (before Linux 5.11: RLIMIT_MEMLOCK)");
    return Cell::str("unknown (no kernel version)");
  });

  // Per dataplane and per agent: the union over sides.
  std::vector<std::string> dataplanes;
  std::vector<std::pair<std::string, std::string>> agents;  // (dataplane, agent)
  for (const auto& n : nodes) {
    for (const auto& d : n.agents.dataplanes) dataplanes.push_back(d.dataplane);
    for (const auto& u : n.agents.agents) agents.push_back({u.dataplane, u.agent});
  }
  std::sort(dataplanes.begin(), dataplanes.end());
  dataplanes.erase(std::unique(dataplanes.begin(), dataplanes.end()), dataplanes.end());
  std::sort(agents.begin(), agents.end());
  agents.erase(std::unique(agents.begin(), agents.end()), agents.end());

  for (const auto& dp : dataplanes) {
    auto pick = [dp](const std::function<Cell(const analysis::DataplaneUse&)>& f) {
      return [dp, f](const AgentsAnalysis& a) {
        for (const auto& d : a.dataplanes) {
          if (d.dataplane == dp) return f(d);
        }
        return Cell::num(0, kNotRunning);
      };
    };
    const std::string base = "resident.dataplane." + dp;
    add(base + ".total_bytes", dp + ": total", pick([](const auto& d) { return bytes_cell(d.total); }),
        "working set + eBPF fdinfo memlock");
    add(base + ".working_set_bytes", "  " + dp + ": agents' working set",
        pick([](const auto& d) { return bytes_cell(d.working_set); }));
    add(base + ".ebpf_memlock_bytes", "  " + dp + ": eBPF kernel memory (fdinfo memlock)",
        pick([](const auto& d) {
          if (!d.ebpf_owner) return Cell::num(0, "none (loads no eBPF objects of its own)");
          return bytes_cell(d.ebpf_memlock);
        }),
        "programs + maps the eBPF analysis attributes to it");
    add(base + ".cgroup_kernel_bytes", "  " + dp + ": cgroup kernel memory",
        pick([](const auto& d) { return bytes_cell(d.cgroup_kernel); }),
        "memory.stat kernel (v1: memory.kmem.usage_in_bytes); includes map memory the running agent created "
        "when the kernel charges it to the cgroup");
  }
  for (const auto& [dp, agent] : agents) {
    auto pick = [agent = agent](const std::function<Cell(const analysis::AgentUse&)>& f) {
      return [agent, f](const AgentsAnalysis& a) {
        for (const auto& u : a.agents) {
          if (u.agent == agent) return f(u);
        }
        return Cell::num(0, kNotRunning);
      };
    };
    const std::string base = "resident.agent." + agent;
    add(base + ".working_set_bytes", agent + ": working set", pick([](const auto& u) { return bytes_cell(u.working_set); }),
        "its cgroup's memory.current - inactive_file, as kubelet computes it");
    add(base + ".rss_bytes", "  " + agent + ": RSS", pick([](const auto& u) { return bytes_cell(u.rss); }),
        "VmRSS, summed over its processes");
    add(base + ".pss_bytes", "  " + agent + ": PSS", pick([](const auto& u) { return bytes_cell(u.pss); }),
        "smaps_rollup Pss: shared pages split between their users");
    add(base + ".processes", "  " + agent + ": processes", pick([](const auto& u) { return Cell::num(u.processes); }));
  }

  // Findings: the seed question, then what the figures do not show.
  std::string sentence;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& a = nodes[i].agents;
    if (!a.usable()) continue;
    sentence += (sentence.empty() ? "networking stack memory: " : " vs ") + stack_sentence(a) + " (" +
                cmp.sides[i].label + ")";
  }
  if (!sentence.empty()) cmp.findings.push_back(sentence + ".");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& a = nodes[i].agents;
    const std::string& who = cmp.sides[i].label;
    if (!a.usable()) continue;
    for (const auto& d : a.dataplanes) {
      if (!d.ebpf_owner || !d.ebpf_memlock.bytes || *d.ebpf_memlock.bytes == 0) continue;
      if (d.agents.empty()) {
        cmp.findings.push_back(who + ": " + human_bytes(*d.ebpf_memlock.bytes) + " of " + d.dataplane +
                               "'s eBPF objects are loaded but no " + d.dataplane + " agent runs.");
      } else if (d.started_after_ebpf) {
        cmp.findings.push_back(who + ": the " + d.dataplane + " agents started (" + d.started_at +
                               ") after its oldest eBPF program was loaded (" + d.ebpf_first_loaded_at +
                               "): those objects were created by an earlier process, and kubectl top does not "
                               "attribute their memory to the running agent.");
      } else if (a.bpf_memcg_charged == "yes" && d.cgroup_kernel.bytes) {
        cmp.findings.push_back(who + ": this kernel charges eBPF map memory to the memory cgroup of the process "
                               "that created each map (Linux 5.11+); maps the running " + d.dataplane +
                               " agents created are in their cgroups' kernel memory (" +
                               human_bytes(*d.cgroup_kernel.bytes) + ") and so in their working set as well.");
      }
    }
    for (const auto& u : a.agents) {
      for (const auto& note : u.notes) cmp.findings.push_back(who + ": " + u.agent + ": " + note + ".");
    }
  }
}

void add_resident_cost_clusters(const std::vector<Comparison>& per_cluster, Comparison& out) {
  // Per-node rows to aggregate, in first-seen order.
  std::vector<std::pair<std::string, std::string>> ids;
  for (const auto& c : per_cluster) {
    for (const auto& r : c.rows) {
      if (r.section != "resident" || r.id.size() < 6 || r.id.compare(r.id.size() - 6, 6, "_bytes") != 0) continue;
      if (std::none_of(ids.begin(), ids.end(), [&](const auto& p) { return p.first == r.id; })) {
        std::string label = r.label;
        label.erase(0, label.find_first_not_of(' '));
        ids.push_back({r.id, label});
      }
    }
  }
  for (const auto& [id, label] : ids) {
    // An agent's row counts the nodes it runs on; a total row every node.
    const bool per_agent = id.rfind("resident.agent.", 0) == 0 || id.rfind("resident.dataplane.", 0) == 0;
    for (const char* what : {"min", "median", "max"}) {
      Row row{"cluster." + id + "." + what, "cluster.resident", label + ": " + what + " per node", {}, {}, false};
      if (per_agent) row.note = "over the nodes running it";
      for (const auto& c : per_cluster) {
        const Row* r = c.find(id);
        std::vector<uint64_t> v;
        std::optional<Cell> bad;
        const size_t nodes = c.sides.size();
        if (r == nullptr && c.find("resident.total_bytes") == nullptr) bad = Cell::not_collected();
        for (size_t k = 0; r && k < r->values.size(); ++k) {
          const Cell& cell = r->values[k];
          if (cell.kind == Cell::Kind::Number && cell.display == kNotRunning) continue;
          if (cell.kind != Cell::Kind::Number) {
            if (!bad || bad->kind != Cell::Kind::Unavailable) {
              bad = cell.kind == Cell::Kind::Unavailable ? Cell::unavailable("on " + c.sides[k].label + ": " + cell.text)
                                                         : cell;
            }
            continue;
          }
          v.push_back(cell.number);
        }
        if (bad) {
          row.values.push_back(*bad);
          continue;
        }
        if (v.empty()) {
          row.values.push_back(Cell::num(0, kNotRunning));
          continue;
        }
        std::sort(v.begin(), v.end());
        const std::string w = what;
        const uint64_t x = w == "min" ? v.front() : w == "max" ? v.back()
                           : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
        std::string display = human_bytes(x);
        if (per_agent && v.size() != nodes) display += " (" + std::to_string(v.size()) + " of " + std::to_string(nodes) + " nodes)";
        row.values.push_back(Cell::num(x, display));
      }
      out.rows.push_back(std::move(row));
    }
  }
}

std::string resident_cost_charts_html(const Comparison& c) {
  // Node comparisons chart the per-node rows; cluster ones their medians.
  const bool clusters = c.find("cluster.resident.total_bytes.median") != nullptr;
  const std::string prefix = clusters ? "cluster.resident." : "resident.";
  const std::string suffix = clusters ? ".median" : "";
  auto series = [&](const std::string& group, const std::string& field, const std::string& label_tail) {
    std::vector<Series> out;
    for (const auto& r : c.rows) {
      const std::string head = prefix + group;
      const std::string tail = field + suffix;
      if (r.id.rfind(head, 0) != 0 || r.id.size() < head.size() + tail.size() ||
          r.id.compare(r.id.size() - tail.size(), tail.size(), tail) != 0) {
        continue;
      }
      Series s;
      s.label = r.id.substr(head.size(), r.id.size() - head.size() - tail.size()) + label_tail;
      for (const auto& v : r.values) {
        const bool num = v.kind == Cell::Kind::Number && v.display != kNotRunning;
        s.values.push_back(num ? static_cast<double>(v.number) : -1);
        s.texts.push_back(v.kind == Cell::Kind::Number ? v.shown() : v.kind == Cell::Kind::Unavailable ? "unavailable"
                                                                                                        : "n/a");
      }
      out.push_back(std::move(s));
    }
    return out;
  };
  std::vector<Series> dp = series("dataplane.", ".total_bytes", "");
  if (dp.empty()) return "";
  std::vector<Series> stack = series("dataplane.", ".working_set_bytes", " agents");
  for (auto& s : series("dataplane.", ".ebpf_memlock_bytes", " eBPF")) stack.push_back(std::move(s));
  std::vector<Series> per_agent = series("agent.", ".working_set_bytes", " working set");
  for (auto& s : series("agent.", ".rss_bytes", " RSS")) per_agent.push_back(std::move(s));
  std::stable_sort(per_agent.begin(), per_agent.end(), [](const Series& a, const Series& b) { return a.label < b.label; });
  const std::string per = clusters ? " (median per node)" : "";
  std::string out = "<h3>Resident cost</h3>\n";
  out += bar_chart("Networking stack memory per dataplane: agents' working set + eBPF (fdinfo memlock)" + per, dp,
                   c.sides, true);
  out += bar_chart("Its two halves: agents' working set and eBPF kernel memory" + per, stack, c.sides, true);
  out += bar_chart("Agent memory: working set (kubectl top) and RSS" + per, per_agent, c.sides, true);
  return out;
}

}  // namespace dpscope::reports
