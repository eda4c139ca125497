// One file per command (cmd_<name>.cpp), each registering a CLI11 subcommand.
// A command's callback stores the work to do in `run`; main() runs it and maps
// exceptions to the exit codes in util/error.h.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace dpscope::cli {

using Runner = std::function<int()>;

void register_snapshot(CLI::App& app, Runner& run);
void register_import(CLI::App& app, Runner& run);
void register_compare(CLI::App& app, Runner& run);
void register_check(CLI::App& app, Runner& run);
void register_where(CLI::App& app, Runner& run);
void register_scale(CLI::App& app, Runner& run);
void register_verify(CLI::App& app, Runner& run);

// Runs the dpscope command line; returns the process exit code.
int run_main(int argc, char** argv);

}  // namespace dpscope::cli
