// Every dump in fixtures/upstream imported, its counts compared with counts
// this test derives from the text itself (tests/support/save_scan.h, plain
// string scanning) and with the measured table in fixtures/upstream/SOURCES.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "collectors/import/import.h"
#include "tests/support/process.h"
#include "tests/support/save_scan.h"
#include "util/error.h"

namespace dpscope::importer {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::source_path;

std::vector<std::string> upstream_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(source_path("fixtures/upstream/" + dir))) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Chain by chain: names, rule counts, and each rule's target, destination
// and comment as the plain scan reads them.
void expect_matches_scan(const std::vector<model::Table>& tables, const std::string& text, const std::string& file) {
  const auto scanned = test::scan_iptables_save(text);
  ASSERT_EQ(tables.size(), scanned.size()) << file;
  for (size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    const auto& s = scanned[i];
    SCOPED_TRACE(file + " table " + s.name);
    EXPECT_EQ(t.name, s.name);
    std::vector<std::string> names;
    for (const auto& c : t.chains) names.push_back(c.name);
    auto declared = s.chains;
    // Restore input may use a built-in chain without declaring it.
    for (const auto& r : s.rules) {
      if (std::find(declared.begin(), declared.end(), r.chain) == declared.end()) declared.push_back(r.chain);
    }
    std::sort(names.begin(), names.end());
    std::sort(declared.begin(), declared.end());
    EXPECT_EQ(names, declared);
    for (const auto& c : t.chains) {
      EXPECT_EQ(c.rule_count, s.rules_in(c.name)) << c.name;
      EXPECT_EQ(c.rules.size(), c.rule_count) << c.name;
      size_t k = 0;
      for (const auto& r : s.rules) {
        if (r.chain != c.name || k >= c.rules.size()) continue;
        const auto& rule = c.rules[k++];
        EXPECT_EQ(rule.position, k);
        EXPECT_EQ(rule.target, r.target) << c.name << " rule " << k;
        EXPECT_EQ(rule.match.comment, r.comment) << c.name << " rule " << k;
        std::string dest = r.destination;
        if (!dest.empty() && dest.find('/') == std::string::npos) dest += "/32";
        EXPECT_EQ(rule.match.destination ? rule.match.destination->cidr : "", dest) << c.name << " rule " << k;
      }
    }
  }
}

TEST(ImportUpstream, EveryIptablesDumpAgreesWithAPlainScanOfItsText) {
  size_t files = 0;
  for (const auto& suffix : {".saved-nft.txt", ".saved-legacy.txt", ".golden.txt"}) {
    for (const auto& path : upstream_files("kube-proxy-iptables", suffix)) {
      if (path.find("tracepacket") != std::string::npos) continue;  // rejected, see below
      const std::string text = read_text(path);
      IptablesTextOptions o;
      std::vector<model::Table> tables;
      ASSERT_NO_THROW(tables = parse_iptables_save(text, path, o)) << path;
      const auto expected_backend =
          text.find("(nf_tables)") != std::string::npos || path.find("golden") != std::string::npos
              ? model::Backend::IptablesNft
              : model::Backend::IptablesLegacy;
      for (const auto& t : tables) EXPECT_EQ(t.backend, expected_backend) << path;
      expect_matches_scan(tables, text, path);
      ++files;
    }
  }
  EXPECT_GE(files, 12u);
}

TEST(ImportUpstream, UnquotedMultiWordCommentIsRejectedWithItsLine) {
  const auto path = source_path("fixtures/upstream/kube-proxy-iptables/tracepacket-with-builtin-chains.golden.txt");
  try {
    parse_iptables_save(read_text(path), "tracepacket.txt", {});
    FAIL() << "accepted a file iptables-restore rejects";
  } catch (const InputError& e) {
    // iptables-restore: "Bad argument 'health'" on line 11 (SOURCES.md).
    EXPECT_EQ(std::string(e.what()).substr(0, 45), "tracepacket.txt:11: unexpected 'health' where");
  }
}

// One row of a Markdown table in SOURCES.md, by its first cell.
std::vector<std::string> sources_row(const std::string& first_cell) {
  std::istringstream in(read_text(source_path("fixtures/upstream/SOURCES.md")));
  std::string line;
  while (std::getline(in, line)) {
    if (!starts_with(line, "| " + first_cell + " |")) continue;
    std::vector<std::string> cells;
    size_t pos = 1;
    while (pos < line.size()) {
      const size_t next = line.find('|', pos);
      if (next == std::string::npos) break;
      std::string cell = line.substr(pos, next - pos);
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
      pos = next + 1;
    }
    return cells;
  }
  return {};
}

// "52 (51 in the file)" -> 52.
long leading_number(const std::string& cell) {
  size_t i = 0;
  while (i < cell.size() && std::isdigit(static_cast<unsigned char>(cell[i]))) ++i;
  return i == 0 ? -1 : std::stol(cell.substr(0, i));
}

