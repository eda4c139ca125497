#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace dpscope::cli {

Progress::Progress(bool wanted) : shown_(wanted && isatty(STDERR_FILENO)) {
  if (shown_) ticker_ = std::thread([this] { loop(); });
}

Progress::~Progress() { done(); }

void Progress::phase(const std::string& text) {
  if (!shown_) return;
  std::lock_guard<std::mutex> lock(mu_);
  text_ = text;
  started_ = std::chrono::steady_clock::now();
  draw();
}

void Progress::done() {
  if (!shown_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
    // \r and erase-line: the next message starts on a clean line.
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
  cv_.notify_all();
  ticker_.join();
}

void Progress::draw() {
  if (text_.empty()) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::fprintf(stderr, "\r\x1b[Kdpscope: %s ... %.1f s", text_.c_str(), s);
  std::fflush(stderr);
}

void Progress::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (!stop_) draw();
  }
}

}  // namespace dpscope::cli
