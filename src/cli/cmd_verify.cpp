// dpscope verify INTENT NODE_SNAPSHOT...|DIR: does every node program every
// Service frontend the cluster asks for, with the endpoints kube-proxy's rules
// pick for that node? Per node and dataplane; exit 1 on any finding.
#include <algorithm>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "analysis/verify.h"
#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "cli/width_option.h"
#include "cli/phase_timer.h"
#include "model/compression.h"
#include "inputs/inputs.h"
#include "model/intent.h"
#include "model/json.h"
#include "reports/text_width.h"
#include "reports/verify_render.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kVerifyFormats = {"text", "markdown", "json", "csv", "html"};

struct VerifyArgs {
  std::vector<std::string> positional;  // INTENT then snapshots / folders
  std::vector<std::string> more_intent;
  std::string node;
  std::string format = "text";
  std::string output;
  std::optional<size_t> width;
};

int run_verify(const VerifyArgs& a) {
  if (a.positional.size() < 2 && !(a.more_intent.size() && a.positional.size() >= 1)) {
    throw UsageError("verify: expected an intent file and at least one node snapshot or folder");
  }
  reports::Format format;
  try {
    format = reports::format_from_string(a.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("verify: ") + e.what());
  }
  check_output_destination("-o", a.output, kVerifyFormats);
  std::vector<std::string> intent_files = a.more_intent;
  std::vector<std::string> node_inputs = a.positional;
  if (a.more_intent.empty()) {
    intent_files.insert(intent_files.begin(), node_inputs.front());
    node_inputs.erase(node_inputs.begin());
  }
  // A folder stands for the node snapshots in it, as compare lists them.
  const std::vector<inputs::InputFile> paths = inputs::expand(node_inputs);
  if (!a.node.empty() && paths.size() != 1) throw UsageError("verify: --node names one node; give one snapshot");

  // The intent is read on its own thread while the first snapshots load (a
  // 20k-Service List and a 20k-Service node take about as long each). Each
  // snapshot is read, verified once the intent is there, and dropped by one of
  // a few workers: a 50-node folder holds 50 results, not 50 snapshots.
  PhaseTimer phase;
  model::Intent intent;
  std::unique_ptr<analysis::IntentIndex> index;
  std::promise<void> intent_read;
  std::shared_future<void> intent_ready = intent_read.get_future().share();
  std::thread intent_thread([&] {
    try {
      intent = model::load_intent(intent_files);
      PhaseTimer intent_phase;
      index = std::make_unique<analysis::IntentIndex>(intent);
      intent_phase("intent index (intent thread)");
      intent_read.set_value();
    } catch (...) {
      intent_read.set_exception(std::current_exception());
    }
  });
  std::vector<analysis::NodeVerification> results(paths.size());
  std::vector<bool> read;
  try {
    read = inputs::read_snapshots(
        paths, {analysis::verify_rule_detail, warn_on_stderr}, 0, [&](model::Snapshot& s, size_t i) {
          PhaseTimer node_phase;
          const std::string& path = paths[i].path;
          const std::string name = a.node.empty() ? analysis::node_name_of(s, path) : a.node;
          // The snapshot is dropped once its frontends are read: the comparison's
          // own objects (every expected frontend) then take its place, not its top.
          const analysis::NodeProgramming node = analysis::programming_of(s);
          s = model::Snapshot{};
          node_phase("read its frontends (worker)");
          intent_ready.get();
          node_phase("wait for the intent (worker)");
          results[i] = analysis::verify_node(*index, node, name, path);
          node_phase("verify node (worker)");
        });
  } catch (...) {
    intent_thread.join();
    intent_ready.get();  // an intent error first: it explains every node's
    throw;
  }
  intent_thread.join();
  phase("read and verify");
  intent_ready.get();
  std::vector<analysis::NodeVerification> verified;
  for (size_t i = 0; i < results.size(); ++i) {
    if (read[i]) verified.push_back(std::move(results[i]));
  }
  const analysis::ClusterVerification c = analysis::summarize(*index, std::move(verified));
  reports::TextOptions opt;
  opt.width = reports::output_width(a.width, to_stdout(a.output));
  write_report(a.output, reports::render_verify(c, format, opt));
  phase("summarize and render");
  return c.ok() ? kExitOk : kExitGateFailed;
}

}  // namespace

void add_verify(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<VerifyArgs>();
  sub->add_option("intent_and_snapshots", args->positional,
                  "the intent file, then node snapshots or folders of them")
      ->type_name("INTENT FILE|DIR")
      ->required();
  sub->add_option("--intent", args->more_intent,
                  "intent file(s) (Lists or single objects); when given, every positional argument is a node")
      ->type_name("FILE")
      ->take_all();
  sub->add_option("--node", args->node,
                  "the node name the Local traffic policies are evaluated for (default: the snapshot's)")
      ->type_name("NAME");
  add_format_option(sub, args->format, kVerifyFormats);
  add_output_option(sub, args->output, "write the result to FILE instead of stdout");
  add_width_option(sub, args->width);
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_verify(*args); }); }; });
}

}  // namespace dpscope::cli
