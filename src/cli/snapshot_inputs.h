// The snapshot arguments of check, where and scale: files, or cluster folders
// standing for each node snapshot in them (as compare reads them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/snapshot.h"

namespace dpscope::cli {

// Loads each argument's snapshots in turn, one at a time (a folder of 50 large
// nodes is never in memory at once), and hands each to `use` with the path it
// came from; stray files and errors as inputs::read_snapshots says them.
void for_each_snapshot(const std::vector<std::string>& args, const model::LoadOptions& options,
                       const std::function<void(model::Snapshot& snapshot, const std::string& path)>& use);

}  // namespace dpscope::cli
