#include "reports/html_chart.h"

#include <algorithm>

#include "reports/escape.h"

namespace dpscope::reports {

namespace {
const char* kColors[] = {"#3b6ea5", "#d1822b", "#4a9a5b", "#a44a8a", "#7a7a7a", "#b8a22e"};
const char* kCss = R"CSS(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;vertical-align:top}
th{background:#f3f5f8;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.headline td:first-child{font-weight:600}
td.note{color:#666}.unavail{color:#a33}.nc{color:#888;font-style:italic}
.legend span{display:inline-block;margin-right:1.2em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em}
ul.findings li{margin:.3em 0}svg text{font-size:12px;fill:#222}
)CSS";

}  // namespace

const char* report_css() { return kCss; }

const char* side_color(size_t i) { return kColors[i % 6]; }

std::string bar_chart(const std::string& title, const std::vector<Series>& data, const std::vector<Side>& sides,
                      bool bytes) {
  if (data.empty()) return "";
  double max = 0;
  for (const auto& s : data) {
    for (double v : s.values) max = std::max(max, v);
  }
  if (max <= 0) max = 1;
  // Room right of the longest bar for its text (~7 px a character at the chart's font size).
  size_t longest = 0;
  for (const auto& s : data) {
    for (const auto& t : s.texts) longest = std::max(longest, t.size());
  }
  const int text_w = std::max(120, static_cast<int>(longest) * 7 + 8);
  const int label_w = 230, bar_w = 560, bar_h = 13, gap = 8;
  const int group_h = static_cast<int>(sides.size()) * bar_h + gap;
  const int height = static_cast<int>(data.size()) * group_h + 10;
  std::string out = "<figure><figcaption>" + escape_html(title) + "</figcaption>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(label_w + bar_w + text_w) +
         "\" height=\"" + std::to_string(height) + "\" role=\"img\" aria-label=\"" + escape_html(title) + "\">\n";
  int y = 5;
  for (const auto& s : data) {
    out += "<text x=\"" + std::to_string(label_w - 6) + "\" y=\"" + std::to_string(y + bar_h) +
           "\" text-anchor=\"end\">" + escape_html(s.label) + "</text>\n";
    for (size_t i = 0; i < s.values.size(); ++i) {
      double v = s.values[i];
      int w = v > 0 ? std::max(1, static_cast<int>(v / max * bar_w)) : 0;
      int by = y + static_cast<int>(i) * bar_h;
      out += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(by) + "\" width=\"" +
             std::to_string(w) + "\" height=\"" + std::to_string(bar_h - 2) + "\" fill=\"" + side_color(i) +
             "\"><title>" + escape_html(sides[i].label) + "</title></rect>\n";
      std::string text = i < s.texts.size() ? s.texts[i]
                         : v < 0            ? "n/a"
                         : bytes            ? human_bytes(static_cast<uint64_t>(v))
                                            : std::to_string(static_cast<uint64_t>(v));
      out += "<text x=\"" + std::to_string(label_w + w + 4) + "\" y=\"" + std::to_string(by + bar_h - 3) + "\">" +
             escape_html(text) + "</text>\n";
    }
    y += group_h;
  }
  out += "</svg>\n<div class=\"legend\">";
  for (size_t i = 0; i < sides.size(); ++i) {
    out += "<span><i style=\"background:" + std::string(side_color(i)) + "\"></i>" + escape_html(sides[i].label) +
           "</span>";
  }
  return out + "</div></figure>\n";
}

}  // namespace dpscope::reports
