// Inline SVG bar charts for the HTML pages (compare, scale): no script, no
// external asset; every label goes through escape_html.
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

// Horizontal grouped bar chart, one group per category, one bar per side,
// with a legend of the sides. `bytes`: values are shown as "1.5 MiB".
std::string bar_chart(const std::string& title, const std::vector<Series>& data, const std::vector<Side>& sides,
                      bool bytes);

}  // namespace dpscope::reports
