#include "reports/where_render.h"

#include <nlohmann/json.hpp>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

std::string render_where(const std::string& query, const std::vector<WhereNode>& nodes, Format f,
                         const TextOptions& opt) {
  if (f == Format::Json) {
    nlohmann::json jn = nlohmann::json::array();
    for (const auto& n : nodes) {
      nlohmann::json places = nlohmann::json::array();
      for (const auto& p : n.places) {
        nlohmann::json place = {{"dataplane", p.dataplane}, {"where", p.where}, {"field", p.field}, {"detail", p.detail}};
        if (!p.table.empty()) place["table"] = p.table;
        if (!p.chain.empty()) place["chain"] = p.chain;
        if (p.position) place["position"] = p.position;
        if (!p.set.empty()) place["set"] = p.set;
        places.push_back(std::move(place));
      }
      jn.push_back({{"node", n.label},
                    {"source", n.source},
                    {"found", !n.places.empty()},
                    {"places", places},
                    {"not_searched", n.not_searched}});
    }
    return nlohmann::json{{"schema", "dpscope.where/v1"}, {"query", query}, {"nodes", jn}}.dump(2, ' ', true) + "\n";
  }
  if (f == Format::Csv) {
    std::string out = "\"node\",\"dataplane\",\"where\",\"field\",\"detail\"\r\n";
    for (const auto& n : nodes) {
      for (const auto& p : n.places) {
        out += escape_csv(n.label) + "," + escape_csv(p.dataplane) + "," + escape_csv(p.where) + "," +
               escape_csv(p.field) + "," + escape_csv(p.detail) + "\r\n";
      }
    }
    return out;
  }
  bool md = f == Format::Markdown || f == Format::Html;  // HTML: the Markdown form (no page for where)
  auto esc = [md](const std::string& s) { return md ? escape_markdown(s) : escape_text(s); };
  std::string out = md ? "## dpscope where " + esc(query) + "\n" : "dpscope where " + esc(query) + "\n";
  for (const auto& n : nodes) {
    out += md ? "\n### " + esc(n.label) + "\n\n" : "\n" + esc(n.label) + " (" + esc(n.source) + ")\n";
    if (n.places.empty()) {
      const std::string nowhere = n.not_searched.empty() ? "programmed nowhere" : "programmed nowhere that was searched";
      out += md ? "- " + nowhere + "\n" : "  " + nowhere + "\n";
    }
    if (md && !n.places.empty()) out += "| dataplane | where | field | detail |\n|---|---|---|---|\n";
    for (const auto& p : n.places) {
      if (md) {
        out += "| " + esc(p.dataplane) + " | " + esc(p.where) + " | " + esc(p.field) + " | " + esc(p.detail) + " |\n";
      } else {
        out += "  " + esc(p.dataplane) + "  " + esc(p.where) + "  [" + esc(p.field) + "]  " + esc(p.detail) + "\n";
      }
    }
    for (const auto& s : n.not_searched) out += (md ? "- not searched: " : "  not searched: ") + esc(s) + "\n";
  }
  return md ? out : wrap_lines(out, opt.width);
}

}  // namespace dpscope::reports
