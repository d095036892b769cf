/*
 * csmp: several CPUs as a program sees them, unchanged on Linux and on cfslab (booted with
 * --smp 2); tests/tests/smp_tasks.rs checks that both print the same lines. It needs two CPUs.
 *
 * sched_setaffinity moves the caller to the CPU it names (getcpu says where it runs);
 * sched_getaffinity reads the mask back; a mask of no online CPU is EINVAL. Two processes
 * pinned to two CPUs play ping-pong over pipes, each waking the other across CPUs, and
 * each stays on its own CPU throughout. A child on the other CPU writes to memory it
 * shares copy-on-write with its parent, which keeps its own value. A sleeping child whose
 * parent gives it another CPU wakes there. A page one thread takes away faults at once in
 * a thread reading it on the other CPU (a TLB shootdown). A signal sent to a thread that
 * spins in user mode on the other CPU is taken at once, not at that CPU's next tick: the
 * kernel interrupts it (Linux's kick_process). membarrier's private expedited command
 * answers as Linux's does (EPERM before registering). Two CPU hogs pinned to
 * two CPUs run side by side: the `hogs:` line says how long both took to burn HOG_MS of
 * CPU time each (not a check here: on a loaded host it varies; smp_tasks.rs bounds cfslab's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
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

/* A child asleep on a pipe is given CPU 1 alone by its parent, then woken: it runs on
 * CPU 1 from its wake-up on. Returns the CPU it found itself on. */
static int moved_while_asleep(void)
{
	int fds[2], back[2];
	if (pipe(fds) || pipe(back))
		return -1;
	pid_t child = fork();
	if (child == 0) {
		char c;
		read(fds[0], &c, 1);
		int cpu = here();
		write(back[1], &cpu, sizeof cpu);
		_exit(0);
	}
	/* Long enough for the child to block in read (virtual time under icount). */
	struct timespec nap = {0, 20 * 1000 * 1000};
	nanosleep(&nap, NULL);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (sched_setaffinity(child, sizeof set, &set))
		return -1;
	int cpu = -1;
	write(fds[1], "x", 1);
	read(back[0], &cpu, sizeof cpu);
	waitpid(child, NULL, 0);
	return cpu;
}

/* A thread pinned to CPU 1 reads a page in a loop; the main thread, on CPU 0, takes the
 * page away (mprotect PROT_NONE). The reader's next read must fault — on its own CPU,
 * whose TLB held the page: the kernel flushes it there (a TLB shootdown). */
static volatile long *shared_page;
static volatile int reading, faulted, give_up;
static sigjmp_buf reader_escape;

static void reader_fault(int signal)
{
	(void)signal;
	faulted = 1;
	siglongjmp(reader_escape, 1);
}

static void *reader(void *arg)
{
	(void)arg;
	pin(1);
	if (sigsetjmp(reader_escape, 1) == 0) {
		while (!give_up) {
			(void)*shared_page;
			reading = 1;
		}
	}
	return (void *)(long)here();
}

static int shootdown(void)
{
	shared_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shared_page == MAP_FAILED)
		return 0;
	*shared_page = 7;
	struct sigaction action = {.sa_handler = reader_fault};
	sigaction(SIGSEGV, &action, NULL);
	pthread_t thread;
	if (pthread_create(&thread, NULL, reader, NULL))
		return 0;
	while (!reading)
		sched_yield();
	mprotect((void *)shared_page, 4096, PROT_NONE);
	/* Its next read faults; a reader still reading after 50 ms never will. */
	struct timespec wait = {0, 50 * 1000 * 1000};
	nanosleep(&wait, NULL);
	give_up = 1;
	void *cpu;
	pthread_join(thread, &cpu);
	signal(SIGSEGV, SIG_DFL);
	return faulted && (long)cpu == 1 && here() == 0;
}

/* A thread pinned to CPU 1 spins in user mode; the main thread, on CPU 0, sends it a signal
 * (with tgkill: the spinner alone may take it) and notes when; the
 * handler notes when it runs. Returns the median of KICKS delays, in ns: a signal left
 * for CPU 1's next tick (4 ms apart at HZ 250) waited 1 to 4 ms (measured: 2.0, 3.9 and
 * 0.96 ms); one that interrupts CPU 1 at once, 4 us on cfslab's optimised kernel at icount
 * shift 0, about 170 us on the debug kernel at shift 2 (the system tests'). */
