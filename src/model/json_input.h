// Parsing JSON that another tool (or an attacker's rule comment) wrote.
//
// nlohmann's parser is iterative, but much of what follows a parse is not:
// dump() in an error message, copies, comparisons recurse once per level, so
// a 70,000-level `[[[[...]]]]` ends in a stack overflow. Every JSON input of
// dpscope therefore has a nesting limit far above anything bpftool, nft or
// dpscope itself writes (nft's deepest expressions are ~10 levels), and a
// number the parser cannot hold (1e999) is bad input, not an internal error.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dpscope::model {

// Deepest nesting of arrays and objects any JSON input may have.
inline constexpr size_t kJsonDepthLimit = 512;

// The message for input nested beyond kJsonDepthLimit.
std::string too_deep_message();

// Byte offset of the first '[' or '{' that opens level limit + 1 (outside
// strings), or npos when the text stays within the limit.
size_t offset_beyond_depth(std::string_view text, size_t limit = kJsonDepthLimit);

// 1-based line and column (in bytes) of a byte offset.
struct TextPosition {
  size_t line = 1;
  size_t column = 1;
};
TextPosition position_of_offset(std::string_view text, size_t offset);

// Parses one JSON document. Throws InputError(origin, line, column, what) for a
// syntax error ("invalid JSON: ..."), nesting beyond the limit ("too deeply
// nested (limit 512)") and a number out of range ("number out of range:
// 1e999"). `context` (e.g. "expected `bpftool -j prog show` output") is
// added to syntax errors.
nlohmann::json parse_json_input(std::string_view text, const std::string& origin, const std::string& context = {});

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 1, column 5: " prefix (the caller says FILE:LINE:COLUMN itself).
std::string json_error_text(const std::string& what);

}  // namespace dpscope::model
