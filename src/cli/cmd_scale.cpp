// dpscope scale SNAPSHOT... [--services N --endpoints M]: rules as a function
// of services and endpoints, fitted from each snapshot's own composition and
// projected, beside the eBPF side (fixed map memory, LB map capacity).
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/scale.h"
#include "cli/commands.h"
#include "model/json.h"
#include "reports/comparison.h"
#include "reports/escape.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

struct ScaleArgs {
  std::vector<std::string> snapshots;
  uint64_t services = 0;
  uint64_t endpoints = 0;
  std::string format = "text";
};

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

int run_scale(const ScaleArgs& a) {
  if (a.format != "text" && a.format != "json") throw UsageError("scale: --format is text or json");
  if ((a.services == 0) != (a.endpoints == 0)) throw UsageError("scale: give --services and --endpoints together");
  nlohmann::json out = {{"schema", "dpscope.scale/v1"}, {"nodes", nlohmann::json::array()}};
  std::string text;
  for (const auto& path : a.snapshots) {
    model::Snapshot s = model::load_snapshot(path);
    analysis::ScaleModel m = analysis::fit_scale(s);
    std::string name = s.node.name.empty() ? path : s.node.name;
    // Projection points: the ones asked for, else 100 / 1000 / 10000 service
    // ports with this node's endpoints-per-service ratio.
    std::vector<std::pair<uint64_t, uint64_t>> points;
    if (a.services) {
      points.push_back({a.services, a.endpoints});
    } else if (m.fitted) {
      for (uint64_t n : {100, 1000, 10000}) points.push_back({n, n * m.endpoints / m.services});
    }
    nlohmann::json node = {{"node", name}, {"source", path}, {"fitted", m.fitted}};
    text += reports::escape_text(name) + " (" + reports::escape_text(path) + ")\n";
    if (m.fitted) {
      node["now"] = {{"services", m.services}, {"endpoints", m.endpoints}, {"rules", m.rules}};
      node["model"] = {{"base_rules", m.base_rules},
                       {"rules_per_service", m.rules_per_service},
                       {"rules_per_endpoint", m.rules_per_endpoint}};
      text += "  iptables: rules = " + fixed(m.base_rules) + " + " + fixed(m.rules_per_service) + " x services + " +
              fixed(m.rules_per_endpoint) + " x endpoints   (now: " + std::to_string(m.services) + " services, " +
              std::to_string(m.endpoints) + " endpoints, " + std::to_string(m.rules) + " rules)\n";
      nlohmann::json proj = nlohmann::json::array();
      for (auto [n, e] : points) {
        uint64_t r = analysis::project_rules(m, n, e);
        proj.push_back({{"services", n}, {"endpoints", e}, {"rules", r}, {"kube_services_walk_worst", n + 1}});
        text += "    " + std::to_string(n) + " services, " + std::to_string(e) + " endpoints: " + std::to_string(r) +
                " rules; a new connection walks up to " + std::to_string(n + 1) + " rules in KUBE-SERVICES\n";
      }
      node["projection"] = proj;
    } else {
      node["why_not"] = m.why_not;
      text += "  iptables: not fitted: " + m.why_not + "\n";
    }
    if (m.has_lb_map) {
      node["ebpf"] = {{"lb_slots_used", m.lb_slots_used},
                      {"lb_slots_max", m.lb_slots_max},
                      {"map_memlock_bytes", m.map_memlock_bytes}};
      text += "  eBPF: service map " + std::to_string(m.lb_slots_used) + " / " + std::to_string(m.lb_slots_max) +
              " slots (one per frontend + one per backend); map memory " +
              reports::human_bytes(m.map_memlock_bytes) + ", fixed by max_entries, not by the number of services; " +
              "one hash lookup per new connection\n";
      for (auto [n, e] : points) {
        bool fits = n + e <= m.lb_slots_max;
        text += "    " + std::to_string(n) + " services, " + std::to_string(e) + " endpoints: " +
                std::to_string(n + e) + " slots, " + (fits ? "fits" : "exceeds the map") + "\n";
      }
    }
    out["nodes"].push_back(node);
  }
  std::cout << (a.format == "json" ? out.dump(2, ' ', true) + "\n" : text);
  return kExitOk;
}

}  // namespace

void register_scale(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ScaleArgs>();
  auto* sub = app.add_subcommand("scale", "Rules as a function of services and endpoints, projected");
  sub->add_option("snapshots", args->snapshots, "snapshot files")->required();
  sub->add_option("--services", args->services, "project to N service ports");
  sub->add_option("--endpoints", args->endpoints, "... and M endpoints");
  sub->add_option("--format", args->format, "text | json")->capture_default_str();
  sub->callback([args, &run] { run = [args] { return run_scale(*args); }; });
}

}  // namespace dpscope::cli
