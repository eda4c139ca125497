// A BPF map's entries as read from the kernel (collectors/bpf/map_read.h) or
// from `bpftool map dump` (collectors/import/bpftool.h): what the service-map
// decoders read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscope::bpf {

struct MapEntries {
  uint32_t key_size = 0;
  uint32_t value_stride = 0;  // bytes per element in `values` (per-CPU maps: all CPUs)
  std::vector<uint8_t> keys;   // count * key_size (empty when only counting)
  std::vector<uint8_t> values; // count * value_stride (empty when only counting)
  uint64_t count = 0;
  bool complete = false;       // false: see `note`
  std::string note;            // why the entries were not (all) read
  const uint8_t* key(size_t i) const { return keys.data() + i * key_size; }
  const uint8_t* value(size_t i) const { return values.data() + i * value_stride; }
};

}  // namespace dpscope::bpf
