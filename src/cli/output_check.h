// -o FILE is checked before a command reads anything: a snapshot of a big
// node or a 50-node import should not run for seconds and then fail on a
// typo in the destination.
#pragma once

#include <string>

namespace dpscope::cli {

// Throws UsageError (exit 2) when FILE cannot be written: it is a folder, its
// folder does not exist or is not a folder, or a file cannot be created there
// (tried for real: a temporary file is created and removed, so read-only
// mounts and permissions are seen as the kernel sees them). "-" and "" (stdout) pass.
void check_output_destination(const std::string& option, const std::string& path);

}  // namespace dpscope::cli
