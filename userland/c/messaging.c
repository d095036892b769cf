/*
 * messaging: hackbench's load (`perf bench sched messaging`, reduced to fit a QEMU with
 * eight emulated CPUs), run the same way on cfslab and on Linux 6.1 (`make bench`).
 * GROUPS groups of PAIRS sender processes and PAIRS receiver processes; each sender
 * writes LOOPS messages of SIZE bytes to each receiver of its group, each receiver
 * through a pipe of its own; nothing is pinned, so the scheduler places every wake-up and
 * the balancer moves the tasks. A run's time goes from the moment every task is started to
 * the last one's end; the figure is the median of RUNS runs. On several CPUs the smallest
 * change to a path moves every later event, and with it where the tasks go: one run's time
 * can move by a fifth when one function gains a few instructions, where the median of runs
 * that start at different moments stays put.
 *
 * On cfslab the program also reads /proc/lock_stat before and after the run (Linux has
 * the file only with CONFIG_LOCK_STAT, which Debian's kernel lacks) and prints, for each
 * class of lock that was waited for meanwhile, the waits and the cycles they took: under
 * `-icount shift=0` a cycle is a virtual nanosecond, so the cycles over the runs' time
 * and the CPUs are the share of the machine spent waiting for that lock.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GROUPS 4
#define PAIRS 4
#define LOOPS 50
#define SIZE 100
#define CLASSES 32
#define RUNS 5

struct waits {
	char name[32];
	long long contentions, spins, cycles;
};

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The classes /proc/lock_stat lists, into `w`; how many (0 without the file). */
static int read_lock_stat(struct waits *w)
{
	FILE *f = fopen("/proc/lock_stat", "r");
	if (!f)
		return 0;
	char line[256];
	int n = 0;
	while (n < CLASSES && fgets(line, sizeof line, f))
		if (sscanf(line, "%31[A-Za-z]: %lld %lld %lld", w[n].name, &w[n].contentions,
			   &w[n].spins, &w[n].cycles) == 4)
			n++;
	fclose(f);
	return n;
}

/* Reads exactly `len` bytes, or fails. */
static int read_all(int fd, char *buf, size_t len)
{
	while (len > 0) {
		ssize_t got = read(fd, buf, len);
		if (got <= 0)
			return -1;
		buf += got;
		len -= (size_t)got;
	}
	return 0;
}

static void receiver(int fd)
{
	char message[SIZE];
	for (int i = 0; i < PAIRS * LOOPS; i++)
		if (read_all(fd, message, SIZE) != 0)
			_exit(1);
	_exit(0);
}

/* Waits for the go (a byte on `go`), then sends every message to `to`'s receivers. */
static void sender(int go, const int *to)
{
	char message[SIZE];
	memset(message, 's', SIZE);
	if (read(go, message, 1) != 1)
		_exit(2);
	for (int i = 0; i < LOOPS; i++)
		for (int r = 0; r < PAIRS; r++)
			if (write(to[r], message, SIZE) != SIZE)
				_exit(1);
	_exit(0);
}

/* Starts every group, lets the senders go and waits for every task: the time from the go
 * to the last end, or -1 if a task failed. */
static long long run(void)
{
	int go[2];
	if (pipe(go) != 0)
		return -1;
	int tasks = 0;
	for (int g = 0; g < GROUPS; g++) {
		int to[PAIRS];
		for (int r = 0; r < PAIRS; r++) {
			int fds[2];
			if (pipe(fds) != 0)
				return -1;
			pid_t pid = fork();
			if (pid == 0)
				receiver(fds[0]);
			close(fds[0]);
			to[r] = fds[1];
			tasks++;
		}
		for (int s = 0; s < PAIRS; s++) {
			if (fork() == 0)
				sender(go[0], to);
			tasks++;
		}
		for (int r = 0; r < PAIRS; r++)
			close(to[r]);
	}
	long long start = now_ns();
	char bytes[GROUPS * PAIRS];
	memset(bytes, 'g', sizeof bytes);
	if (write(go[1], bytes, sizeof bytes) != (ssize_t)sizeof bytes)
		return -1;
	int failed = 0;
	for (int i = 0; i < tasks; i++) {
		int status;
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	long long took = now_ns() - start;
	close(go[0]);
	close(go[1]);
	return failed ? -1 : took;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cpu_set_t all;
	if (sched_getaffinity(0, sizeof all, &all) != 0)
		return 1;
	struct waits before[CLASSES], after[CLASSES];
	int classes = read_lock_stat(before);
	long long took[RUNS], all_runs = 0;
	for (int r = 0; r < RUNS; r++) {
		took[r] = run();
		if (took[r] < 0) {
			printf("messaging: a task failed\n");
			return 1;
		}
		all_runs += took[r];
	}
	/* The median, by insertion sort. */
	for (int i = 1; i < RUNS; i++)
		for (int j = i; j > 0 && took[j - 1] > took[j]; j--) {
			long long t = took[j];
			took[j] = took[j - 1];
			took[j - 1] = t;
		}
	printf("messaging: %d CPUs, %d groups of %d senders and %d receivers, %d messages of %d "
	       "bytes, median of %d runs: %lld ns\n",
	       CPU_COUNT(&all), GROUPS, PAIRS, PAIRS, GROUPS * PAIRS * PAIRS * LOOPS, SIZE, RUNS,
	       took[RUNS / 2]);
	printf("messaging: the runs together: %lld ns\n", all_runs);
	int now = read_lock_stat(after);
	for (int i = 0; i < now; i++) {
		struct waits was = {{0}, 0, 0, 0};
		for (int j = 0; j < classes; j++)
			if (strcmp(before[j].name, after[i].name) == 0)
				was = before[j];
		long long waits = after[i].contentions - was.contentions;
		if (waits > 0)
			printf("messaging: lock waits, %s: %lld, %lld spins, %lld cycles\n",
			       after[i].name, waits, after[i].spins - was.spins,
			       after[i].cycles - was.cycles);
	}
	return 0;
}
