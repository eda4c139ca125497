// Text output that fits the terminal: where the width comes from, and the
// helpers the text renderers share (display width, cutting a label, wrapping
// a sentence). Numbers are never cut: tables give way in their labels and
// notes, sentences wrap at spaces.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dpscope::reports {

// The width of text output that goes to a pipe or a file: a reader's pager or
// editor, a diff, a review comment; never a 300-column line.
constexpr size_t kNotATerminalWidth = 100;

// The width text output must fit, 0 = no limit. An explicit --width wins;
// else the terminal's columns when stdout is a terminal; else $COLUMNS when it
// is a positive number; else kNotATerminalWidth (files, pipes: the golden form).
size_t resolve_width(std::optional<size_t> flag, std::optional<size_t> tty_columns, const char* columns_env);
// The same for this process: stdout's terminal size (TIOCGWINSZ) and
// $COLUMNS, neither when the output goes to a file (-o).
size_t output_width(std::optional<size_t> flag, bool to_stdout);

// Display width: one column per UTF-8 code point; ANSI colour sequences
// (ESC [ ... m, added by the renderers, never from a node) take none.
size_t display_width(std::string_view s);
// `s` cut to `w` columns with "..." at the end when it is wider.
std::string cut(const std::string& s, size_t w);
// `s` cut to `w` columns in the middle ("KUBE-* ch...by kubelet"): for
// labels, whose ends tell rows apart.
std::string cut_middle(const std::string& s, size_t w);
// `s` cut at the end, but the cut never falls inside a number: "(/32, /128)" cut at
// "/12" becomes "(/32, /..." — a shortened note never shows a wrong number.
std::string cut_before_number(const std::string& s, size_t w);
// Every line wider than `width` wrapped at spaces, continued with a hanging
// indent (the line's own indent + 2, past a "- " bullet); a word wider than a
// line is split, never dropped. width 0 = unchanged.
std::string wrap_lines(const std::string& text, size_t width);

}  // namespace dpscope::reports
