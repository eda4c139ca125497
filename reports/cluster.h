// Clusters: `dpscope compare DIR_A DIR_B`, each folder one cluster's node
// snapshots. Per-cluster totals, per-node min / median / max, and the nodes
// that drift from their cluster. The result is an ordinary Comparison (one
// side per cluster), so every renderer prints it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/verify.h"
#include "reports/comparison.h"

namespace dpscope::reports {

struct ClusterInput {
  std::string label;                          // "" = folder name
  std::string dir;
  std::vector<std::string> files;             // node snapshot files, sorted
  std::vector<AnalyzedInput> nodes;           // same order: each snapshot analysed as it is read
  // Same order, when load_cluster was given an intent (compare --intent): each
  // node verified against it as it is read.
  std::vector<analysis::NodeVerification> verified;
};

using Warn = std::function<void(const std::string&)>;

// Reads the folder's snapshots in parallel (inputs::read_snapshots: a file
// that is not a node snapshot is skipped with a warning, a folder left with
// none is an InputError), each one analysed and dropped right after it is
// read (memory is the analyses, not the snapshots).
// With `intent`, each snapshot is also verified against it (and read with the
// rules verify needs).
ClusterInput load_cluster(const std::string& dir, const std::string& label, const Warn& warn = {},
                          const analysis::IntentIndex* intent = nullptr);

Comparison compare_clusters(const std::vector<ClusterInput>& clusters);

}  // namespace dpscope::reports
