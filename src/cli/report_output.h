// Where a command's report goes: stdout when -o is absent or "-", otherwise
// the file, written atomically (model::write_file_atomically).
#pragma once

#include <iostream>
#include <string>

#include "model/json.h"

namespace dpscope::cli {

inline bool to_stdout(const std::string& output) { return output.empty() || output == "-"; }

inline void write_report(const std::string& output, const std::string& text) {
  model::write_file_atomically(to_stdout(output) ? "-" : output, text);
}

// Snapshot reader warnings (a newer minor schema's unknown fields) go to stderr.
inline void warn_on_stderr(const std::string& warning) { std::cerr << "dpscope: warning: " << warning << "\n"; }

}  // namespace dpscope::cli
