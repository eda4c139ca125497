#include "reports/escape.h"

#include <cstdio>

#include "util/inert.h"

namespace dpscope::reports {

namespace {

// "-3", "-0.5": a negative number a spreadsheet reads as a number, not a formula.
bool negative_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  bool digit = false, dot = false;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      digit = true;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digit;
}

}  // namespace

// One implementation with error messages: util/inert.h.
std::string escape_text(std::string_view s) { return inert(s); }

std::string escape_markdown(std::string_view s) {
  std::string t = escape_text(s);
  std::string out;
  out.reserve(t.size());
  for (char c : t) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '|': out += "\\|"; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '#': case '~': case '!':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_html(std::string_view s) {
  std::string t = escape_text(s);
  std::string out;
  out.reserve(t.size());
  for (char c : t) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_csv(std::string_view s) {
  std::string t = escape_text(s);
  std::string out = "\"";
  // A cell a spreadsheet would evaluate (=HYPERLINK(...), +cmd, -2+3, @SUM,
  // or a leading TAB/CR) starts with a quote, which makes it text (OWASP's
  // advice); a lone "-" (no value) and negative numbers stay as they are.
  if (!s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string_view::npos && s != "-" &&
      !negative_number(s)) {
    out += '\'';
  }
  for (char c : t) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace dpscope::reports
