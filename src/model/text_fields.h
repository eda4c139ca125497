// Helpers of the model's text parsers (ipset save, ipvsadm): a line's
// whitespace-separated words, and a decimal uint32 field.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dpscope::model::text {

inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Digits only, at most UINT32_MAX; nullopt otherwise (signs, hex, empty).
inline std::optional<uint32_t> number(const std::string& s) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const uint64_t v = std::stoull(s);
  if (v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace dpscope::model::text
