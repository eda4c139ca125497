// dpscope where IP[:PORT] SNAPSHOT...: every place a service address is
// programmed on each node: rules, nft map elements, eBPF LB frontends/backends.
#include <memory>
#include <optional>

#include "analysis/analysis.h"
#include "analysis/where.h"
#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "cli/snapshot_inputs.h"
#include "model/json.h"
#include "reports/where_render.h"
#include "reports/text_width.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kWhereFormats = {"text", "markdown", "json", "csv"};

struct WhereArgs {
  std::vector<std::string> positional;  // IP[:PORT] then snapshots or folders
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
  check_output_destination("-o", a.output, kWhereFormats);
  std::vector<reports::WhereNode> nodes;
  const std::vector<std::string> inputs(a.positional.begin() + 1, a.positional.end());
  for_each_snapshot(inputs, {nullptr, warn_on_stderr}, [&](model::Snapshot& s, const std::string& path) {
    reports::WhereNode n;
    n.label = s.node.name.empty() ? path : s.node.name;
    n.source = path;
    n.places = analysis::find_address(s, q);
    // "nowhere" only means something for what was searched.
    n.not_searched = analysis::not_searched(s);
    nodes.push_back(std::move(n));
  });
  std::string text = reports::render_where(a.positional[0], nodes, format, text_options(a));
  write_report(a.output, text);
  // Like grep: 1 when the address is programmed nowhere, on none of the nodes.
  for (const auto& n : nodes) {
    if (!n.places.empty()) return kExitOk;
  }
  return kExitGateFailed;
}

}  // namespace

void add_where(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<WhereArgs>();
  sub->add_option("address_and_snapshots", args->positional,
                  "IP[:PORT] followed by snapshot files or cluster folders of them")
      ->type_name("IP[:PORT] FILE|DIR")
      ->required();
  add_format_option(sub, args->format, kWhereFormats);
  add_output_option(sub, args->output, "write the result to FILE instead of stdout");
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_where(*args); }); }; });
}

}  // namespace dpscope::cli
