// Options shared by the report commands, registered the same way everywhere
// so --help, completion and the man page describe them the same way.
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/width_option.h"
#include "reports/render.h"

namespace dpscope::cli {

// "{a,b,c}": an option's value names, shown in --help and offered by completion
// (cli/completion.cpp reads them back from the option's type name). The
// command checks the value itself, so its error says what the value means.
inline std::string choice_type(const std::vector<std::string>& choices) {
  std::string t = "{";
  for (size_t i = 0; i < choices.size(); ++i) t += (i ? "," : "") + choices[i];
  return t + "}";
}

// CLI::IsMember for an option whose type name already shows the values
// ("{a,b}"): without an empty description CLI11 prints them twice ("{a,b}:{a,b}").
inline CLI::Validator one_of(const std::vector<std::string>& values) { return CLI::IsMember(values).description(""); }

inline CLI::Option* add_format_option(CLI::App* sub, std::string& format, const std::vector<std::string>& formats) {
  std::string help = "output format:";
  for (size_t i = 0; i < formats.size(); ++i) help += (i ? " | " : " ") + formats[i];
  return sub->add_option("--format", format, help)->type_name(choice_type(formats))->capture_default_str();
}

inline CLI::Option* add_output_option(CLI::App* sub, std::string& output, const std::string& help) {
  return sub->add_option("-o,--output", output, help)->type_name("FILE");
}

// --color=auto|always|never. auto: only when stdout is a terminal and NO_COLOR
// is not set (https://no-color.org). Never in a file, never in a format other
// than text, whatever was asked.
inline CLI::Option* add_color_option(CLI::App* sub, std::string& color) {
  return sub
      ->add_option("--color", color,
                   "colour the text report: auto (stdout is a terminal and NO_COLOR is unset), always, never. Never "
                   "in a file (-o) or another --format")
      ->type_name(choice_type({"auto", "always", "never"}))
      ->check(CLI::Validator(
          [](std::string& v) { return v == "auto" || v == "always" || v == "never" ? "" : "auto, always or never, not " + v; },
          "", "color"))
      ->capture_default_str();
}

inline bool use_color(const std::string& color, bool to_stdout, reports::Format format) {
  if (!to_stdout || format != reports::Format::Text || color == "never") return false;
  if (color == "always") return true;
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

}  // namespace dpscope::cli
