// One self-contained HTML page: inline CSS, inline SVG bar charts, no script,
// no external asset. Every string from a node is HTML-escaped.
#include <algorithm>
#include <cstdio>

#include "reports/escape.h"
#include "reports/html_chart.h"
#include "reports/render.h"
#include "reports/resident_cost.h"
#include "reports/scale_report.h"

namespace dpscope::reports {

namespace {

std::string cell_html(const Cell& v) {
  switch (v.kind) {
    case Cell::Kind::Number: return "<td class=\"n\">" + escape_html(v.shown()) + "</td>";
    case Cell::Kind::Text: return "<td>" + escape_html(v.text) + "</td>";
    case Cell::Kind::Unavailable: return "<td class=\"unavail\">" + escape_html(v.shown()) + "</td>";
    case Cell::Kind::NotCollected: return "<td class=\"nc\">not collected</td>";
  }
  return "<td></td>";
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
  out += "<title>" + escape_html(title) + "</title>\n<style>" + std::string(report_css()) + "</style>\n</head>\n<body>\n";
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
  out += bar_chart("Rules by chain kind (kube-proxy nftables)", series_of(c, "nftables.kube_proxy.rules.", "", true),
                   c.sides, false);
  std::vector<Series> mem = series_of(c, "ebpf.memlock_bytes.", "", true);
  out += bar_chart("eBPF memory by owner (fdinfo memlock; its meaning per kernel is in the memory notes)", mem, c.sides,
                   true);
  out += resident_cost_charts_html(c);
  std::vector<Series> services = series_of(c, "services.", "", false);
  // One bar per dataplane: the "without endpoints" subsets are in the table.
  std::erase_if(services, [](const Series& s) { return s.label.ends_with(".without_endpoints"); });
  out += bar_chart("Services programmed per dataplane", services, c.sides, false);
  if (!c.scale.empty()) out += "<h3>Scale projection</h3>\n" + scale_charts_html(c.scale, c.sides);

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
    std::string gaps;
    for (const auto& g : c.section_gaps()) {
      if (g.section == sec) gaps += "<li class=\"unavail\">" + escape_html(c.sides[g.side].label) + ": " + escape_html(g.text) + "</li>\n";
    }
    if (!gaps.empty()) out += "<ul>\n" + gaps + "</ul>\n";
  }
  out += "<h2>Detected mode and evidence</h2>\n";
  for (const auto& s : c.sides) {
    out += "<h3>" + escape_html(s.label) + ": " + escape_html(s.mode_label) + "</h3>\n<ul>\n";
    for (const auto& e : s.evidence) out += "<li>" + escape_html(e) + "</li>\n";
    for (const auto& u : s.unavailable) out += "<li class=\"unavail\">unavailable: " + escape_html(u) + "</li>\n";
    for (const auto& m : s.fullest_maps) out += "<li>map fill: " + escape_html(m) + "</li>\n";
    for (const auto& m : s.memory_notes) out += "<li>eBPF memory: " + escape_html(m) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace dpscope::reports
