/*
 * csmp: several CPUs as a program sees them, unchanged on Linux and on cfslab (booted with
 * --smp 2); tests/tests/smp.rs checks that both print the same lines. It needs two CPUs.
 *
 * sched_setaffinity moves the caller to the CPU it names (getcpu says where it runs);
 * sched_getaffinity reads the mask back; a mask of no online CPU is EINVAL. Two processes
 * pinned to two CPUs play ping-pong over pipes, each waking the other across CPUs, and
 * each stays on its own CPU throughout. A child on the other CPU writes to memory it
 * shares copy-on-write with its parent, which keeps its own value. Two CPU hogs pinned to
 * two CPUs run side by side: the `hogs:` line says how long both took to burn HOG_MS of
 * CPU time each (not a check here: on a loaded host it varies; smp.rs bounds cfslab's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define ROUNDS 200
#define HOG_MS 40

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static int here(void)
{
	unsigned cpu = 99;
	syscall(SYS_getcpu, &cpu, NULL, NULL);
	return (int)cpu;
}

static long long ns_of(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Round trips over two pipes with a process pinned to the other CPU; returns the rounds
 * in which either side found itself off its CPU. */
static int ping_pong(void)
{
	int to_child[2], to_parent[2];
	if (pipe(to_child) || pipe(to_parent))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		int off = pin(1) != 0;
		char c;
		for (int i = 0; i < ROUNDS; i++) {
			if (read(to_child[0], &c, 1) != 1)
				_exit(100);
			off += here() != 1;
			if (write(to_parent[1], &c, 1) != 1)
				_exit(100);
		}
		_exit(off > 99 ? 99 : off);
	}
	int off = 0;
	char c = 'x';
	for (int i = 0; i < ROUNDS; i++) {
		if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
			return -1;
		off += here() != 0;
	}
	int status;
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? off + WEXITSTATUS(status) : -1;
}

/* A child pinned to the other CPU writes to a page it shares copy-on-write with its parent. */
static int cow_across_cpus(void)
{
	static volatile long value = 1;
	int fds[2];
	if (pipe(fds))
		return 0;
	pid_t child = fork();
	if (child == 0) {
		pin(1);
		value = 2;
		long seen = value;
		write(fds[1], &seen, sizeof seen);
		_exit(here() == 1 ? 0 : 1);
	}
	long seen = 0;
	read(fds[0], &seen, sizeof seen);
	int status;
	waitpid(child, &status, 0);
	return seen == 2 && value == 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Burns CPU on `cpu` until this process has run HOG_MS ms. */
static void hog(int cpu)
{
	pin(cpu);
	while (ns_of(CLOCK_PROCESS_CPUTIME_ID) < HOG_MS * 1000000LL)
		;
	_exit(here() == cpu ? 0 : 1);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pin(0);
	cpu_set_t set;
	CPU_ZERO(&set);
	check(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
		      CPU_ISSET(0, &set),
	      "sched_getaffinity: pinned to CPU 0, the mask holds it alone");
	check(pin(1) == 0 && here() == 1, "sched_setaffinity moves the caller to CPU 1 at once");
	check(pin(0) == 0 && here() == 0, "and back to CPU 0");
	CPU_ZERO(&set);
	errno = 0;
	check(sched_setaffinity(0, sizeof set, &set) == -1 && errno == EINVAL,
	      "an empty mask is EINVAL");
	CPU_ZERO(&set);
	CPU_SET(63, &set);
	errno = 0;
	check(sched_setaffinity(0, sizeof set, &set) == -1 && errno == EINVAL,
	      "a mask of an offline CPU is EINVAL");
	check(here() == 0, "a refused mask leaves the caller where it was");
	check(ping_pong() == 0, "ping-pong across two pinned CPUs: each side stays on its own");
	check(cow_across_cpus(), "a child on the other CPU writes its copy of a shared page");
	long long start = ns_of(CLOCK_MONOTONIC);
	pid_t hogs[2];
	for (int cpu = 0; cpu < 2; cpu++) {
		hogs[cpu] = fork();
		if (hogs[cpu] == 0)
			hog(cpu);
	}
	int on_their_cpus = 1;
	for (int cpu = 0; cpu < 2; cpu++) {
		int status;
		waitpid(hogs[cpu], &status, 0);
		on_their_cpus &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	long long took = ns_of(CLOCK_MONOTONIC) - start;
	check(on_their_cpus, "two hogs pinned to two CPUs stay there");
	printf("hogs: %d ms of CPU each, both done in %lld us\n", HOG_MS, took / 1000);
	if (failures)
		return 1;
	printf("csmp: all checks passed\n");
	return 0;
}
