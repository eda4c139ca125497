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

// DIR/*.json, *.json.zst, *.json.gz, sorted; throws InputError when DIR
// cannot be listed or holds none.
std::vector<std::string> cluster_files(const std::string& dir);

// Whether a file that failed to load as a snapshot is not meant to be one: it
// is complete, valid JSON, but another document (a saved report: another
// "schema"; an `nft -j` dump or a note: no schema and no snapshot section, or
// not an object). A truncated or damaged file is not valid JSON, and a file
// that says it is a snapshot is one: both stay errors.
bool is_foreign_file(const std::string& path);

// A cluster folder's file that is not a node snapshot is skipped, said once through
// `warn` ("FILE: not a node snapshot (...): skipped"); any other error is thrown.
// Rethrows the current exception unless it is such a file.
void skip_foreign_or_rethrow(const std::string& path, const Warn& warn);

// Lists the folder (cluster_files) and reads the files in parallel, each one
// analysed and dropped right after it is read (memory is the analyses, not
// the snapshots). A file that is not a node snapshot at all (is_foreign_file)
// is skipped with a warning; a folder left with no snapshot is an InputError.
// With `intent`, each snapshot is also verified against it (and read with the
// rules verify needs).
ClusterInput load_cluster(const std::string& dir, const std::string& label, const Warn& warn = {},
                          const analysis::IntentIndex* intent = nullptr);

Comparison compare_clusters(const std::vector<ClusterInput>& clusters);

}  // namespace dpscope::reports
