// Clusters: `dpscope compare DIR_A DIR_B`, each folder one cluster's node
// snapshots. Per-cluster totals, per-node min / median / max, and the nodes
// that drift from their cluster. The result is an ordinary Comparison (one
// side per cluster), so every renderer prints it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "reports/comparison.h"

namespace dpscope::reports {

struct ClusterInput {
  std::string label;                          // "" = folder name
  std::string dir;
  std::vector<std::string> files;             // node snapshot files, sorted
  std::vector<AnalyzedInput> nodes;           // same order: each snapshot analysed as it is read
};

// Lists DIR/*.json, *.json.zst, *.json.gz (sorted) and reads them, in
// parallel, each one analysed and dropped right after it is read (memory is
// the analyses, not the snapshots); throws InputError when DIR holds none.
// `warn` gets the readers' warnings (a newer minor schema's unknown fields),
// in folder order.
ClusterInput load_cluster(const std::string& dir, const std::string& label,
                          const std::function<void(const std::string&)>& warn = {});

Comparison compare_clusters(const std::vector<ClusterInput>& clusters);

}  // namespace dpscope::reports
