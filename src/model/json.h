// JSON form of the snapshot model ("dpscope.snapshot/v1").
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <string_view>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::model {

nlohmann::json to_json(const Snapshot& s);

// Pieces of it the streaming writer (snapshot_writer.cpp) writes as they are:
// a table's nftables declarations (the keys to add to the table's object;
// {} when not recorded) and a set's declaration.
nlohmann::json table_declarations_json(const Table& t);
nlohmann::json set_declaration_json(const NftSetDeclaration& d);

// How much of a chain's rules a reader keeps.
enum class RuleDetail : uint8_t {
  None,     // rule_count only (rules_recorded = false)
  Verdict,  // each rule's position, verdict_kind, target and target_args: the
            // jump graph and DNAT targets (match, counters, raw left empty)
  Full,
};

struct LoadOptions {
  // When set, decides per chain how much of its rules to keep. A report reads
  // the rules of a few chains (analysis::rule_detail_for); a 20k-service node
  // has 350k rules, most of them never read.
  std::function<RuleDetail(std::string_view chain)> rule_detail;
  // Told about a file of a newer minor schema version ("v1.1") with fields this
  // dpscope does not know (they are ignored): one sentence per file.
  std::function<void(const std::string& warning)> warn;
};

// JSON paths ("/node/zone", "/ebpf/maps/[]/numa_node") of a snapshot file's
// fields outside its rules that this dpscope does not read.
std::vector<std::string> unknown_fields(const nlohmann::json& file, const Snapshot& s);

// Throws InputError(origin, line, what) on invalid JSON, a wrong or unknown
// schema, or a field of the wrong type. `origin` names the source in messages.
// The text forms stream (model/snapshot_reader.cpp): no JSON tree of rules.
Snapshot from_json_text(const std::string& text, const std::string& origin, const LoadOptions& options = {});
Snapshot from_json(const nlohmann::json& j, const std::string& origin);

// Reads a snapshot file ("-" = stdin), streaming.
Snapshot load_snapshot(const std::string& path, const LoadOptions& options = {});

// Writing a snapshot file: model/snapshot_writer.h (streamed, no JSON tree).

// Atomic write used by every command with -o.
void write_file_atomically(const std::string& path, const std::string& content);

// Reads a whole file; throws InputError(path, 0, strerror) when it cannot.
std::string read_file(const std::string& path);

// The same bytes for a large input. A large plain regular file is mapped,
// not copied: a reader that is done with part of it hands it back with
// release(), so a 146 MB iptables-save of a 1M-rule node never sits in
// memory whole. Anything else (small, compressed, a pipe) is read into
// memory, where release() does nothing. Same errors as read_file().
struct FileBytes {
  std::unique_ptr<char[]> data;
  size_t size = 0;
  // A mapping of the file instead of `data`.
  struct Mapping {
    void* address = nullptr;
    size_t length = 0;
    std::string origin;  // named if the file shrinks while mapped (SIGBUS)
    ~Mapping();
  };
  std::unique_ptr<Mapping> mapping;
  std::string_view view() const {
    return mapping ? std::string_view(static_cast<const char*>(mapping->address), size)
                   : std::string_view(data.get(), size);
  }
  // Drops the pages wholly inside `part` (a view of view()) from this
  // process's memory; they are read again from the file if touched. The
  // bytes stay valid: it only bounds the resident size.
  void release(std::string_view part) const;
};
FileBytes read_file_bytes(const std::string& path);

}  // namespace dpscope::model
