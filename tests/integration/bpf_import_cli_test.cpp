// `dpscope import --bpftool-prog/--bpftool-map/--bpftool-net` through the real
// binary, on the real Cilium node dump (needs no root).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

TEST(BpftoolImportCli, CiliumNodeInventoryAndMemory) {
  TempDir dir;
  const std::string u = "fixtures/upstream/bpftool/";
  auto r = run({dpscope_bin(), "import", "--bpftool-prog", source_path(u + "cilium-prog_show.json"), "--bpftool-map",
                source_path(u + "cilium-map_show.json"), "--bpftool-net", source_path(u + "cilium-net_show.json"),
                "--node", "cilium-probe", "-o", dir.file("snap.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json snap = json::parse(read_text(dir.file("snap.json")));
  const json progs = json::parse(read_text(source_path(u + "cilium-prog_show.json")));
  const json maps = json::parse(read_text(source_path(u + "cilium-map_show.json")));
  const json net = json::parse(read_text(source_path(u + "cilium-net_show.json")));
  const json& ebpf = snap.at("ebpf");
  EXPECT_TRUE(ebpf.at("collected").get<bool>());
  ASSERT_EQ(ebpf.at("programs").size(), progs.size());
  ASSERT_EQ(ebpf.at("maps").size(), maps.size());
  EXPECT_EQ(ebpf.at("attachments").size(), net.at(0).at("tc").size() + net.at(0).at("xdp").size());
  uint64_t want = 0, got = 0;
  for (const auto& p : progs) want += p.at("bytes_memlock").get<uint64_t>();
  for (const auto& m : maps) want += m.at("bytes_memlock").get<uint64_t>();
  for (const auto& p : ebpf.at("programs")) got += p.at("bytes_memlock").get<uint64_t>();
  for (const auto& m : ebpf.at("maps")) got += m.at("bytes_memlock").get<uint64_t>();
  EXPECT_EQ(got, want);
  // Only the service maps' entries are missing (bpftool map show has none): not imported, never 0.
  ASSERT_EQ(snap.at("unavailable").size(), 1u) << snap.at("unavailable").dump();
  EXPECT_EQ(snap.at("unavailable")[0].at("section"), "ebpf.services");
}

TEST(BpftoolImportCli, BadInputExits2WithFileLineAndNoOutput) {
  TempDir dir;
  write_text(dir.file("maps.json"), "[{\"id\": 1, \"type\": \"hash\", \"bytes_key\": 4,\n\"bytes_value\": 4}]\n");
  auto r = run({dpscope_bin(), "import", "--bpftool-map", dir.file("maps.json"), "-o", dir.file("out.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.file("maps.json") + ":1: missing \"max_entries\""), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.json")));
  write_text(dir.file("prog.json"), "[{\"id\": 1, \"type\": \"xdp\"");
  r = run({dpscope_bin(), "import", "--bpftool-prog", dir.file("prog.json"), "-o", dir.file("out.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("invalid JSON"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpscope::test
