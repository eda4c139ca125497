// `dpscope import`: text other tools printed -> one snapshot file.
//
// Each input option is one row of the `inputs` table below: its name, help
// and the importer call for one file. Adding an input kind (bpftool, ...) is
// one more row.
#include <iostream>
#include <functional>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/phase_timer.h"
#include "cli/progress.h"
#include "collectors/import/bpftool.h"
#include "collectors/import/import.h"
#include "model/iptables.h"
#include "model/json.h"
#include "model/snapshot_writer.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

struct InputKind {
  std::string option;  // CLI11 option name(s)
  std::string help;
  std::string type_name;
  // Imports one argument of this option into the importer.
  std::function<void(importer::Importer&, const std::string& arg)> apply;
  std::vector<std::string> args;
};

struct ImportSettings {
  std::vector<InputKind> inputs;
  std::string backend;
  std::string node;
  std::string output;
  bool quiet = false;
};

// "nat=FILE" -> {"nat", "FILE"}.
std::pair<std::string, std::string> table_and_file(const std::string& arg, const std::string& option) {
  const auto eq = arg.find('=');
  const std::string table = eq == std::string::npos ? "" : arg.substr(0, eq);
  if (eq == std::string::npos || !model::is_iptables_table(table)) {
    throw UsageError(option + " " + arg + ": expected TABLE=FILE with TABLE one of filter, nat, mangle, raw, " +
                     "security (iptables -S does not print the table), e.g. " + option + " nat=nat.txt");
  }
  return {table, arg.substr(eq + 1)};
}

}  // namespace

