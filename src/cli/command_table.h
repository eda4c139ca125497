// The command table: every dpscope command, its one-line summary, what its
// --help says above the options, and its examples. The CLI11 app, the
// top-level help, each command's --help, the shell completion scripts and the
// man page are all made from it (and from the options each command's `add`
// function registers), so they cannot drift. A new command is one entry here
// plus its cmd_<name>.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace dpscope::cli {

struct CommandSpec {
  std::string name;
  std::string summary;                // one line: top-level help, completion, man page
  std::string description;            // paragraphs under the summary in `dpscope NAME --help` ("" = none)
  std::vector<std::string> examples;  // "dpscope ...   # what it does"
  // Registers the command's options and its callback on `sub` (created from this entry).
  void (*add)(CLI::App* sub, Runner& run, CLI::App& root);
};

const std::vector<CommandSpec>& command_table();
const CommandSpec* find_command(const std::string& name);

// The whole command line: every command of the table on `app`.
void build_app(CLI::App& app, Runner& run);

// The top-level text: what dpscope is, and its exit codes.
extern const char* const kProgramDescription;
extern const char* const kExitCodes;

}  // namespace dpscope::cli