#define KICKS 5
static volatile int spinning, stop_spinning, caught, spinner_tid;
static volatile long long caught_at;

static void on_kick(int signal)
{
	(void)signal;
	caught_at = ns_of(CLOCK_MONOTONIC);
	caught = caught + 1;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin(1);
	spinner_tid = (int)syscall(SYS_gettid);
	while (!stop_spinning)
		spinning = 1;
	return NULL;
}

static long long kick_delay(void)
{
	signal(SIGUSR1, on_kick);
	pthread_t thread;
	if (pthread_create(&thread, NULL, spinner, NULL))
		return -1;
	while (!spinning)
		sched_yield();
	long long delays[KICKS];
	for (int i = 0; i < KICKS; i++) {
		int before = caught;
		long long sent = ns_of(CLOCK_MONOTONIC);
		/* tgkill itself: musl's pthread_kill also changes the caller's signal mask
		 * around it, and that call could be what reaches the other CPU. */
		syscall(SYS_tgkill, getpid(), spinner_tid, SIGUSR1);
		/* Asleep meanwhile: under QEMU's icount a busy CPU 0 would hold CPU 1 back. */
		struct timespec wait = {0, 100 * 1000};
		while (caught == before)
			nanosleep(&wait, NULL);
		delays[i] = caught_at - sent;
	}
	stop_spinning = 1;
	pthread_join(thread, NULL);
	signal(SIGUSR1, SIG_DFL);
	for (int i = 0; i < KICKS; i++)
		for (int j = i + 1; j < KICKS; j++)
			if (delays[j] < delays[i]) {
				long long t = delays[i];
				delays[i] = delays[j];
				delays[j] = t;
			}
	return delays[KICKS / 2];
}

/* Burns CPU on `cpu` until this process has run HOG_MS ms. */
static void hog(int cpu)
{
	pin(cpu);
	while (ns_of(CLOCK_PROCESS_CPUTIME_ID) < HOG_MS * 1000000LL)
		;
	_exit(here() == cpu ? 0 : 1);
}

/* `csmp spread N [MS]`: N hogs of MS ms of CPU each (40 by default), not pinned, forked at
 * once by a process that then waits; each says where it was halfway through its work —
 * placed by the kernel at fork, or moved by its balancer by then. The forks take a few
 * ms each (more if the parent is moved between them), so MS must leave the last hog's
 * halfway before the first hog's exit, which leaves a CPU idle to pull the others.
 * `csmp unpin N [MS]`: the same hogs, pinned to CPU 0 by their parent as they start, it to
 * CPU 1 (so that it wakes on time, not behind them); after 20 ms the parent lets each hog
 * run anywhere, so the balancer alone spreads them from CPU 0 — the start the simulator's
 * own test of the balancer has. Where they go is the kernel's choice, so
 * these modes print and check nothing to compare with Linux (smp_tasks.rs checks cfslab's
 * placement, and that the simulator agrees). */
static int spread(int n, int pinned_first, long long ms)
{
	int fds[2];
	pid_t hogs[64];
	if (n < 1 || n > 64 || ms < 2 || pipe(fds) || (pinned_first && pin(1)))
		return 2;
	for (int i = 0; i < n; i++) {
		hogs[i] = fork();
		if (hogs[i] == 0) {
			while (ns_of(CLOCK_PROCESS_CPUTIME_ID) < ms * 500000LL)
				;
			int cpu = here();
			while (ns_of(CLOCK_PROCESS_CPUTIME_ID) < ms * 1000000LL)
				;
			write(fds[1], &cpu, sizeof cpu);
			_exit(0);
		}
		/* Pinned by the parent, not by itself: a hog that has not run by the unpinning
		 * would pin itself after it, and stay on CPU 0. */
		if (pinned_first) {
			cpu_set_t only;
			CPU_ZERO(&only);
			CPU_SET(0, &only);
			sched_setaffinity(hogs[i], sizeof only, &only);
		}
	}
	if (pinned_first) {
		struct timespec pause = {0, 20 * 1000 * 1000};
		nanosleep(&pause, NULL);
		cpu_set_t all;
		CPU_ZERO(&all);
		for (int cpu = 0; cpu < 64; cpu++)
			CPU_SET(cpu, &all);
		for (int i = 0; i < n; i++)
			sched_setaffinity(hogs[i], sizeof all, &all);
	}
	unsigned long long seen = 0;
	for (int i = 0; i < n; i++) {
		int cpu = -1;
		read(fds[0], &cpu, sizeof cpu);
		wait(NULL);
		printf("hog %d was on CPU %d halfway\n", i, cpu);
		if (cpu >= 0 && cpu < 64)
			seen |= 1ULL << cpu;
	}
	printf("spread: %d hogs on %d CPUs\n", n, __builtin_popcountll(seen));
	return 0;
}

