#include "reports/render.h"

#include <algorithm>
#include <stdexcept>

#include "reports/escape.h"

namespace dpscope::reports {

namespace {

const char* kSectionTitles[][2] = {
    {"cluster", "Clusters"},
    {"cluster.totals", "Cluster totals (sum over nodes)"},
    {"cluster.per_node", "Per node: min / median / max"},
    {"node", "Node"},
    {"netfilter", "Netfilter: the seed measurement and totals"},
    {"services", "Services programmed per dataplane, and the lookup per new connection"},
    {"netfilter.tables", "Netfilter: rules per table"},
    {"netfilter.families", "Netfilter: chain families"},
    {"nftables", "kube-proxy nftables mode"},
    {"ebpf", "eBPF"},
};

}  // namespace

std::string section_title(const std::string& id) {
  for (const auto& t : kSectionTitles) {
    if (id == t[0]) return t[1];
  }
  return id;
}

std::vector<std::string> section_order(const Comparison& c);

namespace {

// Display width of UTF-8 text: one column per code point (the labels and
// escaped values are ASCII apart from node-supplied text).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) {
    if ((c & 0xc0) != 0x80) ++w;
  }
  return w;
}

std::string pad(const std::string& s, size_t w, bool right) {
  size_t n = width(s);
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

// Sections in first-seen order, each with its rows.
std::vector<std::pair<std::string, std::vector<const Row*>>> by_section(const Comparison& c) {
  std::vector<std::pair<std::string, std::vector<const Row*>>> out;
  for (const auto& r : c.rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == r.section; });
    if (it == out.end()) {
      out.push_back({r.section, {}});
      it = out.end() - 1;
    }
    it->second.push_back(&r);
  }
  // Fixed section order (the seed rows first), unknown sections last.
  auto rank = [](const std::string& id) {
    size_t i = 0;
    for (const auto& t : kSectionTitles) {
      if (id == t[0]) return i;
      ++i;
    }
    return i;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  return out;
}

std::string cell_note(const Row& r) {
  std::string note = r.note;
  for (const auto& v : r.values) {
    if (v.incomplete && note.find(v.incomplete_reason) == std::string::npos) {
      note += (note.empty() ? "" : "; ") + std::string("incomplete: ") + v.incomplete_reason;
    }
  }
  return note;
}

}  // namespace

std::vector<std::string> section_order(const Comparison& c) {
  std::vector<std::string> out;
  for (const auto& [section, rows] : by_section(c)) out.push_back(section);
  return out;
}

Format format_from_string(const std::string& name) {
  if (name == "text") return Format::Text;
  if (name == "markdown" || name == "md") return Format::Markdown;
  if (name == "json") return Format::Json;
  if (name == "csv") return Format::Csv;
  if (name == "html") return Format::Html;
  throw std::invalid_argument("unknown format '" + name + "' (text, markdown, json, csv, html)");
}

// ---------------------------------------------------------------- text

