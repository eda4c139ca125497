#include "reports/verify_render.h"

#include <map>
#include <nlohmann/json.hpp>

#include "reports/escape.h"
#include "reports/text_width.h"

namespace dpscope::reports {

namespace {

using analysis::ClusterVerification;
using analysis::Finding;
using analysis::NodeVerification;

std::map<std::string, uint64_t> findings_by_id(const ClusterVerification& c) {
  std::map<std::string, uint64_t> by;
  for (const auto& n : c.nodes) {
    for (const auto& f : n.findings) by[f.id] += 1;
  }
  return by;
}

uint64_t finding_count(const ClusterVerification& c) {
  uint64_t n = 0;
  for (const auto& node : c.nodes) n += node.findings.size();
  return n;
}

uint64_t nodes_ok(const ClusterVerification& c) {
  uint64_t n = 0;
  for (const auto& node : c.nodes) n += node.ok() ? 1 : 0;
  return n;
}

std::string headline(const ClusterVerification& c) {
  return std::to_string(c.services_ok_everywhere) + " of " + std::to_string(c.services_expected) +
         " Services fully programmed on every node; " + std::to_string(nodes_ok(c)) + " of " +
         std::to_string(c.nodes.size()) + " nodes match; " + std::to_string(finding_count(c)) + " findings";
}

std::string dataplane_line(const analysis::DataplaneVerification& d, uint64_t services) {
  return d.dataplane + ": " + std::to_string(d.services_ok) + "/" + std::to_string(services) +
         " Services fully programmed, " + std::to_string(d.frontends_ok) + "/" + std::to_string(d.frontends_expected) +
         " frontends match (" + std::to_string(d.frontends_programmed) + " programmed), " +
         std::to_string(d.endpoints_checked) + " endpoints checked";
}

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json j = {{"id", f.id}, {"node", f.node}, {"dataplane", f.dataplane}, {"service", f.service},
                      {"frontend", f.frontend}, {"expected", f.expected}, {"actual", f.actual}};
  if (!f.endpoint.empty()) j["endpoint"] = f.endpoint;
  if (!f.where.empty()) j["where"] = f.where;
  return j;
}

std::string render_json_form(const ClusterVerification& c) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : c.nodes) {
    nlohmann::json planes = nlohmann::json::array();
    for (const auto& d : n.dataplanes) {
      planes.push_back({{"dataplane", d.dataplane},
                        {"services_ok", d.services_ok},
                        {"frontends_expected", d.frontends_expected},
                        {"frontends_ok", d.frontends_ok},
                        {"frontends_programmed", d.frontends_programmed},
                        {"endpoints_checked", d.endpoints_checked}});
    }
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : n.findings) findings.push_back(finding_json(f));
    nodes.push_back({{"node", n.node},
                     {"source", n.source},
                     {"ok", n.ok()},
                     {"services_expected", n.services_expected},
                     {"dataplanes", planes},
                     {"not_verified", n.not_verified},
                     {"findings", findings}});
  }
  nlohmann::json by_id = nlohmann::json::object();
  for (const auto& [id, count] : findings_by_id(c)) by_id[id] = count;
  nlohmann::json j = {
      {"schema", "dpscope.verify/v1"},
      {"ok", c.ok()},
      {"intent",
       {{"inputs", c.intent_inputs},
        {"services_to_program", c.services_expected},
        {"services_nothing_to_program", c.services_nothing_to_program},
        {"endpoints_with_topology_hints", c.hinted_endpoints}}},
      {"summary",
       {{"nodes", c.nodes.size()},
        {"nodes_ok", nodes_ok(c)},
        {"services_ok_everywhere", c.services_ok_everywhere},
        {"findings", finding_count(c)},
        {"findings_by_id", by_id}}},
      {"nodes", nodes}};
  return j.dump(2, ' ', true) + "\n";
}

std::string render_csv_form(const ClusterVerification& c) {
  std::string out =
      "\"node\",\"dataplane\",\"id\",\"service\",\"frontend\",\"endpoint\",\"expected\",\"actual\",\"where\"\r\n";
  for (const auto& n : c.nodes) {
    for (const auto& f : n.findings) {
      for (const std::string* v : {&f.node, &f.dataplane, &f.id, &f.service, &f.frontend, &f.endpoint, &f.expected,
                                   &f.actual}) {
        out += escape_csv(*v) + ",";
      }
      out += escape_csv(f.where) + "\r\n";
    }
  }
  return out;
}

