// The ipsets section: `ipset save` text parsed (header fields, member options
// with quoted comments, inet6: names), its JSON form round-trips, bad input names
// its line, and a snapshot holding the section is written as v2.1.
#include <gtest/gtest.h>

#include "model/ipset.h"
#include "model/json.h"
#include "model/snapshot.h"
#include "util/error.h"

namespace dpscope::model {
namespace {

const char* kSave =
    "create inet6:kube-router-node-ips hash:ip family inet6 hashsize 1024 maxelem 65536 timeout 0 bucketsize 12 "
    "initval 0xc1c0ab78\n"
    "add inet6:kube-router-node-ips 2001:db8:ca2:2::2ca1 timeout 0\n"
    "create kube-router-svip-prt hash:ip,port family inet hashsize 1024 maxelem 65536 timeout 0 bucketsize 12 "
    "initval 0xc5567ea9\n"
    "add kube-router-svip-prt 10.96.0.1,tcp:443 timeout 0\n"
    "\n"
    "create f hash:net family inet hashsize 64 maxelem 8 counters comment skbinfo forceadd\n"
    "add f 10.0.0.0/24 packets 1 bytes 60 comment \"a b  c\"\n"
    "create l list:set size 8\n"
    "add l f\n";

TEST(ModelIpset, ParsesSaveText) {
  const Ipsets s = parse_ipset_save(kSave, "save.txt");
  ASSERT_TRUE(s.collected);
  ASSERT_EQ(s.sets.size(), 4u);  // sorted by name
  EXPECT_EQ(s.sets[0].name, "f");
  EXPECT_EQ(s.sets[1].name, "inet6:kube-router-node-ips");
  const Ipset& f = s.sets[0];
  EXPECT_EQ(f.type, "hash:net");
  EXPECT_EQ(f.family, "inet");
  EXPECT_EQ(f.hashsize, 64u);
  EXPECT_EQ(f.maxelem, 8u);
  EXPECT_FALSE(f.timeout);
  EXPECT_TRUE(f.counters && f.comment && f.skbinfo && f.forceadd);
  ASSERT_EQ(f.members.size(), 1u);
  EXPECT_EQ(f.members[0].entry, "10.0.0.0/24");
  EXPECT_EQ(f.members[0].options, "packets 1 bytes 60 comment \"a b  c\"");
  const Ipset& v6 = s.sets[1];
  EXPECT_EQ(v6.family, "inet6");
  EXPECT_EQ(v6.timeout, 0u);
  EXPECT_EQ(v6.header, "family inet6 hashsize 1024 maxelem 65536 timeout 0 bucketsize 12 initval 0xc1c0ab78");
  const Ipset* l = find_ipset(s, "l");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->family, "");
  EXPECT_EQ(l->members[0].entry, "f");
  EXPECT_EQ(find_ipset(s, "kube-router-svip-prt")->members[0].entry, "10.96.0.1,tcp:443");
}

TEST(ModelIpset, JsonRoundTripAndSchemaV2_1) {
  Snapshot snap;
  snap.ipsets = parse_ipset_save(kSave, "save.txt");
  const auto j = to_json(snap);
  EXPECT_EQ(j["schema"], kSchemaV2_1);
  EXPECT_EQ(from_json(j, "x.json").ipsets, snap.ipsets);
  // Without the section a snapshot stays v2.
  EXPECT_EQ(to_json(Snapshot{})["schema"], kSchema);
  EXPECT_FALSE(to_json(Snapshot{}).contains("ipsets"));
}

TEST(ModelIpset, BadLinesNameTheirLine) {
  try {
    parse_ipset_save("create a hash:ip\nflush a\n", "in.txt");
    FAIL() << "accepted a flush line";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("in.txt:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_ipset_save("add a 1.2.3.4\n", "in.txt"), InputError);
  EXPECT_THROW(from_json(nlohmann::json::parse(R"({"schema":"dpscope.snapshot/v2.1","ipsets":{"sets":[{"name":1}]}})"),
                         "x.json"),
               InputError);
}

}  // namespace
}  // namespace dpscope::model
