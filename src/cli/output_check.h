// -o FILE is checked before a command reads anything: a snapshot of a big
// node or a 50-node import should not run for seconds and then fail on a
// typo in the destination.
#pragma once

#include <string>
#include <vector>

namespace dpscope::cli {

// Throws UsageError (exit 2) when FILE cannot be written: it is a folder, its
// folder does not exist or is not a folder, or a file cannot be created there
// (tried for real: a temporary file is created and removed, so read-only
// mounts and permissions are seen as the kernel sees them). "-" and "" (stdout) pass.
// A bare format name ("json", "csv", "yaml", one of `formats`) is refused too:
// kubectl's and cilium's -o is the format, dpscope's is the file, and
// `compare -o json` would write the text report into ./json. `-o ./json`
// writes a file named json. `formats`: the command's --format values ({}: the
// command has no --format, e.g. snapshot).
void check_output_destination(const std::string& option, const std::string& path,
                              const std::vector<std::string>& formats = {});

}  // namespace dpscope::cli
