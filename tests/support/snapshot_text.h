// The bytes model::write_snapshot writes for a snapshot, as a string; text as
// the bytes of a file read into memory.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "model/json.h"
#include "model/snapshot_writer.h"

namespace dpscope::test {

inline std::string snapshot_text(const model::Snapshot& s, const model::RuleText* spool = nullptr) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  try {
    model::write_snapshot(s, f, spool);
  } catch (...) {  // bad input found while writing
    std::fclose(f);
    std::free(data);
    throw;
  }
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

// What the import's split parse takes (model::read_file_bytes of a small file).
inline std::shared_ptr<const model::FileBytes> file_bytes(std::string_view text) {
  auto bytes = std::make_shared<model::FileBytes>();
  bytes->data = std::make_unique<char[]>(text.size() + 1);
  std::memcpy(bytes->data.get(), text.data(), text.size());
  bytes->size = text.size();
  return bytes;
}

}  // namespace dpscope::test
