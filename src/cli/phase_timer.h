// DPSCOPE_TIMING=1: each phase's wall time and the peak RSS so far on stderr
// (how BENCHMARKS.md splits a command's time and memory into its parts).
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace dpscope::cli {

class PhaseTimer {
 public:
  PhaseTimer() : on_(std::getenv("DPSCOPE_TIMING") != nullptr), start_(std::chrono::steady_clock::now()) {}

  // Ends the phase called `name` and starts the next one.
  void operator()(const char* name) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    std::ifstream status("/proc/self/status");
    std::string line, hwm;
    while (std::getline(status, line)) {
      if (line.rfind("VmHWM:", 0) == 0) hwm = line.substr(6);
    }
    std::cerr << "dpscope: timing: " << name << " " << std::chrono::duration<double>(now - start_).count()
              << " s, peak RSS so far" << hwm << "\n";
    start_ = now;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dpscope::cli
