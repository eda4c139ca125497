#include "cli/snapshot_inputs.h"

#include <filesystem>

#include "cli/report_output.h"
#include "reports/cluster.h"
#include "util/error.h"

namespace dpscope::cli {

void for_each_snapshot(const std::vector<std::string>& args, const model::LoadOptions& options,
                       const std::function<void(model::Snapshot& snapshot, const std::string& path)>& use) {
  for (const auto& arg : args) {
    if (!std::filesystem::is_directory(arg)) {
      model::Snapshot s = model::load_snapshot(arg, options);
      use(s, arg);
      continue;
    }
    const std::vector<std::string> files = reports::cluster_files(arg);
    size_t read = 0;
    for (const auto& f : files) {
      model::Snapshot s;
      try {
        s = model::load_snapshot(f, options);
      } catch (...) {
        reports::skip_foreign_or_rethrow(f, warn_on_stderr);
        continue;
      }
      use(s, f);
      ++read;
    }
    if (read == 0) {
      throw InputError(arg, 0, "no node snapshots in this folder: its " + std::to_string(files.size()) + " file" +
                                   (files.size() == 1 ? " is" : "s are") + " not dpscope snapshots");
    }
  }
}

}  // namespace dpscope::cli
