#include "model/json_input.h"

#include "util/error.h"

namespace dpscope::model {

namespace {

using nlohmann::json;

// The DOM builder with a depth bound and the error position kept (nlohmann
// reports a number out of range through parse_error too, with its offset).
class BoundedDom {
 public:
  explicit BoundedDom(json& root) : dom_(root, false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(std::string& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool key(std::string& k) { return dom_.key(k); }
  bool start_object(std::size_t n) { return deeper() && dom_.start_object(n); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return deeper() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
    error_byte = byte;
    error_token = token;
    error_id = e.id;
    error_what = e.what();
    return false;
  }

  bool too_deep = false;
  size_t error_byte = 0;
  int error_id = 0;
  std::string error_token, error_what;

 private:
  bool deeper() {
    if (++depth_ <= kJsonDepthLimit) return true;
    too_deep = true;
    return false;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t depth_ = 0;
};

}  // namespace

std::string too_deep_message() { return "too deeply nested (limit " + std::to_string(kJsonDepthLimit) + ")"; }

size_t offset_beyond_depth(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

TextPosition position_of_offset(std::string_view text, size_t offset) {
  TextPosition at;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

std::string json_error_text(const std::string& what) {
  std::string out = what;
  if (out.rfind("[json.exception.", 0) == 0) {
    if (auto close = out.find("] "); close != std::string::npos) out.erase(0, close + 2);
  }
  // "parse error at line 1, column 5: syntax error ..." -> "syntax error ..."
  if (out.rfind("parse error", 0) == 0) {
    if (auto colon = out.find(": "); colon != std::string::npos) out.erase(0, colon + 2);
  }
  return out;
}

json parse_json_input(std::string_view text, const std::string& origin, const std::string& context) {
  json root;
  BoundedDom sax(root);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true);
  if (ok) return root;
  if (sax.too_deep) {
    const size_t offset = offset_beyond_depth(text);
    const TextPosition at = position_of_offset(text, offset == std::string_view::npos ? 0 : offset);
    throw InputError(origin, at.line, at.column, too_deep_message());
  }
  // nlohmann's error byte is one past the character that stopped the lexer.
  const TextPosition at = position_of_offset(text, sax.error_byte ? sax.error_byte - 1 : 0);
  if (sax.error_id == 406) {  // out_of_range.406: a number the parser cannot represent
    throw InputError(origin, at.line, at.column, "number out of range: " + sax.error_token);
  }
  std::string what = "invalid JSON";
  if (!context.empty()) what += " (" + context + ")";
  throw InputError(origin, at.line, at.column, what + ": " + json_error_text(sax.error_what));
}

}  // namespace dpscope::model
