#include "reports/scale_report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "analysis/analysis.h"
#include "reports/escape.h"
#include "reports/html_chart.h"
#include "reports/text_width.h"

namespace dpscope::reports {

ScaleSide scale_side(const model::Snapshot& s, const std::string& label, const std::string& source) {
  ScaleSide out;
  out.label = label;
  out.source = source;
  out.model = analysis::fit_scale(s);
  const auto& m = out.model;
  if (m.fitted) {
    out.endpoints_per_service = static_cast<double>(m.endpoints) / static_cast<double>(m.services);
  } else if (m.has_lb_map) {
    const analysis::NodeAnalysis node = analysis::analyze(s);
    const analysis::LbSummary* lb = node.ebpf.lb_of("cilium");
    if (lb && lb->decoded && lb->frontends > 0) {
      out.endpoints_per_service = static_cast<double>(lb->backends) / static_cast<double>(lb->frontends);
      out.lb_frontends = lb->frontends;
      out.lb_backends = lb->backends;
    }
  }
  return out;
}

void add_scale(Comparison& c, const std::vector<SideInput>& inputs) {
  c.scale.clear();
  for (size_t i = 0; i < inputs.size() && i < c.sides.size(); ++i) {
    c.scale.push_back(scale_side(*inputs[i].snapshot, c.sides[i].label, c.sides[i].source));
  }
}

namespace {

// Endpoints at `services` service ports: the node's own ratio (its iptables
// fit, else its nftables fit, else its eBPF service map).
uint64_t endpoints_for(const ScaleSide& s, uint64_t services) {
  if (s.model.fitted) return services * s.model.endpoints / s.model.services;
  if (s.model.nft.fitted && s.model.nft.services) return services * s.model.nft.endpoints / s.model.nft.services;
  return static_cast<uint64_t>(std::llround(static_cast<double>(services) * s.endpoints_per_service));
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string formula(const analysis::ScaleModel& m) {
  return "rules = " + fixed(m.base_rules) + " + " + fixed(m.rules_per_service) + " x services + " +
         fixed(m.rules_per_endpoint) + " x endpoints";
}

std::string now_text(const analysis::ScaleModel& m) {
  return std::to_string(m.services) + " services, " + std::to_string(m.endpoints) + " endpoints, " +
         std::to_string(m.rules) + " rules";
}

std::string ebpf_sentence(const analysis::ScaleModel& m) {
  const std::string used = m.lb_slots_known ? std::to_string(m.lb_slots_used) : "(entries not counted)";
  const std::string memory = m.map_memlock_known ? human_bytes(m.map_memlock_bytes) + " (fdinfo memlock)"
                                                 : "not known (the map list is incomplete)";
  return "service map " + used + " / " + std::to_string(m.lb_slots_max) +
         " slots (one per frontend + one per backend); map memory " + memory +
         ", fixed by max_entries, not by the number of services; one hash lookup per new connection";
}

std::string nft_formula(const analysis::ScaleModel::Nft& m) {
  return "rules = " + fixed(m.base_rules) + " + " + fixed(m.rules_per_service) + " x services + " +
         fixed(m.rules_per_endpoint) + " x endpoints; map elements = " + fixed(m.elements_per_service) +
         " x services";
}

std::string nft_now(const analysis::ScaleModel::Nft& m) {
  return std::to_string(m.services) + " services, " + std::to_string(m.endpoints) + " endpoints, " +
         std::to_string(m.rules) + " rules, " + std::to_string(m.elements) + " map elements";
}

// Projection points of the nftables fit: the asked size, or 100 / 1,000 / 10,000
// services at the node's own endpoints per service.
std::vector<ScalePoint> nft_points(const analysis::ScaleModel::Nft& m, uint64_t services, uint64_t endpoints) {
  if (services) return {{"asked", services, endpoints}};
  std::vector<ScalePoint> out;
  for (uint64_t n : {100, 1000, 10000}) out.push_back({std::to_string(n) + " services", n, n * m.endpoints / m.services});
  return out;
}

bool fits(const analysis::ScaleModel& m, const ScalePoint& p) { return p.services + p.endpoints <= m.lb_slots_max; }

}  // namespace

std::vector<ScalePoint> table_points(const ScaleSide& s, uint64_t services, uint64_t endpoints) {
  std::vector<ScalePoint> out;
  if (services) {
    out.push_back({"asked", services, endpoints});
  } else if (s.model.fitted || s.model.nft.fitted) {
    for (uint64_t n : {100, 1000, 10000}) out.push_back({std::to_string(n) + " services", n, endpoints_for(s, n)});
  }
  return out;
}

std::vector<ScalePoint> chart_points(const ScaleSide& s, uint64_t services, uint64_t endpoints) {
  std::vector<ScalePoint> out;
  const auto& m = s.model;
  if (m.fitted) {
    out.push_back({"now", m.services, m.endpoints});
  } else if (m.nft.fitted) {
    out.push_back({"now", m.nft.services, m.nft.endpoints});
  } else {
    out.push_back({"now", s.lb_frontends, s.lb_backends});
  }
  for (uint64_t n : {1000, 5000, 10000, 20000}) out.push_back({std::to_string(n) + " services", n, endpoints_for(s, n)});
  if (services) {
    out.push_back({std::to_string(services) + " services, " + std::to_string(endpoints) + " endpoints", services,
                   endpoints});
  }
  return out;
}

uint64_t rules_at(const ScaleSide& s, const ScalePoint& p) {
  if (p.label == "now") return s.model.rules;
  return analysis::project_rules(s.model, p.services, p.endpoints);
}

uint64_t lb_slots_at(const ScaleSide& s, const ScalePoint& p) {
  if (p.label == "now") return s.model.lb_slots_used;
  return p.services + p.endpoints;
}

std::vector<Side> legend_of(const std::vector<ScaleSide>& sides) {
  std::vector<Side> out;
  for (const auto& s : sides) {
    Side l;
    l.label = s.label;
    out.push_back(l);
  }
  return out;
}

std::string scale_charts_html(const std::vector<ScaleSide>& sides, const std::vector<Side>& legend, uint64_t services,
                              uint64_t endpoints) {
  std::string out;
  bool any_fit = false, any_nft = false, any_lb = false;
  for (const auto& s : sides) {
    any_fit = any_fit || s.model.fitted;
    any_nft = any_nft || s.model.nft.fitted;
    any_lb = any_lb || s.model.has_lb_map;
  }
  std::vector<std::vector<ScalePoint>> points;
  for (const auto& s : sides) points.push_back(chart_points(s, services, endpoints));
  if (any_fit || any_nft) {
    // One chart for both kube-proxy modes, so an iptables-mode node and an
    // nftables-mode node of the same cluster read side by side; a node with
    // both (leftovers mid-migration) holds the sum.
    std::vector<Series> data;
    for (size_t g = 0; g < points[0].size(); ++g) {
      Series row;
      row.label = points[0][g].label;
      for (size_t i = 0; i < sides.size(); ++i) {
        const auto& m = sides[i].model;
        if (!m.fitted && !m.nft.fitted) {
          row.values.push_back(-1);
          row.texts.push_back("no fit");
          continue;
        }
        const ScalePoint& p = points[i][g];
        std::vector<std::string> parts;
        uint64_t total = 0;
        if (m.fitted) {
          const uint64_t r = rules_at(sides[i], p);
          total += r;
          parts.push_back(std::to_string(r) + " iptables");
        }
        if (m.nft.fitted) {
          const uint64_t r = p.label == "now" ? m.nft.rules : analysis::project_nft_rules(m.nft, p.services, p.endpoints);
          total += r;
          parts.push_back(std::to_string(r) + " nftables");
        }
        row.values.push_back(static_cast<double>(total));
        row.texts.push_back(parts.size() == 1 ? parts[0] + " rules"
                                              : std::to_string(total) + " rules (" + parts[0] + " + " + parts[1] + ")");
      }
      data.push_back(std::move(row));
    }
    out += bar_chart("Projected kube-proxy rules vs service ports (iptables mode: KUBE-* rules, one KUBE-SERVICES walk "
                     "per new connection; nftables mode: the kube-proxy tables, one verdict-map lookup; endpoints at "
                     "each node's own endpoints per service)",
                     data, legend, false);
  }
  if (any_lb) {
    std::vector<Series> data;
    for (size_t g = 0; g <= points[0].size(); ++g) {
      Series row;
      row.label = g < points[0].size() ? points[0][g].label : "map max_entries";
      for (size_t i = 0; i < sides.size(); ++i) {
        const auto& m = sides[i].model;
        bool known = m.has_lb_map && (g == 0 || g == points[0].size() || sides[i].endpoints_per_service > 0 ||
                                      points[i][g].endpoints > 0);
        if (!known) {
          row.values.push_back(-1);
          row.texts.push_back(m.has_lb_map ? "n/a" : "no service map");
          continue;
        }
        if (g == points[0].size()) {
          row.values.push_back(static_cast<double>(m.lb_slots_max));
          row.texts.push_back(std::to_string(m.lb_slots_max) + " slots");
          continue;
        }
        uint64_t slots = lb_slots_at(sides[i], points[i][g]);
        row.values.push_back(static_cast<double>(slots));
        row.texts.push_back(std::to_string(slots) + (slots > m.lb_slots_max ? " slots: exceeds" : " slots"));
      }
      data.push_back(std::move(row));
    }
    out += bar_chart("eBPF service map slots (one per frontend + one per backend) against max_entries; one hash "
                     "lookup per new connection",
                     data, legend, false);
  }
  out += "<ul class=\"scale\">\n";
  for (const auto& s : sides) {
    const auto& m = s.model;
    out += "<li><b>" + escape_html(s.label) + "</b>: ";
    if (m.fitted) {
      out += "iptables " + escape_html(formula(m)) + " (now: " + escape_html(now_text(m)) + ")";
    } else if (!m.nft.fitted) {
      out += "no iptables projection: " + escape_html(m.why_not);
    }
    if (m.nft.fitted) {
      out += std::string(m.fitted ? "; " : "") + "nftables " + escape_html(nft_formula(m.nft)) + " (now: " +
             escape_html(nft_now(m.nft)) + ")";
    }
    if (m.has_lb_map) {
      out += "; eBPF " + escape_html(ebpf_sentence(m));
    } else if (m.map_memlock_bytes > 0) {
      out += "; no Cilium eBPF service map (eBPF map memory " + escape_html(human_bytes(m.map_memlock_bytes)) +
             ", fixed by max_entries)";
    } else {
      out += "; no Cilium eBPF service map in this snapshot";
    }
    out += "</li>\n";
  }
  return out + "</ul>\n";
}

namespace {

std::string render_scale_text(const std::vector<ScaleSide>& sides, uint64_t services, uint64_t endpoints) {
  std::string text;
  for (const auto& s : sides) {
    const auto& m = s.model;
    auto points = table_points(s, services, endpoints);
    text += escape_text(s.label) + " (" + escape_text(s.source) + ")\n";
    if (m.fitted) {
      text += "  iptables: " + formula(m) + "   (now: " + now_text(m) + ")\n";
      for (const auto& p : points) {
        text += "    " + std::to_string(p.services) + " services, " + std::to_string(p.endpoints) + " endpoints: " +
                std::to_string(rules_at(s, p)) + " rules; a new connection walks up to " +
                std::to_string(p.services + 1) + " rules in KUBE-SERVICES\n";
      }
    } else {
      text += "  iptables: not fitted: " + m.why_not + "\n";
    }
    if (m.nft.fitted) {
      text += "  nftables: " + nft_formula(m.nft) + "   (now: " + nft_now(m.nft) + ")\n";
      for (const auto& p : nft_points(m.nft, services, endpoints)) {
        text += "    " + std::to_string(p.services) + " services, " + std::to_string(p.endpoints) + " endpoints: " +
                std::to_string(analysis::project_nft_rules(m.nft, p.services, p.endpoints)) + " rules, " +
                std::to_string(analysis::project_nft_elements(m.nft, p.services)) +
                " map elements; one verdict-map lookup per new connection\n";
      }
    } else if (!m.fitted) {
      text += "  nftables: not fitted: " + m.nft.why_not + "\n";
    }
    if (m.has_lb_map) {
      text += "  eBPF: " + ebpf_sentence(m) + "\n";
      for (const auto& p : points) {
        text += "    " + std::to_string(p.services) + " services, " + std::to_string(p.endpoints) + " endpoints: " +
                std::to_string(p.services + p.endpoints) + " slots, " + (fits(m, p) ? "fits" : "exceeds the map") +
                "\n";
      }
    }
  }
  return text;
}

std::string render_scale_json(const std::vector<ScaleSide>& sides, uint64_t services, uint64_t endpoints) {
  nlohmann::json out = {{"schema", "dpscope.scale/v1"}, {"nodes", nlohmann::json::array()}};
  for (const auto& s : sides) {
    const auto& m = s.model;
    nlohmann::json node = {{"node", s.label}, {"source", s.source}, {"fitted", m.fitted}};
    if (m.fitted) {
      node["now"] = {{"services", m.services}, {"endpoints", m.endpoints}, {"rules", m.rules}};
      node["model"] = {{"base_rules", m.base_rules},
                       {"rules_per_service", m.rules_per_service},
                       {"rules_per_endpoint", m.rules_per_endpoint}};
      nlohmann::json proj = nlohmann::json::array();
      for (const auto& p : table_points(s, services, endpoints)) {
        proj.push_back({{"services", p.services},
                        {"endpoints", p.endpoints},
                        {"rules", rules_at(s, p)},
                        {"kube_services_walk_worst", p.services + 1}});
      }
      node["projection"] = proj;
    } else {
      node["why_not"] = m.why_not;
    }
    nlohmann::json nft = {{"fitted", m.nft.fitted}};
    if (m.nft.fitted) {
      nft["now"] = {{"services", m.nft.services},
                    {"endpoints", m.nft.endpoints},
                    {"rules", m.nft.rules},
                    {"map_elements", m.nft.elements}};
      nft["model"] = {{"base_rules", m.nft.base_rules},
                      {"rules_per_service", m.nft.rules_per_service},
                      {"rules_per_endpoint", m.nft.rules_per_endpoint},
                      {"map_elements_per_service", m.nft.elements_per_service}};
      nlohmann::json proj = nlohmann::json::array();
      for (const auto& p : nft_points(m.nft, services, endpoints)) {
        proj.push_back({{"services", p.services},
                        {"endpoints", p.endpoints},
                        {"rules", analysis::project_nft_rules(m.nft, p.services, p.endpoints)},
                        {"map_elements", analysis::project_nft_elements(m.nft, p.services)}});
      }
      nft["projection"] = proj;
    } else {
      nft["why_not"] = m.nft.why_not;
    }
    node["nftables"] = nft;
    if (m.has_lb_map) {
      // null, never 0, for what was not counted.
      node["ebpf"] = {{"lb_slots_used", m.lb_slots_known ? nlohmann::json(m.lb_slots_used) : nlohmann::json(nullptr)},
                      {"lb_slots_max", m.lb_slots_max},
                      {"map_memlock_bytes",
                       m.map_memlock_known ? nlohmann::json(m.map_memlock_bytes) : nlohmann::json(nullptr)}};
    }
    out["nodes"].push_back(node);
  }
  return out.dump(2, ' ', true) + "\n";
}

// One table per node (Markdown or HTML): a row per projection point.
std::string node_section(const ScaleSide& s, uint64_t services, uint64_t endpoints, bool html) {
  const auto& m = s.model;
  auto esc = [html](const std::string& t) { return html ? escape_html(t) : escape_markdown(t); };
  std::string out = html ? "<h2>" + esc(s.label) + "</h2>\n<p><code>" + esc(s.source) + "</code></p>\n<ul>\n"
                         : "\n## " + esc(s.label) + "\n\nSource: `" + esc(s.source) + "`\n\n";
  auto item = [&](const std::string& t) { out += html ? "<li>" + esc(t) + "</li>\n" : "- " + esc(t) + "\n"; };
  item(m.fitted ? "iptables: " + formula(m) + " (now: " + now_text(m) + ")" : "iptables: not fitted: " + m.why_not);
  if (m.nft.fitted) item("nftables: " + nft_formula(m.nft) + " (now: " + nft_now(m.nft) + ")");
  if (m.has_lb_map) item("eBPF: " + ebpf_sentence(m));
  if (html) out += "</ul>\n";
  auto points = table_points(s, services, endpoints);
  if (points.empty() && m.has_lb_map && s.endpoints_per_service > 0) {
    // No iptables fit: the service map's own backends per frontend.
    for (uint64_t n : {100, 1000, 10000}) points.push_back({std::to_string(n) + " services", n, endpoints_for(s, n)});
  }
  if (points.empty() || (!m.fitted && !m.nft.fitted && !m.has_lb_map)) return out;
  std::vector<std::string> head = {"services", "endpoints"};
  if (m.fitted) head.insert(head.end(), {"iptables rules", "KUBE-SERVICES walk (worst case)"});
  if (m.nft.fitted) head.insert(head.end(), {"nftables rules", "nftables map elements"});
  if (m.has_lb_map) head.insert(head.end(), {"eBPF service map slots", "fits the map"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : points) {
    std::vector<std::string> r = {std::to_string(p.services), std::to_string(p.endpoints)};
    if (m.fitted) r.insert(r.end(), {std::to_string(rules_at(s, p)), std::to_string(p.services + 1)});
    if (m.nft.fitted) {
      r.insert(r.end(), {std::to_string(analysis::project_nft_rules(m.nft, p.services, p.endpoints)),
                         std::to_string(analysis::project_nft_elements(m.nft, p.services))});
    }
    if (m.has_lb_map) {
      r.insert(r.end(), {std::to_string(p.services + p.endpoints) + " / " + std::to_string(m.lb_slots_max),
                         fits(m, p) ? "fits" : "exceeds the map"});
    }
    rows.push_back(std::move(r));
  }
  if (html) {
    out += "<table>\n<tr>";
    for (const auto& h : head) out += "<th>" + esc(h) + "</th>";
    out += "</tr>\n";
    for (const auto& r : rows) {
      out += "<tr>";
      for (const auto& v : r) out += "<td class=\"n\">" + esc(v) + "</td>";
      out += "</tr>\n";
    }
    return out + "</table>\n";
  }
  out += "\n|";
  for (const auto& h : head) out += " " + esc(h) + " |";
  out += "\n|";
  for (size_t i = 0; i < head.size(); ++i) out += i + 1 == head.size() && m.has_lb_map ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& v : r) out += " " + esc(v) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_scale(const std::vector<ScaleSide>& sides, uint64_t services, uint64_t endpoints, Format f,
                         const TextOptions& opt) {
  switch (f) {
    case Format::Text: return wrap_lines(render_scale_text(sides, services, endpoints), opt.width);
    case Format::Json: return render_scale_json(sides, services, endpoints);
    case Format::Markdown: {
      std::string out = "# dpscope scale\n";
      for (const auto& s : sides) out += node_section(s, services, endpoints, false);
      return out;
    }
    case Format::Html: {
      std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
      out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
      out += "<title>dpscope scale</title>\n<style>" + std::string(report_css()) + "</style>\n</head>\n<body>\n";
      out += "<h1>dpscope scale</h1>\n";
      for (const auto& s : sides) out += node_section(s, services, endpoints, true);
      out += "<h2>Projection</h2>\n" + scale_charts_html(sides, legend_of(sides), services, endpoints);
      return out + "</body>\n</html>\n";
    }
    case Format::Csv: break;
  }
  throw std::invalid_argument("scale: formats are text, json, markdown, html");
}

}  // namespace dpscope::reports
