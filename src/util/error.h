// Error policy (see docs/errors.md):
//  - InputError: the user's input is wrong (file:line: what) -> exit 2
//  - UsageError: bad command line -> exit 2
//  - SystemError: a syscall failed; carries errno and a hint -> exit 4 unless caught
//    and turned into an `unavailable` record by a collector.
// Recoverable per-section failures never throw: a collector records them in
// Snapshot::unavailable instead (a missing capability is data).
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "util/inert.h"

namespace dpscope {

enum ExitCode : int {
  kExitOk = 0,
  kExitGateFailed = 1,
  kExitBadInput = 2,
  kExitIncomplete = 3,
  kExitInternal = 4,
  kExitNothingRead = 5,  // snapshot written, but no section could be read at all (no privilege)
};

class InputError : public std::runtime_error {
 public:
  // line == 0 means "the file as a whole" (e.g. JSON without a line, empty file).
  InputError(std::string file, size_t line, const std::string& what) : InputError(std::move(file), line, 0, what) {}
  // column (1-based, in bytes, as compilers and JSON parsers count) == 0: not known.
  InputError(std::string file, size_t line, size_t column, const std::string& what)
      : std::runtime_error(format(file, line, column, what)), file_(std::move(file)), line_(line), column_(column) {}
  const std::string& file() const { return file_; }
  size_t line() const { return line_; }
  size_t column() const { return column_; }

 private:
  static std::string format(const std::string& file, size_t line, size_t column, const std::string& what) {
    std::string where = file;
    if (line) where += ":" + std::to_string(line);
    if (line && column) where += ":" + std::to_string(column);
    // Messages quote input (a chain name, a line): inert, so stderr cannot
    // carry a terminal escape either.
    return inert(where + ": " + what);
  }
  std::string file_;
  size_t line_;
  size_t column_;
};

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(inert(what)) {}
};

class SystemError : public std::runtime_error {
 public:
  SystemError(const std::string& what, int err, std::string hint = {})
      : std::runtime_error(inert(what + ": " + std::strerror(err))), err_(err), hint_(inert(hint)) {}
  int err() const { return err_; }
  const std::string& hint() const { return hint_; }

 private:
  int err_;
  std::string hint_;
};

}  // namespace dpscope
