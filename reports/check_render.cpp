#include "reports/check_render.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f, const TextOptions& opt) {
  const std::string verdict = r.ok() ? "PASS" : "FAIL";
  const std::string node = r.node.empty() ? source : r.node;
  switch (f) {
    case Format::Json: {
      nlohmann::json problems = nlohmann::json::array();
      for (const auto& p : r.problems) problems.push_back({{"id", p.id}, {"message", p.message}});
      nlohmann::json j = {{"schema", "dpscope.check/v1"}, {"node", r.node},    {"source", source},
                          {"expect", r.expect},            {"ok", r.ok()},      {"detected_mode", r.mode},
                          {"problems", problems},          {"passed", r.passed}};
      return j.dump(2, ' ', true) + "\n";
    }
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
      std::string out = "dpscope check " + escape_text(node) + ": expect " + r.expect + ": " + verdict;
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

}  // namespace dpscope::reports
