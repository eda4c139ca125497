#include "collectors/netfilter/netfilter.h"

#include <cerrno>

namespace dpscope::netfilter {

// Placeholder until the live collector lands: the section is honestly unavailable.
void collect(model::Snapshot& snapshot, const Options&) {
  snapshot.unavailable.push_back({"netfilter", "live netfilter collection not built yet", ENOSYS, ""});
}

}  // namespace dpscope::netfilter
