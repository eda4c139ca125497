// dpscope-once: runs one command, reports how it ended, then waits until the
// container is stopped.
//
// The DaemonSet's container must stay up after its one snapshot: a pod whose
// container exits is restarted, which would snapshot the node again and again
// (and treat dpscope's exit 3, "incomplete", as a crash). The image has no
// shell and no `sleep`, so this small static program is the container's PID 1.
// Its last line on stderr, "dpscope-once: <cmd> exited <N>", is what the
// collection step (kubectl dpscope collect) reads as the exit code.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dpscope-once COMMAND [ARG...]\n");
    return 2;
  }
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
    execv(argv[1], argv + 1);
    fprintf(stderr, "dpscope-once: exec %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  fflush(stdout);
  if (WIFEXITED(status)) {
    fprintf(stderr, "dpscope-once: %s exited %d\n", argv[1], WEXITSTATUS(status));
  } else {
    fprintf(stderr, "dpscope-once: %s exited %d (signal %d)\n", argv[1], 128 + WTERMSIG(status),
            WTERMSIG(status));
  }
  for (;;) pause();
}
