// Test support: run a command and capture what it printed.
#pragma once

#include <string>
#include <vector>

namespace dpscope::test {

struct RunResult {
  int exit_code = -1;   // -1: killed by a signal (see signal)
  int signal = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH) with argv, feeding `input` on stdin.
// Never goes through a shell.
RunResult run(const std::vector<std::string>& argv, const std::string& input = {});

// Runs a shell command line with /bin/sh -c (for pipelines in fixtures).
RunResult sh(const std::string& command, const std::string& input = {});

// The dpscope binary under test.
std::string dpscope_bin();
// Path inside the source tree ("fixtures/upstream/...").
std::string source_path(const std::string& rel);

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// A fresh directory under $TMPDIR, removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace dpscope::test
