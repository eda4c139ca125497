// Clusters: `dpscope compare DIR_A DIR_B`, each folder one cluster's node
// snapshots. Per-cluster totals, per-node min / median / max, and the nodes
// that drift from their cluster. The result is an ordinary Comparison (one
// side per cluster), so every renderer prints it.
#pragma once

#include <string>
#include <vector>

#include "reports/comparison.h"

namespace dpscope::reports {

struct ClusterInput {
  std::string label;                          // "" = folder name
  std::string dir;
  std::vector<std::string> files;             // node snapshot files, sorted
  std::vector<model::Snapshot> snapshots;     // same order
};

// Lists DIR/*.json (sorted) and loads them; throws InputError when DIR holds none.
ClusterInput load_cluster(const std::string& dir, const std::string& label);

Comparison compare_clusters(const std::vector<ClusterInput>& clusters);

}  // namespace dpscope::reports
