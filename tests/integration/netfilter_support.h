// Helpers of the live netfilter tests: snapshot a dps-* namespace with the
// real binary, import what the standard tools print for the same namespace,
// and compare the two table by table, chain by chain, rule by rule.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/netfilter/nft_native.h"
#include "collectors/netfilter/xt.h"
#include "model/json.h"
#include "model/snapshot.h"
#include "tests/support/kernel.h"
#include "tests/support/process.h"

namespace dpscope::test::nf {

inline std::string gen_script() { return source_path("fixtures/scenarios/gen-kube-proxy.sh"); }

// `dpscope snapshot --netns NS --no-ebpf`; fails the test unless it exits 0.
inline model::Snapshot live_snapshot(const Netns& ns, const TempDir& dir, const std::vector<std::string>& extra = {}) {
  const std::string out = dir.file("live.json");
  std::vector<std::string> argv = {dpscope_bin(), "snapshot", "--netns", ns.name(), "--no-ebpf", "-q", "-o", out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const RunResult r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model::load_snapshot(out);
}

// The standard tools' view of the namespace, as text files, and its import.
struct ToolView {
  std::string nft_save, legacy_save, nft6_save, legacy6_save, nft_json, ipset_save;
  model::Snapshot imported;
};

inline ToolView tool_view(const Netns& ns, const TempDir& dir) {
  ToolView v;
  v.nft_save = ns.sh("iptables-nft-save");
  v.legacy_save = ns.sh("iptables-legacy-save");
  v.nft6_save = ns.sh("ip6tables-nft-save");
  v.legacy6_save = ns.sh("ip6tables-legacy-save");
  v.nft_json = ns.sh("nft -j list ruleset");
  v.ipset_save = ns.sh("ipset save");
  std::vector<std::string> argv = {dpscope_bin(), "import"};
  auto add = [&](const std::string& option, const std::string& name, const std::string& text) {
    if (text.find("COMMIT") == std::string::npos && option != "--nft-json") return;  // nothing of that kind
    write_text(dir.file(name), text);
    argv.push_back(option);
    argv.push_back(dir.file(name));
  };
  add("--iptables-save", "nft.txt", v.nft_save);
  add("--iptables-legacy-save", "legacy.txt", v.legacy_save);
  add("--ip6tables-save", "nft6.txt", v.nft6_save);
  add("--ip6tables-legacy-save", "legacy6.txt", v.legacy6_save);
  add("--nft-json", "nft.json", v.nft_json);
  write_text(dir.file("ipset.txt"), v.ipset_save);  // empty when there are none: still a (complete) section
  argv.insert(argv.end(), {"--ipset-save", dir.file("ipset.txt")});
  argv.push_back("-o");
  argv.push_back(dir.file("import.json"));
  const RunResult r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  v.imported = model::load_snapshot(dir.file("import.json"));
  return v;
}

inline std::string table_key(const model::Table& t) {
  return std::string(model::to_string(t.backend)) + " " + t.family + " " + t.name;
}

// Rule fields except the volatile counters.
inline std::string rule_text(const model::Rule& r) {
  std::ostringstream o;
  const auto& m = r.match;
  o << "src=" << (m.source ? (m.source->negated ? "!" : "") + m.source->cidr : "-")
    << " dst=" << (m.destination ? (m.destination->negated ? "!" : "") + m.destination->cidr : "-")
    << " p=" << (m.protocol_negated ? "!" : "") << m.protocol << " dport=" << (m.dport_negated ? "!" : "") << m.dport
    << " comment=[" << m.comment << "] modules=";
  for (const auto& mod : m.modules) o << mod << ",";
  o << " " << r.verdict_kind << " " << r.target;
  o << " args=[" << r.target_args << "] text=[" << r.text << "]";
  // Not `raw`: it is each source's own rendering (libnftnl's text live, the
  // statements as given in an import).
  if (r.undecoded) o << " UNDECODED";
  return o.str();
}

// A live rule whose text was left out by design: a light snapshot does not
// read anonymous set elements (the default does), and nft prints them inside
// the rule.
inline bool text_needs_rules_flag(const model::Rule& r) {
  return r.undecoded && r.text.empty() &&
         r.raw.rfind(std::string("text not printed (") + netfilter::kAnonymousElementsUnread + ")", 0) == 0;
}

// The rule record without its text, for a rule whose text one side left out by design.
inline std::string rule_text_without_text(model::Rule r) {
  r.text.clear();
  r.undecoded = false;
  return rule_text(r);
}

// Live equals import: every table, chain (base, rule count), rule record and set.
inline void expect_same_netfilter(const model::Snapshot& live, const model::Snapshot& imported) {
  std::map<std::string, const model::Table*> a, b;
  for (const auto& t : live.netfilter.tables) a[table_key(t)] = &t;
  for (const auto& t : imported.netfilter.tables) b[table_key(t)] = &t;
  std::set<std::string> ka, kb;
  for (const auto& [k, t] : a) ka.insert(k);
  for (const auto& [k, t] : b) kb.insert(k);
  ASSERT_EQ(ka, kb) << "tables differ";
  size_t reported = 0;
  for (const auto& [key, lt] : a) {
    const model::Table& it = *b.at(key);
    std::set<std::string> lc, ic;
    for (const auto& c : lt->chains) lc.insert(c.name);
    for (const auto& c : it.chains) ic.insert(c.name);
    EXPECT_EQ(lc, ic) << key << ": chains differ";
    for (const auto& c : lt->chains) {
      const model::Chain* ichain = model::find_chain(it, c.name);
      if (ichain == nullptr) continue;
      EXPECT_EQ(c.base, ichain->base) << key << " " << c.name;
      EXPECT_EQ(c.rule_count, ichain->rule_count) << key << " " << c.name;
      if (!ichain->rules_recorded) continue;
      ASSERT_EQ(c.rules.size(), ichain->rules.size()) << key << " " << c.name;
      for (size_t i = 0; i < c.rules.size(); ++i) {
        EXPECT_EQ(c.rules[i].position, ichain->rules[i].position);
        const bool by_design = text_needs_rules_flag(c.rules[i]);
        const std::string l = by_design ? rule_text_without_text(c.rules[i]) : rule_text(c.rules[i]);
        const std::string r = by_design ? rule_text_without_text(ichain->rules[i]) : rule_text(ichain->rules[i]);
        if (l != r && reported++ < 20) {
          ADD_FAILURE() << key << " " << c.name << " rule " << i + 1 << "\n live:   " << l << "\n import: " << r;
        }
      }
    }
    // Elements as a multiset: a hash set lists them in its buckets' order, and
    // the kernel's deferred rehash after a load can change it between two dumps.
    // A live snapshot with --light leaves a dynamic set's elements unread
    // (elements_unread); the import of nft -j has them: compare the rest.
    auto unordered = [&](std::vector<model::NftSet> sets) {
      for (auto& set : sets) {
        // What nft -j cannot carry: the declaration (typeof, auto-merge,
        // policy) and the handle are live-only (snapshot schema v2.3).
        set.declaration.reset();
        set.handle = 0;
        auto live_set = std::find_if(lt->sets.begin(), lt->sets.end(), [&](const auto& l) { return l.name == set.name; });
        if (live_set != lt->sets.end() && !live_set->elements_unread.empty()) {
          set.elements.clear();
          set.element_count = 0;
          set.elements_recorded = false;
          set.elements_unread = live_set->elements_unread;
        }
        std::sort(set.elements.begin(), set.elements.end(), [](const auto& x, const auto& y) {
          return std::tie(x.key, x.value, x.comment) < std::tie(y.key, y.value, y.comment);
        });
      }
      return sets;
    };
    EXPECT_EQ(unordered(lt->sets), unordered(it.sets)) << key << ": sets differ";
  }
}

// Rule counts per (table, chain) counted straight from iptables-save text.
inline std::map<std::string, size_t> save_rule_counts(const std::string& save) {
  std::map<std::string, size_t> counts;
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    if (line.rfind(":", 0) == 0) counts[table + " " + line.substr(1, line.find(' ') - 1)] += 0;
    if (line.rfind("-A ", 0) == 0) counts[table + " " + line.substr(3, line.find(' ', 3) - 3)]++;
  }
  return counts;
}

// The same counts from a snapshot, for one backend and family.
inline std::map<std::string, size_t> live_rule_counts(const model::Snapshot& s, model::Backend backend,
                                                      const std::string& family) {
  std::map<std::string, size_t> counts;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend != backend || t.family != family) continue;
    for (const auto& c : t.chains) counts[t.name + " " + c.name] = c.rule_count;
  }
  return counts;
}

