#include "collectors/bpf/map_read.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_set>

namespace dpscope::bpf {
namespace {

// The kernel-internal ENOTSUPP leaks to user space from map ops a type lacks.
constexpr int kEnotsupp = 524;

bool is_percpu(uint32_t type) {
  return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
         type == BPF_MAP_TYPE_LRU_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

// Index-keyed maps whose get_next_key visits every slot: a slot holds an
// entry only if a lookup finds it.
bool is_slot_array(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_PROG_ARRAY:
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
    case BPF_MAP_TYPE_CGROUP_ARRAY:
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_DEVMAP:
    case BPF_MAP_TYPE_SOCKMAP:
    case BPF_MAP_TYPE_CPUMAP:
    case BPF_MAP_TYPE_XSKMAP:
    case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
      return true;
    default:
      return false;
  }
}

// Types with no user-space key iteration at all.
bool is_unreadable(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
    case BPF_MAP_TYPE_RINGBUF:
    case BPF_MAP_TYPE_USER_RINGBUF:
    case BPF_MAP_TYPE_BLOOM_FILTER:
    case BPF_MAP_TYPE_STRUCT_OPS:
    case BPF_MAP_TYPE_SK_STORAGE:
    case BPF_MAP_TYPE_INODE_STORAGE:
    case BPF_MAP_TYPE_TASK_STORAGE:
    case 32:  // BPF_MAP_TYPE_CGRP_STORAGE (kernel 6.2)
    case 33:  // BPF_MAP_TYPE_ARENA (kernel 6.9; not in the 6.1 headers)
      return true;
    default:
      return false;
  }
}

bool is_batch_type(uint32_t type) {
  return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
         type == BPF_MAP_TYPE_LRU_PERCPU_HASH || type == BPF_MAP_TYPE_ARRAY ||
         type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

bool unsupported(int err) { return err == EINVAL || err == EOPNOTSUPP || err == kEnotsupp; }

std::string errno_text(int err) {
  if (err == kEnotsupp) return "ENOTSUPP (524)";
  return std::string(strerrorname_np(err) ? strerrorname_np(err) : "errno") + " (" + std::to_string(err) + ")";
}

// Sets out.note and returns true when reading must stop here.
bool over_limits(MapEntries& out, const ReadLimits& limits) {
  if (out.count > limits.max_entries) {
    out.note = "not counted: more than " + std::to_string(limits.max_entries) + " entries";
    return true;
  }
  if (std::chrono::steady_clock::now() > limits.deadline) {
    out.note = "not counted: time budget for reading maps used up";
    return true;
  }
  return false;
}

// Returns false when the kernel has no batch lookup for this map (caller falls back).
bool read_batched(int fd, const MapShape& shape, const ReadLimits& limits, MapEntries& out) {
  const size_t token_size = std::max<size_t>(shape.key_size, 8);
  std::vector<uint8_t> token_in(token_size), token_out(token_size);
  std::vector<uint8_t> scratch_keys, scratch_values;
  uint32_t chunk = std::clamp<uint32_t>(shape.max_entries, 16, 4096);
  bool first = true;
  DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (;;) {
    std::vector<uint8_t>& keys = limits.keep_data ? out.keys : scratch_keys;
    std::vector<uint8_t>& values = limits.keep_data ? out.values : scratch_values;
    const size_t base = limits.keep_data ? out.count : 0;
    keys.resize((base + chunk) * shape.key_size);
    values.resize((base + chunk) * out.value_stride);
    uint32_t n = chunk;
    int rc = bpf_map_lookup_batch(fd, first ? nullptr : token_in.data(), token_out.data(),
                                  keys.data() + base * shape.key_size, values.data() + base * out.value_stride,
                                  &n, &opts);
    int err = rc ? errno : 0;
    if (rc && err == ENOSPC && n == 0) {
      // One hash bucket holds more entries than `chunk`: retry with room for them.
      if (chunk >= (1u << 24)) {
        out.note = "not counted: batch lookup kept failing with ENOSPC";
        return true;
      }
      chunk *= 2;
      continue;
    }
    if (rc && err != ENOENT) {
      if (first && unsupported(err)) return false;
      out.note = "not counted: batch lookup failed: " + errno_text(err);
      return true;
    }
    out.count += n;  // the final ENOENT call still returns its elements
    if (rc) {
      out.complete = true;
      break;
    }
    if (over_limits(out, limits)) return true;
    std::swap(token_in, token_out);
    first = false;
  }
  if (limits.keep_data) {
    out.keys.resize(out.count * shape.key_size);
    out.values.resize(out.count * out.value_stride);
  }
  return true;
}

void read_iterating(int fd, const MapShape& shape, const ReadLimits& limits, MapEntries& out) {
  const bool slots = is_slot_array(shape.type);
  const bool need_value = slots || limits.keep_data;
  std::vector<uint8_t> cur(std::max<uint32_t>(shape.key_size, 1)), next(cur.size());
  std::vector<uint8_t> value(std::max<uint32_t>(out.value_stride, 8));
  // A deleted cursor key restarts hash iteration from the start: dedupe, and
  // bound the walk so it ends even while the map churns.
  std::unordered_set<std::string> seen;
  const uint64_t max_steps = 2ull * std::max<uint32_t>(shape.max_entries, 1) + 16;
  bool have_cursor = false;
  for (uint64_t step = 0;; ++step) {
    if (step > max_steps) {
      out.note = "not counted: key iteration did not end (map changing while read)";
      return;
    }
    if (bpf_map_get_next_key(fd, have_cursor ? cur.data() : nullptr, next.data()) != 0) {
      int err = errno;
      if (err == ENOENT) break;
      out.note = "not counted: get_next_key failed: " + errno_text(err);
      return;
    }
    std::swap(cur, next);
    have_cursor = true;
    if (!slots && !seen.emplace(reinterpret_cast<const char*>(cur.data()), shape.key_size).second) continue;
    if (need_value) {
      if (bpf_map_lookup_elem(fd, cur.data(), value.data()) != 0) {
        int err = errno;
        if (err == ENOENT) continue;  // empty slot, or deleted since get_next_key
        out.note = "not counted: lookup failed: " + errno_text(err);
        return;
      }
    }
    if (limits.keep_data) {
      out.keys.insert(out.keys.end(), cur.begin(), cur.begin() + shape.key_size);
      out.values.insert(out.values.end(), value.begin(), value.begin() + out.value_stride);
    }
    ++out.count;
    if ((out.count > limits.max_entries || (step & 1023) == 0) && over_limits(out, limits)) return;
  }
  out.complete = true;
}

}  // namespace

MapEntries read_map_entries(int fd, const MapShape& shape, const ReadLimits& limits) {
  MapEntries out;
  out.key_size = shape.key_size;
  out.value_stride = shape.value_size;
  if (is_percpu(shape.type)) {
    int cpus = libbpf_num_possible_cpus();
    out.value_stride = ((shape.value_size + 7) / 8 * 8) * static_cast<uint32_t>(std::max(cpus, 1));
  }
  if (is_unreadable(shape.type)) {
    out.note = "not counted: the kernel offers no key iteration for this map type";
    return out;
  }
  if ((shape.type == BPF_MAP_TYPE_ARRAY || shape.type == BPF_MAP_TYPE_PERCPU_ARRAY) && !limits.keep_data) {
    // Every slot of a plain array exists from creation on.
    out.count = shape.max_entries;
    out.complete = true;
    return out;
  }
  if (is_batch_type(shape.type) && read_batched(fd, shape, limits, out)) {
    if (!out.complete) {
      out.keys.clear();
      out.values.clear();
    }
    return out;
  }
  out.count = 0;
  out.keys.clear();
  out.values.clear();
  read_iterating(fd, shape, limits, out);
  if (!out.complete) {
    out.keys.clear();
    out.values.clear();
  }
  return out;
}

}  // namespace dpscope::bpf