std::string render_text_form(const ClusterVerification& c, bool md, const TextOptions& opt) {
  auto esc = [md](const std::string& s) { return md ? escape_markdown(s) : escape_text(s); };
  std::string inputs;
  for (const auto& i : c.intent_inputs) inputs += (inputs.empty() ? "" : ", ") + esc(i);
  std::string out = md ? "## dpscope verify\n\n" : "dpscope verify\n";
  out += (md ? "- intent: " : "intent: ") + inputs + " (" + std::to_string(c.services_expected) +
         " Services to program, " + std::to_string(c.services_nothing_to_program) +
         " headless / ExternalName / without ports)\n";
  if (c.hinted_endpoints) {
    out += (md ? "- " : "note: ") + std::to_string(c.hinted_endpoints) +
           " endpoints carry topology hints; expectations ignore hints (every ready endpoint)\n";
  }
  out += (md ? "- **" : "result: ") + std::string(c.ok() ? "OK: " : "MISMATCH: ") + headline(c) + (md ? "**\n" : "\n");
  for (const auto& n : c.nodes) {
    const std::string status = n.ok() ? "OK" : std::to_string(n.findings.size()) + " findings";
    out += md ? "\n### " + esc(n.node) + " — " + status + "\n\n- source: " + esc(n.source) + "\n"
              : "\nnode " + esc(n.node) + " (" + esc(n.source) + "): " + status + "\n";
    for (const auto& d : n.dataplanes) out += (md ? "- " : "  ") + esc(dataplane_line(d, n.services_expected)) + "\n";
    for (const auto& g : n.not_verified) out += (md ? "- not verified: " : "  not verified: ") + esc(g) + "\n";
    if (n.findings.empty()) continue;
    if (md) out += "\n| finding | dataplane | service | frontend | endpoint | expected | actual | where |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& f : n.findings) {
      if (md) {
        out += "| " + esc(f.id) + " | " + esc(f.dataplane) + " | " + esc(f.service) + " | " + esc(f.frontend) + " | " +
               esc(f.endpoint) + " | " + esc(f.expected) + " | " + esc(f.actual) + " | " + esc(f.where) + " |\n";
      } else {
        out += "  " + esc(f.id) + "  " + esc(f.dataplane) + "  " + esc(f.service.empty() ? "-" : f.service) + "  " +
               esc(f.frontend.empty() ? "-" : f.frontend) + (f.endpoint.empty() ? "" : "  " + esc(f.endpoint)) +
               "\n      expected " + esc(f.expected) + "; actual " + esc(f.actual) +
               (f.where.empty() ? "" : "\n      at " + esc(f.where)) + "\n";
      }
    }
  }
  return md ? out : wrap_lines(out, opt.width);
}

std::string render_html_form(const ClusterVerification& c) {
  auto h = [](const std::string& s) { return escape_html(s); };
  std::string out =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>dpscope verify</title>\n<style>"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:2px 6px;text-align:left;font-size:90%}.ok{color:#060}.bad{color:#a00}</style></head><body>\n";
  out += "<h1>dpscope verify</h1>\n<p class=\"" + std::string(c.ok() ? "ok" : "bad") + "\">" +
         (c.ok() ? "OK: " : "MISMATCH: ") + h(headline(c)) + "</p>\n<p>intent:";
  for (const auto& i : c.intent_inputs) out += " " + h(i);
  out += "</p>\n";
  for (const auto& n : c.nodes) {
    out += "<h2>" + h(n.node) + " <small>(" + h(n.source) + ")</small></h2>\n<ul>\n";
    for (const auto& d : n.dataplanes) out += "<li>" + h(dataplane_line(d, n.services_expected)) + "</li>\n";
    for (const auto& g : n.not_verified) out += "<li>not verified: " + h(g) + "</li>\n";
    out += "</ul>\n";
    if (n.findings.empty()) continue;
    out += "<table><tr><th>finding</th><th>dataplane</th><th>service</th><th>frontend</th><th>endpoint</th>"
           "<th>expected</th><th>actual</th><th>where</th></tr>\n";
    for (const auto& f : n.findings) {
      out += "<tr><td>" + h(f.id) + "</td><td>" + h(f.dataplane) + "</td><td>" + h(f.service) + "</td><td>" +
             h(f.frontend) + "</td><td>" + h(f.endpoint) + "</td><td>" + h(f.expected) + "</td><td>" + h(f.actual) +
             "</td><td>" + h(f.where) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace

std::string render_verify(const ClusterVerification& c, Format f, const TextOptions& opt) {
  switch (f) {
    case Format::Json: return render_json_form(c);
    case Format::Csv: return render_csv_form(c);
    case Format::Html: return render_html_form(c);
    case Format::Markdown: return render_text_form(c, true, opt);
    case Format::Text: break;
  }
  return render_text_form(c, false, opt);
}

}  // namespace dpscope::reports