void add_import(CLI::App* sub, Runner& run, CLI::App&) {
  auto settings = std::make_shared<ImportSettings>();

  // Options of iptables inputs; --backend applies to files without a header.
  auto ipt = [settings](const std::string& family, std::optional<model::Backend> forced) {
    importer::IptablesTextOptions o;
    o.family = family;
    o.backend = forced;
    if (!o.backend && !settings->backend.empty()) {
      o.backend = settings->backend == "legacy" ? model::Backend::IptablesLegacy : model::Backend::IptablesNft;
    }
    return o;
  };
  auto save = [ipt](std::string family, std::optional<model::Backend> forced) {
    return [ipt, family, forced](importer::Importer& im, const std::string& path) {
      im.add_iptables_save(path, ipt(family, forced));
    };
  };
  auto listing = [ipt](std::string family, std::string option) {
    return [ipt, family, option](importer::Importer& im, const std::string& arg) {
      auto [table, path] = table_and_file(arg, option);
      im.add_iptables_rules_listing(path, table, ipt(family, std::nullopt));
    };
  };
  const auto legacy = model::Backend::IptablesLegacy;
  auto bpftool = std::make_shared<importer::BpftoolImport>();  // eBPF inputs, applied after the loop
  settings->inputs = {
      {"--iptables-save", "iptables-save output (IPv4, either backend)", "FILE", save("ip", std::nullopt), {}},
      {"--ip6tables-save", "ip6tables-save output (IPv6, either backend)", "FILE", save("ip6", std::nullopt), {}},
      {"--iptables-legacy-save", "iptables-legacy-save output (IPv4)", "FILE", save("ip", legacy), {}},
      {"--ip6tables-legacy-save", "ip6tables-legacy-save output (IPv6)", "FILE", save("ip6", legacy), {}},
      {"--iptables-S", "`iptables -t TABLE -S` output of one table, as TABLE=FILE", "TABLE=FILE",
       listing("ip", "--iptables-S"), {}},
      {"--ip6tables-S", "`ip6tables -t TABLE -S` output of one table, as TABLE=FILE", "TABLE=FILE",
       listing("ip6", "--ip6tables-S"), {}},
      {"--nft-json", "`nft -j list ruleset` output", "FILE",
       [](importer::Importer& im, const std::string& path) { im.add_nft_json(path); }, {}},
      {"--ipset-save", "`ipset save` output (in the node's netns)", "FILE",
       [](importer::Importer& im, const std::string& path) { im.add_ipset_save(path); }, {}},
      {"--ipvsadm-save", "`ipvsadm-save -n` output: the IPVS virtual services and real servers", "FILE",
       [](importer::Importer& im, const std::string& path) { im.add_ipvsadm_save(path); }, {}},
      {"--ipvsadm-list", "`ipvsadm -Ln` output (instead of --ipvsadm-save; adds connection counts)", "FILE",
       [](importer::Importer& im, const std::string& path) { im.add_ipvsadm_list(path); }, {}},
      {"--ip-addr", "`ip -o addr show` output: the VIPs on kube-ipvs0 / kube-dummy-if", "FILE",
       [](importer::Importer& im, const std::string& path) { im.add_ip_addr(path); }, {}},
      {"--bpftool-prog", "`bpftool -j [-f] prog show` output", "FILE",
       [bpftool](importer::Importer&, const std::string& path) { bpftool->add_progs(path); }, {}},
      {"--bpftool-map", "`bpftool -j [-f] map show` output", "FILE",
       [bpftool](importer::Importer&, const std::string& path) { bpftool->add_maps(path); }, {}},
      {"--bpftool-net", "`bpftool -j net show` output (in the node's netns)", "FILE",
       [bpftool](importer::Importer&, const std::string& path) { bpftool->add_net(path); }, {}},
      {"--bpftool-map-dump", "`bpftool -j map dump pinned PIN` of a service map, as PIN=FILE (or NAME=FILE)", "MAP=FILE",
       [bpftool](importer::Importer&, const std::string& arg) { bpftool->add_map_dump(arg); }, {}},
  };
  for (auto& input : settings->inputs) {
    sub->add_option(input.option, input.args, input.help)->type_name(input.type_name)->take_all();
  }
  sub->add_option("--backend", settings->backend,
                  "backend of iptables text without a \"# Generated by\" header (default nft)")
      ->type_name(choice_type({"nft", "legacy"}))
      ->check(one_of({"nft", "legacy"}));
  sub->add_option("--node", settings->node, "node name to record in the snapshot")->type_name("NAME");
  add_output_option(sub, settings->output, "snapshot file to write (.json, .json.zst, .json.gz; - = stdout)")
      ->required();
  sub->add_flag("-q,--quiet,--no-progress", settings->quiet,
                "no progress line on stderr (shown only when stderr is a terminal)");

  sub->callback([&run, settings, bpftool] {
    run = [settings, bpftool] {
      size_t inputs = 0;
      for (const auto& input : settings->inputs) inputs += input.args.size();
      if (inputs == 0) throw UsageError("import: give at least one input (--iptables-save, --nft-json, ...; see --help)");
      check_output_destination("-o", settings->output);
      PhaseTimer phase;
      Progress progress(!settings->quiet);
      importer::Importer im;
      size_t done = 0;
      for (const auto& input : settings->inputs) {
        for (const auto& arg : input.args) {
          progress.phase("reading " + input.option + " " + arg + " (" + std::to_string(++done) + " of " +
                         std::to_string(inputs) + ")");
          input.apply(im, arg);
        }
      }
      bpftool->finish(im.snapshot());
      phase("parse");
      progress.phase("ordering");
      // Deliberately never freed: the process ends right after writing, and
      // freeing a 350k-rule snapshot rule by rule is ~10% of a big import.
      const auto* snapshot = new model::Snapshot(im.finish(settings->node));
      phase("canonicalize");
      progress.phase("writing " + (settings->output == "-" ? std::string("stdout") : settings->output));
      model::save_snapshot(*snapshot, settings->output, &im.rule_text());
      progress.done();
      phase("write");
      return kExitOk;
    };
  });
}

}  // namespace dpscope::cli
