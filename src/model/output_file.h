// Output files of every command: written to PATH.tmp.XXXXXX and renamed over
// PATH, so a reader never sees half a snapshot.
//
// Three promises beyond the rename:
//  - SIGINT, SIGTERM, SIGHUP (and SIGPIPE) while writing remove the temporary
//    file (a snapshot's is tens of MB): a signal handler unlinks the paths
//    registered here (unlink() is async-signal-safe), then the signal takes
//    its default action, so the exit status still says "killed by SIGINT".
//  - The file gets 0666 & ~umask, as `>` would give it; a file replaced
//    keeps its mode (a 0600 snapshot stays 0600).
//  - A write error names its errno: "No space left on device (ENOSPC)".
#pragma once

#include <string>

namespace dpscope::model {

class TempOutput {
 public:
  // Creates PATH.tmp.XXXXXX (InputError when it cannot).
  explicit TempOutput(const std::string& path);
  ~TempOutput();  // not committed: the temporary file is removed
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;

  int fd() const { return fd_; }
  const std::string& temp_path() const { return tmp_; }
  // Hands the descriptor to a FILE* (fdopen); close() then belongs to it.
  void release_fd() { fd_ = -1; }
  // Sets the mode, closes (when still owned) and renames over PATH. Throws InputError.
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

// The mode a new output file gets: 0666 & ~umask.
unsigned new_file_mode();

// "No space left on device (ENOSPC)".
std::string errno_text(int err);

// Writes all of `data` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, const char* data, size_t size);

// Writing to standard output failed: bad output, exit 2, errno named.
[[noreturn]] void stdout_failed(const std::string& what, int err);

}  // namespace dpscope::model
