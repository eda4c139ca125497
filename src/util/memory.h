// Faulting in large buffers ahead of use.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace dpscope {

// Maps the whole pages of [p, p + bytes) writable now, in one call, instead
// of one page fault per 4 KiB as they are first written: on the VMs this runs
// on a page fault costs ~2.7 us, and MADV_POPULATE_WRITE does the same work in
// ~60% of the time (100 MB: 38 ms against 63). Only an optimisation: older
// kernels refuse it and the pages fault in as usual. `p` must be memory this
// process owns (allocated, possibly not yet holding objects).
inline void populate_for_write(void* p, size_t bytes) {
  constexpr uintptr_t kPage = 4096;
  const auto begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

}  // namespace dpscope
