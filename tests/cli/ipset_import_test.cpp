// dpscope import --ipset-save: kube-router's `ipset save` test data
// (fixtures/upstream/dataplanes/, SOURCES.md) becomes the ipsets section, set by
// set as the file says; bad input is FILE:LINE and exit 2; the mode follows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::string kSave = "fixtures/upstream/dataplanes/kube-router-ipset-test-1.ipset-save.txt";

TEST(IpsetImport, KubeRouterSaveFileSetBySet) {
  TempDir dir;
  auto r = run({dpscope_bin(), "import", "--ipset-save", source_path(kSave), "-o", dir.file("s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = json::parse(read_text(dir.file("s.json")));
  // A snapshot with the section is v2.1 (docs/snapshot-schema.md).
  EXPECT_EQ(s["schema"], "dpscope.snapshot/v2.1");
  ASSERT_TRUE(s["ipsets"]["collected"]);
  // What the file says, counted here from its lines.
  std::map<std::string, size_t> adds;
  std::map<std::string, std::string> types;
  std::istringstream in(read_text(source_path(kSave)));
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::string verb, name, third;
    w >> verb >> name >> third;
    if (verb == "create") types[name] = third, adds[name];
    if (verb == "add") adds[name] += 1;
  }
  ASSERT_EQ(s["ipsets"]["sets"].size(), types.size());
  EXPECT_EQ(types.size(), 17u);
  for (const auto& set : s["ipsets"]["sets"]) {
    const std::string name = set["name"];
    EXPECT_EQ(set["type"], types.at(name)) << name;
    EXPECT_EQ(set["member_count"], adds.at(name)) << name;
    EXPECT_EQ(set["members"].size(), adds.at(name)) << name;
  }
  // The service-IP sets: kube-router is the service proxy, its Services in IPVS.
  auto check = run({dpscope_bin(), "check", dir.file("s.json"), "--expect", "kube-router", "--format", "json"});
  const json c = json::parse(check.out)["results"][0];
  // Netfilter was not imported: kube-proxy is not ruled out, and the gate does not pass.
  EXPECT_EQ(c["detected_mode"], "kube-router-unconfirmed");
  EXPECT_EQ(check.exit_code, 1);
  auto cmp = run({dpscope_bin(), "compare", dir.file("s.json"), dir.file("s.json"), "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const json j = json::parse(cmp.out);
  std::string ev;
  for (const auto& e : j["sides"][0]["evidence"]) ev += e.get<std::string>() + "\n";
  EXPECT_NE(ev.find("kube-router: 4 ipsets kube-router-svip*"), std::string::npos) << ev;
  EXPECT_NE(ev.find("services handled by kube-router in IPVS; not visible here"), std::string::npos) << ev;
}

TEST(IpsetImport, BadInputIsFileLineAndExitTwo) {
  TempDir dir;
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"create a hash:ip family inet\nadd b 10.0.0.1\n", ":2: `add` to set \"b\", which no `create` line made"},
                        Case{"create a hash:ip\ncreate a hash:ip\n", ":2: set \"a\" is created twice"},
                        Case{"create a hash:ip\n-A INPUT -j ACCEPT\n", ":2: not an `ipset save` line"},
                        Case{"create a\n", ":1: `create` needs a set name and a type"}}) {
    write_text(dir.file("bad.txt"), c.text);
    auto r = run({dpscope_bin(), "import", "--ipset-save", dir.file("bad.txt"), "-o", dir.file("o.json")});
    EXPECT_EQ(r.exit_code, 2) << c.text;
    EXPECT_NE(r.err.find(dir.file("bad.txt") + c.message), std::string::npos) << r.err;
  }
  // No sets: ipset save prints nothing, and that is a complete, empty section.
  write_text(dir.file("empty.txt"), "");
  auto r = run({dpscope_bin(), "import", "--ipset-save", dir.file("empty.txt"), "-o", dir.file("e.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(read_text(dir.file("e.json")))["ipsets"]["sets"].empty());
}

}  // namespace
}  // namespace dpscope::test
