// dpscope compare A [B C...]: side-by-side report of analysed snapshots (one
// alone: its report in one column), or of cluster folders.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "analysis/analysis.h"
#include "analysis/verify.h"
#include "model/intent.h"
#include "inputs/inputs.h"
#include "model/json.h"
#include "reports/cluster.h"
#include "reports/comparison.h"
#include "reports/intent_rows.h"
#include "reports/rule_diff_render.h"
#include "reports/render.h"
#include "reports/scale_report.h"
#include "reports/services_view.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kCompareFormats = {"text", "markdown", "json", "csv", "html"};

struct CompareArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> labels;
  std::string format = "text";
  std::string output;
  bool services = false;
  bool rules = false;    // --rules: the rule-level differences instead of the report
  bool diff_only = false;  // --diff-only: rows equal on every side hidden and counted
  std::vector<std::string> intent;  // --intent: verify every side against these
  std::string color = "auto";
  std::optional<size_t> width;
};

reports::TextOptions text_options(const CompareArgs& a, reports::Format format) {
  const bool stdout_report = to_stdout(a.output);
  reports::TextOptions opt;
  opt.color = use_color(a.color, stdout_report, format);
  opt.width = reports::output_width(a.width, stdout_report);
  return opt;
}

int run_compare(const CompareArgs& a) {
  if (a.labels.size() > a.inputs.size()) {
    throw UsageError("compare: " + std::to_string(a.labels.size()) + " --label for " +
                     std::to_string(a.inputs.size()) + " snapshots");
  }
  std::set<std::string> seen;
  for (const auto& l : a.labels) {
    if (!seen.insert(l).second) {
      throw UsageError("compare: --label " + l + " is given twice: each side needs its own label");
    }
  }
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("compare: ") + e.what());
  }
  check_output_destination("-o", a.output, kCompareFormats);
  if (a.services && !a.intent.empty()) throw UsageError("compare: --intent adds rows to the report, not to --services");
  if (a.diff_only && a.inputs.size() < 2) {
    throw UsageError("compare: --diff-only needs two sides or more (with one, every row is equal to itself)");
  }
  if (a.diff_only && (a.services || a.rules)) {
    throw UsageError(std::string("compare: --diff-only hides the report's equal rows; ") +
                     (a.rules ? "--rules lists only differences already" : "it does not apply to --services"));
  }
  if (a.rules && (a.services || !a.intent.empty())) {
    throw UsageError("compare: --rules lists rule differences; it does not combine with --services or --intent");
  }
  // The intent is read first: its errors explain every side's.
  model::Intent intent;
  std::unique_ptr<analysis::IntentIndex> index;
  if (!a.intent.empty()) {
    intent = model::load_intent(a.intent);
    index = std::make_unique<analysis::IntentIndex>(intent);
  }
  // Folders are clusters: every argument must then be a folder.
  size_t dirs = 0;
  for (const auto& p : a.inputs) dirs += std::filesystem::is_directory(p) ? 1 : 0;
  if (dirs > 0) {
    if (dirs != a.inputs.size()) throw UsageError("compare: give either snapshot files or cluster folders, not both");
    if (a.services) throw UsageError("compare: --services compares nodes, not cluster folders");
    if (a.rules) throw UsageError("compare: --rules compares nodes, not cluster folders");
    std::vector<reports::ClusterInput> clusters;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      clusters.push_back(
          reports::load_cluster(a.inputs[i], i < a.labels.size() ? a.labels[i] : "", warn_on_stderr, index.get()));
    }
    reports::Comparison cmp = reports::compare_clusters(clusters);
    if (index) {
      std::vector<analysis::ClusterVerification> per_side;
      for (auto& c : clusters) per_side.push_back(analysis::summarize(*index, std::move(c.verified)));
      reports::add_intent_rows(cmp, per_side);
    }
    if (a.diff_only) reports::hide_equal_rows(cmp);
    std::string text = reports::render(cmp, format, text_options(a, format));
    write_report(a.output, text);
    return kExitOk;
  }
  // --rules reads every rule's text; the report only the chains analysis
  // reads: --services and the HTML page's scale fit follow the per-service
  // jumps, the intent rows every frontend, the plain report only analyze().
  std::function<model::RuleDetail(std::string_view)> detail;
  if (!a.rules) {
    detail = index                                              ? analysis::verify_rule_detail
             : a.services || format == reports::Format::Html ? analysis::rule_detail_for
                                                              : analysis::analyze_rule_detail;
  }
  std::vector<model::Snapshot> snaps = inputs::load_snapshots(a.inputs, {detail, warn_on_stderr});
  std::vector<reports::SideInput> sides;
  for (size_t i = 0; i < snaps.size(); ++i) {
    sides.push_back({i < a.labels.size() ? a.labels[i] : "", a.inputs[i], &snaps[i]});
  }
  if (a.rules) {
    write_report(a.output, reports::render_rule_diff(reports::rule_diff_view(sides), format, text_options(a, format)));
    return kExitOk;
  }
  if (a.services) {
    std::string text = reports::render_services(reports::services_view(sides), format, text_options(a, format));
    write_report(a.output, text);
    return kExitOk;
  }
  reports::Comparison cmp = reports::compare(sides);
  // The scale projection is drawn only on the HTML page; the other formats skip the fit.
  if (format == reports::Format::Html) reports::add_scale(cmp, sides);
  if (index) {
    std::vector<analysis::ClusterVerification> per_side;
    for (size_t i = 0; i < snaps.size(); ++i) {
      per_side.push_back(analysis::summarize(
          *index, {analysis::verify_node(*index, snaps[i], analysis::node_name_of(snaps[i], a.inputs[i]), a.inputs[i])}));
    }
    reports::add_intent_rows(cmp, per_side);
  }
  if (a.diff_only) reports::hide_equal_rows(cmp);
  std::string text = reports::render(cmp, format, text_options(a, format));
  write_report(a.output, text);
  return kExitOk;
}

}  // namespace

void add_compare(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<CompareArgs>();
  sub->add_option("snapshots", args->inputs,
                  "snapshot files (dpscope.snapshot JSON, .json.zst, .json.gz), or cluster folders of them; one "
                  "alone is a one-node report")
      ->type_name("FILE|DIR")
      ->required();
  sub->add_option("--label", args->labels, "label of each side, in order, each its own (default: the node name)")
      ->type_name("LABEL");
  add_format_option(sub, args->format, kCompareFormats);
  sub->add_flag("--services", args->services,
                "per-Service view: each service port's rules and chains (iptables, nftables) and its frontend and "
                "backends (eBPF) on each side");
  sub->add_flag("--rules", args->rules,
                "rule-level differences: per table and chain, the rules one side has and another has not, by their "
                "exact text (counters, handles and positions ignored)");
  sub->add_flag("--diff-only", args->diff_only,
                "differences only: rows with the same value on every side are hidden, and counted (a row with an "
                "unavailable value is never hidden)");
  sub->add_option("--intent", args->intent,
                  "the cluster's Services and EndpointSlices (kubectl get services,endpointslices -A -o json; "
                  "repeatable): adds each side's dpscope verify summary as rows")
      ->type_name("FILE");
  add_output_option(sub, args->output, "write the report to FILE (atomically) instead of stdout");
  add_color_option(sub, args->color);
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_compare(*args); }); }; });
}

}  // namespace dpscope::cli
