/*
 * smpbench: what a wake-up across CPUs costs, run the same way on cfslab and on Linux 6.1
 * in the same QEMU with two CPUs (`make bench`). Each figure is a round trip — two
 * wake-ups, each of a task that sleeps — as the fastest of 5 batches' averages:
 *   - pipe: two processes pinned to CPUs 0 and 1, one byte back and forth over two pipes
 *     (each wake-up of a task on the other CPU goes through a reschedule IPI);
 *   - futex, two CPUs: two threads pinned to CPUs 0 and 1, waking each other with
 *     FUTEX_WAKE and sleeping with FUTEX_WAIT;
 *   - futex, one CPU: the same two threads both on CPU 0 (a wake-up and a switch, no IPI).
 * And two paths of one direction:
 *   - membarrier: the main thread, on CPU 0, has a thread spinning on CPU 1 pass a memory
 *     barrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED): one inter-processor interrupt and its
 *     answer, a system call around them; the fastest of 5 batches' averages;
 *   - wake to running: a thread sleeps in FUTEX_WAIT on CPU 1, idle otherwise; the main
 *     thread notes the time and wakes it, and the thread notes when it runs: the wake-up,
 *     the reschedule IPI, the idle CPU's way out of `hlt` and its switch; the median of
 *     WAKES wake-ups.
 * Under icount virtual time is instructions, so a round trip's nanoseconds are the
 * instructions both CPUs spent on it, idle CPUs' halts aside.
 *
 * `smpbench free`: the futex ping-pong once more, ROUNDS round trips, both threads allowed
 * every CPU and neither pinned, so that each wake-up is placed by the scheduler's rules.
 *
 * `smpbench storm`, on however many CPUs the machine has: a wake-up storm. STORM_SLEEPERS
 * threads, thread i pinned to CPU i mod N, sleep in FUTEX_WAIT on one word; the main
 * thread, on CPU 0, bumps the word and wakes them all with one FUTEX_WAKE, then sleeps
 * until the last has answered; STORM_ROUNDS rounds. Its figure is the round's time over the
 * sleepers: what one wake-up costs the machine, every CPU's instructions counted, which
 * stays flat as CPUs are added unless the wake-ups wait for each other (a lock they all
 * take, its cache line passed around).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* <linux/futex.h> is not among musl's headers: FUTEX_WAIT and FUTEX_WAKE, private. */
enum { FUTEX_WAIT_PRIVATE = 0 | 128, FUTEX_WAKE_PRIVATE = 1 | 128 };

#define ROUNDS 2000
#define BATCHES 5
#define WAKES 201

/* <linux/membarrier.h>'s commands. */
enum { MEMBARRIER_PRIVATE_EXPEDITED = 1 << 3, MEMBARRIER_REGISTER_PRIVATE_EXPEDITED = 1 << 4 };

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void report(const char *what, long long ns, const char *per)
{
	printf("smpbench: %s: %lld ns per %s\n", what, ns, per);
}

/* Lets the other CPU run: sleeping 10 us (under icount a busy CPU 0 would hold CPU 1 back). */
static void doze(void)
{
	struct timespec t = {0, 10 * 1000};
	nanosleep(&t, NULL);
}

/* Pipe ping-pong between processes on CPUs 0 and 1. */
static long long pipe_batch(void)
{
	int there[2], back[2];
	if (pipe(there) || pipe(back))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		pin(1);
		char c;
		for (int i = 0; i < ROUNDS; i++)
			if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	char c = 'x';
	/* One round first, so that the child is on its CPU and asleep in read. */
	long long start = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (i == 1)
			start = now_ns();
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			return -1;
	}
	long long took = now_ns() - start;
	waitpid(child, NULL, 0);
	close(there[0]), close(there[1]), close(back[0]), close(back[1]);
	return took / (ROUNDS - 1);
}

/* Futex ping-pong: `turn` says whose move it is; each side waits until it is its own. */
static volatile int turn;
static int pong_cpu;

static void wait_for(int mine)
{
	while (turn != mine)
		syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, !mine, NULL, NULL, 0);
}

