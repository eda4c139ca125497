// Progress on stderr during the long phases of `snapshot` and `import` (a
// 350k-rule node takes seconds): one line, redrawn in place with the phase
// and its elapsed time, only when stderr is a terminal, and cleared before
// anything else is printed. -q/--no-progress turn it off; in a pipe, a file
// or a pod's log there is none.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace dpscope::cli {

class Progress {
 public:
  // Shown only when `wanted` and stderr is a terminal.
  explicit Progress(bool wanted);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool shown() const { return shown_; }
  // Starts a phase ("reading netfilter"); drawn at once, then every 100 ms.
  void phase(const std::string& text);
  // Clears the line (also done by the destructor).
  void done();

 private:
  void draw();  // with mu_ held
  void loop();

  bool shown_ = false;
  bool stop_ = false;
  std::string text_;
  std::chrono::steady_clock::time_point started_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
};

}  // namespace dpscope::cli
