#include "cli/usage_words.h"

#include <algorithm>

namespace dpscope::cli {

namespace {

// Levenshtein distance (insert, delete, substitute: 1 each).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
  if (word.empty()) return "";
  // A prefix of one name only: "ver" -> verify or version is no guess, "verif" -> verify.
  std::vector<std::string> prefixed;
  for (const auto& n : names) {
    if (word.size() >= 2 && starts_with(n, word)) prefixed.push_back(n);
  }
  if (prefixed.size() == 1) return prefixed.front();
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_distance) {
      best = n;
      best_distance = d;
    }
  }
  return best;
}

std::string parse_error_words(const CLI::ParseError& e) {
  std::string what = e.what();
  const std::string one = "The following argument was not expected: ";
  const std::string many = "The following arguments were not expected: ";
  if (starts_with(what, one)) {
    const std::string arg = what.substr(one.size());
    return (starts_with(arg, "-") ? "unknown option " : "unexpected argument ") + arg;
  }
  if (starts_with(what, many)) return "unexpected arguments: " + what.substr(many.size());
  return what;
}

std::string usage_message(const std::string& command, const std::string& what, bool with_help_hint) {
  std::string out = "dpscope: ";
  if (!command.empty() && !starts_with(what, command + ": ")) out += command + ": ";
  out += what + "\n";
  if (with_help_hint) out += "see 'dpscope " + (command.empty() ? "" : command + " ") + "--help'\n";
  return out;
}

}  // namespace dpscope::cli
