#include "collectors/bpf/bpf.h"

#include <cerrno>

namespace dpscope::bpf {

// Placeholder until the live collector lands: the section is honestly unavailable.
void collect(model::Snapshot& snapshot, const Options&) {
  snapshot.unavailable.push_back({"ebpf", "live eBPF collection not built yet", ENOSYS, ""});
}

}  // namespace dpscope::bpf
