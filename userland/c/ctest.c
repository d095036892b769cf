/*
 * ctest: a C program, built with `musl-gcc -static`, that runs unchanged on Linux and on
 * cfslab; tests/tests/userland.rs checks that both print the same lines.
 *
 * It leans on what musl's start-up needs (the auxiliary vector, TLS through
 * arch_prctl(ARCH_SET_FS), set_tid_address), on stdio (writev, ioctl TCGETS/TIOCGWINSZ)
 * and on the calls the seeds' workloads make: fork, vfork + execve, wait4, pipe, nanosleep,
 * clock_gettime and setuid, and select/poll as lat3 (seed 002) sleeps. Two processes doing floating-point work while they yield to each
 * other check that each keeps its own SSE registers across context switches.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Waits for `pid` and returns its exit status, or -1 if it did not exit normally. */
static int exit_status_of(pid_t pid)
{
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A sum of `n` terms whose rounding depends on every step, yielding the CPU every 500
 * terms so that another process's SSE state is loaded in between. */
static double yielding_sum(int n, double scale)
{
	volatile double sum = 0.0;
	for (int i = 1; i <= n; i++) {
		sum += scale / (double)i;
		if (i % 500 == 0)
			sched_yield();
	}
	return sum;
}

static long long elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

/* What the program does when it is exec'd as `ctest child WORD`. */
static int as_child(int argc, char **argv)
{
	printf("  exec'd child: argc %d, argv[2] = %s\n", argc, argc > 2 ? argv[2] : "(none)");
	return 7;
}

int main(int argc, char **argv, char **envp)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return as_child(argc, argv);
	/* Line-buffered on a pipe as on the console: the lines keep their order around fork. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ctest: printf %d %s %.3f %x\n", 42, "musl", 2.5 * 1.25, 0xcf5);

	/* Reference sums, computed before any other process exists. */
	double child_ref = yielding_sum(4000, 1.0), parent_ref = yielding_sum(4000, 3.0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(yielding_sum(4000, 1.0) == child_ref ? 0 : 1);
	double mine = yielding_sum(4000, 3.0);
	check(pid > 0 && exit_status_of(pid) == 0 && mine == parent_ref,
	      "fork: two processes keep their own SSE registers across switches");

	pid = fork();
	if (pid == 0)
		_exit(3);
	check(exit_status_of(pid) == 3, "fork + _exit(3) + waitpid: status 3");

	int fds[2];
	check_pipe(fds, "pipe: the two lowest free descriptors");
	pid = fork();
	if (pid == 0) {
		char buf[16] = {0};
		close(fds[1]);
		ssize_t n = read(fds[0], buf, sizeof buf - 1);
		_exit(n == 4 && strcmp(buf, "ping") == 0 ? 0 : 1);
	}
	close(fds[0]);
	check(write(fds[1], "ping", 4) == 4, "write to the pipe");
	close(fds[1]);
	check(exit_status_of(pid) == 0, "the child read \"ping\" from the pipe");

	char *child_argv[] = {argv[0], "child", "from-vfork", NULL};
	pid = vfork();
	if (pid == 0) {
		execve(argv[0], child_argv, envp);
		_exit(127);
	}
	check(exit_status_of(pid) == 7, "vfork + execve of itself: the child exited 7");

	pid = vfork();
	if (pid == 0) {
		char *none[] = {"/bin/no-such-program", NULL};
		execve(none[0], none, envp);
		_exit(errno == ENOENT ? 0 : 1);
	}
	check(exit_status_of(pid) == 0, "execve of a missing file: ENOENT");

	struct timespec before, after, cpu;
	clock_gettime(CLOCK_MONOTONIC, &before);
	struct timespec nap = {0, 20 * 1000 * 1000};
	int slept = nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &after);
	long long took = elapsed_ns(&before, &after);
	check(slept == 0 && took >= 20000000LL && took < 1000000000LL,
	      "nanosleep 20 ms: at least 20 ms passed on CLOCK_MONOTONIC");
	check(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0 && (cpu.tv_sec > 0 || cpu.tv_nsec > 0),
	      "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) counts this process's CPU time");

	/* lat3's sleep: select with no files, only a timeout. */
	clock_gettime(CLOCK_MONOTONIC, &before);
	struct timeval tv = {0, 10 * 1000};
	int selected = select(0, NULL, NULL, NULL, &tv);
	clock_gettime(CLOCK_MONOTONIC, &after);
	took = elapsed_ns(&before, &after);
	check(selected == 0 && took >= 10000000LL && took < 1000000000LL,
	      "select(0, NULL, NULL, NULL, 10 ms) sleeps at least 10 ms");

	check_pipe(fds, "pipe for poll");
	struct pollfd pfd = {fds[0], POLLIN, 0};
	int empty = poll(&pfd, 1, 0);
	write(fds[1], "x", 1);
	int full = poll(&pfd, 1, 0), full_events = pfd.revents;
	char byte;
	read(fds[0], &byte, 1);
	close(fds[1]);
	int hup = poll(&pfd, 1, 0), hup_events = pfd.revents;
	close(fds[0]);
	check(empty == 0 && full == 1 && full_events == POLLIN && hup == 1 && hup_events == POLLHUP,
	      "poll: an empty pipe times out, a written one is POLLIN, a closed one POLLHUP");

	check_pipe(fds, "pipe for a child's late write");
	pid = fork();
	if (pid == 0) {
		struct timespec later = {0, 5 * 1000 * 1000};
		nanosleep(&later, NULL);
		_exit(write(fds[1], "y", 1) == 1 ? 0 : 1);
	}
	pfd = (struct pollfd){fds[0], POLLIN, 0};
	int woke = poll(&pfd, 1, -1);
	check(woke == 1 && pfd.revents == POLLIN && exit_status_of(pid) == 0,
	      "poll with no timeout wakes when a child writes 5 ms later");

	fd_set readable, writable;
	FD_ZERO(&readable);
	FD_ZERO(&writable);
	FD_SET(fds[0], &readable);
	FD_SET(fds[1], &writable);
	struct timespec no_wait = {0, 0};
	int both = pselect(fds[1] + 1, &readable, &writable, NULL, &no_wait, NULL);
	check(both == 2 && FD_ISSET(fds[0], &readable) && FD_ISSET(fds[1], &writable),
	      "pselect: the read end with a byte in it and the write end are both ready");
	close(fds[0]);
	close(fds[1]);

	/* Root drops to uid 1000 and cannot come back; anyone else cannot become root. */
	pid = fork();
	if (pid == 0) {
		int ok = getuid() != 0 || (setuid(1000) == 0 && getuid() == 1000);
		ok = ok && setuid(0) == -1 && errno == EPERM;
		_exit(ok ? 0 : 1);
	}
	check(exit_status_of(pid) == 0, "setuid: a non-root uid may not become root");

	if (failures)
		printf("ctest: %d checks failed\n", failures);
	else
		printf("ctest: all checks passed\n");
	return failures ? 1 : 0;
}
