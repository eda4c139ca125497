#include "collectors/import/import.h"

#include <chrono>
#include <ctime>
#include <future>

#include "model/json.h"
#include "util/error.h"

namespace dpscope::importer {

namespace {

std::string now_rfc3339() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// An iptables-nft table read from `nft -j`: rules counted, not recorded.
bool count_only(const model::Table& t) {
  if (t.backend != model::Backend::IptablesNft) return false;
  for (const auto& c : t.chains) {
    if (!c.rules_recorded) return true;
  }
  return false;
}

}  // namespace

// iptables-nft-save prints this comment when legacy tables exist beside its
// own. Looked for in windows handed back behind the search, like the parse.
bool says_legacy_tables_present(const model::FileBytes& bytes) {
  static constexpr std::string_view kWarning = "# Warning: iptables-legacy tables present";
  static constexpr size_t kWindow = size_t{4} << 20;  // read beside the parse's own passes
  const std::string_view text = bytes.view();
  for (size_t begin = 0; begin < text.size(); begin += kWindow) {
    const std::string_view window = text.substr(begin, kWindow + kWarning.size());
    const bool found = window.find(kWarning) != std::string_view::npos;
    bytes.release(window);
    if (found) return true;
  }
  return false;
}

void Importer::add_iptables_save(const std::string& path, const IptablesTextOptions& options) {
  const auto text = std::make_shared<const model::FileBytes>(model::read_file_bytes(path));
  // A pass over the whole text of its own: made beside the parse.
  auto legacy_warning = std::async(std::launch::async, [&text] { return says_legacy_tables_present(*text); });
  IptablesSaveRules rule_text;
  auto tables = parse_iptables_save(text, origin_of(path), options, rule_text);
  if (options.backend == model::Backend::IptablesLegacy) legacy_input_ = true;
  for (const auto& t : tables) {
    if (t.backend == model::Backend::IptablesLegacy) legacy_input_ = true;
  }
  if (legacy_warning.get()) legacy_present_warning_ = true;
  add(std::move(tables), origin_of(path));
  rule_text_.merge(std::move(rule_text));  // after add(): a rejected input leaves nothing behind
  note_input(path);
}

void Importer::add_iptables_rules_listing(const std::string& path, const std::string& table,
                                          const IptablesTextOptions& options) {
  const std::string text = model::read_file(path);
  std::vector<model::Table> tables;
  tables.push_back(parse_iptables_rules_listing(text, origin_of(path), table, options));
  if (tables.back().backend == model::Backend::IptablesLegacy) legacy_input_ = true;
  add(std::move(tables), origin_of(path));
  note_input(path);
}

void Importer::add_nft_json(const std::string& path) {
  const std::string text = model::read_file(path);
  add(parse_nft_json(text, origin_of(path)), origin_of(path));
  nft_ruleset_input_ = true;
  note_input(path);
}

void Importer::add_ipset_save(const std::string& path) {
  const std::string text = model::read_file(path);
  const std::string origin = origin_of(path);
  if (!text.empty()) check_text(text, origin);  // no sets: ipset save prints nothing
  model::Ipsets sets = model::parse_ipset_save(text, origin);
  auto& have = snapshot_.ipsets;
  for (auto& set : sets.sets) {
    if (model::find_ipset(have, set.name)) {
      throw InputError(origin, 0, "set \"" + set.name + "\" is also in an earlier --ipset-save input");
    }
    have.sets.push_back(std::move(set));
  }
  have.collected = true;
  note_input(path);
}

// One IPVS table per node: a second services input is an error (two
// listings of the same table would count every service twice).
void Importer::add_ipvs(model::Ipvs ipvs, const std::string& origin, const char* option) {
  auto& have = snapshot_.ipvs;
  if (have.loaded) {
    throw InputError(origin, 0, std::string(option) + ": the IPVS table is already given by an earlier "
                                "--ipvsadm-save or --ipvsadm-list input");
  }
  auto addresses = std::move(have.interface_addresses);
  have = std::move(ipvs);
  have.collected = true;
  have.loaded = true;
  if (addresses) have.interface_addresses = std::move(addresses);
}

void Importer::add_ipvsadm_save(const std::string& path) {
  const std::string text = model::read_file(path);
  const std::string origin = origin_of(path);
  if (!text.empty()) check_text(text, origin);  // no services: ipvsadm-save prints nothing
  add_ipvs(model::parse_ipvsadm_save(text, origin), origin, "--ipvsadm-save");
  note_input(path);
}

void Importer::add_ipvsadm_list(const std::string& path) {
  const std::string text = model::read_file(path);
  const std::string origin = origin_of(path);
  check_text(text, origin);  // ipvsadm -Ln always prints its header
  add_ipvs(model::parse_ipvsadm_list(text, origin), origin, "--ipvsadm-list");
  note_input(path);
}

void Importer::add_ip_addr(const std::string& path) {
  const std::string text = model::read_file(path);
  const std::string origin = origin_of(path);
  check_text(text, origin);
  auto& have = snapshot_.ipvs;
  if (have.interface_addresses) throw InputError(origin, 0, "--ip-addr: addresses already given by an earlier input");
  have.interface_addresses = model::parse_ip_addr(text, origin);
  if (!have.collected) {
    // Addresses without the IPVS table: the table itself was not imported.
    have.collected = true;
    have.loaded = false;
    have.reason = "not imported: no --ipvsadm-save or --ipvsadm-list input";
  }
  note_input(path);
}

void Importer::add(std::vector<model::Table> tables, const std::string& origin) {
  auto& existing = snapshot_.netfilter.tables;
  for (auto& t : tables) {
    const auto key = std::make_tuple(static_cast<int>(t.backend), t.family, t.name);
    auto seen = origins_.find(key);
    if (seen != origins_.end()) {
      auto* old = model::find_table(snapshot_, t.backend, t.family, t.name);
      const bool old_count_only = old && count_only(*old);
      const bool new_count_only = count_only(t);
      if (new_count_only && !old_count_only) continue;  // iptables-save already has it, with rules
      if (old_count_only && !new_count_only) {
        *old = std::move(t);
        seen->second = origin;
        continue;
      }
      throw InputError(origin, 0,
                       "table " + t.family + " " + t.name + " (" + model::to_string(t.backend) +
                           ") is also in " + seen->second + ": each table may come from one input only");
    }
    origins_.emplace(key, origin);
    existing.push_back(std::move(t));
  }
  snapshot_.netfilter.collected = true;
}

model::Snapshot Importer::finish(const std::string& node_name) {
  auto& node = snapshot_.node;
  node.name = node_name;
  node.kernel = "";
  node.source = "import";
  node.environment = "import";
  node.taken_at = now_rfc3339();
  node.tool_version = DPSCOPE_VERSION;
  // A part no input could show is not collected, not empty: iptables-save of
  // the nf_tables variant lists no legacy table, and only `nft -j list ruleset`
  // shows native nftables tables.
  if (snapshot_.netfilter.collected && !legacy_input_) {
    snapshot_.unavailable.push_back(
        {"netfilter.iptables-legacy",
         legacy_present_warning_
             ? "not imported: the iptables-save input says iptables-legacy tables are present, and no "
               "--iptables-legacy-save input shows them"
             : "not imported: no iptables-legacy-save input",
         0, "add --iptables-legacy-save (iptables-legacy-save output) to cover the legacy backend"});
  }
  if (snapshot_.netfilter.collected && !nft_ruleset_input_) {
    snapshot_.unavailable.push_back({"netfilter.nftables-native", "not imported: no nft -j list ruleset input", 0,
                                     "add --nft-json (nft -j list ruleset output) to cover native nftables"});
  }
  // No refresh_counts(): every parser sets its chains' counts, and chains
  // whose rules are in rule_text_ have an empty `rules`.
  model::canonicalize(snapshot_);
  return std::move(snapshot_);
}

}  // namespace dpscope::importer
