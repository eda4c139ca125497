// IP sets, live: kube-router's `ipset save` test data (fixtures/upstream/dataplanes/,
// SOURCES.md) restored into a dps-* namespace with the real ipset(8), snapshotted
// through the kernel's ipset netlink subsystem (libipset), and compared set by
// set, member by member with what `ipset save` and `ipset list` print about the
// same namespace; the import of that `ipset save` output equals the live section.
#include <gtest/gtest.h>

#include <filesystem>

#include <map>
#include <sstream>

#include "analysis/check.h"
#include "analysis/where.h"
#include "tests/integration/netfilter_support.h"

namespace dpscope::test {
namespace {

struct SavedSet {
  std::string type, header;
  std::vector<std::pair<std::string, std::string>> members;  // entry, options
};

// `ipset save` read the plain way: "create NAME TYPE HEADER", "add NAME ENTRY OPTIONS".
std::map<std::string, SavedSet> scan_save(const std::string& text) {
  std::map<std::string, SavedSet> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::string verb, name, third, rest;
    w >> verb >> name >> third;
    std::getline(w, rest);
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    if (verb == "create") out[name] = {third, rest, {}};
    if (verb == "add") out[name].members.push_back({third, rest});
  }
  return out;
}

// "Name:", "Type:" and "Number of entries:" of each set in `ipset list`.
std::map<std::string, std::pair<std::string, size_t>> scan_list(const std::string& text) {
  std::map<std::string, std::pair<std::string, size_t>> out;
  std::istringstream in(text);
  std::string name;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Name: ", 0) == 0) name = line.substr(6);
    if (line.rfind("Type: ", 0) == 0) out[name].first = line.substr(6);
    if (line.rfind("Number of entries: ", 0) == 0) out[name].second = std::stoul(line.substr(19));
  }
  return out;
}

model::Snapshot import_save(const std::string& save, const TempDir& dir) {
  write_text(dir.file("ipset-save.txt"), save);
  const auto r = run({dpscope_bin(), "import", "--ipset-save", dir.file("ipset-save.txt"), "-o", dir.file("imp.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model::load_snapshot(dir.file("imp.json"));
}

TEST(IpsetLive, KubeRouterSetsEqualIpsetSaveAndList) {
  DPS_REQUIRE_ROOT();
  Netns ns("ipset");
  TempDir dir;
  ns.sh("ipset restore", read_text(source_path("fixtures/upstream/dataplanes/kube-router-ipset-test-1.ipset-save.txt")));
  // Header flags the kube-router sets do not use: counters, comments, a list:set.
  ns.sh("ipset restore",
        "create dps-flags hash:ip,port family inet hashsize 64 maxelem 128 counters comment\n"
        "add dps-flags 10.96.0.10,udp:53 packets 0 bytes 0 comment \"kube-system/kube-dns:dns\"\n"
        "create dps-list list:set size 8\nadd dps-list kube-router-svip\n");
  const auto live = nf::live_snapshot(ns, dir);
  const std::string save = ns.sh("ipset save");
  const auto saved = scan_save(save);
  const auto listed = scan_list(ns.sh("ipset list"));
  ASSERT_TRUE(live.ipsets.collected);
  ASSERT_EQ(live.ipsets.sets.size(), saved.size());
  EXPECT_EQ(saved.size(), 19u);  // 17 kube-router sets (SOURCES.md) + 2
  size_t members = 0;
  for (const auto& set : live.ipsets.sets) {
    SCOPED_TRACE(set.name);
    ASSERT_TRUE(saved.count(set.name));
    const auto& want = saved.at(set.name);
    EXPECT_EQ(set.type, want.type);
    EXPECT_EQ(set.header, want.header);
    EXPECT_EQ(set.type, listed.at(set.name).first);
    EXPECT_EQ(set.member_count, listed.at(set.name).second);
    ASSERT_EQ(set.members.size(), want.members.size());
    for (size_t i = 0; i < set.members.size(); ++i) {
      EXPECT_EQ(set.members[i].entry, want.members[i].first);
      EXPECT_EQ(set.members[i].options, want.members[i].second);
    }
    members += set.members.size();
  }
  EXPECT_GT(members, 40u);
  const auto* flags = model::find_ipset(live.ipsets, "dps-flags");
  ASSERT_TRUE(flags);
  EXPECT_TRUE(flags->counters && flags->comment);
  EXPECT_EQ(flags->hashsize, 64u);
  EXPECT_EQ(flags->maxelem, 128u);
  EXPECT_EQ(flags->family, "inet");
  EXPECT_EQ(model::find_ipset(live.ipsets, "kube-router-svip")->timeout, 0u);
  // Live equals the import of what ipset save printed.
  EXPECT_EQ(live.ipsets, import_save(save, dir).ipsets);
  // kube-router's service-IP sets make it the node's service proxy, Services in IPVS.
  const auto a = analysis::analyze(live);
  EXPECT_EQ(a.mode.id, "kube-router") << a.mode.label;
  // Its Services would be in IPVS: this kernel has none, and the gate says so.
  const auto gate = analysis::check(live, "kube-router");
  std::vector<std::string> problems;
  for (const auto& p : gate.problems) problems.push_back(p.id);
  if (std::filesystem::exists("/sys/module/ip_vs")) {
    EXPECT_EQ(problems, std::vector<std::string>{"ipvs-empty"});
  } else {
    EXPECT_EQ(problems, std::vector<std::string>{"ipvs-not-loaded"});
  }
  // `where` finds an address in the members: exact, with its port, or inside a prefix.
  auto sets_of = [&](const std::string& q) {
    std::set<std::string> out;
    for (const auto& p : analysis::find_address(live, analysis::parse_address_query(q))) {
      if (p.dataplane == "ipset") out.insert(p.set + " " + p.detail.substr(0, p.detail.find(' ')));
    }
    return out;
  };
  EXPECT_EQ(sets_of("10.96.0.1:443"),
            (std::set<std::string>{"kube-router-svip 10.96.0.1", "kube-router-svip-prt 10.96.0.1,tcp:443"}));
  EXPECT_EQ(sets_of("10.96.0.1:444"), (std::set<std::string>{"kube-router-svip 10.96.0.1"}));
  EXPECT_EQ(sets_of("10.242.0.77"), (std::set<std::string>{"kube-router-pod-subnets 10.242.0.0/24"}));
  EXPECT_EQ(sets_of("10.242.0.5"), (std::set<std::string>{"KUBE-DST-IZ5JGF4W6BKI7CEV 10.242.0.5", "KUBE-DST-P226T6HGLTLDGDLC 10.242.0.5",
                                                     "kube-router-pod-subnets 10.242.0.0/24"}));
}

TEST(IpsetLive, NoSetsIsAnEmptySectionNotAnError) {
  DPS_REQUIRE_ROOT();
  Netns ns("ipset0");
  TempDir dir;
  const auto live = nf::live_snapshot(ns, dir);
  EXPECT_TRUE(live.ipsets.collected);
  EXPECT_TRUE(live.ipsets.sets.empty());
  EXPECT_EQ(ns.sh("ipset save"), "");
}

}  // namespace
}  // namespace dpscope::test
