// Renderers of a Comparison. They only format: every number comes from the
// Comparison, every string from a node goes through reports/escape.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "reports/comparison.h"

namespace dpscope::reports {

enum class Format { Text, Markdown, Json, Csv, Html };

// Throws std::invalid_argument for an unknown name.
Format format_from_string(const std::string& name);

struct TextOptions {
  bool color = false;   // ANSI colours (only on a tty without NO_COLOR)
  size_t width = 0;     // columns to fit (reports/text_width.h; 0 = no limit): labels and notes
                        // shorten, sides go in groups, sentences wrap; numbers are never cut
};

std::string render_text(const Comparison& c, const TextOptions& opt = {});
std::string render_markdown(const Comparison& c);
nlohmann::json to_json(const Comparison& c);
std::string render_json(const Comparison& c);
std::string render_csv(const Comparison& c);
std::string render_html(const Comparison& c);

std::string render(const Comparison& c, Format f, const TextOptions& opt = {});

// compare --diff-only: drops the rows whose value is the same number or text on
// every side (a row with an unavailable, not collected or incomplete value is
// kept: two unknowns are not equal) and counts them in equal_rows_hidden,
// which text, Markdown and JSON state (CSV and HTML only leave the rows out).
void hide_equal_rows(Comparison& c);
std::string hidden_rows_sentence(const Comparison& c);

// Sections of a comparison in display order (the seed rows first), and their titles.
std::vector<std::string> section_order(const Comparison& c);
std::string section_title(const std::string& section);

}  // namespace dpscope::reports
