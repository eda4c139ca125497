// dpscope check SNAPSHOT --expect MODE: a migration gate. Exit 0 when the node
// matches, 1 with the list of problems when it does not. Only reads.
#include <memory>
#include <optional>

#include "analysis/check.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/width_option.h"
#include "model/json.h"
#include "reports/check_render.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

struct CheckArgs {
  std::string snapshot;
  std::string expect;
  std::string format = "text";
  std::string output;
  std::optional<size_t> width;
};

reports::TextOptions text_options(const CheckArgs& a) {
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  return opt;
}

int run_check(const CheckArgs& a) {
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("check: ") + e.what());
  }
  if (format == reports::Format::Html) throw UsageError("check: --format html is only for compare");
  model::Snapshot s = model::load_snapshot(a.snapshot, {analysis::rule_detail_for, warn_on_stderr});
  analysis::CheckResult r = analysis::check(s, a.expect);
  std::string text = reports::render_check(r, a.snapshot, format, text_options(a));
  write_report(a.output, text);
  return r.ok() ? kExitOk : kExitGateFailed;
}

}  // namespace

void register_check(CLI::App& app, Runner& run) {
  auto args = std::make_shared<CheckArgs>();
  auto* sub = app.add_subcommand("check", "Migration gate: does the node run the dataplane it should? (exit 0/1)");
  sub->add_option("snapshot", args->snapshot, "snapshot file")->required();
  sub->add_option("--expect", args->expect, "kube-proxy-free | kube-proxy-iptables | kube-proxy-nftables")
      ->required()
      ->check(CLI::IsMember(analysis::check_expectations()));
  sub->add_option("--format", args->format, "text | markdown | json | csv")->capture_default_str();
  sub->add_option("-o,--output", args->output, "write the result to FILE instead of stdout");
  add_width_option(sub, args->width);
  sub->footer(
      "Problems: stale KUBE-SVC/KUBE-SEP/KUBE-SERVICES rules after a replacement, rules in both iptables\n"
      "backends, an orphan nftables kube-proxy table, a service address programmed both in netfilter and in\n"
      "an eBPF service map, no eBPF service map on a node that should be kube-proxy-free, sections that\n"
      "could not be read: a check never passes on a section it could not see (section-unavailable, exit 1).\n"
      "Exit 0: matches; 1: problems listed; 2: bad input.");
  sub->callback([args, &run] { run = [args] { return run_check(*args); }; });
}

}  // namespace dpscope::cli
