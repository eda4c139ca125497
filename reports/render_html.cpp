// One self-contained HTML page: inline CSS, inline SVG bar charts, no script,
// no external asset. Every string from a node is HTML-escaped.
#include <algorithm>
#include <cstdio>

#include "reports/escape.h"
#include "reports/render.h"

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

std::string cell_html(const Cell& v) {
  switch (v.kind) {
    case Cell::Kind::Number: return "<td class=\"n\">" + escape_html(v.shown()) + "</td>";
    case Cell::Kind::Text: return "<td>" + escape_html(v.text) + "</td>";
    case Cell::Kind::Unavailable: return "<td class=\"unavail\">" + escape_html(v.shown()) + "</td>";
    case Cell::Kind::NotCollected: return "<td class=\"nc\">not collected</td>";
  }
  return "<td></td>";
}

struct Series {
  std::string label;              // category
  std::vector<double> values;     // one per side; <0 = no value
};

// Horizontal grouped bar chart, one group per category, one bar per side.
std::string bar_chart(const std::string& title, const std::vector<Series>& data, const std::vector<Side>& sides,
                      bool bytes) {
  if (data.empty()) return "";
  double max = 0;
  for (const auto& s : data) {
    for (double v : s.values) max = std::max(max, v);
  }
  if (max <= 0) max = 1;
  const int label_w = 230, bar_w = 560, bar_h = 13, gap = 8;
  const int group_h = static_cast<int>(sides.size()) * bar_h + gap;
  const int height = static_cast<int>(data.size()) * group_h + 10;
  std::string out = "<figure><figcaption>" + escape_html(title) + "</figcaption>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(label_w + bar_w + 120) +
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
             std::to_string(w) + "\" height=\"" + std::to_string(bar_h - 2) + "\" fill=\"" + kColors[i % 6] +
             "\"><title>" + escape_html(sides[i].label) + "</title></rect>\n";
      std::string text = v < 0 ? "n/a" : bytes ? human_bytes(static_cast<uint64_t>(v)) : std::to_string(static_cast<uint64_t>(v));
      out += "<text x=\"" + std::to_string(label_w + w + 4) + "\" y=\"" + std::to_string(by + bar_h - 3) + "\">" +
             escape_html(text) + "</text>\n";
    }
    y += group_h;
  }
  out += "</svg>\n<div class=\"legend\">";
  for (size_t i = 0; i < sides.size(); ++i) {
    out += "<span><i style=\"background:" + std::string(kColors[i % 6]) + "\"></i>" + escape_html(sides[i].label) +
           "</span>";
  }
  return out + "</div></figure>\n";
}

// Categories from rows whose id starts with `prefix` (and ends with `suffix`).
std::vector<Series> series_of(const Comparison& c, const std::string& prefix, const std::string& suffix,
                              bool skip_all_zero) {
  std::vector<Series> out;
  for (const auto& r : c.rows) {
    if (r.id.rfind(prefix, 0) != 0 || r.id.size() < prefix.size() + suffix.size() ||
        r.id.compare(r.id.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    Series s;
    s.label = r.id.substr(prefix.size(), r.id.size() - prefix.size() - suffix.size());
    bool any = false;
    for (const auto& v : r.values) {
      bool num = v.kind == Cell::Kind::Number;
      s.values.push_back(num ? static_cast<double>(v.number) : -1);
      any = any || (num && v.number > 0);
    }
    if (any || !skip_all_zero) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string render_html(const Comparison& c) {
  std::string title = "dpscope compare:";
  for (size_t i = 0; i < c.sides.size(); ++i) title += (i ? " vs " : " ") + c.sides[i].label;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + escape_html(title) + "</title>\n<style>" + std::string(kCss) + "</style>\n</head>\n<body>\n";
  out += "<h1>" + escape_html(title) + "</h1>\n<ul>\n";
  for (const auto& s : c.sides) {
    out += "<li><b>" + escape_html(s.label) + "</b>: <code>" + escape_html(s.source) + "</code> — " +
           escape_html(s.mode_label) + "</li>\n";
  }
  out += "</ul>\n";
  if (!c.findings.empty()) {
    out += "<h2>Findings</h2>\n<ul class=\"findings\">\n";
    for (const auto& f : c.findings) out += "<li>" + escape_html(f) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h2>Charts</h2>\n";
  out += bar_chart("Rules by chain family (iptables)", series_of(c, "netfilter.family.", ".rules", true), c.sides, false);
  std::vector<Series> mem = series_of(c, "ebpf.memlock_bytes.", "", true);
  out += bar_chart("eBPF kernel memory by owner (not seen by kubectl top)", mem, c.sides, true);
  out += bar_chart("Services programmed per dataplane", series_of(c, "services.", "", false), c.sides, false);

  // Tables: the same rows as every other format.
  for (const auto& sec : section_order(c)) {
    out += "<h2>" + escape_html(section_title(sec)) + "</h2>\n<table>\n<tr><th>metric</th>";
    for (const auto& s : c.sides) out += "<th>" + escape_html(s.label) + "</th>";
    out += "<th>note</th></tr>\n";
    for (const auto& r : c.rows) {
      if (r.section != sec) continue;
      out += std::string(r.headline ? "<tr class=\"headline\">" : "<tr>") + "<td>" + escape_html(r.label) + "</td>";
      for (const auto& v : r.values) out += cell_html(v);
      out += "<td class=\"note\">" + escape_html(r.note) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  out += "<h2>Detected mode and evidence</h2>\n";
  for (const auto& s : c.sides) {
    out += "<h3>" + escape_html(s.label) + ": " + escape_html(s.mode_label) + "</h3>\n<ul>\n";
    for (const auto& e : s.evidence) out += "<li>" + escape_html(e) + "</li>\n";
    for (const auto& u : s.unavailable) out += "<li class=\"unavail\">unavailable: " + escape_html(u) + "</li>\n";
    for (const auto& m : s.fullest_maps) out += "<li>map fill: " + escape_html(m) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace dpscope::reports
