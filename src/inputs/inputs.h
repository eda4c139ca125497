// The snapshot arguments of every command that reads them (compare, check,
// where, scale, verify): files given by name, and folders that stand for the
// node snapshots in them. One reader, so a stray file, a compressed file and a
// damaged one mean the same to every command.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/snapshot.h"

namespace dpscope::inputs {

using Warn = std::function<void(const std::string&)>;

// A snapshot file to read: given by name, or found in a folder.
struct InputFile {
  std::string path;
  std::string folder;  // the folder argument it was found in; "" = given by name
};

// DIR/*.json, *.json.zst, *.json.gz, sorted; throws InputError when DIR
// cannot be listed or holds none.
std::vector<std::string> folder_files(const std::string& dir);

// Each argument in turn: a file as it is, a folder as its folder_files.
std::vector<InputFile> expand(const std::vector<std::string>& args);

// Whether a file that failed to load as a snapshot is not meant to be one: it
// is complete, valid JSON, but another document (a saved report: another
// "schema"; an `nft -j` dump or a note: no schema and no snapshot section, or
// not an object). A truncated or damaged file is not valid JSON, and a file
// that says it is a snapshot is one: both stay errors.
bool is_foreign_file(const std::string& path);

// Reads each file and hands it to `use` with its index, then drops it (a folder
// of 50 large nodes is never in memory at once). `threads`: 1 reads them in
// order on the caller's thread; 0 on as many threads as cores, `use` then
// being called on those threads (each index once). The loader's warnings of
// each file, and then its outcome, are said through options.warn in input order: a folder's file
// that is not a node snapshot (is_foreign_file) is skipped with the warning
// "FILE: not a node snapshot (why): skipped"; any other error (the first) is
// thrown, as is a folder left without a snapshot. Returns, for each file,
// whether it was read (false: skipped).
std::vector<bool> read_snapshots(const std::vector<InputFile>& files, const model::LoadOptions& options, unsigned threads,
                                 const std::function<void(model::Snapshot& snapshot, size_t index)>& use);

// Files given by name, read in parallel (in turn when one is stdin, "-"), in order.
std::vector<model::Snapshot> load_snapshots(const std::vector<std::string>& paths, const model::LoadOptions& options);

}  // namespace dpscope::inputs
