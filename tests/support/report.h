// Test support for report tests: run dpscope from the source root (so paths in
// reports are relative), pick a row of a JSON report, compare with a golden.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/process.h"

namespace dpscope::test {

inline RunResult dpscope_in_source(const std::string& args) {
  return sh("cd '" + source_path("") + "' && '" + dpscope_bin() + "' " + args);
}

inline nlohmann::json report_row(const nlohmann::json& report, const std::string& id) {
  for (const auto& r : report["rows"]) {
    if (r["id"] == id) return r;
  }
  ADD_FAILURE() << "no row " << id;
  return nlohmann::json::object();
}

// `output` equals tests/golden/<golden> (as data for JSON). With
// DPSCOPE_UPDATE_GOLDEN set, the golden is rewritten first.
inline void expect_golden(const std::string& format, const std::string& golden, const std::string& output) {
  const std::string path = source_path("tests/golden/" + golden);
  if (std::getenv("DPSCOPE_UPDATE_GOLDEN")) write_text(path, output);
  const std::string want = read_text(path);
  if (format == "json") {
    EXPECT_EQ(nlohmann::json::parse(output), nlohmann::json::parse(want));
  } else {
    EXPECT_EQ(output, want);
  }
}

}  // namespace dpscope::test