std::string render_text(const Comparison& c, const TextOptions& opt) {
  const std::string bold = opt.color ? "\x1b[1m" : "";
  const std::string dim = opt.color ? "\x1b[2m" : "";
  const std::string reset = opt.color ? "\x1b[0m" : "";
  const size_t n = c.sides.size();
  std::vector<std::string> heads;
  for (const auto& s : c.sides) heads.push_back(escape_text(s.label));

  // Column widths over every row, so all sections align.
  size_t label_w = 6;
  std::vector<size_t> col_w(n);
  for (size_t i = 0; i < n; ++i) col_w[i] = width(heads[i]);
  for (const auto& r : c.rows) {
    label_w = std::max(label_w, width(r.label) + 2);
    for (size_t i = 0; i < n; ++i) col_w[i] = std::max(col_w[i], width(escape_text(r.values[i].shown())));
  }

  std::string out;
  out += bold + "dpscope compare" + reset + ": ";
  for (size_t i = 0; i < n; ++i) out += (i ? " vs " : "") + heads[i];
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += "  [" + std::to_string(i + 1) + "] " + heads[i] + ": " + escape_text(c.sides[i].source) + "\n";
  }
  for (const auto& [section, rows] : by_section(c)) {
    out += "\n" + bold + section_title(section) + reset + "\n";
    std::string head = "  " + pad("", label_w, false);
    for (size_t i = 0; i < n; ++i) head += "  " + pad(heads[i], col_w[i], true);
    out += dim + head + reset + "\n";
    for (const Row* r : rows) {
      std::string line = "  " + pad(r->label, label_w, false);
      for (size_t i = 0; i < n; ++i) {
        const Cell& v = r->values[i];
        line += "  " + pad(escape_text(v.shown()), col_w[i], true);
      }
      std::string note = escape_text(cell_note(*r));
      // Notes give way first when the terminal is narrow.
      if (opt.width > 0 && !note.empty()) {
        size_t room = opt.width > width(line) + 2 ? opt.width - width(line) - 2 : 0;
        if (width(note) > room) note = room > 3 ? note.substr(0, room - 3) + "..." : "";
      }
      if (!note.empty()) line += "  " + dim + note + reset;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  out += "\n" + bold + "Detected mode and evidence" + reset + "\n";
  for (const auto& s : c.sides) {
    out += "  " + escape_text(s.label) + ": " + escape_text(s.mode_label) + "\n";
    for (const auto& e : s.evidence) out += "    - " + escape_text(e) + "\n";
    for (const auto& u : s.unavailable) out += "    - unavailable: " + escape_text(u) + "\n";
  }
  bool any_fill = false;
  for (const auto& s : c.sides) any_fill = any_fill || !s.fullest_maps.empty();
  if (any_fill) {
    out += "\n" + bold + "Fullest eBPF maps (entries / max_entries)" + reset + "\n";
    for (const auto& s : c.sides) {
      if (s.fullest_maps.empty()) continue;
      out += "  " + escape_text(s.label) + "\n";
      for (const auto& m : s.fullest_maps) out += "    - " + escape_text(m) + "\n";
    }
  }
  if (!c.findings.empty()) {
    out += "\n" + bold + "Findings" + reset + "\n";
    for (const auto& f : c.findings) out += "  - " + escape_text(f) + "\n";
  }
  return out;
}

// ---------------------------------------------------------------- markdown

std::string render_markdown(const Comparison& c) {
  std::string out = "# dpscope compare\n\n";
  for (size_t i = 0; i < c.sides.size(); ++i) {
    out += "- **" + escape_markdown(c.sides[i].label) + "**: `" + escape_markdown(c.sides[i].source) + "`\n";
  }
  for (const auto& [section, rows] : by_section(c)) {
    out += "\n## " + escape_markdown(section_title(section)) + "\n\n| metric |";
    for (const auto& s : c.sides) out += " " + escape_markdown(s.label) + " |";
    out += " note |\n|---|";
    for (size_t i = 0; i < c.sides.size(); ++i) out += "---:|";
    out += "---|\n";
    for (const Row* r : rows) {
      std::string label = r->label;
      while (!label.empty() && label.front() == ' ') label.erase(label.begin());
      out += "| " + escape_markdown(label) + (r->headline ? " ★" : "") + " |";
      for (const auto& v : r->values) out += " " + escape_markdown(v.shown()) + " |";
      out += " " + escape_markdown(cell_note(*r)) + " |\n";
    }
  }
  out += "\n## Detected mode and evidence\n\n";
  for (const auto& s : c.sides) {
    out += "- **" + escape_markdown(s.label) + "**: " + escape_markdown(s.mode_label) + "\n";
    for (const auto& e : s.evidence) out += "  - " + escape_markdown(e) + "\n";
    for (const auto& u : s.unavailable) out += "  - unavailable: " + escape_markdown(u) + "\n";
  }
  bool any_fill = false;
  for (const auto& s : c.sides) any_fill = any_fill || !s.fullest_maps.empty();
  if (any_fill) {
    out += "\n## Fullest eBPF maps (entries / max_entries)\n\n";
    for (const auto& s : c.sides) {
      for (const auto& m : s.fullest_maps) out += "- **" + escape_markdown(s.label) + "**: " + escape_markdown(m) + "\n";
    }
  }
  if (!c.findings.empty()) {
    out += "\n## Findings\n\n";
    for (const auto& f : c.findings) out += "- " + escape_markdown(f) + "\n";
  }
  out += "\n★ = a row of the seed measurement (kube-proxy node vs Cilium kube-proxy-replacement node).\n";
  return out;
}

// ---------------------------------------------------------------- json

nlohmann::json to_json(const Comparison& c) {
  using nlohmann::json;
  json sides = json::array();
  for (const auto& s : c.sides) {
    sides.push_back({{"label", s.label},
                     {"node", s.node},
                     {"source", s.source},
                     {"mode", s.mode},
                     {"mode_label", s.mode_label},
                     {"evidence", s.evidence},
                     {"unavailable", s.unavailable},
                     {"fullest_maps", s.fullest_maps}});
  }
  json rows = json::array();
  for (const auto& r : c.rows) {
    json values = json::array();
    for (const auto& v : r.values) {
      switch (v.kind) {
        case Cell::Kind::Number:
          if (v.incomplete) {
            values.push_back({{"value", v.number}, {"incomplete", v.incomplete_reason}});
          } else {
            values.push_back(v.number);
          }
          break;
        case Cell::Kind::Text: values.push_back(v.text); break;
        case Cell::Kind::Unavailable: values.push_back({{"unavailable", v.text}}); break;
        case Cell::Kind::NotCollected: values.push_back(nullptr); break;
      }
    }
    json row = {{"id", r.id}, {"section", r.section}, {"label", r.label}, {"values", std::move(values)}};
    if (!r.note.empty()) row["note"] = r.note;
    if (r.headline) row["headline"] = true;
    rows.push_back(std::move(row));
  }
  return {{"schema", "dpscope.compare/v1"},
          {"sides", std::move(sides)},
          {"rows", std::move(rows)},
          {"findings", c.findings}};
}

std::string render_json(const Comparison& c) {
  // dump() escapes control characters; ensure_ascii keeps the output 7-bit
  // so no terminal or viewer interprets bytes from a node.
  return to_json(c).dump(2, ' ', true) + "\n";
}

// ---------------------------------------------------------------- csv

std::string render_csv(const Comparison& c) {
  std::string out = "\"id\",\"section\",\"label\"";
  for (const auto& s : c.sides) out += "," + escape_csv(s.label);
  out += ",\"note\"\r\n";
  for (const auto& r : c.rows) {
    out += escape_csv(r.id) + "," + escape_csv(r.section) + "," + escape_csv(r.label);
    for (const auto& v : r.values) {
      if (v.kind == Cell::Kind::Number && !v.incomplete) {
        out += "," + std::to_string(v.number);
      } else {
        std::string s = v.shown();
        // A spreadsheet must not read node text as a formula.
        if (!s.empty() && std::string_view("=+-@").find(s.front()) != std::string_view::npos) s = "'" + s;
        out += "," + escape_csv(s);
      }
    }
    out += "," + escape_csv(cell_note(r)) + "\r\n";
  }
  return out;
}

std::string render(const Comparison& c, Format f, const TextOptions& opt) {
  switch (f) {
    case Format::Text: return render_text(c, opt);
    case Format::Markdown: return render_markdown(c);
    case Format::Json: return render_json(c);
    case Format::Csv: return render_csv(c);
    case Format::Html: return render_html(c);
  }
  return {};
}

}  // namespace dpscope::reports
