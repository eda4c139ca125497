// The bpftool -j importer on the real Cilium node dump (fixtures/upstream/bpftool):
// inventory and memory must match what the JSON says, counted here independently.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "collectors/import/bpftool.h"
#include "tests/support/process.h"
#include "util/error.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

const std::string kProgs = "fixtures/upstream/bpftool/cilium-prog_show.json";
const std::string kMaps = "fixtures/upstream/bpftool/cilium-map_show.json";
const std::string kNet = "fixtures/upstream/bpftool/cilium-net_show.json";

json load(const std::string& rel) { return json::parse(read_text(source_path(rel))); }

TEST(BpftoolImport, CiliumNodeProgramsAndMemory) {
  const json raw = load(kProgs);
  const auto progs = importer::parse_bpftool_progs(read_text(source_path(kProgs)), kProgs);
  ASSERT_EQ(progs.size(), raw.size());
  uint64_t want_memlock = 0, got_memlock = 0;
  std::map<std::string, int> want_types, got_types;
  for (const auto& p : raw) {
    want_memlock += p.at("bytes_memlock").get<uint64_t>();
    ++want_types[p.at("type").get<std::string>()];
  }
  for (size_t i = 0; i < progs.size(); ++i) {
    got_memlock += progs[i].bytes_memlock;
    ++got_types[progs[i].type];
    EXPECT_EQ(progs[i].id, raw[i].at("id").get<uint32_t>());
    EXPECT_EQ(progs[i].name, raw[i].at("name").get<std::string>());
    EXPECT_EQ(progs[i].tag, raw[i].at("tag").get<std::string>());
    EXPECT_EQ(progs[i].map_ids, raw[i].value("map_ids", std::vector<uint32_t>{}));
    EXPECT_EQ(progs[i].bytes_xlated, raw[i].at("bytes_xlated").get<uint32_t>());
    EXPECT_EQ(progs[i].btf_id, raw[i].value("btf_id", 0u));
    EXPECT_TRUE(std::regex_match(progs[i].loaded_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
        << progs[i].loaded_at;
    EXPECT_FALSE(progs[i].run_cnt.has_value());  // stats were off on that node
  }
  EXPECT_EQ(got_memlock, want_memlock);
  EXPECT_EQ(got_types, want_types);
}

TEST(BpftoolImport, CiliumNodeMapsAndMemory) {
  const json raw = load(kMaps);
  const auto maps = importer::parse_bpftool_maps(read_text(source_path(kMaps)), kMaps);
  ASSERT_EQ(maps.size(), raw.size());
  uint64_t want_memlock = 0, got_memlock = 0;
  for (const auto& m : raw) want_memlock += m.at("bytes_memlock").get<uint64_t>();
  for (size_t i = 0; i < maps.size(); ++i) {
    got_memlock += maps[i].bytes_memlock;
    EXPECT_EQ(maps[i].id, raw[i].at("id").get<uint32_t>());
    EXPECT_EQ(maps[i].type, raw[i].at("type").get<std::string>());
    EXPECT_EQ(maps[i].name, raw[i].at("name").get<std::string>());
    EXPECT_EQ(maps[i].key_size, raw[i].at("bytes_key").get<uint32_t>());
    EXPECT_EQ(maps[i].value_size, raw[i].at("bytes_value").get<uint32_t>());
    EXPECT_EQ(maps[i].max_entries, raw[i].at("max_entries").get<uint32_t>());
    EXPECT_EQ(maps[i].flags, raw[i].at("flags").get<uint32_t>());
    // bpftool map show has no entry counts: never a made-up zero.
    EXPECT_FALSE(maps[i].entries.has_value());
    EXPECT_FALSE(maps[i].entries_note.empty());
  }
  EXPECT_EQ(got_memlock, want_memlock);
}

TEST(BpftoolImport, CiliumNodeTcAttachments) {
  const json raw = load(kNet);
  const auto att = importer::parse_bpftool_net(read_text(source_path(kNet)), kNet);
  const json& tc = raw.at(0).at("tc");
  ASSERT_EQ(att.size(), tc.size() + raw.at(0).at("xdp").size());
  for (size_t i = 0; i < tc.size(); ++i) {
    EXPECT_EQ(att[i].kind, "tc");
    EXPECT_EQ(att[i].target, tc[i].at("devname").get<std::string>());
    EXPECT_EQ("clsact/" + att[i].direction, tc[i].at("kind").get<std::string>());
    EXPECT_EQ(att[i].prog_id, tc[i].at("id").get<uint32_t>());
    EXPECT_EQ(att[i].prog_name, tc[i].at("name").get<std::string>());
  }
}

TEST(BpftoolImport, WholeImportFillsTheEbpfSection) {
  importer::BpftoolImport im;
  im.add_progs(source_path(kProgs));
  im.add_maps(source_path(kMaps));
  model::Snapshot snap;
  im.finish(snap);
  EXPECT_TRUE(snap.ebpf.collected);
  EXPECT_EQ(snap.ebpf.programs.size(), load(kProgs).size());
  EXPECT_EQ(snap.ebpf.maps.size(), load(kMaps).size());
  // No net input: attachments are unknown, not empty; the listed service maps'
  // entries were not imported, not 0.
  ASSERT_EQ(snap.unavailable.size(), 2u);
  EXPECT_EQ(snap.unavailable[1].section, "ebpf.attachments");
  EXPECT_EQ(snap.unavailable[0].section, "ebpf.services");
  EXPECT_EQ(snap.unavailable[0].reason.rfind("not imported: `bpftool map show` lists the service maps (", 0), 0u);
}

TEST(BpftoolImport, NewerBpftoolTcxAndXdpEntries) {
  const std::string text = R"([{"xdp":[{"devname":"eth0","ifindex":2,"mode":"driver","id":7}],
    "tc":[{"devname":"eth0","ifindex":2,"kind":"tcx/ingress","name":"cil_from_netdev","prog_id":9,
           "prog_flags":[],"link_id":4,"link_flags":[]}],"flow_dissector":[],"netfilter":[]}])";
  const auto att = importer::parse_bpftool_net(text, "net.json");
  ASSERT_EQ(att.size(), 2u);
  EXPECT_EQ(att[0].kind, "xdp");
  EXPECT_EQ(att[0].direction, "driver");
  EXPECT_EQ(att[0].prog_id, 7u);
  EXPECT_EQ(att[1].kind, "tcx");
  EXPECT_EQ(att[1].direction, "ingress");
  EXPECT_EQ(att[1].prog_id, 9u);
  EXPECT_EQ(att[1].link_id, 4u);
}

