#include "reports/render.h"

#include <algorithm>
#include <stdexcept>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

namespace {

const char* kSectionTitles[][2] = {
    {"cluster", "Clusters"},
    {"cluster.totals", "Cluster totals (sum over nodes)"},
    {"cluster.per_node", "Per node: min / median / max"},
    {"cluster.resident", "Resident cost per node: min / median / max"},
    {"node", "Node"},
    {"netfilter", "Netfilter: the seed measurement and totals"},
    {"services", "Services programmed per dataplane, and the lookup per new connection"},
    {"netfilter.tables", "Netfilter: rules per table"},
    {"netfilter.families", "Netfilter: chain families"},
    {"nftables", "kube-proxy nftables mode"},
    {"ebpf", "eBPF"},
    {"resident", "Resident cost: agent memory and eBPF kernel memory"},
    {"intent", "Intent vs datapath (dpscope verify summary)"},
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
size_t width(const std::string& s) { return display_width(s); }

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

// Why a cell is incomplete is said once per section (Comparison::section_gaps).
std::string cell_note(const Row& r) { return r.note; }

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

// ---------------------------------------------------------------- differences only

namespace {

// Equal on every side: each value a number or a text, read in full, the same.
// Two unknowns are no equality.
bool equal_everywhere(const Row& r) {
  for (const auto& v : r.values) {
    if ((v.kind != Cell::Kind::Number && v.kind != Cell::Kind::Text) || v.incomplete) return false;
    const auto& first = r.values.front();
    if (v.kind != first.kind || v.number != first.number || v.text != first.text) return false;
  }
  return true;
}

}  // namespace

void hide_equal_rows(Comparison& c) {
  size_t hidden = 0;
  std::vector<Row> kept;
  for (auto& r : c.rows) {
    if (r.values.size() > 1 && equal_everywhere(r)) {
      ++hidden;
    } else {
      kept.push_back(std::move(r));
    }
  }
  c.rows = std::move(kept);
  c.equal_rows_hidden = hidden;
}

std::string hidden_rows_sentence(const Comparison& c) {
  const size_t n = c.equal_rows_hidden.value_or(0);
  return "--diff-only: " + std::to_string(n) + " row" + (n == 1 ? "" : "s") + " equal on every side " +
         (n == 1 ? "is" : "are") + " hidden";
}

// ---------------------------------------------------------------- text

std::string render_text(const Comparison& c, const TextOptions& opt) {
  const std::string bold = opt.color ? "\x1b[1m" : "";
  const std::string dim = opt.color ? "\x1b[2m" : "";
  const std::string reset = opt.color ? "\x1b[0m" : "";
  const size_t n = c.sides.size();
  const size_t max_w = opt.width;
  std::vector<std::string> heads;
  for (const auto& s : c.sides) heads.push_back(escape_text(s.label));

  // Column widths over the given rows; labels shrink first when the width is
  // limited (to min_label), then the sides go in groups of as many as fit,
  // each group printed as its own block of rows. Numbers never shrink; a side
  // header or a text value wider than the room left for one side is cut.
  struct Layout {
    size_t label_w = 6;
    std::vector<size_t> col_w;
    std::vector<std::vector<size_t>> groups;
    std::vector<size_t> group_label_w;
  };
  auto layout = [&](const std::vector<const Row*>& rows) {
    Layout l;
    l.col_w.resize(n);
    std::vector<size_t> number_w(n, 0), other_w(n);
    for (size_t i = 0; i < n; ++i) l.col_w[i] = other_w[i] = width(heads[i]);
    for (const Row* r : rows) {
      l.label_w = std::max(l.label_w, width(escape_text(r->label)) + 2);  // labels name tables: node text
      for (size_t i = 0; i < n; ++i) {
        size_t w = width(escape_text(r->values[i].shown()));
        l.col_w[i] = std::max(l.col_w[i], w);
        auto& by_kind = r->values[i].kind == Cell::Kind::Number ? number_w[i] : other_w[i];
        by_kind = std::max(by_kind, w);
      }
    }
    size_t total = 2 + l.label_w;
    for (size_t w : l.col_w) total += 2 + w;
    l.groups.assign(1, {});
    for (size_t i = 0; i < n; ++i) l.groups[0].push_back(i);
    l.group_label_w.assign(1, l.label_w);
    if (max_w == 0 || total <= max_w) return l;
    const size_t min_label = std::min(l.label_w, std::max<size_t>(16, max_w / 3));
    const size_t one_side_room = max_w > 4 + min_label ? max_w - 4 - min_label : 1;
    for (size_t i = 0; i < n; ++i) l.col_w[i] = std::max(number_w[i], std::min(one_side_room, other_w[i]));
    l.groups.clear();
    l.group_label_w.clear();
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
      if (l.groups.empty() || used + 2 + l.col_w[i] > max_w) {
        l.groups.push_back({});
        used = 2 + min_label;
      }
      l.groups.back().push_back(i);
      used += 2 + l.col_w[i];
    }
    for (const auto& g : l.groups) {
      size_t cols = 2;
      for (size_t i : g) cols += 2 + l.col_w[i];
      l.group_label_w.push_back(std::max(min_label, std::min(l.label_w, max_w > cols ? max_w - cols : 0)));
    }
    return l;
  };
  // All sections align when the whole table fits (always without a limit);
  // else each section gets the layout of its own rows.
  std::vector<const Row*> all_rows;
  for (const auto& r : c.rows) all_rows.push_back(&r);
  const Layout whole = layout(all_rows);
  const bool per_section = whole.groups.size() > 1 || whole.group_label_w[0] < whole.label_w;

  std::string out;
  out += bold + "dpscope compare" + reset + ": ";
  for (size_t i = 0; i < n; ++i) out += (i ? " vs " : "") + heads[i];
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += "  [" + std::to_string(i + 1) + "] " + heads[i] + ": " + escape_text(c.sides[i].source) + "\n";
  }
  if (c.equal_rows_hidden) out += "  " + hidden_rows_sentence(c) + "\n";
  const std::vector<SectionGap> gaps = c.section_gaps();
  for (const auto& [section, rows] : by_section(c)) {
    out += "\n" + bold + section_title(section) + reset + "\n";
    const Layout l = per_section ? layout(rows) : whole;
    auto value_text = [&](const Cell& v, size_t i) {
      std::string t = escape_text(v.shown());
      return v.kind == Cell::Kind::Number ? t : cut_before_number(t, l.col_w[i]);
    };
    for (size_t g = 0; g < l.groups.size(); ++g) {
      const size_t lw = l.group_label_w[g];
      if (g > 0) out += "\n";
      std::string head = "  " + pad("", lw, false);
      for (size_t i : l.groups[g]) head += "  " + pad(cut_middle(heads[i], l.col_w[i]), l.col_w[i], true);
      out += dim + head + reset + "\n";
      for (const Row* r : rows) {
        const std::string label = escape_text(r->label);
        std::string line = "  " + pad(max_w > 0 ? cut_middle(label, lw) : label, lw, false);
        for (size_t i : l.groups[g]) line += "  " + pad(value_text(r->values[i], i), l.col_w[i], true);
        std::string note = escape_text(cell_note(*r));
        // A note wider than the room beside the values goes under its row
        // (wrapped with the sentences below), never cut: it is read, not scanned.
        std::string note_below;
        if (max_w > 0 && !note.empty()) {
          size_t room = max_w > width(line) + 2 ? max_w - width(line) - 2 : 0;
          if (width(note) > room) note_below = std::move(note), note.clear();
        }
        if (!note.empty()) line += "  " + dim + note + reset;
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
        if (!note_below.empty()) out += "      " + dim + note_below + reset + "\n";
      }
    }
    for (const auto& g : gaps) {
      if (g.section == section) out += "  " + dim + "[" + std::to_string(g.side + 1) + "] " + heads[g.side] + ": " + escape_text(g.text) + reset + "\n";
    }
  }
  out += "\n" + bold + "Detected mode and evidence" + reset + "\n";
  for (const auto& s : c.sides) {
    out += "  " + escape_text(s.label) + ": " + escape_text(s.mode_label) + "\n";
    for (const auto& e : s.evidence) out += "    - " + escape_text(e) + "\n";
    for (const auto& u : s.unavailable) out += "    - unavailable: " + escape_text(u) + "\n";
  }
  bool any_memory = false;
  for (const auto& s : c.sides) any_memory = any_memory || !s.memory_notes.empty();
  if (any_memory) {
    out += "\n" + bold + "eBPF memory: what fdinfo memlock measures" + reset + "\n";
    for (const auto& s : c.sides) {
      if (s.memory_notes.empty()) continue;
      out += "  " + escape_text(s.label) + "\n";
      for (const auto& m : s.memory_notes) out += "    - " + escape_text(m) + "\n";
    }
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
  // Headers, evidence and findings are sentences: they wrap (the table rows already fit).
  return wrap_lines(out, max_w);
}

// ---------------------------------------------------------------- markdown

std::string render_markdown(const Comparison& c) {
  std::string out = "# dpscope compare\n\n";
  for (size_t i = 0; i < c.sides.size(); ++i) {
    out += "- **" + escape_markdown(c.sides[i].label) + "**: `" + escape_markdown(c.sides[i].source) + "`\n";
  }
  if (c.equal_rows_hidden) out += "\n" + escape_markdown(hidden_rows_sentence(c)) + "\n";
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
    std::string gap_lines;
    for (const auto& g : c.section_gaps()) {
      if (g.section == section) gap_lines += "- " + escape_markdown(c.sides[g.side].label) + ": " + escape_markdown(g.text) + "\n";
    }
    if (!gap_lines.empty()) out += "\n" + gap_lines;
  }
  out += "\n## Detected mode and evidence\n\n";
  for (const auto& s : c.sides) {
    out += "- **" + escape_markdown(s.label) + "**: " + escape_markdown(s.mode_label) + "\n";
    for (const auto& e : s.evidence) out += "  - " + escape_markdown(e) + "\n";
    for (const auto& u : s.unavailable) out += "  - unavailable: " + escape_markdown(u) + "\n";
    for (const auto& m : s.memory_notes) out += "  - eBPF memory: " + escape_markdown(m) + "\n";
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
  out += "\n★ = a headline row: a count of the measurement dpscope was started to reproduce (a kind node running "
         "kube-proxy vs one running Cilium's kube-proxy replacement).\n";
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
                     {"fullest_maps", s.fullest_maps},
                     {"memlock_band", s.memlock_band},
                     {"memory_notes", s.memory_notes}});
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
        // No number for what was not read: "value" is null and the reason says why.
        case Cell::Kind::Unavailable: values.push_back({{"value", nullptr}, {"unavailable", v.text}}); break;
        case Cell::Kind::NotCollected:
          if (v.text.empty()) {
            values.push_back(nullptr);
          } else {
            values.push_back({{"value", nullptr}, {"not_collected", v.text}});
          }
          break;
      }
    }
    json row = {{"id", r.id}, {"section", r.section}, {"label", r.label}, {"values", std::move(values)}};
    if (!r.note.empty()) row["note"] = r.note;
    if (r.headline) row["headline"] = true;
    rows.push_back(std::move(row));
  }
  json out = {{"schema", "dpscope.compare/v1"},
              {"sides", std::move(sides)},
              {"rows", std::move(rows)},
              {"findings", c.findings}};
  if (c.equal_rows_hidden) out["equal_rows_hidden"] = *c.equal_rows_hidden;
  return out;
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
  const std::vector<SectionGap> gaps = c.section_gaps();
  std::vector<std::string> sections_done;
  for (const auto& r : c.rows) {
    out += escape_csv(r.id) + "," + escape_csv(r.section) + "," + escape_csv(r.label);
    for (const auto& v : r.values) {
      if (v.kind == Cell::Kind::Number && !v.incomplete) {
        out += "," + std::to_string(v.number);
      } else {
        std::string s = v.shown();
        // A spreadsheet must not read node text as a formula; a lone "-" is no formula.
        if (!s.empty() && s != "-" && std::string_view("=+-@").find(s.front()) != std::string_view::npos) s = "'" + s;
        out += "," + escape_csv(s);
      }
    }
    // The reasons of a section's unavailable cells, once, in its first row's note.
    std::string note = cell_note(r);
    if (std::find(sections_done.begin(), sections_done.end(), r.section) == sections_done.end()) {
      sections_done.push_back(r.section);
      for (const auto& g : gaps) {
        if (g.section == r.section) note += (note.empty() ? "" : "; ") + c.sides[g.side].label + ": " + g.text;
      }
    }
    out += "," + escape_csv(note) + "\r\n";
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
