// Reading a map's entries from user space: batch lookups where the kernel has
// them, key iteration otherwise. Used to count entries and to feed the
// Cilium/Calico service-map decoders (decoders/service_maps.h). Never writes to the map.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "decoders/map_entries.h"

namespace dpscope::bpf {

struct MapShape {
  uint32_t type = 0;         // enum bpf_map_type
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
};

struct ReadLimits {
  uint64_t max_entries = 1u << 20;  // stop (complete = false) beyond this many
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool keep_data = false;           // store keys and values, not just count
};

// Reads the entries of the map behind `fd` (opened read-only is enough).
// Array maps always hold max_entries elements and are not walked unless
// keep_data is set. Map types the kernel cannot iterate give complete = false
// and a note naming the errno.
MapEntries read_map_entries(int fd, const MapShape& shape, const ReadLimits& limits);

}  // namespace dpscope::bpf