/* `csmp affine`, on three CPUs: where a wake-up puts a task whose CPU is busy. A hog runs
 * on CPU 1; the wakee sleeps there on a pipe, then is allowed every CPU; the waker, on
 * CPU 0, writes to the pipe, and the wakee says where it woke. 2.6.36's
 * `select_idle_sibling` moves it to the idle CPU 2; 2.6.24 pulls it to the waker's CPU
 * (smp_tasks.rs). */
static int affine(void)
{
	int to_wakee[2], to_waker[2];
	if (pin(0) || pipe(to_wakee) || pipe(to_waker))
		return 2;
	pid_t hogger = fork();
	if (hogger == 0) {
		pin(1);
		for (;;)
			;
	}
	pid_t wakee = fork();
	if (wakee == 0) {
		pin(1);
		int cpu = here();
		write(to_waker[1], &cpu, sizeof cpu);
		char byte;
		read(to_wakee[0], &byte, 1);
		cpu = here();
		write(to_waker[1], &cpu, sizeof cpu);
		_exit(0);
	}
	int slept = -1, woke = -1;
	read(to_waker[0], &slept, sizeof slept);
	/* Long enough for the wakee to be asleep in its read. */
	struct timespec pause = {0, 20 * 1000 * 1000};
	nanosleep(&pause, NULL);
	/* Every CPU allowed only now, asleep: a balancing pass moves no sleeping task, so
	 * the wakee is on CPU 1 when it wakes, however the CPUs' instructions interleave. */
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int cpu = 0; cpu < 3; cpu++)
		CPU_SET(cpu, &all);
	sched_setaffinity(wakee, sizeof all, &all);
	write(to_wakee[1], "x", 1);
	read(to_waker[0], &woke, sizeof woke);
	kill(hogger, SIGKILL);
	waitpid(hogger, NULL, 0);
	waitpid(wakee, NULL, 0);
	printf("affine: the wakee slept on CPU %d behind a hog and woke on CPU %d\n", slept, woke);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The hogs' CPU time: HOG_MS unless a third argument gives it, in ms. */
	long long ms = argc == 4 ? atoll(argv[3]) : HOG_MS;
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "spread") == 0)
		return spread(atoi(argv[2]), 0, ms);
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "unpin") == 0)
		return spread(atoi(argv[2]), 1, ms);
	if (argc == 2 && strcmp(argv[1], "affine") == 0)
		return affine();
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
	check(moved_while_asleep() == 1, "a sleeping child given CPU 1 alone wakes on CPU 1");
	check(shootdown(), "a page taken away on CPU 0 faults at once in a thread on CPU 1");
	/* membarrier's private expedited command (<linux/membarrier.h>: 8, registered by 16). */
	long query = syscall(SYS_membarrier, 0, 0, 0);
	check(query > 0 && (query & 8) && (query & 16), "membarrier's query lists private expedited");
	errno = 0;
	check(syscall(SYS_membarrier, 8, 0, 0) == -1 && errno == EPERM,
	      "membarrier private expedited before registering is EPERM");
	errno = 0;
	check(syscall(SYS_membarrier, 16, 1, 0) == -1 && errno == EINVAL,
	      "membarrier with an unknown flag is EINVAL");
	check(syscall(SYS_membarrier, 16, 0, 0) == 0 && syscall(SYS_membarrier, 8, 0, 0) == 0,
	      "membarrier private expedited once registered");
	long long delay = kick_delay();
	check(delay >= 0 && delay < 500000,
	      "a signal to a thread spinning on CPU 1 is taken within 500 us (median of 5)");
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
