/*
 * craces: what a program sees when its threads race each other on several CPUs, unchanged
 * on Linux and on cfslab; tests/tests/smp_races.rs runs it natively and on cfslab at 1, 2
 * and 4 CPUs and compares the lines. Each case is one argument (all of them without one):
 *
 *   cow-write   a process forks while its other threads keep writing to the memory it
 *               shares: a child must never see what the parent wrote after the fork
 *               (copy-on-write must hold whatever the siblings' stores do meanwhile).
 *   cow-unmap   a process forks while a thread maps, fills and unmaps pages: a child's
 *               copy of a page must keep the bytes it had at the fork, never change under
 *               it (a frame freed while the child still maps it would).
 *   affinity    two threads play futex ping-pong while two others keep moving them from
 *               CPU to CPU with sched_setaffinity: every round ends (a task moved to an
 *               idle CPU must get that CPU).
 *   storm S     (only when asked) four threads in a ring for S seconds, each on its turn
 *               giving the next a new affinity and waking it with a futex.
 *   wake        a 1 ms sleeper beside a busy thread on its CPU (the last): its wake-up
 *               preempts the busy thread, so it is late by much less than a tick; then
 *               the same with a busy thread on every CPU, measured only.
 *   mprotect    a store to a page made read-only by mprotect faults, in one thread and
 *               in a thread on another CPU; PROT_READ|PROT_WRITE gives it back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* <linux/futex.h>, which musl-gcc does not see. */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

static int cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	return CPU_COUNT(&set);
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---- cow-write --------------------------------------------------------------------- */

#define FORKS 40
#define WRITERS 3
#define WORDS 512 /* one page of longs per writer */

static atomic_int stop;
static long shared_words[WRITERS][WORDS] __attribute__((aligned(4096)));

static void *writer(void *arg)
{
	long *words = arg;
	long n = 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < WORDS; i++)
			words[i] = n;
		n++;
	}
	return NULL;
}

/* Forks FORKS children while WRITERS threads rewrite their pages. Each child copies what
 * it sees, waits until the parent has written a marker after the fork, and checks that
 * its copy still holds what it had: returns how many children saw the parent's writes. */
