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
#include <vector>

#include "model/snapshot.h"

namespace dpscope::model {

// Rules rendered to their snapshot lines as soon as a collector has read
// them, and kept in an unlinked temporary file instead of memory: a live
// 20k-service node has 350k rules, ~0.8 KB each as model::Rule and ~240 bytes
// as text. A collector stores each chain's rules here and leaves the chain's
// `rules` empty (rule_count set, rules_recorded true); write_snapshot() copies
// the text back in place. Safe to use from several threads.
class RuleSpool {
 public:
  // Opens the temporary file (O_TMPFILE under $TMPDIR, else /tmp). Throws
  // SystemError when it cannot: callers then keep rules in memory.
  RuleSpool();
  ~RuleSpool();
  RuleSpool(const RuleSpool&) = delete;
  RuleSpool& operator=(const RuleSpool&) = delete;

  // Stores a chain's rules under its identity and empties `rules`. False when
  // the file cannot take them (a full /tmp): `rules` is left as it was, and
  // the caller keeps them in memory.
  bool store(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
             std::vector<Rule>& rules);
  // errno of the first failed store, 0 when none failed.
  int failure() const;
  // Forgets everything (a collector starting its read again).
  void reset();

  // The stored text of a chain, appended to `out`; false when none is stored.
  bool append_to(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                 std::string& out) const;
  uint64_t bytes() const;

 private:
  struct Impl;
  Impl* impl_;
};

// Streams `s` to `out`; chains with rules in `spool` get them from there.
// Throws std::runtime_error on a write error.
void write_snapshot(const Snapshot& s, std::FILE* out, const RuleSpool* spool = nullptr);

// Writes `s` to `path`: "-" is stdout; an existing FIFO or device is written
// in place; otherwise a temporary file in the same directory is renamed over
// `path` once complete, so a failure never leaves a half-written file.
// Throws InputError (cannot create or write the file) or SystemError (stdout).
void save_snapshot(const Snapshot& s, const std::string& path, const RuleSpool* spool = nullptr);

}  // namespace dpscope::model
