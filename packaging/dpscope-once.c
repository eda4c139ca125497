// dpscope-once: runs one command, reports how it ended, then waits until the
// container is stopped; and hands the command's result file out.
//
//   dpscope-once [--result FILE] COMMAND [ARG...]
//   dpscope-once --cat FILE
//
// The DaemonSet's container (and the kubectl-debug pod of `kubectl dpscope
// node|cluster`) must stay up after its one snapshot: a pod whose container
// exits is restarted, which would snapshot the node again and again (and
// treat dpscope's exit 3, "incomplete", as a crash), and a file in an exited
// container cannot be fetched. The image has no shell, no `sleep`, no `cat`
// and no `tar` (so no `kubectl cp`), so this small static program is the
// container's PID 1 and, through `kubectl exec POD -- dpscope-once --cat
// FILE`, the way the snapshot file leaves the pod: out of band, not through
// the container log (kubelet rotates logs at 10 MiB; a 20k-service node's
// snapshot is ~100 MB of JSON).
//
// Its last line on stderr, "dpscope-once: <cmd> exited <N>", with --result
// followed by "; result FILE SIZE bytes" (or "; result FILE missing"), is what
// the plugin reads as the exit code and as the size to check the copy by.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static int usage(void) {
  fprintf(stderr, "usage: dpscope-once [--result FILE] COMMAND [ARG...]\n       dpscope-once --cat FILE\n");
  return 2;
}

// FILE to stdout, whole; 1 and a message when it cannot.
static int cat(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "dpscope-once: %s: %s\n", path, strerror(errno));
    return 1;
  }
  static char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fprintf(stderr, "dpscope-once: reading %s: %s\n", path, strerror(errno));
      return 1;
    }
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        fprintf(stderr, "dpscope-once: writing %s to stdout: %s\n", path, strerror(errno));
        return 1;
      }
      off += w;
    }
  }
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--cat") == 0) return cat(argv[2]);
  const char* result = NULL;
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--result") == 0) {
    if (argc < 4) return usage();
    result = argv[2];
    first = 3;
  }
  if (argc <= first || argv[first][0] == '-') return usage();
  // PID 1 gets no default signal actions: without handlers, pod deletion
  // would wait for the grace period and SIGKILL.
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "dpscope-once: fork: %s\n", strerror(errno));
    return 4;
  }
  if (child == 0) {
    execv(argv[first], argv + first);
    fprintf(stderr, "dpscope-once: exec %s: %s\n", argv[first], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  fflush(stdout);
  char tail[4200] = "";
  if (result != NULL) {
    struct stat st;
    if (stat(result, &st) == 0 && S_ISREG(st.st_mode)) {
      snprintf(tail, sizeof tail, "; result %s %lld bytes", result, (long long)st.st_size);
    } else {
      snprintf(tail, sizeof tail, "; result %s missing", result);
    }
  }
  if (WIFEXITED(status)) {
    fprintf(stderr, "dpscope-once: %s exited %d%s\n", argv[first], WEXITSTATUS(status), tail);
  } else {
    fprintf(stderr, "dpscope-once: %s exited %d (signal %d)%s\n", argv[first], 128 + WTERMSIG(status),
            WTERMSIG(status), tail);
  }
  for (;;) pause();
}
