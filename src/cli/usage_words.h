// The command line's own mistakes said in dpscope's voice: one prefix
// ("dpscope: CMD: ...") and one hint ("see 'dpscope CMD --help'") for
// CLI11's parse errors, dpscope's usage errors and unknown commands alike.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace dpscope::cli {

// The nearest of `names` to a mistyped `word` (kubectl's and git's rule: a
// prefix of it, or at most 2 edits away, or a third of its length for long
// words); "" when none is that close.
std::string nearest_name(const std::string& word, const std::vector<std::string>& names);

// CLI11's message for a parse error, in dpscope's words ("The following
// argument was not expected: --bogus" -> "unknown option --bogus").
std::string parse_error_words(const CLI::ParseError& e);

// The message as dpscope prints it for a bad command line of `command` ("" =
// the top level): "dpscope: CMD: what\nsee 'dpscope CMD --help'\n". A message
// that already starts with "CMD: " is not prefixed twice.
std::string usage_message(const std::string& command, const std::string& what, bool with_help_hint);

}  // namespace dpscope::cli
