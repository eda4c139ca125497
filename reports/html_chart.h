// Bar charts for the HTML pages (compare, scale) as HTML tables: a row per
// category, a column per side (node or cluster) side by side, a difference
// column, rows that differ marked. No script, no external asset; every label
// goes through escape_html.
#pragma once

#include <string>
#include <vector>

#include "reports/comparison.h"

namespace dpscope::reports {

// The pages' inline style sheet.
const char* report_css();

// Bar colour of side i (cycles).
const char* side_color(size_t i);

struct Series {
  std::string label;               // category
  std::vector<double> values;      // one per side; <0 = no value
  std::vector<std::string> texts;  // optional text beside each bar (default: the value)
};

// One chart, one row per category and one bar per side. The bars share one
// scale per chart, logarithmic when its values span more than kLinearSpan times
// (a 26-rule node stays visible beside a 32k-rule one), said in the caption;
// the numbers beside the bars are exact. `bytes`: values shown as "1.5 MiB".
// "" when `data` is empty.
constexpr double kLinearSpan = 30;
std::string bar_chart(const std::string& title, const std::vector<Series>& data, const std::vector<Side>& sides,
                      bool bytes);

// The difference of one row's values, for the difference column of charts and
// tables: "+21" / "−13" / "same" for two sides (the second minus the first),
// "41 to 67" for more; "n/a" when a side has no value ("" for one side).
// `bytes`: as human_bytes.
std::string difference_text(const std::vector<double>& values, bool bytes);

// Whether two of the values (ignoring the missing, <0) differ.
bool values_differ(const std::vector<double>& values);

}  // namespace dpscope::reports
