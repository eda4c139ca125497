// dpscope where IP[:PORT] SNAPSHOT...: every place a service address is
// programmed on each node: rules, nft map elements, eBPF LB frontends/backends.
#include <memory>
#include <optional>

#include "analysis/analysis.h"
#include "analysis/where.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/width_option.h"
#include "model/json.h"
#include "reports/where_render.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

struct WhereArgs {
  std::vector<std::string> positional;  // IP[:PORT] then snapshots
  std::string format = "text";
  std::string output;
  std::optional<size_t> width;
};

reports::TextOptions text_options(const WhereArgs& a) {
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  return opt;
}

int run_where(const WhereArgs& a) {
  if (a.positional.size() < 2) throw UsageError("where: expected IP[:PORT] and at least one snapshot");
  analysis::AddressQuery q;
  try {
    q = analysis::parse_address_query(a.positional[0]);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("where: ") + e.what());
  }
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("where: ") + e.what());
  }
  if (format == reports::Format::Html) throw UsageError("where: --format html is only for compare");
  std::vector<reports::WhereNode> nodes;
  for (size_t i = 1; i < a.positional.size(); ++i) {
    model::Snapshot s = model::load_snapshot(a.positional[i], {nullptr, warn_on_stderr});
    reports::WhereNode n;
    n.label = s.node.name.empty() ? a.positional[i] : s.node.name;
    n.source = a.positional[i];
    n.places = analysis::find_address(s, q);
    // "nowhere" only means something for what was searched.
    n.not_searched = analysis::not_searched(s);
    nodes.push_back(std::move(n));
  }
  std::string text = reports::render_where(a.positional[0], nodes, format, text_options(a));
  write_report(a.output, text);
  // Like grep: 1 when the address is programmed nowhere, on none of the nodes.
  for (const auto& n : nodes) {
    if (!n.places.empty()) return kExitOk;
  }
  return kExitGateFailed;
}

}  // namespace

void register_where(CLI::App& app, Runner& run) {
  auto args = std::make_shared<WhereArgs>();
  auto* sub = app.add_subcommand(
      "where", "Where one service address is programmed, per node and dataplane (exit 1: programmed nowhere)");
  sub->add_option("address_and_snapshots", args->positional, "IP[:PORT] followed by snapshot files")->required();
  sub->add_option("--format", args->format, "text | markdown | json | csv")->capture_default_str();
  sub->add_option("-o,--output", args->output, "write the result to FILE instead of stdout");
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return run_where(*args); }; });
}

}  // namespace dpscope::cli
