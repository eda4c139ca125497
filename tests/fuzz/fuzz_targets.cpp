// libFuzzer targets, one per parser (tests/fuzz/README.md). Each is built as
// its own binary with -DDPSCOPE_FUZZ_TARGET=<name>.
//
// The contract every parser keeps: any input is parsed or refused with
// InputError (exit 2). Any other exception escaping, a crash, a sanitizer
// report, a hang (-timeout) or a blow-up (-rss_limit_mb) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "collectors/import/bpftool.h"
#include "collectors/import/import.h"
#include "model/intent.h"
#include "model/ipset.h"
#include "model/ipvs.h"
#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/snapshot_text.h"
#include "util/error.h"

namespace {

using namespace dpscope;

template <typename F>
bool refused(F&& parse) {
  try {
    parse();
    return false;
  } catch (const InputError&) {
    return true;
  }
}

// The snapshot bytes of `text` imported by the in-memory parser, or by the
// split path (what `import` runs: declarations read in parts, here of 64
// bytes, rules parsed and rendered as the snapshot is written), or
// "refused: MESSAGE".
std::string imported(std::string_view text, bool split) {
  model::Snapshot s;
  importer::IptablesSaveRules rule_text;
  try {
    s.netfilter.tables = split ? importer::parse_iptables_save(test::file_bytes(text), "fuzz", {}, rule_text, 64)
                               : importer::parse_iptables_save(text, "fuzz", {});
    s.netfilter.collected = true;
    model::canonicalize(s);
    return test::snapshot_text(s, &rule_text);
  } catch (const InputError& e) {
    return std::string("refused: ") + e.what();
  }
}

// Both parsers, which must agree byte for byte (the in-memory one is the
// reference: the split path falls back to it on anything unusual).
void iptables_save(std::string_view text) {
  if (imported(text, false) != imported(text, true)) {
    std::fprintf(stderr, "split import differs from the in-memory parser\n");
    std::abort();
  }
}

// Restore commands (-I/-N/-X/-F/-P/-Z/-A) inside one table, so mutations
// spend their time on the commands rather than on the table framing.
void restore(std::string_view text) {
  const std::string doc = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n" + std::string(text) + "\nCOMMIT\n";
  refused([&] { importer::parse_iptables_save(doc, "fuzz", {}); });
}

void iptables_S(std::string_view text) {
  refused([&] { importer::parse_iptables_rules_listing(text, "fuzz", "filter", {}); });
}

void nft_json(std::string_view text) {
  refused([&] { importer::parse_nft_json(text, "fuzz"); });
}

void bpftool_prog(std::string_view text) {
  refused([&] { importer::parse_bpftool_progs(text, "fuzz"); });
}
void bpftool_map(std::string_view text) {
  refused([&] { importer::parse_bpftool_maps(text, "fuzz"); });
}
void bpftool_net(std::string_view text) {
  refused([&] { importer::parse_bpftool_net(text, "fuzz"); });
}
void bpftool_map_dump(std::string_view text) {
  refused([&] { importer::parse_bpftool_map_dump(text, "fuzz"); });
}

// `ipset save` text (import --ipset-save; the live collector's own output
// goes through the same parser). What it accepts must survive the
// snapshot's JSON form unchanged.
void ipset_save(std::string_view text) {
  model::Ipsets sets;
  if (refused([&] { sets = model::parse_ipset_save(std::string(text), "fuzz"); })) return;
  if (model::ipsets_from_json(model::ipsets_to_json(sets), "/ipsets") != sets) {
    std::fprintf(stderr, "ipsets changed through their JSON form\n");
    std::abort();
  }
}

// ipvsadm's two listings and ip's addresses (import --ipvsadm-save,
// --ipvsadm-list, --ip-addr). What the listings accept must survive the
// snapshot's JSON form unchanged.
void ipvs_round_trip(const model::Ipvs& s) {
  if (model::ipvs_from_json(model::ipvs_to_json(s), "/ipvs") != s) {
    std::fprintf(stderr, "the ipvs section changed through its JSON form\n");
    std::abort();
  }
}
void ipvsadm_save(std::string_view text) {
  model::Ipvs s;
  if (refused([&] { s = model::parse_ipvsadm_save(std::string(text), "fuzz"); })) return;
  ipvs_round_trip(s);
}
void ipvsadm_list(std::string_view text) {
  model::Ipvs s;
  if (refused([&] { s = model::parse_ipvsadm_list(std::string(text), "fuzz"); })) return;
  ipvs_round_trip(s);
}
void ip_addr(std::string_view text) {
  refused([&] { model::parse_ip_addr(std::string(text), "fuzz"); });
}

// The cluster's intent (verify --intent): a kubectl List or one object.
void intent(std::string_view text) {
  model::Intent into;
  refused([&] { model::parse_intent(std::string(text), "fuzz", into); });
}

// Both loaders, and the promise between them: text that is not JSON is
// refused by each (the lean loader skips rules by a scan of its own).
void snapshot(std::string_view text) {
  const std::string doc(text);
  const model::LoadOptions lean{[](std::string_view) { return model::RuleDetail::None; }, nullptr};
  const model::LoadOptions verdicts{[](std::string_view) { return model::RuleDetail::Verdict; }, nullptr};
  const bool full_refused = refused([&] { model::from_json_text(doc, "fuzz"); });
  const bool lean_refused = refused([&] { model::from_json_text(doc, "fuzz", lean); });
  refused([&] { model::from_json_text(doc, "fuzz", verdicts); });
  if (!nlohmann::json::accept(doc) && (!full_refused || !lean_refused)) {
    std::abort();  // invalid JSON accepted
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DPSCOPE_FUZZ_TARGET(text);
  return 0;
}
