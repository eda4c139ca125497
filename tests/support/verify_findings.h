// Test support: `dpscope verify --format json` findings as comparable keys.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace dpscope::test {

// "id dataplane service frontend [endpoint]" per finding, over every node.
inline std::multiset<std::string> verify_finding_keys(const nlohmann::json& report) {
  std::multiset<std::string> out;
  for (const auto& n : report["nodes"]) {
    for (const auto& f : n["findings"]) {
      out.insert(f["id"].get<std::string>() + " " + f["dataplane"].get<std::string>() + " " +
                 f["service"].get<std::string>() + " " + f["frontend"].get<std::string>() +
                 (f.contains("endpoint") ? " " + f["endpoint"].get<std::string>() : ""));
    }
  }
  return out;
}

// One indented line per key, for a failure message.
inline std::string dump_keys(const std::multiset<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += "  " + k + "\n";
  return out;
}

}  // namespace dpscope::test
