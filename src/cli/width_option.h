// --width N, shared by the commands with text output (compare, check, where,
// scale): the column count the text must fit (reports/text_width.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>

namespace dpscope::cli {

inline void add_width_option(CLI::App* sub, std::optional<size_t>& width) {
  // Read signed: CLI11 would take "-3" for a size_t without a word.
  sub->add_option_function<long long>(
         "--width",
         [&width](const long long& n) {
           if (n < 0) {
             throw CLI::ValidationError("--width", "a number of columns, 0 for no limit, not " + std::to_string(n));
           }
           width = static_cast<size_t>(n);
         },
      "fit text output to N columns (0 = no limit). Default: the terminal's width when stdout is a terminal, "
      "else $COLUMNS when it is a number, else 100 (pipes, files). Tables shorten labels with \"...\", put a "
      "note that does not fit on its own line under its row and many sides in groups; numbers are never cut")
      ->type_name("N");
}

}  // namespace dpscope::cli
