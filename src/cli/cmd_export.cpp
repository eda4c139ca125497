// dpscope export SNAPSHOT --format iptables-save|ip6tables-save|nft: the
// snapshot's iptables tables as the tools print them (reports/export_save.h),
// or its native nftables tables as `nft list ruleset` does (reports/export_nft.h).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/report_output.h"
#include "model/json.h"
#include "reports/export_nft.h"
#include "reports/export_save.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

const std::vector<std::string> kExportFormats = {"iptables-save", "ip6tables-save", "nft"};

struct ExportArgs {
  std::string input;
  std::string format = "iptables-save";
  std::string backend;  // "" = the one backend holding tables of the family
  std::string output;
};

model::Backend choose_backend(const ExportArgs& a, const model::Snapshot& s, const std::string& family) {
  if (a.backend == "nft") return model::Backend::IptablesNft;
  if (a.backend == "legacy") return model::Backend::IptablesLegacy;
  bool nft = false, legacy = false;
  for (const auto& t : s.netfilter.tables) {
    if (t.family != family) continue;
    nft |= t.backend == model::Backend::IptablesNft;
    legacy |= t.backend == model::Backend::IptablesLegacy;
  }
  if (nft && legacy) {
    throw UsageError("export: " + a.input + " holds " + family +
                     " tables in both iptables backends: choose one with --backend nft or --backend legacy");
  }
  return legacy ? model::Backend::IptablesLegacy : model::Backend::IptablesNft;
}

int run_export(const ExportArgs& a) {
  check_output_destination("-o", a.output, kExportFormats);
  if (a.format == "nft" && !a.backend.empty()) {
    throw UsageError("export: --backend chooses between the iptables backends; --format nft exports the native "
                     "nftables tables");
  }
  const std::string family = a.format == "ip6tables-save" ? "ip6" : "ip";
  // Every rule's text is read: no rule detail filter.
  model::Snapshot s = model::load_snapshot(a.input, {nullptr, warn_on_stderr});
  reports::SaveExport e = a.format == "nft"
                              ? reports::export_nft_ruleset(s, a.input)
                              : reports::export_iptables_save(s, choose_backend(a, s, family), family, a.input);
  for (const auto& n : e.notes) std::cerr << "dpscope: " << n << "\n";
  write_report(a.output, e.text);
  return kExitOk;
}

}  // namespace

void add_export(CLI::App* sub, Runner& run, CLI::App&) {
  auto args = std::make_shared<ExportArgs>();
  sub->add_option("snapshot", args->input, "a snapshot file (dpscope.snapshot/v2 JSON, .json.zst, .json.gz)")
      ->type_name("FILE")
      ->required();
  add_format_option(sub, args->format, kExportFormats)->check(one_of(kExportFormats));
  sub->add_option("--backend", args->backend,
                  "which iptables backend's tables (default: the one that holds tables of the family)")
      ->type_name(choice_type({"nft", "legacy"}))
      ->check(one_of({"nft", "legacy"}));
  add_output_option(sub, args->output, "write the text to FILE (atomically) instead of stdout");
  sub->callback([args, &run] { run = [args] { return with_import_hints([&] { return run_export(*args); }); }; });
}

}  // namespace dpscope::cli
