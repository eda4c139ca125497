#include "cli/snapshot_inputs.h"

#include "cli/report_output.h"
#include "inputs/inputs.h"

namespace dpscope::cli {

void for_each_snapshot(const std::vector<std::string>& args, const model::LoadOptions& options,
                       const std::function<void(model::Snapshot& snapshot, const std::string& path)>& use) {
  const std::vector<inputs::InputFile> files = inputs::expand(args);
  inputs::read_snapshots(files, options, 1, [&](model::Snapshot& s, size_t i) { use(s, files[i].path); });
}

}  // namespace dpscope::cli
