// dpscope check SNAPSHOT... --expect MODE: a migration gate. Exit 0 when every
// node matches, 1 with the list of problems when one does not. Only reads.
#include <memory>
#include <optional>

#include "analysis/check.h"
#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "cli/snapshot_inputs.h"
#include "model/json.h"
#include "reports/check_render.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kCheckFormats = {"text", "markdown", "json", "csv"};

struct CheckArgs {
  std::vector<std::string> snapshots;
  std::string expect;
  std::string format = "text";
  std::string output;
  std::string color = "auto";
  std::optional<size_t> width;
};

int run_check(const CheckArgs& a) {
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("check: ") + e.what());
  }
  if (format == reports::Format::Html) throw UsageError("check: --format html is only for compare");
  check_output_destination("-o", a.output, kCheckFormats);
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  opt.color = use_color(a.color, to_stdout(a.output), format);
  std::vector<reports::CheckedNode> nodes;
  for_each_snapshot(a.snapshots, {analysis::rule_detail_for, warn_on_stderr},
                    [&](model::Snapshot& s, const std::string& path) {
                      nodes.push_back({analysis::check(s, a.expect), path});
                    });
  bool ok = true;
  for (const auto& n : nodes) ok = ok && n.result.ok();
  // One shape for one node or fifty: a script written for one node reads ten.
  write_report(a.output, reports::render_checks(nodes, format, opt));
  return ok ? kExitOk : kExitGateFailed;
}

}  // namespace

void add_check(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<CheckArgs>();
  sub->add_option("snapshots", args->snapshots, "snapshot files, or cluster folders of them (each node is checked)")
      ->type_name("FILE|DIR")
      ->required();
  sub->add_option("--expect", args->expect, "the dataplane the node should run")
      ->required()
      ->type_name(choice_type(analysis::check_expectations()))
      ->check(one_of(analysis::check_expectations()));
  add_format_option(sub, args->format, kCheckFormats);
  add_output_option(sub, args->output, "write the result to FILE instead of stdout");
  add_color_option(sub, args->color);
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_check(*args); }); }; });
}

}  // namespace dpscope::cli
