#include "reports/services_view.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

ServicesView services_view(const std::vector<SideInput>& inputs) {
  ServicesView v;
  std::map<std::string, ServiceRow> by_key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& s = *inputs[i].snapshot;
    Side side;
    side.node = s.node.name;
    side.source = inputs[i].source;
    side.label = !inputs[i].label.empty() ? inputs[i].label : !s.node.name.empty() ? s.node.name : inputs[i].source;
    v.sides.push_back(side);
    for (auto& sp : analysis::services_of(s)) {
      auto& row = by_key[sp.key()];
      row.key = sp.key();
      row.per_side.resize(inputs.size());
      if (row.name.empty()) row.name = sp.name;
      row.per_side[i].push_back(std::move(sp));
    }
  }
  for (auto& [k, row] : by_key) {
    row.per_side.resize(inputs.size());
    v.rows.push_back(std::move(row));
  }
  // Named services first, by name; then unnamed frontends by address.
  std::stable_sort(v.rows.begin(), v.rows.end(), [](const ServiceRow& a, const ServiceRow& b) {
    if (a.name.empty() != b.name.empty()) return !a.name.empty();
    return a.name != b.name ? a.name < b.name : a.key < b.key;
  });
  return v;
}

namespace {

std::string describe(const std::vector<analysis::ServiceProgramming>& list) {
  if (list.empty()) return "-";
  std::string out;
  for (const auto& sp : list) {
    if (!out.empty()) out += "; ";
    if (sp.dataplane == "iptables" || sp.dataplane == "nftables") {
      out += sp.dataplane + ": " + std::to_string(sp.rules) + " rules, " + std::to_string(sp.chains) + " chains, " +
             std::to_string(sp.endpoints) + " endpoints";
    } else if (sp.dataplane == "ipvs") {
      out += "ipvs: virtual service, " + std::to_string(sp.endpoints) + " real servers";
    } else {
      out += sp.dataplane + ": frontend, " + std::to_string(sp.endpoints) + " backends";
    }
  }
  return out;
}

}  // namespace

std::string render_services(const ServicesView& v, Format f, const TextOptions& opt) {
  if (f == Format::Json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : v.rows) {
      nlohmann::json sides = nlohmann::json::array();
      for (const auto& list : r.per_side) {
        nlohmann::json progs = nlohmann::json::array();
        for (const auto& sp : list) {
          progs.push_back({{"dataplane", sp.dataplane}, {"rules", sp.rules}, {"chains", sp.chains},
                           {"endpoints", sp.endpoints}});
        }
        sides.push_back(progs);
      }
      rows.push_back({{"service", r.name}, {"address", r.key}, {"sides", sides}});
    }
    nlohmann::json labels = nlohmann::json::array();
    for (const auto& s : v.sides) labels.push_back({{"label", s.label}, {"node", s.node}, {"source", s.source}});
    return nlohmann::json{{"schema", "dpscope.services/v1"}, {"sides", labels}, {"services", rows}}.dump(2, ' ', true) +
           "\n";
  }
  if (f == Format::Csv) {
    std::string out = "\"service\",\"address\"";
    for (const auto& s : v.sides) out += "," + escape_csv(s.label);
    out += "\r\n";
    for (const auto& r : v.rows) {
      out += escape_csv(r.name) + "," + escape_csv(r.key);
      for (const auto& list : r.per_side) out += "," + escape_csv(describe(list));
      out += "\r\n";
    }
    return out;
  }
  if (f == Format::Markdown || f == Format::Html) {
    bool html = f == Format::Html;
    auto esc = [html](const std::string& s) { return html ? escape_html(s) : escape_markdown(s); };
    std::string out;
    if (html) {
      out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dpscope services</title>"
             "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:.2em .5em}</style></head><body>\n<h1>Services per dataplane</h1>\n<table><tr><th>service</th>"
             "<th>address</th>";
      for (const auto& s : v.sides) out += "<th>" + esc(s.label) + "</th>";
      out += "</tr>\n";
      for (const auto& r : v.rows) {
        out += "<tr><td>" + esc(r.name.empty() ? "-" : r.name) + "</td><td>" + esc(r.key) + "</td>";
        for (const auto& list : r.per_side) out += "<td>" + esc(describe(list)) + "</td>";
        out += "</tr>\n";
      }
      return out + "</table>\n</body></html>\n";
    }
    out = "## Services per dataplane\n\n| service | address |";
    for (const auto& s : v.sides) out += " " + esc(s.label) + " |";
    out += "\n|---|---|";
    for (size_t i = 0; i < v.sides.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : v.rows) {
      out += "| " + esc(r.name.empty() ? "-" : r.name) + " | " + esc(r.key) + " |";
      for (const auto& list : r.per_side) out += " " + esc(describe(list)) + " |";
      out += "\n";
    }
    return out;
  }
  // text
  std::vector<size_t> w(2 + v.sides.size(), 0);
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> head = {"service", "address"};
  for (const auto& s : v.sides) head.push_back(escape_text(s.label));
  table.push_back(head);
  for (const auto& r : v.rows) {
    std::vector<std::string> line = {escape_text(r.name.empty() ? "-" : r.name), escape_text(r.key)};
    for (const auto& list : r.per_side) line.push_back(escape_text(describe(list)));
    table.push_back(line);
  }
  for (const auto& line : table) {
    for (size_t i = 0; i < line.size(); ++i) w[i] = std::max(w[i], display_width(line[i]));
  }
  std::string out = "dpscope compare --services: each service port as each side programs it\n\n";
  size_t table_w = 0;
  for (size_t x : w) table_w += 2 + x;
  if (opt.width > 0 && table_w > opt.width) {
    // Too wide for a table: a block per service, a line per side.
    for (size_t r = 1; r < table.size(); ++r) {
      out += "  " + table[r][0] + "  " + table[r][1] + "\n";
      for (size_t i = 2; i < table[r].size(); ++i) out += "    " + table[0][i] + ": " + table[r][i] + "\n";
    }
    return wrap_lines(out, opt.width);
  }
  for (const auto& line : table) {
    std::string l;
    for (size_t i = 0; i < line.size(); ++i) l += (i ? "  " : "  ") + line[i] + std::string(w[i] - display_width(line[i]), ' ');
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

}  // namespace dpscope::reports
