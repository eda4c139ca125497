// Native nftables rule text against the nftables project's own test dumps
// (fixtures/upstream/netfilter-tests/nftables-dumps/, SOURCES.md): each
// `.nft` ruleset this machine's `nft -f` loads goes into a dps-* netns, and
// every rule's text must equal what `nft list ruleset` prints of it, from
// three sides:
//   - the printer (src/decoders/nft_json_text.h) on what `nft -j` prints;
//   - `dpscope import --nft-json` of that output;
//   - `dpscope snapshot --netns` of the namespace (collectors/netfilter/nft_native.h).
// A rule a side cannot print keeps no text (counted, with the printer's
// reasons); a printed text is never wrong, and live equals import. The
// same for the elements of each named set and map, set by set.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "decoders/nft_json_text.h"
#include "model/iptables.h"
#include "model/json.h"
#include "tests/support/kernel.h"
#include "tests/support/nft_text.h"
#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

TEST(NftTextCorpus, PrintedTextIsNftsOwnAndCoverageHolds) {
  DPS_REQUIRE_ROOT();
  std::vector<std::string> dumps;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(source_path("fixtures/upstream/netfilter-tests/nftables-dumps"))) {
    if (e.path().extension() == ".nft") dumps.push_back(e.path().string());
  }
  std::sort(dumps.begin(), dumps.end());
  ASSERT_GE(dumps.size(), 400u);

  Netns ns("nfttext");
  TempDir dir;
  std::map<std::string, size_t> refused, unknown_by_reason;
  size_t loaded = 0, rules = 0, printed = 0, wrong = 0, multiline = 0;
  size_t iptables_listed = 0, iptables_incompatible = 0;
  size_t as_iptables = 0, live_printed = 0, live_wrong = 0, import_printed = 0, import_wrong = 0, live_import_differ = 0;
  std::vector<std::string> wrong_examples, live_examples;
  std::map<std::string, size_t> live_missing;  // why live printed no text where the import did
  std::map<std::string, std::string> live_missing_example;
  // Named sets and maps: their elements as `nft list ruleset` prints them.
  size_t sets = 0, set_elements = 0, sets_absent = 0, live_sets_right = 0, import_sets_right = 0, sets_live_import_same = 0;
  size_t live_sets_wrong = 0, import_sets_wrong = 0;
  std::map<std::string, size_t> live_set_undecoded, import_set_undecoded;
  std::map<std::string, std::string> live_set_undecoded_example, import_set_undecoded_example;
  std::vector<std::string> set_examples;
  // `export --format nft` of the live snapshot against `nft list ruleset`.
  size_t exported = 0, export_exact = 0, export_refused = 0;
  std::map<std::string, size_t> export_refusals;
  std::map<std::string, std::string> export_refusal_example;
  std::vector<std::string> export_examples;
  for (const auto& path : dumps) {
    const std::string name = path.substr(path.find("nftables-dumps/") + 15);
    // One shell per dump: flush, load, then both listings of the same state.
    RunResult r = run(ns.exec({"sh", "-c",
                               "nft flush ruleset && nft -f \"$1\" && nft list ruleset && echo @@json@@ && "
                               "nft -j list ruleset",
                               "sh", path}));
    if (r.exit_code != 0) {
      std::string why = r.err.substr(0, r.err.find('\n'));
      // "FILE:LINE:COL-COL: Error: what": keep the what.
      const auto e = why.find("Error: ");
      refused[e == std::string::npos ? why : why.substr(e + 7, 60)]++;
      continue;
    }
    ++loaded;
    const auto sep = r.out.find("@@json@@\n");
    ASSERT_NE(sep, std::string::npos) << name;
    const std::string text = r.out.substr(0, sep);
    // iptables-nft's own verdict on the tables named like iptables': a table
    // it calls incompatible is nft's to list, and dpscope reads it as native.
    const RunResult saved = run(ns.exec({"sh", "-c", "iptables-nft-save; echo @@ip6@@; ip6tables-nft-save"}));
    ASSERT_EQ(saved.exit_code, 0) << name << ": " << saved.err;
    const std::string json_text = r.out.substr(sep + 9);
    const json doc = json::parse(json_text);
    const NftTextRules want = nft_text_rules(text);
    multiline += want.multiline;
    // The same state through dpscope itself: live, and imported from nft -j.
    const std::string live_file = dir.file("live.json"), import_file = dir.file("import.json");
    write_text(dir.file("nft.json"), json_text);
    const RunResult lr = run({dpscope_bin(), "snapshot", "--netns", ns.name(), "--rules", "--no-ebpf", "-q", "-o", live_file});
    ASSERT_EQ(lr.exit_code, 0) << name << ": " << lr.err;
    const RunResult ir = run({dpscope_bin(), "import", "--nft-json", dir.file("nft.json"), "-o", import_file});
    ASSERT_EQ(ir.exit_code, 0) << name << ": " << ir.err;
    const model::Snapshot live = model::load_snapshot(live_file), imported = model::load_snapshot(import_file);
    for (const model::Table& t : live.netfilter.tables) {
      if ((t.family != "ip" && t.family != "ip6") || !model::is_iptables_table(t.name)) continue;
      const std::string listing = t.family == "ip" ? saved.out.substr(0, saved.out.find("@@ip6@@"))
                                                   : saved.out.substr(saved.out.find("@@ip6@@"));
      const bool incompatible = listing.find("# Table `" + t.name + "' is incompatible") != std::string::npos;
      if (incompatible) {
        ++iptables_incompatible;
        EXPECT_EQ(t.backend, model::Backend::Nftables) << name << ": " << t.family << " " << t.name
                                                       << ": iptables-nft-save calls it incompatible";
      }
      if (t.backend == model::Backend::IptablesNft) {
        ++iptables_listed;
        EXPECT_FALSE(incompatible) << name << ": " << t.family << " " << t.name;
      }
      const model::Table* it = nullptr;
      for (const auto& u : imported.netfilter.tables) {
        if (u.family == t.family && u.name == t.name) it = &u;
      }
      ASSERT_NE(it, nullptr) << name << ": " << t.family << " " << t.name << " not imported";
      EXPECT_EQ(it->backend, t.backend) << name << ": " << t.family << " " << t.name << ": live and import read it alike";
    }
    {
      const RunResult er = run({dpscope_bin(), "export", live_file, "--format", "nft"});
      if (er.exit_code != 0) {
        ASSERT_EQ(er.exit_code, 2) << name << ": " << er.err;
        ++export_refused;
        // "dpscope: FILE: nftables table F T: WHAT: nothing exact to export". Counted by
        // the kind of WHAT's object and its reason, without its name: "chain (a chain binding)".
        std::string why = er.err.substr(0, er.err.find('\n'));
        if (const auto at = why.find(": nftables table "); at != std::string::npos) {
          why = why.substr(why.find(": ", at + 17) + 2);
        }
        const auto paren = why.find(" (");
        why = why.substr(0, why.find(' ')) + (paren == std::string::npos ? ": " + why : why.substr(paren, 70));
        if (export_refusals[why]++ == 0) export_refusal_example[why] = name + ": " + er.err.substr(0, 300);
      } else {
        ++exported;
        // nft's listing of the same tables: the iptables-nft ones are left out (said on stderr).
        const std::string want_text = nft_ruleset_without_expires(text, nft_iptables_tables(live));
        if (er.out == want_text) {
          ++export_exact;
        } else if (export_examples.size() < 10) {
          export_examples.push_back(name + ": export --format nft differs from nft list ruleset:\n" +
                                    first_difference(want_text, er.out));
        }
      }
    }
    auto table_of = [](const model::Snapshot& s, const NftChainKey& key) -> const model::Table* {
      for (const auto& t : s.netfilter.tables) {
        if (t.family == std::get<0>(key) && t.name == std::get<1>(key)) return &t;
      }
      return nullptr;
    };
    auto rule_of = [&](const model::Snapshot& s, const NftChainKey& key, size_t i) -> const model::Rule* {
      // Any backend: a native table named like an iptables one (`ip nat`) is read as iptables-nft's.
      const model::Table* t = table_of(s, key);
      const model::Chain* c = t ? model::find_chain(*t, std::get<2>(key)) : nullptr;
      return c && i < c->rules.size() ? &c->rules[i] : nullptr;
    };
    std::map<NftChainKey, size_t> next;  // each chain's next rule
    for (const auto& item : doc.at("nftables")) {
      if (!item.contains("rule")) continue;
      const json& r = item["rule"];
      const NftChainKey key{r["family"], r["table"], r["chain"]};
      const size_t i = next[key]++;
      ++rules;
      const auto& lines = want.chains.count(key) ? want.chains.at(key) : std::vector<std::string>{};
      ASSERT_LT(i, lines.size()) << name << ": nft -j lists more rules than nft list in " << r["chain"];
      const std::string& nft = lines[i];
      const model::Rule* l = rule_of(live, key, i);
      const model::Rule* m = rule_of(imported, key, i);
      ASSERT_NE(l, nullptr) << name << ": no live rule " << i << " in " << r["chain"];
      if (table_of(live, key)->backend == model::Backend::IptablesNft) {
        // A table iptables-nft lists (named and shaped like its own): its
        // text is iptables-nft-save's (rule_text_corpus_test.cpp), or absent
        // where iptables-nft-save's own line would drop what it cannot read
        // (`ip saddr vmap @m` lists as "-A c").
        ++as_iptables;
        continue;
      }
      // No imported record: a table the import reads as iptables-nft's, whose rules nft -j only lets it count.
      const std::string import_text = m ? m->text : "";
      if (!l->text.empty()) {
        ++live_printed;
        if (l->text != nft) {
          ++live_wrong;
          if (live_examples.size() < 25) live_examples.push_back(name + ": nft:  " + nft + "\n      live: " + l->text);
        }
      }
      if (!import_text.empty()) {
        ++import_printed;
        if (import_text != nft) ++import_wrong;
      }
      if (l->text != import_text) {
        ++live_import_differ;
        if (l->text.empty()) {
          const std::string why = l->raw.substr(0, l->raw.find("): ") + 1);
          if (live_missing[why]++ == 0) live_missing_example[why] = name + ": " + nft;
        }
      }
      EXPECT_EQ(l->undecoded, l->text.empty()) << name << ": a live rule without text is marked undecoded";
      if (m) EXPECT_EQ(m->undecoded, m->text.empty()) << name << ": an imported rule without text is marked undecoded";
      nft_text::NftRuleText t = nft_text::nft_rule_text(r["expr"], r["family"], r.value("comment", ""));
      if (!t.unknown.empty()) {
        unknown_by_reason[t.unknown.substr(0, 60)]++;
        continue;
      }
      ++printed;
      if (t.text != nft) {
        ++wrong;
        if (wrong_examples.size() < 25) wrong_examples.push_back(name + ": nft: " + nft + "\n      ours: " + t.text);
      }
    }
    // Each named set's elements, from the three sides, as sorted lists of
    // the element texts (the snapshot keeps them by key).
    auto set_of = [](const model::Snapshot& snap, const NftSetKey& key) -> const model::NftSet* {
      for (const auto& t : snap.netfilter.tables) {
        if (t.family != std::get<0>(key) || t.name != std::get<1>(key)) continue;
        for (const auto& set : t.sets) {
          if (set.name == std::get<2>(key)) return &set;
        }
      }
      return nullptr;
    };
    auto texts = [](const model::NftSet& set) {
      std::vector<std::string> out;
      for (const auto& e : set.elements) out.push_back(nft_element_text(e));
      std::sort(out.begin(), out.end());
      return out;
    };
    for (auto& [key, elements] : nft_text_set_elements(text)) {
      ++sets;
      // An element's `expires` is runtime state the snapshot leaves out.
      for (auto& e : elements) e = without_expires(e);
      std::sort(elements.begin(), elements.end());
      set_elements += elements.size();
      const model::NftSet* l = set_of(live, key);
      const model::NftSet* m = set_of(imported, key);
      if (!l || !m) {
        ++sets_absent;  // a set of a table read as iptables-nft's
        continue;
      }
      const std::string where = name + ": set " + std::get<1>(key) + " " + std::get<2>(key);
      // One side's elements against nft's: undecoded (marked, with why), right, or wrong.
      auto judge = [&](const char* side, const model::NftSet& set, size_t& right, size_t& wrong,
                       std::map<std::string, size_t>& undecoded, std::map<std::string, std::string>& example) {
        if (!set.elements_undecoded.empty()) {
          const std::string why = set.elements_undecoded.substr(0, 70);
          if (undecoded[why]++ == 0) example[why] = where;
        } else if (texts(set) == elements) {
          ++right;
        } else {
          ++wrong;
          if (set_examples.size() < 25) {
            set_examples.push_back(where + "\n      nft:    " + testing::PrintToString(elements) + "\n      " + side +
                                   ": " + testing::PrintToString(texts(set)));
          }
        }
      };
      judge("live  ", *l, live_sets_right, live_sets_wrong, live_set_undecoded, live_set_undecoded_example);
      judge("import", *m, import_sets_right, import_sets_wrong, import_set_undecoded, import_set_undecoded_example);
      if (l->elements == m->elements && l->elements_undecoded.empty() == m->elements_undecoded.empty()) ++sets_live_import_same;
    }
  }
  ns.sh("nft flush ruleset");

  auto pct = [](size_t n, size_t of) { return std::to_string(of ? n * 100 / of : 0) + "%"; };
  std::string report = "nftables-dumps: " + std::to_string(dumps.size()) + " dumps, " + std::to_string(loaded) +
                       " loaded by this nft; " + std::to_string(rules) + " rules; " + std::to_string(multiline) +
                       " chain-binding rules\n";
  report += "  read as iptables-nft tables (their text is iptables-save's): " + std::to_string(as_iptables) +
            " rules in " + std::to_string(iptables_listed) + " tables; " + std::to_string(iptables_incompatible) +
            " tables named like iptables' that iptables-nft-save calls incompatible, read as native\n";
  report += "  printer on nft -j: " + std::to_string(printed) + " printed (" + pct(printed, rules) + "), " +
            std::to_string(wrong) + " wrong\n";
  report += "  import:            " + std::to_string(import_printed) + " printed (" + pct(import_printed, rules) +
            "), " + std::to_string(import_wrong) + " wrong\n";
  report += "  live snapshot:     " + std::to_string(live_printed) + " printed (" + pct(live_printed, rules) + "), " +
            std::to_string(live_wrong) + " wrong\n";
  report += "  live != import:    " + std::to_string(live_import_differ) + " rules (one side printed, the other not)\n";
  for (const auto& [why, n] : live_missing) {
    report += "    " + std::to_string(n) + "  live: " + why + "\n        e.g. " + live_missing_example[why] + "\n";
  }
  report += "named sets and maps: " + std::to_string(sets) + " (" + std::to_string(set_elements) + " elements), " +
            std::to_string(sets_absent) + " of tables read as iptables-nft's\n";
  report += "  import elements == nft's: " + std::to_string(import_sets_right) + " sets, " +
            std::to_string(import_sets_wrong) + " wrong\n";
  for (const auto& [why, n] : import_set_undecoded) {
    report += "    " + std::to_string(n) + "  import: " + why + "\n        e.g. " + import_set_undecoded_example[why] + "\n";
  }
  report += "  live elements == nft's:   " + std::to_string(live_sets_right) + " sets, " +
            std::to_string(live_sets_wrong) + " wrong\n";
  for (const auto& [why, n] : live_set_undecoded) {
    report += "    " + std::to_string(n) + "  live: " + why + "\n        e.g. " + live_set_undecoded_example[why] + "\n";
  }
  report += "  live == import:           " + std::to_string(sets_live_import_same) + " sets\n";
  report += "export --format nft of the live snapshot: " + std::to_string(exported) + " dumps exported, " +
            std::to_string(export_exact) + " equal to nft list ruleset, " + std::to_string(exported - export_exact) +
            " different; " + std::to_string(export_refused) + " refused:\n";
  for (const auto& [why, n] : export_refusals) {
    report += "    " + std::to_string(n) + "  " + why + "\n        e.g. " + export_refusal_example[why] + "\n";
  }
  report += "refused by nft -f here:\n";
  for (const auto& [why, n] : refused) report += "  " + std::to_string(n) + "  " + why + "\n";
  report += "not printed (the printer does not know them yet):\n";
  for (const auto& [why, n] : unknown_by_reason) report += "  " + std::to_string(n) + "  " + why + "\n";
  std::cout << report;
  for (const auto& w : wrong_examples) ADD_FAILURE() << w;
  for (const auto& w : live_examples) ADD_FAILURE() << w;
  for (const auto& w : set_examples) ADD_FAILURE() << w;
  for (const auto& w : export_examples) ADD_FAILURE() << w;

  EXPECT_EQ(live_wrong, 0u) << "a live rule text must be nft's own";
  EXPECT_EQ(import_wrong, 0u) << "an imported rule text must be nft's own";
  EXPECT_EQ(wrong, 0u) << "a printed rule text must be nft's own";
  EXPECT_GE(loaded, 300u);
  EXPECT_GE(rules, 500u);
  EXPECT_GE(iptables_incompatible, 6u) << report;  // snat maps, ipsec, ct expectation objects, meters
  // Every native rule nft lists here, from all three sides (the rules of
  // tables iptables-nft lists are iptables-save's: rule_text_corpus_test.cpp).
  const size_t native_rules = rules - as_iptables;
  EXPECT_EQ(printed, native_rules) << report;
  EXPECT_EQ(import_printed, native_rules) << report;
  EXPECT_EQ(live_printed, native_rules) << report;
  // Set elements: a text is nft's or absent (the set marked), never wrong.
  EXPECT_EQ(live_sets_wrong, 0u);
  EXPECT_EQ(import_sets_wrong, 0u);
  EXPECT_GE(sets, 200u);
  // Live: every set's elements are nft's. Import: every set but those nft -j
  // 1.0.6 cannot describe (only the first of an element's statements; an
  // integer's base), each marked with that reason.
  EXPECT_EQ(live_sets_right, sets - sets_absent) << report;
  size_t import_sets_nft_json_cannot = 0;
  for (const auto& [why, n] : import_set_undecoded) {
    const bool tool = why.rfind("an element with a statement (nft -j", 0) == 0 ||
                      why.rfind("an integer of a typeof set (nft -j", 0) == 0;
    EXPECT_TRUE(tool) << "an imported set left undecoded for a reason other than nft -j's: " << why;
    if (tool) import_sets_nft_json_cannot += n;
  }
  EXPECT_EQ(import_sets_right + import_sets_nft_json_cannot, sets - sets_absent) << report;
  EXPECT_LE(import_sets_nft_json_cannot, 12u) << report;  // 3 and 9 here
  // Every dump nft loads here exports as nft lists it.
  EXPECT_EQ(exported, loaded) << report;
  EXPECT_EQ(export_exact, loaded) << report;
}

}  // namespace
}  // namespace dpscope::test
