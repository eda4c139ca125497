// JSON form of the snapshot model ("dpscope.snapshot/v1").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/snapshot.h"

namespace dpscope::model {

nlohmann::json to_json(const Snapshot& s);

// Throws InputError(origin, line, what) on invalid JSON, a wrong or unknown
// schema, or a field of the wrong type. `origin` names the source in messages.
Snapshot from_json_text(const std::string& text, const std::string& origin);
Snapshot from_json(const nlohmann::json& j, const std::string& origin);

// Reads a snapshot file ("-" = stdin).
Snapshot load_snapshot(const std::string& path);

// Writes the snapshot as pretty JSON: to stdout for "-", otherwise atomically
// (temporary file in the same directory, then rename) so a failure never
// leaves a half-written file.
void save_snapshot(const Snapshot& s, const std::string& path);

// Atomic write used by every command with -o.
void write_file_atomically(const std::string& path, const std::string& content);

// Reads a whole file; throws InputError(path, 0, strerror) when it cannot.
std::string read_file(const std::string& path);

}  // namespace dpscope::model
