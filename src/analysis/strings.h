// Small string helpers shared by the analysis sources.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace dpscope::analysis {

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Sorted, each value once.
inline void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace dpscope::analysis
