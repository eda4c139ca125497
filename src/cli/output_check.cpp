#include "cli/output_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include "util/error.h"

namespace dpscope::cli {

namespace {

// What other tools' -o takes: dpscope's formats and kubectl's.
bool is_format_word(const std::string& path, const std::vector<std::string>& formats) {
  static const std::vector<std::string> kWords = {"text", "txt", "markdown", "md",   "json", "csv",
                                                  "html", "yaml", "yml",     "wide", "name", "table"};
  return std::find(kWords.begin(), kWords.end(), path) != kWords.end() ||
         std::find(formats.begin(), formats.end(), path) != formats.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void check_output_destination(const std::string& option, const std::string& path,
                              const std::vector<std::string>& formats) {
  if (path.empty() || path == "-") return;
  const std::string what = option + " " + path + ": ";
  if (is_format_word(path, formats)) {
    const std::string file = " (to write a file named " + path + ", say " + option + " ./" + path + ")";
    const std::string said = what + "\"" + path + "\" is a format name, and " + option +
                             " names the output file here (kubectl's -o is dpscope's --format): ";
    std::string known = path == "md" ? "markdown" : path == "txt" ? "text" : path;
    if (formats.empty()) {
      throw UsageError(said + "this command always writes a snapshot (JSON); give a file name (" + option +
                       " node.json) or - for stdout" + file);
    }
    if (std::find(formats.begin(), formats.end(), known) != formats.end()) {
      throw UsageError(said + "use --format " + known + file);
    }
    throw UsageError(said + "there is no " + path + " output; --format is one of " + joined(formats) + file);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw UsageError(what + "is a folder; give a file name in it, e.g. " + option + " " +
                     (std::filesystem::path(path) / "node.json.zst").string());
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (stat(dir.c_str(), &st) != 0) {
    throw UsageError(what + "cannot write there: folder " + dir + ": " + std::strerror(errno) +
                     (errno == ENOENT ? " (create it first)" : ""));
  }
  if (!S_ISDIR(st.st_mode)) throw UsageError(what + "cannot write there: " + dir + " is not a folder");
  // The real test: the file is written atomically through a temporary file in
  // the same folder, so that is what must be creatable.
  std::string probe = (std::filesystem::path(dir) / ".dpscope-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) throw UsageError(what + "cannot write in folder " + dir + ": " + std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
}

}  // namespace dpscope::cli