// ClusterIP /32 destinations of nat KUBE-SERVICES, from iptables-save text.
inline std::multiset<std::string> save_service_ips(const std::string& save) {
  std::multiset<std::string> ips;
  std::istringstream in(save);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("*", 0) == 0) table = line.substr(1);
    if (table != "nat" || line.rfind("-A KUBE-SERVICES ", 0) != 0) continue;
    const auto d = line.find(" -d ");
    if (d == std::string::npos) continue;
    const std::string cidr = line.substr(d + 4, line.find(' ', d + 4) - d - 4);
    if (cidr.size() > 3 && cidr.compare(cidr.size() - 3, 3, "/32") == 0) ips.insert(cidr);
  }
  return ips;
}

inline std::multiset<std::string> live_service_ips(const model::Snapshot& s, model::Backend backend) {
  std::multiset<std::string> ips;
  const model::Table* t = model::find_table(s, backend, "ip", "nat");
  if (t == nullptr) return ips;
  const model::Chain* c = model::find_chain(*t, "KUBE-SERVICES");
  if (c == nullptr) return ips;
  for (const auto& r : c->rules) {
    if (r.match.destination && !r.match.destination->negated && r.match.destination->cidr.size() > 3 &&
        r.match.destination->cidr.compare(r.match.destination->cidr.size() - 3, 3, "/32") == 0) {
      ips.insert(r.match.destination->cidr);
    }
  }
  return ips;
}

}  // namespace dpscope::test::nf
