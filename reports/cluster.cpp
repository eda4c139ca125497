#include "reports/cluster.h"

#include "reports/resident_cost.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "analysis/analysis.h"
#include "model/compression.h"
#include "inputs/inputs.h"
#include "model/json.h"
#include "util/error.h"

namespace dpscope::reports {

namespace fs = std::filesystem;

ClusterInput load_cluster(const std::string& dir, const std::string& label, const Warn& warn,
                          const analysis::IntentIndex* intent) {
  ClusterInput c;
  c.dir = dir;
  const std::vector<inputs::InputFile> files = inputs::expand({dir});
  std::vector<AnalyzedInput> nodes(files.size());
  std::vector<analysis::NodeVerification> verified(intent ? files.size() : 0);
  const auto detail = intent ? analysis::verify_rule_detail : analysis::rule_detail_for;
  const std::vector<bool> read = inputs::read_snapshots(files, {detail, warn}, 0, [&](model::Snapshot& s, size_t i) {
    nodes[i] = analyze_input({"", files[i].path, &s});
    if (intent) verified[i] = analysis::verify_node(*intent, s, analysis::node_name_of(s, files[i].path), files[i].path);
  });
  for (size_t i = 0; i < files.size(); ++i) {
    if (!read[i]) continue;
    c.files.push_back(files[i].path);
    c.nodes.push_back(std::move(nodes[i]));
    if (intent) c.verified.push_back(std::move(verified[i]));
  }
  std::string name = fs::path(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::path(dir).lexically_normal().parent_path().filename().string();
  c.label = label.empty() ? name : label;
  return c;
}

namespace {

// The metrics aggregated per cluster: row id of the node comparison, label.
const std::vector<std::pair<std::string, std::string>> kMetrics = {
    {"netfilter.rules.iptables", "iptables rules (-A)"},
    {"netfilter.chains.kube", "KUBE-* chains"},
    {"netfilter.chains.kube_svc", "KUBE-SVC chains"},
    {"netfilter.chains.kube_sep", "KUBE-SEP chains"},
    {"netfilter.service_ip_rules", "service-IP rules"},
    {"netfilter.chains.cilium", "CILIUM_* chains"},
    {"nftables.kube_proxy.services", "kube-proxy nftables service-ips elements"},
    {"ebpf.programs", "eBPF programs"},
    {"ebpf.maps", "eBPF maps"},
    {"ebpf.memlock_bytes", "eBPF kernel memory"},
    {"ebpf.cilium.frontends", "Cilium service frontends"},
};

struct NodeFacts {
  std::string name;
  std::string mode;
  std::set<std::string> services;   // service addresses programmed by any dataplane
  uint64_t kube_proxy_chains = 0;
};

std::string most_common(const std::vector<std::string>& v) {
  std::map<std::string, int> n;
  for (const auto& s : v) n[s] += 1;
  std::string best;
  int bn = 0;
  for (const auto& [k, c] : n) {
    if (c > bn) {
      best = k;
      bn = c;
    }
  }
  return best;
}

}  // namespace

Comparison compare_clusters(const std::vector<ClusterInput>& clusters) {
  Comparison out;
  std::vector<Comparison> per_cluster;
  std::vector<std::vector<NodeFacts>> facts(clusters.size());
  for (size_t ci = 0; ci < clusters.size(); ++ci) {
    const auto& c = clusters[ci];
    per_cluster.push_back(compare(c.nodes));
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      const auto& a = c.nodes[i].analysis;
      NodeFacts f;
      f.name = per_cluster.back().sides[i].label;
      f.mode = a.mode.id;
      f.services.insert(a.netfilter.service_ips.begin(), a.netfilter.service_ips.end());
      for (const auto& l : a.ebpf.lb) f.services.insert(l.frontend_addresses.begin(), l.frontend_addresses.end());
      f.kube_proxy_chains = a.netfilter.kube_proxy_chains;
      facts[ci].push_back(std::move(f));
    }
    Side side;
    side.label = c.label;
    side.source = c.dir;
    std::vector<std::string> modes;
    for (const auto& f : facts[ci]) modes.push_back(f.mode);
    side.mode = most_common(modes);
    side.mode_label = side.mode + " (" + std::to_string(std::count(modes.begin(), modes.end(), side.mode)) + " of " +
                      std::to_string(modes.size()) + " nodes)";
    out.sides.push_back(std::move(side));
  }

  auto add = [&](const std::string& id, const std::string& section, const std::string& label,
                 const std::function<Cell(size_t)>& f, const std::string& note = {}) {
    Row r{id, section, label, {}, note, false};
    for (size_t ci = 0; ci < clusters.size(); ++ci) r.values.push_back(f(ci));
    out.rows.push_back(std::move(r));
  };
  add("cluster.nodes", "cluster", "nodes", [&](size_t ci) { return Cell::num(clusters[ci].nodes.size()); });
  add("cluster.mode", "cluster", "mode (most nodes)", [&](size_t ci) { return Cell::str(out.sides[ci].mode_label); });

  // Drift: a node whose mode differs from its cluster's, one missing service
  // addresses most of its cluster programs, or kube-proxy leftovers in a
  // kube-proxy-free cluster.
  std::vector<std::vector<std::string>> drifting(clusters.size());
  for (size_t ci = 0; ci < clusters.size(); ++ci) {
    const auto& nodes = facts[ci];
    std::map<std::string, size_t> seen;
    for (const auto& f : nodes) {
      for (const auto& s : f.services) seen[s] += 1;
    }
    std::set<std::string> usual;
    for (const auto& [s, n] : seen) {
      if (2 * n > nodes.size()) usual.insert(s);
    }
    const std::string& mode = out.sides[ci].mode;
    for (const auto& f : nodes) {
      std::vector<std::string> why;
      if (f.mode != mode) why.push_back("mode " + f.mode + " (cluster: " + mode + ")");
      std::vector<std::string> missing;
      for (const auto& s : usual) {
        if (!f.services.count(s)) missing.push_back(s);
      }
      if (!missing.empty()) {
        std::string list;
        for (size_t i = 0; i < missing.size() && i < 5; ++i) list += (i ? ", " : "") + missing[i];
        why.push_back(std::to_string(missing.size()) + " service address" + (missing.size() == 1 ? "" : "es") +
                      " the other nodes program are missing (" + list + (missing.size() > 5 ? ", ..." : "") + ")");
      }
      if ((mode == "cilium-kpr" || mode == "calico-ebpf") && f.kube_proxy_chains > 0) {
        why.push_back(std::to_string(f.kube_proxy_chains) + " kube-proxy chains left");
      }
      if (!why.empty()) {
        std::string s = f.name + ": ";
        for (size_t i = 0; i < why.size(); ++i) s += (i ? "; " : "") + why[i];
        drifting[ci].push_back(s);
        out.findings.push_back(clusters[ci].label + ": node " + s + ".");
      }
    }
  }
  add("cluster.drifting_nodes", "cluster", "nodes drifting from their cluster",
      [&](size_t ci) { return Cell::num(drifting[ci].size()); }, "listed under findings");

  for (const auto& [id, label] : kMetrics) {
    bool bytes = id == "ebpf.memlock_bytes";
    // Per-node numbers; a node without the number (unavailable, not collected) makes the cluster's cell say so.
    auto numbers = [&, id = id](size_t ci, Cell* bad) {
      std::vector<uint64_t> v;
      const Row* r = per_cluster[ci].find(id);
      if (!r) return v;
      for (const auto& cell : r->values) {
        if (cell.kind != Cell::Kind::Number) {
          if (bad->kind != Cell::Kind::Unavailable) *bad = cell;
          continue;
        }
        v.push_back(cell.number);
      }
      return v;
    };
    auto stat = [&, bytes](const char* what) {
      return [&, what, bytes](size_t ci) {
        Cell bad = Cell::num(0);
        bad.kind = Cell::Kind::Number;
        std::vector<uint64_t> v = numbers(ci, &bad);
        if (v.size() != clusters[ci].nodes.size()) {
          if (bad.kind == Cell::Kind::Unavailable) return Cell::unavailable("on some nodes: " + bad.text);
          return Cell::not_collected();
        }
        std::sort(v.begin(), v.end());
        uint64_t x = 0;
        std::string w = what;
        if (w == "total") {
          for (auto n : v) x += n;
        } else if (w == "min") {
          x = v.front();
        } else if (w == "max") {
          x = v.back();
        } else {
          x = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
        }
        return Cell::num(x, bytes ? human_bytes(x) : "");
      };
    };
    std::string base = "cluster." + id;
    add(base + ".total", "cluster.totals", label + ": total", stat("total"));
    add(base + ".min", "cluster.per_node", label + ": min per node", stat("min"));
    add(base + ".median", "cluster.per_node", label + ": median per node", stat("median"));
    add(base + ".max", "cluster.per_node", label + ": max per node", stat("max"));
  }
  add_resident_cost_clusters(per_cluster, out);
  for (size_t ci = 0; ci < clusters.size(); ++ci) {
    for (const auto& d : drifting[ci]) out.sides[ci].evidence.push_back("drifting: " + d);
  }
  return out;
}

}  // namespace dpscope::reports
