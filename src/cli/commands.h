// One file per command (cmd_<name>.cpp), each with an add_<name> function that
// registers the command's options on the subcommand the command table
// (cli/command_table.h) created. A command's callback stores the work to do in
// `run`; run_main() runs it and maps exceptions to the exit codes in
// util/error.h. `root` is the whole command line (for completion and man).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_main.h"

namespace dpscope::cli {

using Runner = std::function<int()>;

void add_snapshot(CLI::App* sub, Runner& run, CLI::App& root);
void add_import(CLI::App* sub, Runner& run, CLI::App& root);
void add_compare(CLI::App* sub, Runner& run, CLI::App& root);
void add_check(CLI::App* sub, Runner& run, CLI::App& root);
void add_where(CLI::App* sub, Runner& run, CLI::App& root);
void add_scale(CLI::App* sub, Runner& run, CLI::App& root);
void add_version(CLI::App* sub, Runner& run, CLI::App& root);
void add_completion(CLI::App* sub, Runner& run, CLI::App& root);
void add_man(CLI::App* sub, Runner& run, CLI::App& root);
void add_verify(CLI::App* sub, Runner& run, CLI::App& root);
void add_export(CLI::App* sub, Runner& run, CLI::App& root);

}  // namespace dpscope::cli
