// `dpscope scale` and the scale chart of the compare HTML page: kube-proxy rules
// (iptables and nftables mode) projected from each node's own composition (analysis::fit_scale), beside the
// eBPF side (service map slots against max_entries, map memory fixed by
// max_entries).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "reports/comparison.h"
#include "reports/render.h"

namespace dpscope::reports {

ScaleSide scale_side(const model::Snapshot& s, const std::string& label, const std::string& source);

// Fills c.scale, one per side (labels from c.sides), for the HTML scale chart.
void add_scale(Comparison& c, const std::vector<SideInput>& inputs);

struct ScalePoint {
  std::string label;   // "now", "1000 services", ...
  uint64_t services = 0;
  uint64_t endpoints = 0;
};

// The points of `dpscope scale` tables: the asked one (services > 0), else
// 100 / 1000 / 10000 service ports at the node's endpoints-per-service ratio
// (only when the node's iptables or nftables mode is fitted).
std::vector<ScalePoint> table_points(const ScaleSide& s, uint64_t services, uint64_t endpoints);
// The points of the chart: the node's current size, then 1000 / 5000 / 10000 /
// 20000 service ports at its endpoints-per-service ratio, then the asked one.
std::vector<ScalePoint> chart_points(const ScaleSide& s, uint64_t services, uint64_t endpoints);
// Projected iptables rules at a point; the node's own count at "now".
uint64_t rules_at(const ScaleSide& s, const ScalePoint& p);
// eBPF service map slots at a point: one per frontend + one per backend; the
// map's own count at "now".
uint64_t lb_slots_at(const ScaleSide& s, const ScalePoint& p);

// Sides named after the scale sides (the charts' legend).
std::vector<Side> legend_of(const std::vector<ScaleSide>& sides);

// The projection charts (kube-proxy rules of both modes; eBPF service map slots), a plain
// sentence for each side without a fit or without a service map. `legend`
// gives the side labels and colours.
std::string scale_charts_html(const std::vector<ScaleSide>& sides, const std::vector<Side>& legend,
                              uint64_t services = 0, uint64_t endpoints = 0);

// The `dpscope scale` report. Formats: text, json, markdown, html, csv.
std::string render_scale(const std::vector<ScaleSide>& sides, uint64_t services, uint64_t endpoints, Format f,
                         const TextOptions& opt = {});

}  // namespace dpscope::reports
