// dpscope scale SNAPSHOT... [--services N --endpoints M]: rules as a function
// of services and endpoints, fitted from each snapshot's own composition and
// projected, beside the eBPF side (fixed map memory, LB map capacity).
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "cli/snapshot_inputs.h"
#include "model/json.h"
#include "reports/scale_report.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kScaleFormats = {"text", "json", "markdown", "html"};

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
  check_output_destination("-o", a.output, kScaleFormats);
  std::vector<reports::ScaleSide> sides;
  for_each_snapshot(a.snapshots, {analysis::rule_detail_for, warn_on_stderr},
                    [&](model::Snapshot& s, const std::string& path) {
                      sides.push_back(reports::scale_side(s, s.node.name.empty() ? path : s.node.name, path));
                    });
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  std::string text = reports::render_scale(sides, a.services, a.endpoints, format, opt);
  write_report(a.output, text);
  return kExitOk;
}

}  // namespace

void add_scale(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<ScaleArgs>();
  sub->add_option("snapshots", args->snapshots, "snapshot files, or cluster folders of them")
      ->type_name("FILE|DIR")
      ->required();
  sub->add_option("--services", args->services, "project to N service ports (with endpoints)")->type_name("N");
  sub->add_option("--endpoints", args->endpoints,
                  "... and M endpoints in total over all service ports (at least N; 5 per service: 5 x N)")
      ->type_name("M");
  add_format_option(sub, args->format, kScaleFormats);
  add_output_option(sub, args->output, "write the report to FILE (atomically) instead of stdout");
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_scale(*args); }); }; });
}

}  // namespace dpscope::cli
