// The process entry point's only dependency: main.cpp includes this alone, so
// the executable's own unit compiles in a fraction of a second instead of
// instantiating CLI11 and nlohmann/json again (they live in dpscope_cli).
#pragma once

namespace dpscope::cli {

// Runs the dpscope command line; returns the process exit code.
int run_main(int argc, char** argv);

}  // namespace dpscope::cli