void expect_input_error(const std::string& text, const std::string& needle, size_t line) {
  try {
    importer::parse_bpftool_maps(text, "maps.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "maps.json");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BpftoolImport, BadInputNamesFileAndLine) {
  expect_input_error("", "empty", 0);
  expect_input_error("[{\"id\": 1,\n \"type\": \"hash\"", "invalid JSON", 2);
  expect_input_error("{\"id\": 1}", "JSON array", 1);
  expect_input_error("[\n{\"id\": 1, \"type\": \"hash\", \"bytes_key\": 4, \"bytes_value\": 4, \"max_entries\": 1},\n"
                     "{\"id\": 2, \"type\": \"hash\", \"bytes_value\": 4, \"max_entries\": 1}\n]",
                     "missing \"bytes_key\"", 3);
  expect_input_error("[{\"id\": -1, \"type\": \"hash\"}]", "non-negative", 1);
  expect_input_error("[{\"id\": 1, \"type\": \"hash\", \"bytes_key\": \"4\"}]", "bytes_key", 1);
  expect_input_error("[{\"id\": 1, \"type\": \"hash\", \"bytes_key\": 4, \"bytes_value\": 4, \"max_entries\": 1, "
                     "\"pinned\": \"/sys/fs/bpf/x\"}]",
                     "pinned", 1);
  EXPECT_THROW(importer::parse_bpftool_progs("[{\"type\": \"xdp\"}]", "p.json"), InputError);
  EXPECT_THROW(importer::parse_bpftool_net("[{\"tc\": [{\"devname\": \"eth0\", \"kind\": \"ingress\", \"id\": 1}]}]",
                                           "n.json"),
               InputError);
}

}  // namespace
}  // namespace dpscope::test
