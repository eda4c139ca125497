#include "reports/check_render.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

namespace {

// Names listed in JSON per leftover backend, and in text and Markdown: the
// first ones and a count (a 20k-Service node leaves 40k chains).
constexpr size_t kJsonNames = 100;
constexpr size_t kTextNames = 10;

std::string first_names(const std::vector<std::string>& names, size_t max) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max) out += ", ... (" + std::to_string(names.size() - max) + " more)";
  return out;
}

std::string leftover_words(const analysis::Leftovers& l) {
  const bool tables = l.backend == "nftables";
  return l.backend + " (" + std::to_string(l.names.size()) + " " +
         (tables ? (l.names.size() == 1 ? "table" : "tables") : (l.names.size() == 1 ? "chain" : "chains")) +
         "): " + first_names(l.names, kTextNames);
}

// One node's result; the document around it is the same for one node or fifty.
nlohmann::json check_json(const analysis::CheckResult& r, const std::string& source) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : r.problems) problems.push_back({{"id", p.id}, {"message", p.message}});
  nlohmann::json leftovers = nlohmann::json::array();
  for (const auto& l : r.leftovers) {
    std::vector<std::string> first(l.names.begin(), l.names.begin() + std::min(l.names.size(), kJsonNames));
    leftovers.push_back({{"backend", l.backend}, {"count", l.names.size()}, {"names", first}});
  }
  nlohmann::json cleanup = nlohmann::json::array();
  for (const auto& c : r.cleanup) cleanup.push_back({{"command", c.command}, {"source", c.source}});
  return {{"node", r.node},       {"source", source},         {"ok", r.ok()},
          {"detected_mode", r.mode}, {"problems", problems},   {"passed", r.passed},
          {"leftovers", leftovers},  {"cleanup", cleanup}};
}

// PASS in green, FAIL in bold red, when colour is on.
std::string verdict_text(bool ok, bool color) {
  if (!color) return ok ? "PASS" : "FAIL";
  return ok ? "\x1b[32mPASS\x1b[0m" : "\x1b[1;31mFAIL\x1b[0m";
}

}  // namespace

std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f, const TextOptions& opt) {
  const std::string verdict = r.ok() ? "PASS" : "FAIL";
  const std::string node = r.node.empty() ? source : r.node;
  switch (f) {
    case Format::Json:
    case Format::Csv:
      return render_checks({{r, source}}, f, opt);
    case Format::Html:
    case Format::Markdown: {
      std::string out = "## dpscope check: " + escape_markdown(node) + " — expect `" + escape_markdown(r.expect) +
                        "`: **" + verdict + "**\n\n";
      out += "Detected mode: " + escape_markdown(r.mode) + "\n\n";
      for (const auto& p : r.problems) out += "- ❌ " + escape_markdown(p.message) + " (`" + p.id + "`)\n";
      for (const auto& p : r.passed) out += "- ✅ " + escape_markdown(p) + "\n";
      if (!r.leftovers.empty()) out += "\nLeft over:\n\n";
      for (const auto& l : r.leftovers) out += "- " + escape_markdown(leftover_words(l)) + "\n";
      if (!r.cleanup.empty()) {
        out += "\nCleanup, as its authors document it (copy it to the node; dpscope runs nothing):\n\n";
        for (const auto& c : r.cleanup) out += "- `" + c.command + "`: " + escape_markdown(c.source) + "\n";
      }
      return out;
    }
    case Format::Text: {
      std::string out = "dpscope check " + escape_text(node) + ": expect " + r.expect + ": " + verdict_text(r.ok(), opt.color);
      out += r.ok() ? "\n" : " (" + std::to_string(r.problems.size()) + " problem" +
                                 (r.problems.size() == 1 ? "" : "s") + ")\n";
      out += "  detected mode: " + r.mode + "\n";
      for (const auto& p : r.problems) out += "  problem [" + p.id + "]: " + escape_text(p.message) + "\n";
      for (const auto& p : r.passed) out += "  ok: " + escape_text(p) + "\n";
      for (const auto& l : r.leftovers) out += "  left over in " + escape_text(leftover_words(l)) + "\n";
      if (!r.cleanup.empty()) {
        out += "  cleanup, as its authors document it (copy it to the node; dpscope runs nothing):\n";
        for (const auto& c : r.cleanup) out += "    " + c.command + "\n      " + escape_text(c.source) + "\n";
      }
      return wrap_lines(out, opt.width);
    }
  }
  throw std::invalid_argument("format");
}

std::string render_checks(const std::vector<CheckedNode>& nodes, Format f, const TextOptions& opt) {
  size_t passed = 0;
  for (const auto& n : nodes) passed += n.result.ok() ? 1 : 0;
  const bool ok = passed == nodes.size();
  const std::string expect = nodes.empty() ? "" : nodes.front().result.expect;
  switch (f) {
    case Format::Json: {
      nlohmann::json results = nlohmann::json::array();
      for (const auto& n : nodes) results.push_back(check_json(n.result, n.source));
      nlohmann::json j = {{"schema", "dpscope.check/v2"}, {"expect", expect}, {"ok", ok},
                          {"nodes", nodes.size()}, {"passed_nodes", passed}, {"results", results}};
      return j.dump(2, ' ', true) + "\n";
    }
    case Format::Csv: {
      std::string out = "\"node\",\"source\",\"kind\",\"id\",\"message\"\r\n";
      for (const auto& n : nodes) {
        const std::string lead = escape_csv(n.result.node) + "," + escape_csv(n.source) + ",";
        for (const auto& p : n.result.problems) {
          out += lead + "\"problem\"," + escape_csv(p.id) + "," + escape_csv(p.message) + "\r\n";
        }
        for (const auto& p : n.result.passed) out += lead + "\"ok\",\"\"," + escape_csv(p) + "\r\n";
        for (const auto& l : n.result.leftovers) {
          out += lead + "\"leftover\"," + escape_csv(l.backend) + "," + escape_csv(leftover_words(l)) + "\r\n";
        }
        for (const auto& c : n.result.cleanup) {
          out += lead + "\"cleanup\",\"\"," + escape_csv(c.command + "  # " + c.source) + "\r\n";
        }
      }
      return out;
    }
    case Format::Html:
    case Format::Markdown:
    case Format::Text: {
      // One node: its result alone; the verdict over nodes only says something for several.
      if (nodes.size() == 1) return render_check(nodes[0].result, nodes[0].source, f, opt);
      std::string out;
      for (const auto& n : nodes) out += render_check(n.result, n.source, f, opt) + "\n";
      const std::string line = std::to_string(passed) + " of " + std::to_string(nodes.size()) + " nodes pass";
      if (f == Format::Text) {
        out += "dpscope check: expect " + expect + ": " + verdict_text(ok, opt.color) + " (" + line + ")\n";
      } else {
        out += "**" + std::string(ok ? "PASS" : "FAIL") + "**: " + line + "\n";
      }
      return out;
    }
  }
  throw std::invalid_argument("format");
}

}  // namespace dpscope::reports
