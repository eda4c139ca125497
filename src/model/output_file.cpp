#include "model/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "util/error.h"

namespace dpscope::model {

namespace {

// Temporary files being written, for the signal handler: fixed storage, no
// allocation, a flag per slot the handler reads.
constexpr int kSlots = 8;
char g_paths[kSlots][PATH_MAX];
std::atomic<bool> g_used[kSlots];
std::mutex g_slots_mu;  // registration only, never taken in the handler
std::once_flag g_handlers_once;

extern "C" void remove_temp_files_and_die(int sig) {
  const int saved = errno;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load(std::memory_order_acquire)) ::unlink(g_paths[i]);
  }
  errno = saved;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // ignored or someone else's
    struct sigaction sa {};
    sa.sa_handler = remove_temp_files_and_die;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

int register_temp(const std::string& path) {
  std::call_once(g_handlers_once, install_handlers);
  if (path.size() >= PATH_MAX) return -1;
  std::lock_guard lock(g_slots_mu);
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load(std::memory_order_relaxed)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_used[i].store(true, std::memory_order_release);
    return i;
  }
  return -1;  // more than kSlots outputs at once: written, but not cleaned on a signal
}

void unregister_temp(int slot) {
  if (slot >= 0) g_used[slot].store(false, std::memory_order_release);
}

}  // namespace

unsigned new_file_mode() {
  // /proc/self/status says the umask without changing it; umask(2) can only
  // read it by setting it, which races with threads creating files.
  unsigned mask = 022;
  bool read = false;
  if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "Umask: %o", &mask) == 1) {
        read = true;
        break;
      }
    }
    std::fclose(f);
  }
  if (!read) {
    const mode_t m = ::umask(022);
    ::umask(m);
    mask = m;
  }
  return 0666u & ~mask;
}

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + (name ? std::string(" (") + name + ")" : "");
}

int write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

void stdout_failed(const std::string& what, int err) {
  throw InputError("<stdout>", 0, what + ": " + errno_text(err ? err : EIO));
}

TempOutput::TempOutput(const std::string& path) : path_(path), tmp_(path + ".tmp.XXXXXX") {
  // Blocked while the name is created and registered, so no signal can fall
  // between the two and leave the file behind.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);
  const int err = errno;
  if (fd_ >= 0) slot_ = register_temp(tmp_);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (fd_ < 0) throw InputError(path, 0, "cannot create output file: " + errno_text(err));
}

TempOutput::~TempOutput() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(tmp_.c_str());
  unregister_temp(slot_);
}

void TempOutput::commit() {
  // The mode of the file replaced, or what `>` would create.
  struct stat existing {};
  const mode_t mode = ::stat(path_.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)
                          ? existing.st_mode & 07777
                          : static_cast<mode_t>(new_file_mode());
  int err = 0;
  if (fd_ >= 0) {
    if (::fchmod(fd_, mode) != 0) err = errno;
    if (::close(fd_) != 0 && err == 0) err = errno;  // NFS and quotas report here
    fd_ = -1;
  } else if (::chmod(tmp_.c_str(), mode) != 0) {
    err = errno;
  }
  if (err != 0) throw InputError(path_, 0, "cannot write output file: " + errno_text(err));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    throw InputError(path_, 0, "cannot write output file: " + errno_text(errno));
  }
  committed_ = true;
  unregister_temp(slot_);
}

}  // namespace dpscope::model
