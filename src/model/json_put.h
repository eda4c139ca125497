// Writing optional fields into JSON objects (json.cpp, agents.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace dpscope::model {

// Sets `key` only when the value is there: an absent field is "not known", never a zero.
template <typename T>
void put_opt(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace dpscope::model
