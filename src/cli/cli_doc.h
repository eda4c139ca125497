// The command line as data, read back from the CLI11 app that the command
// table built: the shell completion scripts (completion.cpp) and the man page
// (manpage.cpp) are generated from it, so they say what --help says.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace dpscope::cli {

struct OptionDoc {
  std::vector<std::string> flags;    // "-o", "--output"
  std::string value;                 // "FILE", "{text,json}", "" for a flag
  std::string help;
  enum class Values { None, Files, Choices } values = Values::None;  // what completes the value
  std::vector<std::string> choices;
};

struct CommandDoc {
  std::string name;
  std::string summary;
  std::string description;
  std::vector<std::string> examples;
  std::string positional;            // "snapshots", "" when none
  std::string positional_value;      // "FILE|DIR"
  std::string positional_help;
  bool positional_files = false;     // arguments are files
  std::vector<std::string> positional_choices;  // or one of these ("completion bash")
  std::vector<OptionDoc> options;    // visible ones, --help included
};

// Every command of the table, in its order (the root's own options in `root`).
std::vector<CommandDoc> command_docs(const CLI::App& root);
std::vector<OptionDoc> root_options(const CLI::App& root);

// The completion script for "bash", "zsh" or "fish"; throws UsageError for another shell.
std::string completion_script(const CLI::App& root, const std::string& shell);

// dpscope(1) in roff (man(7) macros).
std::string man_page(const CLI::App& root);

}  // namespace dpscope::cli
