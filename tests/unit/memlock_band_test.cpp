// What fdinfo memlock means per kernel (issue 14, case 8): the band boundaries
// on synthetic `uname -r` strings, and the memory-cgroup sentence.
#include <gtest/gtest.h>

#include "analysis/analysis.h"

namespace dpscope::analysis {
namespace {

TEST(MemlockBand, BoundariesOnSyntheticKernelStrings) {
  struct Case {
    const char* kernel;
    const char* id;
  };
  for (const Case& c : {Case{"4.19.0", "rlimit-pages"}, Case{"5.4.0-150-generic", "rlimit-pages"},
                        Case{"5.10.209", "rlimit-pages"}, Case{"5.10", "rlimit-pages"}, Case{"5.11", "estimate"},
                        Case{"5.11.0-1022-gke", "estimate"}, Case{"5.15.0-91-generic", "estimate"},
                        Case{"6.1.0-18-amd64", "estimate"}, Case{"6.3.13", "estimate"}, Case{"6.4", "map-mem-usage"},
                        Case{"6.4.0-rc1", "map-mem-usage"}, Case{"6.18.44-fc-v1045", "map-mem-usage"},
                        Case{"10.0.1", "map-mem-usage"}, Case{"", "unknown"}, Case{"linux", "unknown"},
                        Case{"6", "unknown"}}) {
    EXPECT_EQ(memlock_band(c.kernel).id, c.id) << c.kernel;
  }
  EXPECT_NE(memlock_band("6.1.0").meaning.find("80ee81e0403c"), std::string::npos);
  EXPECT_NE(memlock_band("6.4.0").meaning.find("90a5527d7686"), std::string::npos);
  EXPECT_NE(memlock_band("5.10.0").meaning.find("RLIMIT_MEMLOCK"), std::string::npos);
}

TEST(MemlockBand, MemoryCgroupSentence) {
  EXPECT_NE(memlock_band("5.10.0", false).cgroup.find("charged to no memory cgroup before 5.11"), std::string::npos);
  EXPECT_NE(memlock_band("6.1.0", true).cgroup.find("cgroup.memory=nobpf is set"), std::string::npos);
  const std::string charged = memlock_band("6.1.0", false).cgroup;
  EXPECT_NE(charged.find("memory cgroup of the process that created each map"), std::string::npos);
  EXPECT_NE(charged.find("not the running agent's when an earlier container created pinned maps"), std::string::npos);
  EXPECT_EQ(charged.find("not recorded"), std::string::npos);
  EXPECT_NE(memlock_band("6.1.0").cgroup.find("cgroup.memory=nobpf (not recorded here)"), std::string::npos);
}

TEST(MapFill, OnlyTypesWhoseEntriesComeAndGo) {
  for (const char* t : {"hash", "lru_hash", "percpu_hash", "lru_percpu_hash", "lpm_trie"}) EXPECT_TRUE(map_fill_is_meaningful(t)) << t;
  for (const char* t : {"array", "percpu_array", "prog_array", "perf_event_array", "ringbuf", "array_of_maps"}) {
    EXPECT_FALSE(map_fill_is_meaningful(t)) << t;
  }
}

}  // namespace
}  // namespace dpscope::analysis
