// The second-kernel tier (tests/vm/vm.sh): dpscope run on Debian's 6.1 kernel
// in a qemu VM, for what this machine's kernel cannot show. Here: the meaning
// of fdinfo memlock on 5.11-6.3 (an estimate from max_entries, commit
// 80ee81e0403c), which the report states per kernel. The oracle is bpftool's
// bytes_memlock in the same VM; the band's defining behaviour is checked too:
// a BPF_F_NO_PREALLOC map's figure does not follow its entries there.
// Skips loudly when qemu or the kernel package cannot be had.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

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
  DPS_RUN_VM("tests/vm/memlock.sh", "", dir.file("out.txt"));
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