struct IptablesCounts {
  long rules = 0, kube = 0, svc = 0, sep = 0, ext = 0, fw = 0, svl = 0, nat_svc_ips = 0, filter_svc_ips = 0;
};

IptablesCounts counts_of(const std::vector<model::Table>& tables) {
  IptablesCounts c;
  for (const auto& t : tables) {
    for (const auto& ch : t.chains) {
      c.rules += static_cast<long>(ch.rule_count);
      if (starts_with(ch.name, "KUBE-")) ++c.kube;
      if (starts_with(ch.name, "KUBE-SVC-")) ++c.svc;
      if (starts_with(ch.name, "KUBE-SEP-")) ++c.sep;
      if (starts_with(ch.name, "KUBE-EXT-")) ++c.ext;
      if (starts_with(ch.name, "KUBE-FW-")) ++c.fw;
      if (starts_with(ch.name, "KUBE-SVL-")) ++c.svl;
      if (ch.name != "KUBE-SERVICES") continue;
      for (const auto& r : ch.rules) {
        const auto& d = r.match.destination;
        if (!d || d->negated || d->cidr.size() < 3 || d->cidr.compare(d->cidr.size() - 3, 3, "/32") != 0) continue;
        (t.name == "nat" ? c.nat_svc_ips : c.filter_svc_ips) += 1;
      }
    }
  }
  return c;
}