static void hand_over(int to)
{
	turn = to;
	syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *pong(void *arg)
{
	(void)arg;
	if (pong_cpu >= 0)
		pin(pong_cpu);
	for (int i = 0; i < ROUNDS; i++) {
		wait_for(1);
		hand_over(0);
	}
	return NULL;
}

static long long futex_batch(int cpu_of_pong)
{
	pong_cpu = cpu_of_pong;
	turn = 0;
	pthread_t thread;
	if (pthread_create(&thread, NULL, pong, NULL))
		return -1;
	long long start = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (i == 1)
			start = now_ns();
		hand_over(1);
		wait_for(0);
	}
	long long took = now_ns() - start;
	pthread_join(thread, NULL);
	return took / (ROUNDS - 1);
}

static long long best_of(long long (*batch)(int), int arg)
{
	long long best = -1;
	for (int b = 0; b < BATCHES; b++) {
		long long ns = batch(arg);
		if (ns < 0)
			return -1;
		if (best < 0 || ns < best)
			best = ns;
	}
	return best;
}

/* membarrier: CPU 1 runs a thread of this process, spinning (`pause` in its loop, which
 * under QEMU lets the other vCPU run); each call interrupts CPU 1 once. */
static volatile int spin_on, spinning;

static void *spinner(void *arg)
{
	(void)arg;
	pin(1);
	while (spin_on) {
		spinning = 1;
		__builtin_ia32_pause();
	}
	return NULL;
}

static long long membarrier_batch(int unused)
{
	(void)unused;
	spin_on = 1, spinning = 0;
	pthread_t thread;
	if (pthread_create(&thread, NULL, spinner, NULL))
		return -1;
	while (!spinning)
		doze();
	long long start = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (i == 1)
			start = now_ns();
		if (syscall(SYS_membarrier, MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) != 0)
			return -1;
	}
	long long took = now_ns() - start;
	spin_on = 0;
	pthread_join(thread, NULL);
	return took / (ROUNDS - 1);
}

/* Wake to running: `bell` rings (1) to wake the sleeper on CPU 1; `rounds_ready` and
 * `rounds_done` count its rounds, `woken_at` is when it ran last. */
static volatile int bell, rounds_ready, rounds_done;
static volatile long long woken_at;

