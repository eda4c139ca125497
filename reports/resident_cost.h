// The "Resident cost" section of `compare`: the memory the networking stack
// holds on each node, all in -- the agents' processes (RSS, PSS, kubelet's
// working set of their cgroups) and the eBPF kernel memory their dataplane
// owns (fdinfo memlock) -- per agent, per dataplane and per node, and the
// seed study's question as one sentence. Rows in section "resident"; for
// clusters, min / median / max per node in "cluster.resident".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "reports/comparison.h"

namespace dpscope::reports {

// Appends the section's rows and findings to `cmp` (one side per node). Adds
// nothing when no node's snapshot has the agents section (snapshots from
// before it, imports): their eBPF half is in the eBPF section already.
void add_resident_cost(const std::vector<analysis::NodeAnalysis>& nodes, Comparison& cmp);

// Per cluster: min / median / max per node of the per-node rows, from each
// cluster's node comparison (`per_cluster[i]`, one side per node).
void add_resident_cost_clusters(const std::vector<Comparison>& per_cluster, Comparison& out);

// The section's HTML charts ("" when the comparison has no such rows).
std::string resident_cost_charts_html(const Comparison& c);

}  // namespace dpscope::reports
