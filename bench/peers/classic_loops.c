/* Plain C loops doing what truebench's classic syscall, pipe-throughput, process-creation
 * and execl tests do per loop, for bench/peers/classic_vs_c.sh. Each pass runs for a
 * window, checking the clock every batch; prints loops per second of each pass.
 * execl forks a chain of 10 execs of this small program (`classic_loops link N` execs
 * itself with N-1 and exits 73 at 1), as UnixBench's execl test execs its own small binary.
 * Usage: classic_loops syscall|pipe|spawn|execl PASSES WINDOW_S */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static long batch(const char *test, int *p) {
  char buf[512];
  if (!strcmp(test, "syscall")) {
    for (int i = 0; i < 1000; i++) {
      int d = dup(p[0]);
      if (d < 0 || close(d)) exit(1);
      syscall(SYS_getpid);
      getuid();
      umask(022);
    }
    return 1000;
  }
  if (!strcmp(test, "pipe")) {
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < 1000; i++) {
      if (write(p[1], buf, 512) != 512 || read(p[0], buf, 512) != 512) exit(1);
    }
    return 1000;
  }
  if (!strcmp(test, "execl")) {
    int status;
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid == 0) {
      execl("/proc/self/exe", "classic_loops", "link", "10", (char *)0);
      _exit(127);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 73) exit(1);
    return 10;
  }
  for (int i = 0; i < 10; i++) {
    int status;
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid == 0) _exit(0);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) exit(1);
  }
  return 10;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "link")) {
    long n = atol(argv[2]);
    char left[24];
    if (n <= 1) _exit(73);
    snprintf(left, sizeof left, "%ld", n - 1);
    execl("/proc/self/exe", "classic_loops", "link", left, (char *)0);
    _exit(127);
  }
  if (argc != 4) {
    fprintf(stderr, "usage: %s syscall|pipe|spawn|execl PASSES WINDOW_S\n", argv[0]);
    return 2;
  }
  int passes = atoi(argv[2]);
  double window = atof(argv[3]);
  int p[2];
  if (pipe(p)) return 1;
  for (int k = 0; k < passes; k++) {
    long n = 0;
    double t0 = now(), t1;
    do {
      n += batch(argv[1], p);
      t1 = now();
    } while (t1 - t0 < window);
    printf("%.1f\n", n / (t1 - t0));
  }
  return 0;
}
