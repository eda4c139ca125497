// dpscope scale SNAPSHOT... [--services N --endpoints M]: rules as a function
// of services and endpoints, fitted from each snapshot's own composition and
// projected, beside the eBPF side (fixed map memory, LB map capacity).
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/width_option.h"
#include "model/json.h"
#include "reports/scale_report.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

struct ScaleArgs {
  std::vector<std::string> snapshots;
  uint64_t services = 0;
  uint64_t endpoints = 0;
  std::string format = "text";
  std::string output;
  std::optional<size_t> width;
};

int run_scale(const ScaleArgs& a) {
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("scale: ") + e.what());
  }
  if (format == reports::Format::Csv) throw UsageError("scale: --format is text, json, markdown or html");
  if ((a.services == 0) != (a.endpoints == 0)) throw UsageError("scale: give --services and --endpoints together");
  if (a.endpoints < a.services) {
    // kube-proxy programs a KUBE-SVC chain only for a service port with endpoints,
    // and one KUBE-SEP chain per (service port, endpoint): fewer endpoints than
    // services describes a node that cannot exist.
    throw UsageError("scale: --endpoints is the total number of endpoints over all service ports (one KUBE-SEP "
                     "chain per service port and endpoint), so it cannot be less than --services (" +
                     std::to_string(a.services) + "); got " + std::to_string(a.endpoints) +
                     ". E.g. 5000 services with 5 endpoints each: --services 5000 --endpoints 25000");
  }
  std::vector<reports::ScaleSide> sides;
  for (const auto& path : a.snapshots) {
    model::Snapshot s = model::load_snapshot(path, {analysis::rule_detail_for, warn_on_stderr});
    sides.push_back(reports::scale_side(s, s.node.name.empty() ? path : s.node.name, path));
  }
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  std::string text = reports::render_scale(sides, a.services, a.endpoints, format, opt);
  write_report(a.output, text);
  return kExitOk;
}

}  // namespace

void register_scale(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ScaleArgs>();
  auto* sub = app.add_subcommand("scale", "Rules as a function of services and endpoints, projected");
  sub->add_option("snapshots", args->snapshots, "snapshot files")->required();
  sub->add_option("--services", args->services, "project to N service ports (with endpoints)");
  sub->add_option("--endpoints", args->endpoints,
                  "... and M endpoints in total over all service ports (at least N; 5 per service: 5 x N)");
  sub->add_option("--format", args->format, "text | json | markdown | html")->capture_default_str();
  sub->add_option("-o,--output", args->output, "write the report to FILE (atomically) instead of stdout");
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return run_scale(*args); }; });
}

}  // namespace dpscope::cli
