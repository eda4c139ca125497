// Rejects input that is not a text dump before any parser sees it: the
// message names the line of the first NUL byte, control character or invalid
// UTF-8 sequence, so binary garbage never turns into a silent zero.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "collectors/import/import.h"
#include "util/error.h"

namespace dpscope::importer {

namespace {

size_t line_of_offset(std::string_view text, size_t offset) {
  size_t line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

void check_text(std::string_view text, const std::string& origin) {
  if (text.empty()) throw InputError(origin, 1, "empty file");
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Eight plain ASCII bytes (0x20..0x7f) at a time: the common case.
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      const uint64_t high = w & 0x8080808080808080ULL;
      const uint64_t below_space = (w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL;
      if ((high | below_space) == 0) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80) {
      ++i;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == 0) {
      throw InputError(origin, line_of_offset(text, i), "NUL byte: binary data, not a text dump");
    } else if (c < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      throw InputError(origin, line_of_offset(text, i),
                       std::string("control character ") + hex + ": binary data, not a text dump");
    } else {
      const size_t len = utf8_sequence_length(text, i);
      if (len == 0) throw InputError(origin, line_of_offset(text, i), "invalid UTF-8: binary data, not a text dump");
      i += len;
    }
  }
}

}  // namespace dpscope::importer
