#include "cli/output_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace dpscope::cli {

void check_output_destination(const std::string& option, const std::string& path) {
  if (path.empty() || path == "-") return;
  const std::string what = option + " " + path + ": ";
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