TEST(ImportUpstream, IptablesCountsMatchTheTableInSourcesMd) {
  size_t checked = 0;
  for (const std::string stem : {"overall-iptables-rules", "syncrepeated-step1-two-clusterip",
                                 "syncrepeated-final-fullresync-with-X", "sort-basic-svl-localpolicy"}) {
    const auto row = sources_row(stem);
    ASSERT_EQ(row.size(), 11u) << stem;
    for (const std::string backend : {"nft", "legacy"}) {
      const auto path = source_path("fixtures/upstream/kube-proxy-iptables/" + stem + ".saved-" + backend + ".txt");
      SCOPED_TRACE(path);
      const auto c = counts_of(parse_iptables_save(read_text(path), path, {}));
      EXPECT_EQ(c.rules, leading_number(row[2]));
      EXPECT_EQ(c.kube, leading_number(row[3]));
      EXPECT_EQ(c.svc, leading_number(row[4]));
      EXPECT_EQ(c.sep, leading_number(row[5]));
      EXPECT_EQ(c.ext, leading_number(row[6]));
      EXPECT_EQ(c.fw, leading_number(row[7]));
      EXPECT_EQ(c.svl, leading_number(row[8]));
      EXPECT_EQ(c.nat_svc_ips, leading_number(row[9]));
      EXPECT_EQ(c.filter_svc_ips, leading_number(row[10]));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8u);
}

TEST(ImportUpstream, NftAndLegacySavesOfOneStateImportAlike) {
  for (const auto& nft_path : upstream_files("kube-proxy-iptables", ".saved-nft.txt")) {
    const std::string legacy_path = nft_path.substr(0, nft_path.size() - 8) + "-legacy.txt";
    auto a = parse_iptables_save(read_text(nft_path), nft_path, {});
    auto b = parse_iptables_save(read_text(legacy_path), legacy_path, {});
    auto by_name = [](const model::Table& x, const model::Table& y) { return x.name < y.name; };
    std::sort(a.begin(), a.end(), by_name);
    std::sort(b.begin(), b.end(), by_name);
    ASSERT_EQ(a.size(), b.size()) << nft_path;
    for (size_t i = 0; i < a.size(); ++i) {
      b[i].backend = a[i].backend;
      EXPECT_EQ(a[i], b[i]) << nft_path << " table " << a[i].name;
    }
  }
}

TEST(ImportUpstream, GkeCiliumNodeFromIptablesDashS) {
  const auto filter_path = source_path("fixtures/upstream/cilium/gke-dpv2-cilium-kpr-filter.iptables-S.txt");
  const auto nat_path = source_path("fixtures/upstream/cilium/gke-dpv2-cilium-kpr-nat.iptables-S.txt");
  Importer im;
  im.add_iptables_rules_listing(filter_path, "filter", {});
  im.add_iptables_rules_listing(nat_path, "nat", {});
  const auto s = im.finish("gke");
  // Independent counts: -A and -N lines of the text.
  long a_lines = 0, cilium_n = 0, kube_n = 0;
  for (const auto& path : {filter_path, nat_path}) {
    std::istringstream in(read_text(path));
    std::string line;
    while (std::getline(in, line)) {
      if (starts_with(line, "-A ")) ++a_lines;
      if (starts_with(line, "-N CILIUM_")) ++cilium_n;
      if (starts_with(line, "-N KUBE-")) ++kube_n;
    }
  }
  long rules = 0, cilium = 0, kube = 0;
  for (const auto& t : s.netfilter.tables) {
    for (const auto& c : t.chains) {
      rules += static_cast<long>(c.rule_count);
      cilium += starts_with(c.name, "CILIUM_");
      kube += starts_with(c.name, "KUBE-");
    }
  }
  EXPECT_EQ(rules, a_lines);
  EXPECT_EQ(cilium, cilium_n);
  EXPECT_EQ(kube, kube_n);
  // SOURCES.md: 58 -A rules; CILIUM_ chains 6; KUBE- chains 3.
  EXPECT_EQ(rules, 58);
  EXPECT_EQ(cilium, 6);
  EXPECT_EQ(kube, 3);

  // The same node replayed into a netns and saved: the same tables, rule by rule.
  const auto replayed_path = source_path("fixtures/upstream/cilium/gke-dpv2-cilium-kpr.replayed.saved-nft.txt");
  auto replayed = parse_iptables_save(read_text(replayed_path), replayed_path, {});
  for (const auto& t : s.netfilter.tables) {
    auto it = std::find_if(replayed.begin(), replayed.end(), [&](const model::Table& r) { return r.name == t.name; });
    ASSERT_NE(it, replayed.end()) << t.name;
    for (auto& c : it->chains) c.policy_counters.reset();  // -S prints no counters
    auto sorted = *it;
    model::Snapshot tmp;
    tmp.netfilter.tables = {sorted};
    model::canonicalize(tmp);
    EXPECT_EQ(tmp.netfilter.tables[0], t) << t.name;
  }
}

// ---------------------------------------------------------------- nft -j

TEST(ImportUpstream, NftJsonAgreesWithNftListText) {
  size_t files = 0;
  for (const auto& path : upstream_files("kube-proxy-nftables", ".listed-ruleset.json")) {
    SCOPED_TRACE(path);
    const auto tables = parse_nft_json(read_text(path), path);
    ASSERT_EQ(tables.size(), 1u);
    const auto& t = tables[0];
    EXPECT_EQ(t.backend, model::Backend::Nftables);
    EXPECT_EQ(t.name, "kube-proxy");
    const auto listing = path.substr(0, path.size() - 5) + ".nft";
    const auto c = test::scan_nft_listing(read_text(listing));
    long chains = 0, hooked = 0, rules = 0;
    for (const auto& ch : t.chains) {
      ++chains;
      hooked += ch.base.has_value();
      rules += static_cast<long>(ch.rule_count);
      EXPECT_EQ(ch.rules.size(), ch.rule_count);
    }
    EXPECT_EQ(chains, c.chains);
    EXPECT_EQ(hooked, c.hooked);
    EXPECT_EQ(rules, c.rules);
    ASSERT_EQ(t.sets.size(), c.elements.size());
    for (const auto& set : t.sets) {
      ASSERT_TRUE(c.elements.count(set.name)) << set.name;
      EXPECT_EQ(static_cast<long>(set.element_count), c.elements.at(set.name)) << set.name;
      // Each key as nft prints it appears in the listing.
      const auto text = read_text(listing);
      for (const auto& e : set.elements) EXPECT_NE(text.find(e.key), std::string::npos) << e.key;
    }
    // SOURCES.md: "chains (hooked)" and "rules" columns.
    const std::string stem = fs::path(path).filename().string();
    const auto row = sources_row(stem.substr(0, stem.find(".listed")) + ".golden.nft");
    ASSERT_EQ(row.size(), 7u);
    EXPECT_EQ(chains, leading_number(row[4]));
    EXPECT_EQ(hooked, leading_number(row[4].substr(row[4].find('(') + 1)));
    EXPECT_EQ(rules, leading_number(row[5]));
    // "service-ips 9, service-nodeports 3, ...": each "NAME N" pair whose NAME is a set here.
    std::istringstream pairs(row[6]);
    std::string word, previous;
    size_t matched = 0;
    while (pairs >> word) {
      const long n = leading_number(word);
      for (const auto& set : t.sets) {
        if (n >= 0 && set.name == previous) {
          EXPECT_EQ(static_cast<long>(set.element_count), n) << set.name;
          ++matched;
        }
      }
      previous = word;
    }
    EXPECT_GE(matched, 3u);
    ++files;
  }
  EXPECT_EQ(files, 3u);
}

TEST(ImportUpstream, KubeProxyServiceIpsMapElements) {
  const auto path = source_path("fixtures/upstream/kube-proxy-nftables/overall-nftables-rules.listed-ruleset.json");
  const auto t = parse_nft_json(read_text(path), path).at(0);
  const auto it = std::find_if(t.sets.begin(), t.sets.end(), [](const model::NftSet& s) { return s.name == "service-ips"; });
  ASSERT_NE(it, t.sets.end());
  EXPECT_TRUE(it->is_map);
  EXPECT_EQ(it->data_type, "verdict");
  ASSERT_EQ(it->element_count, 9u);
  bool found = false;
  for (const auto& e : it->elements) {
    if (e.key == "172.30.0.41 . tcp . 80") {
      EXPECT_EQ(e.value, "goto service-ULMVA6XW-ns1/svc1/tcp/p80");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace dpscope::importer
