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
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::model {

// Rules already rendered to the lines write_snapshot() prints for them, kept
// outside the model: a chain whose text is here has `rules` empty, rule_count
// set and rules_recorded true, and the writer copies the text in place.
class RuleText {
 public:
  virtual ~RuleText() = default;
  // Calls `sink` with the chain's text (once or in pieces); false when none is held.
  // `chain` is table.chains[chain_index]. Called from several threads at
  // once (the writer renders a large table's chains in parallel).
  virtual bool write_to(const Table& table, size_t chain_index, const Chain& chain,
                        const std::function<void(std::string_view)>& sink) const = 0;
  // Text rendered only as it is written (an import's rules) may turn out bad
  // then: save_snapshot() calls this first where a failed write cannot be
  // withdrawn (stdout, a FIFO), and it throws what write_to() would.
  virtual void check() const {}
};

// Renders rules as the items of a chain's "rules" array, exactly as
// write_snapshot() lays them out.
class RuleLines {
 public:
  RuleLines();
  ~RuleLines();
  RuleLines(const RuleLines&) = delete;
  RuleLines& operator=(const RuleLines&) = delete;
  void reserve(size_t bytes);    // room for the text to come (not touched yet)
  void start_chain();            // the next rule is the first of its chain
  void add(const Rule& rule);
  size_t size() const;           // bytes of text so far
  std::string& text();           // everything added so far
  std::string_view view() const; // the same, leaving the room as it is
  // Forgets the text and keeps the room (and the chain: the next rule
  // continues it), so the next piece is rendered into pages already faulted in.
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Rules rendered to their snapshot lines as soon as a collector has read
// them, and kept in an unlinked temporary file instead of memory: a live
// 20k-service node has 350k rules, ~0.8 KB each as model::Rule and ~240 bytes
// as text. A collector stores each chain's rules here and leaves the chain's
// `rules` empty (rule_count set, rules_recorded true); write_snapshot() copies
// the text back in place. Safe to use from several threads.
class RuleSpool : public RuleText {
 public:
  // Opens the temporary file (O_TMPFILE under $TMPDIR, else /tmp). Throws
  // SystemError when it cannot: callers then keep rules in memory. Text is
  // written to the file `batch_size` bytes at a time.
  explicit RuleSpool(size_t batch_size = size_t{1} << 20);
  ~RuleSpool();
  RuleSpool(const RuleSpool&) = delete;
  RuleSpool& operator=(const RuleSpool&) = delete;

  // Stores a chain's rules under its identity and empties `rules`. False once
  // the file has refused a batch (a full /tmp; that batch stays in memory):
  // `rules` is left as it was, and the caller keeps them in memory.
  bool store(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
             std::vector<Rule>& rules);
  // Stores a chain's rendered rules (RuleLines::text(): a collector that
  // renders a long chain as it reads it, a slice at a time) and empties
  // `text`. Never refuses: after the file failed, the text stays in memory.
  void store_text(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                  std::string& text);
  // errno of the first failed store, 0 when none failed.
  int failure() const;
  // Forgets everything (a collector starting its read again).
  void reset();

  // The stored text of a chain, appended to `out`; false when none is stored.
  bool append_to(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                 std::string& out) const;
  uint64_t bytes() const;

  bool write_to(const Table& table, size_t chain_index, const Chain& chain,
                const std::function<void(std::string_view)>& sink) const override;

 private:
  bool write_to_sink(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                     const std::function<void(std::string_view)>& sink) const;
  struct Impl;
  Impl* impl_;
};

// Streams `s` to `out`; chains with rules in `rule_text` get them from there.
// Throws std::runtime_error on a write error.
void write_snapshot(const Snapshot& s, std::FILE* out, const RuleText* rule_text = nullptr);

// Writes `s` to `path`: "-" is stdout; an existing FIFO or device is written
// in place; otherwise a temporary file in the same directory is renamed over
// `path` once complete, so a failure never leaves a half-written file.
// A name ending in .zst or .gz is written compressed (zstd, gzip; see
// model/compression.h); stdout is always plain JSON.
// Throws InputError (cannot create or write the file, or `rule_text` finds
// bad input) or SystemError (stdout).
void save_snapshot(const Snapshot& s, const std::string& path, const RuleText* rule_text = nullptr);

}  // namespace dpscope::model
