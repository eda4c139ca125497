// One self-contained HTML page: inline CSS, bar charts as HTML tables
// (reports/html_chart.h), no script, no external asset. Every string from a
// node is HTML-escaped.
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

// One series per row that `keep` selects, labelled by `label_of`.
template <typename Keep, typename Label>
std::vector<Series> series_where(const Comparison& c, Keep keep, Label label_of, bool skip_all_zero) {
  std::vector<Series> out;
  for (const auto& r : c.rows) {
    if (!keep(r)) continue;
    Series s;
    s.label = label_of(r);
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

// Categories from rows whose id starts with `prefix` (and ends with `suffix`).
std::vector<Series> series_of(const Comparison& c, const std::string& prefix, const std::string& suffix,
                              bool skip_all_zero) {
  return series_where(
      c,
      [&](const Row& r) {
        return r.id.starts_with(prefix) && r.id.size() >= prefix.size() + suffix.size() && r.id.ends_with(suffix);
      },
      [&](const Row& r) { return r.id.substr(prefix.size(), r.id.size() - prefix.size() - suffix.size()); },
      skip_all_zero);
}

bool is_bytes_row(const Row& r) { return r.id.find("bytes") != std::string::npos; }

// A row's numbers (<0: no number on that side), as the charts take them.
std::vector<double> row_numbers(const Row& r) {
  std::vector<double> out;
  for (const auto& v : r.values) out.push_back(v.kind == Cell::Kind::Number ? static_cast<double>(v.number) : -1);
  return out;
}

// The difference cell of a table row, and whether the row differs between sides.
std::pair<std::string, bool> row_difference(const Row& r) {
  if (r.id == "node.name") return {"", false};  // the sides' own names: they differ by definition
  bool all_text = !r.values.empty();
  for (const auto& v : r.values) all_text = all_text && v.kind == Cell::Kind::Text;
  if (all_text) {
    for (const auto& v : r.values) {
      if (v.text != r.values[0].text) return {"differs", true};
    }
    return {r.values.size() > 1 ? "same" : "", false};
  }
  const auto numbers = row_numbers(r);
  return {difference_text(numbers, is_bytes_row(r)), values_differ(numbers)};
}

// A section whose every value is the number 0 on every side: shown folded.
bool all_zero(const Comparison& c, const std::string& section) {
  bool any = false;
  for (const auto& r : c.rows) {
    if (r.section != section) continue;
    any = true;
    for (const auto& v : r.values) {
      if (v.kind != Cell::Kind::Number || v.number != 0) return false;
    }
  }
  return any;
}

std::string section_table(const Comparison& c, const std::string& sec) {
  const bool several = c.sides.size() > 1;
  // In its own scrolling box: ten nodes side by side do not widen the page.
  std::string out = "<div class=\"scroll\"><table>\n<tr><th>metric</th>";
  for (const auto& s : c.sides) out += "<th>" + escape_html(s.label) + "</th>";
  out += several ? "<th>difference</th><th>note</th></tr>\n" : "<th>note</th></tr>\n";
  for (const auto& r : c.rows) {
    if (r.section != sec) continue;
    const auto [difference, changed] = row_difference(r);
    std::string cls = std::string(r.headline ? "headline" : "") + (changed ? (r.headline ? " changed" : "changed") : "");
    out += (cls.empty() ? std::string("<tr>") : "<tr class=\"" + cls + "\">") + "<td>" + escape_html(r.label) + "</td>";
    for (const auto& v : r.values) out += cell_html(v);
    if (several) out += "<td class=\"d\">" + escape_html(difference) + "</td>";
    out += "<td class=\"note\">" + escape_html(r.note) + "</td></tr>\n";
  }
  return out + "</table></div>\n";
}

// The charts of a cluster comparison: its totals over the nodes and the
// median node, side by side per cluster.
std::string cluster_charts(const Comparison& c) {
  auto strip = [](std::string label, const std::string& tail) {
    if (label.ends_with(tail)) label.resize(label.size() - tail.size());
    return label;
  };
  std::string out;
  out += bar_chart("Totals over each cluster's nodes",
                   series_where(
                       c, [](const Row& r) { return r.section == "cluster.totals" && !is_bytes_row(r); },
                       [&](const Row& r) { return strip(r.label, ": total"); }, true),
                   c.sides, false);
  out += bar_chart("The median node of each cluster",
                   series_where(
                       c,
                       [](const Row& r) {
                         return r.section == "cluster.per_node" && r.id.ends_with(".median") && !is_bytes_row(r) &&
                                !r.id.starts_with("cluster.resident.");
                       },
                       [&](const Row& r) { return strip(r.label, ": median per node"); }, true),
                   c.sides, false);
  out += bar_chart("eBPF kernel memory (fdinfo memlock): total and median node",
                   series_where(
                       c, [](const Row& r) { return r.id.starts_with("cluster.ebpf.memlock_bytes.") &&
                                                   (r.id.ends_with(".total") || r.id.ends_with(".median")); },
                       [&](const Row& r) { return r.id.ends_with(".total") ? std::string("total") : std::string("median node"); },
                       true),
                   c.sides, true);
  return out;
}

std::string node_charts(const Comparison& c) {
  std::string out;
  out += bar_chart("Rules by chain family (iptables)", series_of(c, "netfilter.family.", ".rules", true), c.sides, false);
  out += bar_chart("Rules by chain kind (kube-proxy nftables)", series_of(c, "nftables.kube_proxy.rules.", "", true),
                   c.sides, false);
  std::vector<Series> mem = series_of(c, "ebpf.memlock_bytes.", "", true);
  out += bar_chart("eBPF memory by owner (fdinfo memlock; its meaning per kernel is in the memory notes)", mem, c.sides,
                   true);
  std::vector<Series> services = series_of(c, "services.", "", false);
  // One bar per dataplane: the "without endpoints" subsets are in the table.
  std::erase_if(services, [](const Series& s) { return s.label.ends_with(".without_endpoints"); });
  // A dataplane no side has (no number anywhere, or 0 everywhere) is no bar.
  std::erase_if(services, [](const Series& s) {
    return std::none_of(s.values.begin(), s.values.end(), [](double v) { return v > 0; });
  });
  out += bar_chart("Services programmed per dataplane", services, c.sides, false);
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
  if (c.equal_rows_hidden) out += "<p class=\"hidden-rows\">" + escape_html(hidden_rows_sentence(c)) + "</p>\n";
  if (!c.findings.empty()) {
    out += "<h2>Findings</h2>\n<ul class=\"findings\">\n";
    for (const auto& f : c.findings) out += "<li>" + escape_html(f) + "</li>\n";
    out += "</ul>\n";
  }
  // Charts (only those with something to draw: no empty heading).
  const bool clusters = c.find("cluster.nodes") != nullptr;
  std::string charts = clusters ? cluster_charts(c) : node_charts(c);
  charts += resident_cost_charts_html(c);
  if (!c.scale.empty()) {
    const std::string scale = scale_charts_html(c.scale, c.sides);
    if (!scale.empty()) charts += "<h3>Scale projection</h3>\n" + scale;
  }
  if (!charts.empty()) out += "<h2>Charts</h2>\n" + charts;

  // Tables: the same rows as every other format, with a difference column;
  // rows that differ between the sides are marked, and a section that is 0
  // on every side is folded.
  for (const auto& sec : section_order(c)) {
    std::string gaps;
    for (const auto& g : c.section_gaps()) {
      if (g.section == sec) gaps += "<li class=\"unavail\">" + escape_html(c.sides[g.side].label) + ": " + escape_html(g.text) + "</li>\n";
    }
    if (!gaps.empty()) gaps = "<ul>\n" + gaps + "</ul>\n";
    if (all_zero(c, sec)) {
      out += "<details class=\"zero\"><summary><h2>" + escape_html(section_title(sec)) +
             "</h2> \u2014 0 on every side (click to show)</summary>\n" + section_table(c, sec) + gaps + "</details>\n";
      continue;
    }
    out += "<h2>" + escape_html(section_title(sec)) + "</h2>\n" + section_table(c, sec) + gaps;
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
