/* A stand-in for a dataplane agent in the agents tests: run under an agent's
 * name (copied or symlinked as kube-proxy, cilium-agent, ...), it touches a
 * known amount of anonymous memory, starts a known number of threads, says
 * "ready" on stdout and then sleeps until killed, so its /proc and cgroup
 * figures hold still while dpscope and the test read them.
 *
 *   agent_stub MIB THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void* idle(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MIB THREADS\n", argv[0]);
    return 2;
  }
  const size_t bytes = (size_t)strtoul(argv[1], NULL, 10) << 20;
  const long threads = strtol(argv[2], NULL, 10);
  char* mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(mem, 0x5a, bytes); /* every page faulted in: resident, not just reserved */
  for (long i = 1; i < threads; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  /* The threads' stacks are touched by now; a short settle before "ready". */
  usleep(100 * 1000);
  if (write(1, "ready\n", 6) != 6) return 1;
  for (;;) pause();
}
