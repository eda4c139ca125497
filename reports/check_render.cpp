#include "reports/check_render.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

namespace {

nlohmann::json check_json(const analysis::CheckResult& r, const std::string& source) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : r.problems) problems.push_back({{"id", p.id}, {"message", p.message}});
  return {{"schema", "dpscope.check/v1"}, {"node", r.node},    {"source", source},
          {"expect", r.expect},            {"ok", r.ok()},      {"detected_mode", r.mode},
          {"problems", problems},          {"passed", r.passed}};
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
      return check_json(r, source).dump(2, ' ', true) + "\n";
    case Format::Html:
    case Format::Markdown: {
      std::string out = "## dpscope check: " + escape_markdown(node) + " — expect `" + escape_markdown(r.expect) +
                        "`: **" + verdict + "**\n\n";
      out += "Detected mode: " + escape_markdown(r.mode) + "\n\n";
      for (const auto& p : r.problems) out += "- ❌ " + escape_markdown(p.message) + " (`" + p.id + "`)\n";
      for (const auto& p : r.passed) out += "- ✅ " + escape_markdown(p) + "\n";
      return out;
    }
    case Format::Text: {
      std::string out = "dpscope check " + escape_text(node) + ": expect " + r.expect + ": " + verdict_text(r.ok(), opt.color);
      out += r.ok() ? "\n" : " (" + std::to_string(r.problems.size()) + " problem" +
                                 (r.problems.size() == 1 ? "" : "s") + ")\n";
      out += "  detected mode: " + r.mode + "\n";
      for (const auto& p : r.problems) out += "  problem [" + p.id + "]: " + escape_text(p.message) + "\n";
      for (const auto& p : r.passed) out += "  ok: " + escape_text(p) + "\n";
      return wrap_lines(out, opt.width);
    }
    case Format::Csv: {
      std::string out = "\"kind\",\"id\",\"message\"\r\n";
      for (const auto& p : r.problems) out += "\"problem\"," + escape_csv(p.id) + "," + escape_csv(p.message) + "\r\n";
      for (const auto& p : r.passed) out += "\"ok\",\"\"," + escape_csv(p) + "\r\n";
      return out;
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
      nlohmann::json j = {{"schema", "dpscope.check-nodes/v1"}, {"expect", expect}, {"ok", ok},
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
      }
      return out;
    }
    case Format::Html:
    case Format::Markdown:
    case Format::Text: {
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
