// Strings from a node (comments, names) or a file made inert for a terminal:
// control characters (C0, DEL, C1) become visible escapes ("\x1b", "\n"),
// and characters that reorder or break a line without being seen (bidi
// overrides, isolates and marks, U+061C, U+2028/2029) become "\u202e".
// One implementation for reports (reports/escape.h) and error messages
// (util/error.h), so stderr is as safe as stdout.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace dpscope {

namespace inert_detail {

// Length of the UTF-8 sequence at s[i] when it is an invisible layout
// control (see above), 0 otherwise.
inline size_t invisible_control(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  if (at(0) == 0xd8 && at(1) == 0x9c) return 2;  // U+061C ARABIC LETTER MARK
  if (at(0) != 0xe2) return 0;
  const unsigned b1 = at(1), b2 = at(2);
  if (b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f)) return 3;  // U+200E LRM, U+200F RLM
  if (b1 == 0x80 && b2 >= 0xa8 && b2 <= 0xae) return 3;    // U+2028/2029, U+202A-202E
  if (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9) return 3;    // U+2066-2069 isolates
  return 0;
}

inline unsigned code_point(std::string_view s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(s[i + k])); };
  return n == 2 ? ((b(0) & 0x1f) << 6) | (b(1) & 0x3f) : ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
}

}  // namespace inert_detail

inline std::string inert(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  char buf[12];
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // UTF-8 encoded C1 control (U+0080..U+009F, e.g. the 8-bit CSI U+009B).
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      ++i;
    } else if (const size_t n = inert_detail::invisible_control(s, i)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", inert_detail::code_point(s, i, n));
      out += buf;
      i += n - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace dpscope
