// Writes a snapshot as the same bytes model::save_snapshot writes
// (nlohmann's dump(1): keys sorted, one-space indent), but streams the
// netfilter tables instead of building a JSON tree of them first: a
// 20k-service node has ~350k rules, and the tree would cost gigabytes and
// most of the snapshot's time. Everything else goes through model::to_json.
#pragma once

#include <cstdio>
#include <string>

#include "model/snapshot.h"

namespace dpscope::cli {

// Streams `s` to `out`. Throws std::runtime_error on a write error.
void write_snapshot_stream(const model::Snapshot& s, std::FILE* out);

// "-": stdout; otherwise a temporary file in the same directory renamed over
// `path` once complete, so a failure never leaves a half-written file.
// Throws SystemError.
void save_snapshot_streamed(const model::Snapshot& s, const std::string& path);

}  // namespace dpscope::cli