static int cow_write(void)
{
	pthread_t threads[WRITERS];
	atomic_store(&stop, 0);
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&threads[i], NULL, writer, shared_words[i]);
	int leaked = 0;
	for (int f = 0; f < FORKS; f++) {
		int ready[2];
		if (pipe(ready) != 0)
			return -1;
		pid_t child = fork();
		if (child == 0) {
			static long before[WRITERS][WORDS];
			memcpy(before, shared_words, sizeof before);
			char c;
			/* The parent's writers go on: by the time the parent says so, each of
			 * them has rewritten its page (the parent waited for that). */
			if (read(ready[0], &c, 1) != 1)
				_exit(2);
			_exit(memcmp(before, shared_words, sizeof before) != 0);
		}
		/* Wait until every writer has moved on past what the child could have seen. */
		long seen[WRITERS];
		for (int i = 0; i < WRITERS; i++)
			seen[i] = shared_words[i][WORDS - 1];
		for (int i = 0; i < WRITERS; i++)
			while (shared_words[i][WORDS - 1] <= seen[i] + 1)
				sched_yield();
		if (write(ready[1], "g", 1) != 1)
			return -1;
		int status = 0;
		waitpid(child, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			leaked++;
		close(ready[0]);
		close(ready[1]);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(threads[i], NULL);
	return leaked;
}

/* ---- cow-unmap --------------------------------------------------------------------- */

#define MAPPERS 2
#define MAP_PAGES 8

/* Each mapper's mapping of the moment (NULL between two), for a child to look at. */
static unsigned char *_Atomic mapping[MAPPERS];

static void *mapper(void *arg)
{
	long id = (long)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned char *p = mmap(NULL, MAP_PAGES * 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		atomic_store(&mapping[id], p);
		memset(p, 0x10 + (int)id, MAP_PAGES * 4096);
		atomic_store(&mapping[id], NULL);
		munmap(p, MAP_PAGES * 4096);
	}
	return NULL;
}

/* The first byte of each page of `p`'s MAP_PAGES pages. */
static void first_bytes(const unsigned char *p, unsigned char *out)
{
	for (int i = 0; i < MAP_PAGES; i++)
		out[i] = p[i * 4096];
}

/* A page of this pattern, set before the threads start: the child checks it keeps it. */
static unsigned char steady[MAP_PAGES * 4096] __attribute__((aligned(4096)));

/* Forks FORKS children while MAPPERS threads map, fill and unmap. Each child checks, for a
 * while, that its pages keep the bytes they had: its own copy of `steady`, and whatever
 * mapping it inherited in the middle of being filled (its bytes may be half-filled, but
 * must not change once the child has them). Returns how many children saw a change. */
static int cow_unmap(void)
{
	memset(steady, 0x5a, sizeof steady);
	pthread_t threads[MAPPERS];
	atomic_store(&stop, 0);
	for (long i = 0; i < MAPPERS; i++)
		pthread_create(&threads[i], NULL, mapper, (void *)i);
	int changed = 0;
	for (int f = 0; f < FORKS; f++) {
		pid_t child = fork();
		if (child == 0) {
			/* The mappings it inherited in the middle of being filled: whatever
			 * bytes they had at the fork, they keep. */
			unsigned char at_fork[MAPPERS][MAP_PAGES], now[MAP_PAGES];
			unsigned char *inherited[MAPPERS];
			for (int m = 0; m < MAPPERS; m++) {
				inherited[m] = atomic_load(&mapping[m]);
				if (inherited[m])
					first_bytes(inherited[m], at_fork[m]);
			}
			int bad = 0;
			for (int round = 0; round < 40 && !bad; round++) {
				for (int m = 0; m < MAPPERS; m++) {
					if (!inherited[m])
						continue;
					first_bytes(inherited[m], now);
					bad |= memcmp(now, at_fork[m], MAP_PAGES) != 0;
				}
				for (size_t i = 0; i < sizeof steady; i += 64)
					bad |= steady[i] != 0x5a;
				/* Fresh memory of its own, which a freed frame given back to the
				 * parent's mapper would overwrite. */
				unsigned char *mine = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
							   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (mine != MAP_FAILED) {
					memset(mine, 0x77, 4096);
					sched_yield();
					for (int i = 0; i < 4096; i += 64)
						bad |= mine[i] != 0x77;
					munmap(mine, 4096);
				}
			}
			_exit(bad);
		}
		int status = 0;
		waitpid(child, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			changed++;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < MAPPERS; i++)
		pthread_join(threads[i], NULL);
	return changed;
}

/* ---- affinity ---------------------------------------------------------------------- */

/* The rounds of the ping-pong (a second argument sets them). */
static int rounds = 5000;
/* A third argument: print the rounds played every second of the wait. */
static int show_progress;

static atomic_int turn; /* whose move it is: 0 or 1 */
static atomic_int tids[2];
static atomic_int rounds_done;

static void *player(void *arg)
{
	int me = (int)(long)arg;
	atomic_store(&tids[me], (int)syscall(SYS_gettid));
	for (int r = 0; r < rounds; r++) {
		while (atomic_load(&turn) != me)
			syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, !me, NULL, NULL, 0);
		atomic_store(&turn, !me);
		syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		if (me == 0)
			atomic_fetch_add(&rounds_done, 1);
	}
	return NULL;
}

static void *mover(void *arg)
{
	int me = (int)(long)arg, n = cpus(), step = 0;
	while (!atomic_load(&stop)) {
		cpu_set_t set;
		CPU_ZERO(&set);
		/* One CPU, two, then all of them: a task moved while running, while waiting
		 * and while asleep on the futex. */
		switch (step % 4) {
		case 3:
			for (int c = 0; c < n; c++)
				CPU_SET(c, &set);
			break;
		case 2:
			CPU_SET((step / 4 + me + 1) % n, &set);
			/* fall through */
		default:
			CPU_SET((step / 4 + step + me) % n, &set);
		}
		int tid = atomic_load(&tids[(step + me) % 2]);
		if (tid)
			sched_setaffinity(tid, sizeof set, &set);
		step++;
	}
	return NULL;
}

/* Returns the rounds played (rounds when every one ended) within a generous time. */
static int affinity_storm(void)
{
	pthread_t players[2], movers[2];
	atomic_store(&stop, 0);
	atomic_store(&turn, 0);
	atomic_store(&rounds_done, 0);
	for (long i = 0; i < 2; i++)
		pthread_create(&players[i], NULL, player, (void *)i);
	for (long i = 0; i < 2; i++)
		pthread_create(&movers[i], NULL, mover, (void *)i);
	/* Every round takes microseconds; a wedged one never ends. 20 s is plenty. */
	long long give_up = now_ns() + 20000000000LL;
	while (atomic_load(&rounds_done) < rounds && now_ns() < give_up) {
		struct timespec t = {0, 10000000};
		nanosleep(&t, NULL);
		static long long last;
		if (show_progress && now_ns() - last > 1000000000LL) {
			last = now_ns();
			printf("progress %d\n", atomic_load(&rounds_done));
		}
	}
	int done = atomic_load(&rounds_done);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(movers[i], NULL);
	if (done < rounds)
		return done; /* The players are stuck: the caller exits without joining. */
	for (int i = 0; i < 2; i++)
		pthread_join(players[i], NULL);
	return done;
}

/* ---- storm ------------------------------------------------------------------------- */

#define RING 4

static atomic_int ring_turn;
static atomic_int ring_tids[RING];
static atomic_long ring_passes;

/* Thread `me` of the ring: on its turn, gives the next thread a new affinity, passes the
 * turn to it and wakes it, until `stop`. */
static void *ring_member(void *arg)
{
	int me = (int)(long)arg, n = cpus(), step = 0;
	atomic_store(&ring_tids[me], (int)syscall(SYS_gettid));
	while (!atomic_load(&stop)) {
		int turn = atomic_load(&ring_turn);
		if (turn % RING != me) {
			struct timespec t = {0, 2000000};
			syscall(SYS_futex, &ring_turn, FUTEX_WAIT_PRIVATE, turn, &t, NULL, 0);
			continue;
		}
		int next = (me + 1) % RING, tid = atomic_load(&ring_tids[next]);
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((me + step) % n, &set);
		if (step % 2)
			CPU_SET((me + step + 1) % n, &set);
		if (tid)
			sched_setaffinity(tid, sizeof set, &set);
		step++;
		atomic_fetch_add(&ring_passes, 1);
		atomic_store(&ring_turn, turn + 1);
		syscall(SYS_futex, &ring_turn, FUTEX_WAKE_PRIVATE, RING, NULL, NULL, 0);
	}
	return NULL;
}

/* A ring of RING threads for `seconds`: the passes it made (0 if any thread did not end). */
static long affinity_storm_ring(int seconds)
{
	pthread_t threads[RING];
	atomic_store(&stop, 0);
	atomic_store(&ring_turn, 0);
	for (long i = 0; i < RING; i++)
		pthread_create(&threads[i], NULL, ring_member, (void *)i);
	struct timespec t = {seconds, 0};
	nanosleep(&t, NULL);
	atomic_store(&stop, 1);
	syscall(SYS_futex, &ring_turn, FUTEX_WAKE_PRIVATE, RING, NULL, NULL, 0);
	for (int i = 0; i < RING; i++)
		pthread_join(threads[i], NULL);
	return atomic_load(&ring_passes);
}

/* ---- wake -------------------------------------------------------------------------- */

#define SLEEPS 50

static void *busy(void *arg)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	sched_setaffinity(0, sizeof set, &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* The median lateness, in µs, of SLEEPS sleeps of 1 ms by a thread pinned to the last CPU,
 * with a busy thread pinned beside it, and with `all_busy`, one more pinned to each other
 * CPU. The median, not the mean: on a busy host a few sleeps are late by the host's own
 * load (natively, under the test suite's other jobs, the mean once reached 1.2 ms), which
 * moves the mean and not the median. */
static long long late_wakeups(int all_busy)
{
	int n = cpus(), last = n - 1;
	pthread_t *hogs = calloc(n, sizeof *hogs);
	atomic_store(&stop, 0);
	for (long c = all_busy ? 0 : last; c < n; c++)
		pthread_create(&hogs[c], NULL, busy, (void *)c);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(last, &set);
	sched_setaffinity(0, sizeof set, &set);
	/* Let each busy thread reach its CPU. */
	struct timespec settle = {0, 20000000};
	nanosleep(&settle, NULL);
	long long late[SLEEPS];
	for (int i = 0; i < SLEEPS; i++) {
		struct timespec t = {0, 1000000};
		long long before = now_ns();
		nanosleep(&t, NULL);
		late[i] = now_ns() - before - 1000000;
	}
	atomic_store(&stop, 1);
	for (int c = all_busy ? 0 : last; c < n; c++)
		pthread_join(hogs[c], NULL);
	free(hogs);
	for (int c = 0; c < n; c++)
		CPU_SET(c, &set);
	sched_setaffinity(0, sizeof set, &set);
	qsort(late, SLEEPS, sizeof late[0], by_value);
	return late[SLEEPS / 2] / 1000;
}

/* ---- mprotect ---------------------------------------------------------------------- */

static sigjmp_buf recover;
static volatile sig_atomic_t faults;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(recover, 1);
}

/* Stores one byte to `p`: true if the store faulted. */
static int store_faults(volatile char *p)
{
	int before = faults;
	if (sigsetjmp(recover, 1) == 0)
		*p = 1;
	return faults != before;
}

static volatile char *guarded;

static void *store_elsewhere(void *arg)
{
	(void)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus() - 1, &set);
	sched_setaffinity(0, sizeof set, &set);
	return (void *)(long)store_faults(guarded);
}

static void protection(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 7;
	p[4096] = 8;
	check(mprotect(p, 4096, PROT_READ) == 0, "mprotect(PROT_READ) succeeds");
	check(store_faults(p), "a store to a read-only page faults");
	check(p[0] == 7, "and the page keeps its byte, still readable");
	check(!store_faults(p + 4096), "the page beside it, not in the range, stays writable");
	guarded = p;
	pthread_t t;
	void *faulted = NULL;
	pthread_create(&t, NULL, store_elsewhere, NULL);
	pthread_join(t, &faulted);
	check(faulted != NULL, "a store from a thread on another CPU faults too");
	int fds[2];
	errno = 0;
	check(pipe(fds) == 0 && write(fds[1], "x", 1) == 1 && read(fds[0], p, 1) == -1 &&
		      errno == EFAULT,
	      "the kernel refuses to write there too: read into it is EFAULT");
	close(fds[0]);
	close(fds[1]);
	check(mprotect(p, 4096, PROT_READ | PROT_WRITE) == 0 && !store_faults(p) && p[0] == 1,
	      "PROT_READ|PROT_WRITE gives the page back, writable");
	/* A private page shared with a child after a fork, made read-only then writable
	 * again: the write gives the parent a copy, and the child keeps its own bytes. */
	p[0] = 3;
	mprotect(p, 4096, PROT_READ);
	pid_t child = fork();
	if (child == 0) {
		struct timespec t = {0, 20000000};
		nanosleep(&t, NULL);
		_exit(p[0] != 3);
	}
	mprotect(p, 4096, PROT_READ | PROT_WRITE);
	p[0] = 4;
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "a page read-only at fork and made writable after: the child keeps its bytes");
	munmap(p, 2 * 4096);
	signal(SIGSEGV, SIG_DFL);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *only = argc > 1 ? argv[1] : NULL;
	int all = only == NULL;
	if (all || strcmp(only, "mprotect") == 0)
		protection();
	if (all || strcmp(only, "cow-write") == 0)
		check(cow_write() == 0, "fork beside writing threads: no child sees a later write");
	if (all || strcmp(only, "cow-unmap") == 0)
		check(cow_unmap() == 0, "fork beside a thread that maps and unmaps: no child's "
					"pages change under it");
	if (argc > 2)
		rounds = atoi(argv[2]);
	show_progress = argc > 3;
	if (all || strcmp(only, "affinity") == 0) {
		int done = affinity_storm();
		if (done < rounds)
			printf("affinity: %d of %d rounds\n", done, rounds);
		check(done == rounds, "futex ping-pong while others move the players: every "
				      "round ends");
		if (done < rounds) {
			printf("craces: %d checks failed\n", failures);
			fflush(stdout);
			_exit(1);
		}
	}
	if (only && strcmp(only, "storm") == 0) {
		/* Not in the default run: its length is the second argument, in seconds. */
		long passes = affinity_storm_ring(argc > 2 ? atoi(argv[2]) : 1);
		check(passes > 0, "a ring of threads that set each other's affinity and wake each "
				  "other keeps passing, and every thread ends");
	}
	if (all || strcmp(only, "wake") == 0) {
		long long late = late_wakeups(0);
		printf("wake: median lateness %lld us\n", late);
		/* A wake-up that waits for its CPU's next tick is late by half a tick (2 ms at
		 * HZ 250) in the median; one that preempts the busy thread at once, by the
		 * wake-up's own path. */
		check(late < 1000, "a 1 ms sleeper beside a busy thread on its CPU is late by "
				   "under 1 ms");
		/* With every CPU busy, QEMU's round-robin of the vCPUs delays the timer's
		 * interrupt itself (docs/kernel.md): measured, not checked. */
		printf("wake: every CPU busy: median lateness %lld us\n", late_wakeups(1));
	}
	if (failures == 0)
		printf("craces: all checks passed\n");
	else
		printf("craces: %d checks failed\n", failures);
	return failures != 0;
}