static void *sleeper(void *arg)
{
	(void)arg;
	pin(1);
	for (int i = 0; i < WAKES; i++) {
		rounds_ready = i + 1;
		while (bell == 0)
			syscall(SYS_futex, &bell, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		woken_at = now_ns();
		bell = 0;
		rounds_done = i + 1;
	}
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static long long wake_to_running(void)
{
	static long long delays[WAKES];
	bell = 0, rounds_ready = 0, rounds_done = 0;
	pthread_t thread;
	if (pthread_create(&thread, NULL, sleeper, NULL))
		return -1;
	for (int i = 0; i < WAKES; i++) {
		while (rounds_ready != i + 1)
			doze();
		/* Long enough for the sleeper to be in FUTEX_WAIT and CPU 1 to halt. */
		doze();
		long long rang = now_ns();
		bell = 1;
		syscall(SYS_futex, &bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		/* Spinning with `pause`, which under QEMU hands the turn to the other vCPU at
		 * once: CPU 0 adds next to nothing to the one instruction counter meanwhile (a
		 * sleep would add its own way to idle, which real CPUs would run in parallel). */
		while (rounds_done != i + 1)
			__builtin_ia32_pause();
		delays[i] = woken_at - rang;
	}
	pthread_join(thread, NULL);
	qsort(delays, WAKES, sizeof delays[0], by_value);
	return delays[WAKES / 2];
}

/* The wake-up storm (see the top): `generation` is the word the sleepers wait on,
 * `answered` counts the sleepers that have woken in this round. */
#define STORM_SLEEPERS 8
#define STORM_ROUNDS 400
static volatile int generation, answered;
static int storm_cpus;

static void *storm_sleeper(void *arg)
{
	pin((int)(long)arg % storm_cpus);
	int seen = 0;
	for (int r = 0; r < STORM_ROUNDS; r++) {
		while (generation == seen)
			syscall(SYS_futex, &generation, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
		seen = generation;
		if (__atomic_add_fetch(&answered, 1, __ATOMIC_SEQ_CST) == STORM_SLEEPERS)
			syscall(SYS_futex, &answered, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

static long long storm(int cpus)
{
	storm_cpus = cpus;
	pthread_t threads[STORM_SLEEPERS];
	for (long i = 0; i < STORM_SLEEPERS; i++)
		if (pthread_create(&threads[i], NULL, storm_sleeper, (void *)i))
			return -1;
	/* Long enough for every sleeper to be on its CPU and asleep: the first round too is
	 * a storm, but it is not counted. */
	for (int i = 0; i < 10; i++)
		doze();
	long long start = 0;
	for (int r = 0; r < STORM_ROUNDS; r++) {
		if (r == 1)
			start = now_ns();
		answered = 0;
		__atomic_add_fetch(&generation, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &generation, FUTEX_WAKE_PRIVATE, STORM_SLEEPERS, NULL, NULL, 0);
		int now;
		while ((now = answered) != STORM_SLEEPERS)
			syscall(SYS_futex, &answered, FUTEX_WAIT_PRIVATE, now, NULL, NULL, 0);
	}
	long long took = now_ns() - start;
	for (int i = 0; i < STORM_SLEEPERS; i++)
		pthread_join(threads[i], NULL);
	return took / ((STORM_ROUNDS - 1) * STORM_SLEEPERS);
}

/* cfslab's /proc/lock_stat (Linux has the file only with CONFIG_LOCK_STAT, and another
 * layout): the waits for the scheduler's locks — its own and the runqueues' — over the
 * whole run, printed if found. */
static void scheduler_lock_waits(void)
{
	FILE *f = fopen("/proc/lock_stat", "r");
	if (!f)
		return;
	char line[256];
	long long contentions = 0, spins = 0, c, s;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Sched: %lld %lld", &c, &s) == 2 ||
		    sscanf(line, "Runqueue: %lld %lld", &c, &s) == 2) {
			contentions += c;
			spins += s;
		}
	fclose(f);
	printf("smpbench: scheduler lock waits: %lld, %lld spins\n", contentions, spins);
}

static long long pipe_of(int unused)
{
	(void)unused;
	return pipe_batch();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "free") == 0) {
		/* Both threads allowed every CPU: each wake-up is placed by the scheduler. */
		long long ns = futex_batch(-1);
		if (ns < 0)
			return 1;
		printf("smpbench: futex, threads allowed every CPU: %lld ns round trip\n", ns);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "storm") == 0) {
		/* The CPUs this process may use, counted before it pins itself to CPU 0. */
		cpu_set_t all;
		if (sched_getaffinity(0, sizeof all, &all) != 0)
			return 1;
		int cpus = CPU_COUNT(&all);
		pin(0);
		long long ns = storm(cpus);
		if (ns < 0) {
			printf("smpbench: the storm failed\n");
			return 1;
		}
		printf("smpbench: storm, %d CPUs: %lld ns per wake-up\n", cpus, ns);
		scheduler_lock_waits();
		return 0;
	}
	pin(0);
	long long pipes = best_of(pipe_of, 0);
	long long two = best_of(futex_batch, 1);
	long long one = best_of(futex_batch, 0);
	long long barrier = -1;
	if (syscall(SYS_membarrier, MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		barrier = best_of(membarrier_batch, 0);
	long long wake = wake_to_running();
	if (pipes < 0 || two < 0 || one < 0 || barrier < 0 || wake < 0) {
		printf("smpbench: a batch failed\n");
		return 1;
	}
	report("pipe, processes on two CPUs", pipes, "round trip");
	report("futex, threads on two CPUs", two, "round trip");
	report("futex, threads on one CPU", one, "round trip");
	report("membarrier, a thread running on CPU 1", barrier, "call");
	report("futex wake to running, on idle CPU 1", wake, "wake-up");
	scheduler_lock_waits();
	return 0;
}
