#include "reports/html_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
td.d{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
ul.findings li{margin:.3em 0}
figure.chart{margin:1em 0 1.4em}figure.chart figcaption{margin-bottom:.3em}.log-note{color:#666}
.scroll{overflow-x:auto}
table.chart th[scope=row]{font-weight:normal;text-align:right;background:none;white-space:nowrap}
table.chart td.bar{white-space:nowrap;vertical-align:middle}
table.chart i.key{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}
.track{display:inline-block;width:11em;height:.85em;background:#eef0f3;vertical-align:middle;margin-right:.4em}
.fill{display:block;height:100%}
tr.changed>td,tr.changed>th,table.chart tr.changed>th[scope=row]{background:#fff3d1}
tr.changed>td:first-child,tr.changed>th:first-child{box-shadow:inset 3px 0 #d1822b}
details.zero{margin-top:1.8em}details.zero>summary{cursor:pointer;color:#555}
details.zero>summary h2{display:inline;font-size:1.05em;border:0;margin:0;color:#222}
)CSS";

std::string number_text(double v, bool bytes) {
  return bytes ? human_bytes(static_cast<uint64_t>(v)) : std::to_string(static_cast<uint64_t>(v));
}

}  // namespace

const char* report_css() { return kCss; }

const char* side_color(size_t i) { return kColors[i % 6]; }

bool values_differ(const std::vector<double>& values) {
  double first = -1;
  for (double v : values) {
    if (v < 0) continue;
    if (first < 0) {
      first = v;
    } else if (v != first) {
      return true;
    }
  }
  return false;
}

std::string difference_text(const std::vector<double>& values, bool bytes) {
  std::vector<double> known;
  for (double v : values) {
    if (v >= 0) known.push_back(v);
  }
  if (values.size() < 2) return "";
  if (known.size() != values.size()) return "n/a";
  if (values.size() == 2) {
    const double d = values[1] - values[0];
    if (d == 0) return "same";
    return (d > 0 ? "+" : "\u2212") + number_text(std::fabs(d), bytes);
  }
  const auto [lo, hi] = std::minmax_element(known.begin(), known.end());
  if (*lo == *hi) return "same";
  return number_text(*lo, bytes) + " to " + number_text(*hi, bytes);
}

std::string bar_chart(const std::string& title, const std::vector<Series>& data, const std::vector<Side>& sides,
                      bool bytes) {
  if (data.empty()) return "";
  double max = 0, min_positive = 0;
  for (const auto& s : data) {
    for (double v : s.values) {
      max = std::max(max, v);
      if (v > 0 && (min_positive == 0 || v < min_positive)) min_positive = v;
    }
  }
  const bool log_scale = min_positive > 0 && max / min_positive > kLinearSpan;
  // Fraction of the track a value fills; a positive value never vanishes.
  auto fraction = [&](double v) {
    if (v <= 0 || max <= 0) return 0.0;
    const double f = log_scale ? std::log1p(v) / std::log1p(max) : v / max;
    return std::max(f, 0.03);
  };
  std::string out = "<figure class=\"chart\"><figcaption>" + escape_html(title);
  out += log_scale ? "<span class=\"log-note\"> (bar length on a log scale: the values span " + number_text(min_positive, bytes) +
                         " to " + number_text(max, bytes) + "; the numbers are exact)</span>"
                   : "";
  out += "</figcaption>\n<div class=\"scroll\"><table class=\"chart\">\n<tr><th></th>";
  for (size_t i = 0; i < sides.size(); ++i) {
    out += "<th><i class=\"key\" style=\"background:" + std::string(side_color(i)) + "\"></i>" +
           escape_html(sides[i].label) + "</th>";
  }
  out += sides.size() > 1 ? "<th>difference</th></tr>\n" : "</tr>\n";
  for (const auto& s : data) {
    const bool changed = values_differ(s.values);
    out += std::string(changed ? "<tr class=\"changed\">" : "<tr>") + "<th scope=\"row\">" + escape_html(s.label) + "</th>";
    for (size_t i = 0; i < s.values.size(); ++i) {
      const double v = s.values[i];
      const std::string text = i < s.texts.size() ? s.texts[i] : v < 0 ? "n/a" : number_text(v, bytes);
      char width[32];
      std::snprintf(width, sizeof width, "%.1f%%", fraction(v) * 100);
      out += "<td class=\"bar\"><span class=\"track\"><span class=\"fill\" style=\"width:" + std::string(width) +
             ";background:" + side_color(i) + "\"" + (v >= 0 ? " data-value=\"" + number_text(v, false) + "\"" : "") +
             "></span></span><span class=\"v\">" + escape_html(text) + "</span></td>";
    }
    if (sides.size() > 1) out += "<td class=\"d\">" + escape_html(difference_text(s.values, bytes)) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table></div></figure>\n";
}

}  // namespace dpscope::reports
