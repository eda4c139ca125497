// Streams a snapshot as "dpscope.snapshot/v1" JSON without building a JSON
// tree first: a 20k-service node has ~350k rules, and the tree would cost
// gigabytes and most of the snapshot's time.
//
// Layout: nlohmann's dump(1) (keys sorted, one-space indent), except that
// each rule and each set element is one compact line
//   {"match":{"comment":"ns/svc:p80","modules":["comment"]},"position":1,...}
// which keeps files about 40% smaller, and `grep` shows a whole rule.
// The content equals model::to_json(s); only the whitespace differs.
#pragma once

#include <cstdio>
#include <string>

#include "model/snapshot.h"

namespace dpscope::model {

// Streams `s` to `out`. Throws std::runtime_error on a write error.
void write_snapshot(const Snapshot& s, std::FILE* out);

// Writes `s` to `path`: "-" is stdout; an existing FIFO or device is written
// in place; otherwise a temporary file in the same directory is renamed over
// `path` once complete, so a failure never leaves a half-written file.
// Throws InputError (cannot create or write the file) or SystemError (stdout).
void save_snapshot(const Snapshot& s, const std::string& path);

}  // namespace dpscope::model
