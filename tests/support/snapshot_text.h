// The bytes model::write_snapshot writes for a snapshot, as a string.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/snapshot_writer.h"

namespace dpscope::test {

inline std::string snapshot_text(const model::Snapshot& s, const model::RuleText* spool = nullptr) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  model::write_snapshot(s, f, spool);
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

}  // namespace dpscope::test
