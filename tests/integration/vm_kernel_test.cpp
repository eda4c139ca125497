// The second-kernel tier (tests/vm/vm.sh): dpscope run on Debian's 6.1 kernel
// in a qemu VM, for what this machine's kernel cannot show. Here: the meaning
// of fdinfo memlock on 5.11-6.3 (an estimate from max_entries, commit
// 80ee81e0403c), which the report states per kernel. The oracle is bpftool's
// bytes_memlock in the same VM; the band's defining behaviour is checked too:
// a BPF_F_NO_PREALLOC map's figure does not follow its entries there. The
// same VM runs the live eBPF check on that kernel: the build's Cilium- and
// Calico-shaped objects (fixtures/bpf) loaded by bpftool, every program and
// map of the snapshot equal to bpftool's listing, field by field.
// Skips loudly when qemu or the kernel package cannot be had.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "model/json.h"

#include "tests/integration/vm_support.h"

namespace dpscope::test {
namespace {

using nlohmann::json;

std::map<std::string, uint64_t> memlock_by_name(const json& maps, const char* key) {
  std::map<std::string, uint64_t> m;
  for (const auto& x : maps) {
    if (x.contains("name") && x[key].is_number()) m[x["name"]] = x[key];
  }
  return m;
}

TEST(VmKernel, MemlockOn61IsTheMaxEntriesEstimate) {
  DPS_REQUIRE_ROOT();
  TempDir dir;
  DPS_RUN_VM("tests/vm/memlock.sh",
             "VM_FILES='" + std::string(DPSCOPE_BUILD_DIR) + "/fixtures/bpf/cilium_node.o " + DPSCOPE_BUILD_DIR +
                 "/fixtures/bpf/calico_node.o'",
             dir.file("out.txt"));
  const std::string out = read_text(dir.file("out.txt"));
  auto s = vm::sections(out);
  const std::string kernel = vm::guest_kernel(s);
  ASSERT_EQ(kernel.rfind("6.1.", 0), 0u) << out;

  const auto before = memlock_by_name(json::parse(s["before"]), "bytes_memlock");
  const auto after = memlock_by_name(json::parse(s["after"]), "bytes_memlock");
  ASSERT_TRUE(after.count("dps_vm_pre") && after.count("dps_vm_np")) << s["after"];
  // 5.11-6.3: the figure comes from max_entries, not from what the map holds.
  EXPECT_EQ(before.at("dps_vm_np"), after.at("dps_vm_np"));
  EXPECT_EQ(after.at("dps_vm_pre"), after.at("dps_vm_np"));

  // dpscope's snapshot of the same state, map by map.
  write_text(dir.file("snap.json"), s["snapshot"]);
  json snap = json::parse(s["snapshot"]);
  EXPECT_EQ(snap["node"]["kernel"], kernel);
  const auto got = memlock_by_name(snap["ebpf"]["maps"], "bytes_memlock");
  for (const char* m : {"dps_vm_pre", "dps_vm_np"}) EXPECT_EQ(got.at(m), after.at(m)) << m;
  for (const auto& x : snap["ebpf"]["maps"]) {
    if (x["name"] == "dps_vm_np") EXPECT_EQ(x["entries"], 200);
  }

  // Every program and map, as bpftool lists them on this kernel.
  const model::Snapshot live = model::load_snapshot(dir.file("snap.json"));
  const json progs = json::parse(s["progs"]), maps = json::parse(s["maps"]);
  EXPECT_EQ(live.ebpf.programs.size(), progs.size());
  EXPECT_GE(progs.size(), 10u);  // the two objects' programs
  for (const auto& want : progs) {
    const uint32_t id = want.at("id");
    SCOPED_TRACE("prog " + std::to_string(id));
    auto got = std::find_if(live.ebpf.programs.begin(), live.ebpf.programs.end(), [&](auto& p) { return p.id == id; });
    ASSERT_NE(got, live.ebpf.programs.end());
    EXPECT_EQ(got->type, want.at("type").get<std::string>());
    EXPECT_EQ(got->name, want.at("name").get<std::string>());
    EXPECT_EQ(got->tag, want.at("tag").get<std::string>());
    EXPECT_EQ(got->bytes_xlated, want.at("bytes_xlated").get<uint32_t>());
    EXPECT_EQ(got->bytes_jited, want.value("bytes_jited", 0u));
    EXPECT_EQ(got->bytes_memlock, want.at("bytes_memlock").get<uint64_t>());
    EXPECT_EQ(got->btf_id, want.value("btf_id", 0u));
    EXPECT_EQ(got->map_ids, want.value("map_ids", std::vector<uint32_t>{}));
    EXPECT_EQ(got->pinned, want.value("pinned", std::vector<std::string>{}));
  }
  EXPECT_EQ(live.ebpf.maps.size(), maps.size());
  for (const auto& want : maps) {
    const uint32_t id = want.at("id");
    SCOPED_TRACE("map " + std::to_string(id));
    auto got = std::find_if(live.ebpf.maps.begin(), live.ebpf.maps.end(), [&](auto& m) { return m.id == id; });
    ASSERT_NE(got, live.ebpf.maps.end());
    EXPECT_EQ(got->type, want.at("type").get<std::string>());
    EXPECT_EQ(got->name, want.value("name", std::string()));
    EXPECT_EQ(got->key_size, want.at("bytes_key").get<uint32_t>());
    EXPECT_EQ(got->value_size, want.at("bytes_value").get<uint32_t>());
    EXPECT_EQ(got->max_entries, want.at("max_entries").get<uint32_t>());
    EXPECT_EQ(got->flags, want.at("flags").get<uint32_t>());
    EXPECT_EQ(got->bytes_memlock, want.at("bytes_memlock").get<uint64_t>());
    EXPECT_EQ(got->btf_id, want.value("btf_id", 0u));
    EXPECT_EQ(got->pinned, want.value("pinned", std::vector<std::string>{}));
  }

  // The report says which band the figure is from on this kernel.
  auto cmp = run({dpscope_bin(), "compare", dir.file("snap.json"), dir.file("snap.json"), "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  json report = json::parse(cmp.out);
  EXPECT_EQ(report["sides"][0]["memlock_band"], "estimate");
  bool finding = false;
  for (const auto& f : report["findings"]) {
    const std::string t = f;
    finding = finding || (t.find("an estimate from max_entries and key/value sizes (kernel " + kernel +
                                 ", 5.11-6.3, commit 80ee81e0403c)") != std::string::npos);
  }
  EXPECT_TRUE(finding) << report["findings"].dump(1);
}

}  // namespace
}  // namespace dpscope::test
