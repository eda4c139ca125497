#include "reports/text_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace dpscope::reports {

size_t resolve_width(std::optional<size_t> flag, std::optional<size_t> tty_columns, const char* columns_env) {
  if (flag) return *flag;
  if (tty_columns && *tty_columns > 0) return *tty_columns;
  if (columns_env && *columns_env) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(columns_env, &end, 10);
    // Only a plain positive number counts; anything else is ignored.
    if (*end == '\0' && columns_env[0] >= '0' && columns_env[0] <= '9' && v > 0 && v < 100000) {
      return static_cast<size_t>(v);
    }
  }
  return kNotATerminalWidth;
}

size_t output_width(std::optional<size_t> flag, bool to_stdout) {
  if (!to_stdout) return resolve_width(flag, std::nullopt, nullptr);
  std::optional<size_t> tty;
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) tty = ws.ws_col;
  return resolve_width(flag, tty, std::getenv("COLUMNS"));
}

namespace {

// Byte length of the ANSI CSI sequence starting at s[i] (0 if none).
size_t ansi_len(std::string_view s, size_t i) {
  if (s[i] != '\x1b' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  size_t j = i + 2;
  while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) ++j;
  return j < s.size() && s[j] == 'm' ? j + 1 - i : 0;
}

// Byte offset where column `w` starts (past any ANSI sequence before it).
size_t offset_of_column(std::string_view s, size_t w) {
  size_t cols = 0;
  for (size_t i = 0; i < s.size();) {
    if (size_t a = ansi_len(s, i)) {
      i += a;
      continue;
    }
    if (cols == w) return i;
    ++cols;
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) ++i;
  }
  return s.size();
}

std::string wrap_line(const std::string& line, size_t width) {
  size_t indent = line.find_first_not_of(' ');
  if (indent == std::string::npos) return line;
  // Continuation lines start two columns in (past a "- " bullet), unless
  // that would leave less than half the line.
  size_t hang = indent + 2;
  if (hang * 2 > width) hang = 0;
  const std::string pad(hang, ' ');
  std::string out;
  std::string cur = line.substr(0, indent);
  size_t cur_w = indent;
  bool cur_has_word = false;
  size_t pos = indent;
  auto flush = [&] {
    out += cur + "\n";
    cur = pad;
    cur_w = hang;
    cur_has_word = false;
  };
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) {  // runs of spaces inside the line are kept
      if (cur_w + 1 <= width) {
        cur += ' ';
        ++cur_w;
      }
      continue;
    }
    size_t ww = display_width(word);
    size_t need = ww + (cur_has_word ? 1 : 0);
    if (cur_has_word && cur_w + need > width) flush();
    // A word wider than a whole line is split over lines, never dropped.
    while (cur_w + (cur_has_word ? 1 : 0) + display_width(word) > width && width > cur_w + 1) {
      if (cur_has_word) {
        flush();
        continue;
      }
      size_t room = width - cur_w;
      size_t at = offset_of_column(word, room);
      cur += word.substr(0, at);
      cur_w += room;
      cur_has_word = true;
      word = word.substr(at);
      flush();
    }
    if (word.empty()) continue;
    if (cur_has_word) {
      cur += ' ';
      ++cur_w;
    }
    cur += word;
    cur_w += display_width(word);
    cur_has_word = true;
  }
  while (!cur.empty() && cur.back() == ' ') cur.pop_back();
  if (cur_has_word) out += cur + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace

size_t display_width(std::string_view s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (size_t a = ansi_len(s, i)) {
      i += a - 1;
      continue;
    }
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) ++w;
  }
  return w;
}

std::string cut(const std::string& s, size_t w) {
  if (display_width(s) <= w) return s;
  if (w <= 3) return std::string(w, '.');
  return s.substr(0, offset_of_column(s, w - 3)) + "...";
}

std::string cut_middle(const std::string& s, size_t w) {
  const size_t have = display_width(s);
  if (have <= w) return s;
  if (w <= 5) return cut(s, w);
  const size_t head = (w - 3 + 1) / 2, tail = (w - 3) / 2;
  return s.substr(0, offset_of_column(s, head)) + "..." + s.substr(offset_of_column(s, have - tail));
}

std::string cut_before_number(const std::string& s, size_t w) {
  if (display_width(s) <= w) return s;
  if (w <= 3) return std::string(w, '.');
  size_t at = offset_of_column(s, w - 3);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (at < s.size() && digit(s[at])) {
    while (at > 0 && (digit(s[at - 1]) || s[at - 1] == '.')) --at;
  }
  return s.substr(0, at) + "...";
}

std::string wrap_lines(const std::string& text, size_t width) {
  if (width == 0) return text;
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    bool has_nl = nl != std::string::npos;
    std::string line = text.substr(start, has_nl ? nl - start : std::string::npos);
    out += display_width(line) > width ? wrap_line(line, width) : line;
    if (has_nl) out += "\n";
    start = has_nl ? nl + 1 : text.size();
  }
  return out;
}

}  // namespace dpscope::reports
