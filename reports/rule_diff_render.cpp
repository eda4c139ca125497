#include "reports/rule_diff_render.h"

#include <nlohmann/json.hpp>

#include "reports/escape.h"

namespace dpscope::reports {

namespace {

std::string where_of(const analysis::ChainRules& c) {
  return std::string(model::to_string(c.backend)) + " " + c.family + " " + c.table + " " + c.chain;
}

// "A only", "B only", or "A 2, B 1" — who holds the rule how often.
std::string holders(const RuleDiffView& v, const analysis::RuleDifference& r) {
  bool once = true;
  for (uint32_t n : r.count) once &= n <= 1;
  std::string out;
  if (once) {
    for (size_t i = 0; i < r.count.size(); ++i) {
      if (r.count[i]) out += (out.empty() ? "" : ", ") + v.labels[i];
    }
    return out + " only";
  }
  for (size_t i = 0; i < r.count.size(); ++i) {
    out += (i ? ", " : "") + v.labels[i] + " " + std::to_string(r.count[i]);
  }
  return out;
}

// The chain's line: rule counts per side, "absent" where it is not.
std::string chain_counts(const RuleDiffView& v, const analysis::ChainRules& c) {
  std::string out;
  for (size_t i = 0; i < c.present.size(); ++i) {
    out += (i ? ", " : "") + v.labels[i] + " " + (c.present[i] ? std::to_string(c.rules[i]) + " rules" : "absent");
  }
  return out;
}

std::string reasons(const RuleDiffView& v, const analysis::ChainRules& c) {
  std::string out;
  for (size_t i = 0; i < c.not_compared.size(); ++i) {
    if (c.not_compared[i].empty()) continue;
    out += (out.empty() ? "" : "; ") + v.labels[i] + ": " + c.not_compared[i];
  }
  return out;
}

std::string summary(const RuleDiffView& v) {
  const auto& d = v.diff;
  size_t differing = 0, skipped = 0;
  for (const auto& c : d.chains) (c.compared() ? differing : skipped)++;
  return std::to_string(d.chains_compared) + " chains compared by rule text: " + std::to_string(d.chains_identical) +
         " identical, " + std::to_string(differing) + " differ; " + std::to_string(skipped) + " not compared";
}

std::string render_text(const RuleDiffView& v, const TextOptions&) {
  std::string out = "dpscope compare --rules:";
  for (size_t i = 0; i < v.labels.size(); ++i) out += (i ? " vs " : " ") + escape_text(v.labels[i]);
  out += "\n";
  for (size_t i = 0; i < v.labels.size(); ++i) {
    out += "  [" + std::to_string(i + 1) + "] " + escape_text(v.labels[i]) + ": " + escape_text(v.sources[i]) + "\n";
    if (!v.diff.side_not_read[i].empty()) {
      out += "      not read: " + escape_text(v.diff.side_not_read[i]) + "\n";
    }
  }
  out += "\n" + summary(v) + "\n";
  for (const auto& c : v.diff.chains) {
    out += "\n" + escape_text(where_of(c)) + " (" + escape_text(chain_counts(v, c)) + ")\n";
    if (!c.compared()) {
      out += "  not compared: " + escape_text(reasons(v, c)) + "\n";
      continue;
    }
    for (const auto& r : c.differences) {
      out += "  " + escape_text(holders(v, r)) + ": " + escape_text(r.text) + "\n";
    }
  }
  return out;
}

std::string render_markdown(const RuleDiffView& v) {
  std::string out = "# dpscope compare --rules\n\n";
  for (size_t i = 0; i < v.labels.size(); ++i) {
    out += "- **" + escape_markdown(v.labels[i]) + "**: `" + escape_markdown(v.sources[i]) + "`";
    if (!v.diff.side_not_read[i].empty()) out += " (not read: " + escape_markdown(v.diff.side_not_read[i]) + ")";
    out += "\n";
  }
  out += "\n" + summary(v) + "\n\n| table | chain | rule |";
  for (const auto& l : v.labels) out += " " + escape_markdown(l) + " |";
  out += "\n|---|---|---|";
  for (size_t i = 0; i < v.labels.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& c : v.diff.chains) {
    const std::string table = escape_markdown(std::string(model::to_string(c.backend)) + " " + c.family + " " + c.table);
    const std::string chain = escape_markdown(c.chain);
    if (!c.compared() || c.differences.empty()) {
      out += "| " + table + " | " + chain + " | " +
             escape_markdown(c.compared() ? "(chain: " + chain_counts(v, c) + ")" : "not compared: " + reasons(v, c)) + " |";
      for (size_t i = 0; i < c.present.size(); ++i) out += c.present[i] ? " " + std::to_string(c.rules[i]) + " |" : " absent |";
      out += "\n";
      continue;
    }
    for (const auto& r : c.differences) {
      out += "| " + table + " | " + chain + " | " + escape_markdown(r.text) + " |";
      for (uint32_t n : r.count) out += " " + std::to_string(n) + " |";
      out += "\n";
    }
  }
  return out;
}

nlohmann::json to_json(const RuleDiffView& v) {
  using nlohmann::json;
  json j;
  j["schema"] = "dpscope.rule-diff/v1";
  json sides = json::array();
  for (size_t i = 0; i < v.labels.size(); ++i) {
    json s = {{"label", v.labels[i]}, {"source", v.sources[i]}};
    if (!v.diff.side_not_read[i].empty()) s["not_read"] = v.diff.side_not_read[i];
    sides.push_back(s);
  }
  j["sides"] = sides;
  size_t differing = 0, skipped = 0;
  for (const auto& c : v.diff.chains) (c.compared() ? differing : skipped)++;
  j["summary"] = {{"chains_compared", v.diff.chains_compared},
                  {"chains_identical", v.diff.chains_identical},
                  {"chains_differing", differing},
                  {"chains_not_compared", skipped}};
  json chains = json::array();
  for (const auto& c : v.diff.chains) {
    json jc = {{"backend", model::to_string(c.backend)}, {"family", c.family}, {"table", c.table}, {"chain", c.chain}};
    json present = json::array(), rules = json::array();
    for (size_t i = 0; i < c.present.size(); ++i) {
      present.push_back(static_cast<bool>(c.present[i]));
      rules.push_back(c.rules[i]);
    }
    jc["present"] = present;
    jc["rules"] = rules;
    if (c.compared()) {
      json diffs = json::array();
      for (const auto& r : c.differences) diffs.push_back({{"text", r.text}, {"count", r.count}});
      jc["differences"] = diffs;
    } else {
      jc["not_compared"] = c.not_compared;  // per side, "" where that side is fine
    }
    chains.push_back(jc);
  }
  j["chains"] = chains;
  return j;
}

std::string render_csv(const RuleDiffView& v) {
  std::string out = "backend,family,table,chain,rule,status";
  for (const auto& l : v.labels) out += "," + escape_csv(l);
  out += "\n";
  for (const auto& c : v.diff.chains) {
    const std::string head = escape_csv(model::to_string(c.backend)) + "," + escape_csv(c.family) + "," +
                             escape_csv(c.table) + "," + escape_csv(c.chain) + ",";
    if (!c.compared() || c.differences.empty()) {
      out += head + "\"\"," + escape_csv(c.compared() ? "chain-presence" : "not-compared: " + reasons(v, c));
      for (size_t i = 0; i < c.present.size(); ++i) out += "," + (c.present[i] ? std::to_string(c.rules[i]) : std::string("\"absent\""));
      out += "\n";
      continue;
    }
    for (const auto& r : c.differences) {
      out += head + escape_csv(r.text) + ",\"differs\"";
      for (uint32_t n : r.count) out += "," + std::to_string(n);
      out += "\n";
    }
  }
  return out;
}

std::string render_html(const RuleDiffView& v) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dpscope compare --rules</title>\n"
      "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:2px 6px}code{white-space:pre-wrap}td.n{text-align:right}</style></head><body>\n"
      "<h1>dpscope compare --rules</h1>\n<ul>\n";
  for (size_t i = 0; i < v.labels.size(); ++i) {
    out += "<li><b>" + escape_html(v.labels[i]) + "</b>: " + escape_html(v.sources[i]);
    if (!v.diff.side_not_read[i].empty()) out += " (not read: " + escape_html(v.diff.side_not_read[i]) + ")";
    out += "</li>\n";
  }
  out += "</ul>\n<p>" + escape_html(summary(v)) + "</p>\n<table>\n<tr><th>table</th><th>chain</th><th>rule</th>";
  for (const auto& l : v.labels) out += "<th>" + escape_html(l) + "</th>";
  out += "</tr>\n";
  for (const auto& c : v.diff.chains) {
    const std::string head = "<tr><td>" + escape_html(std::string(model::to_string(c.backend)) + " " + c.family + " " +
                                                      c.table) +
                             "</td><td>" + escape_html(c.chain) + "</td>";
    if (!c.compared() || c.differences.empty()) {
      out += head + "<td>" +
             escape_html(c.compared() ? "(chain: " + chain_counts(v, c) + ")" : "not compared: " + reasons(v, c)) + "</td>";
      for (size_t i = 0; i < c.present.size(); ++i) {
        out += "<td class=\"n\">" + (c.present[i] ? std::to_string(c.rules[i]) : std::string("absent")) + "</td>";
      }
      out += "</tr>\n";
      continue;
    }
    for (const auto& r : c.differences) {
      out += head + "<td><code>" + escape_html(r.text) + "</code></td>";
      for (uint32_t n : r.count) out += "<td class=\"n\">" + std::to_string(n) + "</td>";
      out += "</tr>\n";
    }
  }
  return out + "</table>\n</body></html>\n";
}

}  // namespace

RuleDiffView rule_diff_view(const std::vector<SideInput>& inputs) {
  RuleDiffView v;
  std::vector<const model::Snapshot*> snaps;
  for (const auto& in : inputs) {
    v.labels.push_back(!in.label.empty() ? in.label : !in.snapshot->node.name.empty() ? in.snapshot->node.name : in.source);
    v.sources.push_back(in.source);
    snaps.push_back(in.snapshot);
  }
  v.diff = analysis::diff_rules(snaps);
  return v;
}

std::string render_rule_diff(const RuleDiffView& v, Format f, const TextOptions& opt) {
  switch (f) {
    case Format::Text:
      return render_text(v, opt);
    case Format::Markdown:
      return render_markdown(v);
    case Format::Json:
      return to_json(v).dump(2) + "\n";
    case Format::Csv:
      return render_csv(v);
    case Format::Html:
      return render_html(v);
  }
  return {};
}

}  // namespace dpscope::reports
