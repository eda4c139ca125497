#include "reports/intent_rows.h"

#include <set>

namespace dpscope::reports {

namespace {

using analysis::ClusterVerification;

uint64_t count_ids(const ClusterVerification& v, const std::set<std::string>& ids) {
  uint64_t n = 0;
  for (const auto& node : v.nodes) {
    for (const auto& f : node.findings) n += ids.count(f.id);
  }
  return n;
}

// Why a side's "fully programmed" figure is not known: a node part of which
// could not be verified (or with no service dataplane at all).
std::string node_wide_gap(const ClusterVerification& v) {
  for (const auto& node : v.nodes) {
    for (const auto& f : node.findings) {
      if (f.service.empty() && (f.id == "not-verified" || f.id == "no-dataplane")) {
        return node.node + ": " + f.actual;
      }
    }
  }
  return "";
}

}  // namespace

void add_intent_rows(Comparison& c, const std::vector<ClusterVerification>& per_side) {
  // Finding ids of docs/verify.md, grouped as the issue asks for them.
  const std::set<std::string> endpoint_ids = {"missing-endpoint", "extra-endpoint", "stale-endpoint", "endpoint-count"};
  const std::set<std::string> frontend_ids = {"wrong-port", "wrong-protocol", "wrong-action", "wrong-policy",
                                              "extra-frontend"};
  auto row = [&](std::string id, std::string label, auto value, std::string note = {}) {
    Row r;
    r.id = std::move(id);
    r.section = "intent";
    r.label = std::move(label);
    r.note = std::move(note);
    for (const auto& v : per_side) r.values.push_back(value(v));
    c.rows.push_back(std::move(r));
  };
  row("intent.services", "Services the intent asks to program",
      [](const ClusterVerification& v) { return Cell::num(v.services_expected); },
      "not headless or ExternalName, with ports");
  row("intent.services_ok", "Services fully programmed (on every node)", [](const ClusterVerification& v) {
    const std::string gap = node_wide_gap(v);
    return gap.empty() ? Cell::num(v.services_ok_everywhere) : Cell::unavailable(gap);
  });
  row("intent.nodes_ok", "nodes matching the intent", [](const ClusterVerification& v) {
    uint64_t ok = 0;
    for (const auto& n : v.nodes) ok += n.ok() ? 1 : 0;
    return Cell::num(ok, std::to_string(ok) + " of " + std::to_string(v.nodes.size()));
  });
  row("intent.missing_frontends", "missing frontends",
      [](const ClusterVerification& v) { return Cell::num(count_ids(v, {"missing-frontend"})); });
  row("intent.endpoint_findings", "endpoint findings (missing / extra / stale / count)",
      [&](const ClusterVerification& v) { return Cell::num(count_ids(v, endpoint_ids)); });
  row("intent.frontend_findings", "wrong port, protocol, action or policy; extra frontends",
      [&](const ClusterVerification& v) { return Cell::num(count_ids(v, frontend_ids)); });
  row("intent.stale_services", "Services programmed but not in the cluster",
      [](const ClusterVerification& v) { return Cell::num(count_ids(v, {"stale-service"})); });
  row("intent.findings", "findings (dpscope verify lists each)", [](const ClusterVerification& v) {
    uint64_t n = 0;
    for (const auto& node : v.nodes) n += node.findings.size();
    return Cell::num(n);
  });
  for (size_t i = 0; i < per_side.size() && i < c.sides.size(); ++i) {
    const ClusterVerification& v = per_side[i];
    if (v.ok()) continue;
    uint64_t n = 0;
    for (const auto& node : v.nodes) n += node.findings.size();
    c.findings.push_back(c.sides[i].label + " does not match the intent: " + std::to_string(n) +
                         " finding" + (n == 1 ? "" : "s") + " (dpscope verify names each)");
  }
}

}  // namespace dpscope::reports
