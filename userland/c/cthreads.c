/*
 * cthreads: musl's threads, signals and CPU-time accounting, unchanged on Linux and on
 * cfslab; tests/tests/userland.rs checks that both print the same lines.
 *
 * pthread_create is clone(CLONE_VM | CLONE_THREAD | CLONE_SETTLS | CLONE_PARENT_SETTID |
 * CLONE_CHILD_CLEARTID | ...) on a stack mmap'd PROT_NONE and opened with mprotect;
 * mutexes, condition variables and pthread_join are futexes; __thread variables live
 * behind each thread's FS base. exit() from any thread ends the whole process
 * (exit_group); a fatal signal ends every thread. Blocked signals stay pending until
 * unblocked; ignored ones are dropped. getrusage and wait4's rusage split CPU time into
 * user and system time. execve in a thread other than the main one replaces the whole
 * process, which keeps its pid (the thread takes it over), even after the main thread has
 * itself ended with pthread_exit. A signal sent to one thread (pthread_kill: tgkill) is
 * pending for that thread alone, even while it blocks it, and ends with it.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_counter;
static __thread long my_rounds;

/* Each thread: ROUNDS increments of the shared counter under the lock, and of its own
 * __thread copy; yields now and then so that the others interleave. */
static void *count(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		shared_counter++;
		pthread_mutex_unlock(&lock);
		my_rounds++;
		if (i % 1000 == 0)
			sched_yield();
	}
	return (void *)my_rounds;
}

static pid_t thread_tid;
static pid_t thread_pid;

static void *ids(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	thread_pid = getpid();
	return NULL;
}

/* A ping-pong between two threads on a condition variable: futex waits and wakes. */
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
#define PINGS 200

static void *pong(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < PINGS; i++) {
		while (turn != 1)
			pthread_cond_wait(&turn_changed, &lock);
		turn = 0;
		pthread_cond_signal(&turn_changed);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *exit_whole_process(void *arg)
{
	exit((int)(long)arg);
}

static void *spin_forever(void *arg)
{
	(void)arg;
	for (volatile int i = 0;; i++)
		;
	return NULL;
}

/* A null pointer the compiler cannot see through. */
static volatile int *volatile nowhere;

static void *crash(void *arg)
{
	(void)arg;
	*nowhere = 1;
	return NULL;
}

/* Runs `body` in a child process and returns its wait status. */
static int status_of_child(void (*body)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		body();
		_exit(100);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	return status;
}

static void thread_calls_exit(void)
{
	pthread_t t;
	pthread_create(&t, NULL, exit_whole_process, (void *)5L);
	struct timespec long_nap = {30, 0};
	nanosleep(&long_nap, NULL);
}

static void main_exits_while_thread_spins(void)
{
	pthread_t t;
	pthread_create(&t, NULL, spin_forever, NULL);
	sched_yield();
	_exit(4);
}

static void thread_faults(void)
{
	pthread_t t;
	pthread_create(&t, NULL, crash, NULL);
	struct timespec long_nap = {30, 0};
	nanosleep(&long_nap, NULL);
}

/* execve from a thread: the new program (this one, as `cthreads exec-check PID`) exits 7
 * if it runs as the process that exec'd — same pid, and its only thread's tid is the pid. */
static char *self_path;

static void *exec_from_thread(void *arg)
{
	if (arg) {
		/* Let the main thread reach pthread_exit first. */
		struct timespec nap = {0, 20 * 1000 * 1000};
		nanosleep(&nap, NULL);
	}
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	char *args[] = {self_path, "exec-check", pid, NULL};
	execv(self_path, args);
	_exit(99);
}

static int exec_check(const char *pid)
{
	int same = getpid() == atoi(pid) && (pid_t)syscall(SYS_gettid) == getpid();
	return same ? 7 : 8;
}

static void thread_execs(void)
{
	pthread_t t;
	pthread_create(&t, NULL, exec_from_thread, NULL);
	struct timespec long_nap = {30, 0};
	nanosleep(&long_nap, NULL);
	_exit(98);
}

static void main_ends_then_thread_execs(void)
{
	pthread_t t;
	pthread_create(&t, NULL, exec_from_thread, (void *)1L);
	pthread_exit(NULL);
}

static void blocked_then_unblocked(void)
{
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	kill(getpid(), SIGTERM);
	/* Still alive: blocked. Unblocking delivers it (default action: end). */
	printf("  SIGTERM blocked: still alive\n");
	fflush(stdout);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
	_exit(0);
}

static void ignored(void)
{
	signal(SIGTERM, SIG_IGN);
	kill(getpid(), SIGTERM);
	_exit(6);
}

/* Signals sent to one thread: which thread ran the handler, and how far the threads are. */
static volatile pid_t handled_by;
static volatile int stage;
static pid_t directed_tid;
static int pending_in_thread, taken_code;

static void note_taker(int signo)
{
	(void)signo;
	handled_by = (pid_t)syscall(SYS_gettid);
}

static void wait_for_stage(int wanted)
{
	while (stage < wanted)
		sched_yield();
}

static void block_usr2(int how)
{
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(how, &usr2, NULL);
}

/* Blocks SIGUSR2, finds one sent to it pending and takes it with sigtimedwait, then
 * unblocks it to run the handler for a second. */
static void *blocks_then_takes(void *arg)
{
	(void)arg;
	block_usr2(SIG_BLOCK);
	directed_tid = (pid_t)syscall(SYS_gettid);
	stage = 1;
	wait_for_stage(2);
	sigset_t usr2, pending;
	sigpending(&pending);
	pending_in_thread = sigismember(&pending, SIGUSR2);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	siginfo_t info;
	struct timespec now = {0, 0};
	if (sigtimedwait(&usr2, &info, &now) == SIGUSR2)
		taken_code = info.si_code;
	stage = 3;
	wait_for_stage(4);
	block_usr2(SIG_UNBLOCK);
	return NULL;
}

static void *blocks_and_ends(void *arg)
{
	(void)arg;
	block_usr2(SIG_BLOCK);
	stage = 1;
	wait_for_stage(2);
	return NULL;
}

/* Whether SIGUSR2 is pending for the calling thread, after a few returns to user space,
 * at each of which a pending signal it does not block would be taken. */
static int usr2_pending_here(void)
{
	for (int i = 0; i < 10; i++)
		sched_yield();
	sigset_t pending;
	sigpending(&pending);
	return sigismember(&pending, SIGUSR2);
}

static void thread_directed(void)
{
	signal(SIGUSR2, note_taker);
	pthread_t t;
	stage = 0;
	pthread_create(&t, NULL, blocks_then_takes, NULL);
	wait_for_stage(1);
	pthread_kill(t, SIGUSR2);
	check(!usr2_pending_here() && handled_by == 0,
	      "pthread_kill to a thread that blocks the signal: no other thread takes it");
	stage = 2;
	wait_for_stage(3);
	check(pending_in_thread && taken_code == SI_TKILL,
	      "it is pending for that thread, whose sigtimedwait takes it (SI_TKILL)");
	pthread_kill(t, SIGUSR2);
	stage = 4;
	pthread_join(t, NULL);
	check(handled_by == directed_tid, "unblocked there, its handler runs in that thread");

	handled_by = 0;
	stage = 0;
	pthread_create(&t, NULL, blocks_and_ends, NULL);
	wait_for_stage(1);
	pthread_kill(t, SIGUSR2);
	stage = 2;
	pthread_join(t, NULL);
	check(!usr2_pending_here() && handled_by == 0,
	      "a signal pending for a thread that ends goes with it");
	signal(SIGUSR2, SIG_DFL);
}

static double burn(long n)
{
	volatile double x = 0;
	for (long i = 1; i <= n; i++)
		x += 1.0 / (double)i;
	return x;
}

static long long usec(struct timeval tv)
{
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

static void burn_in_child(void)
{
	burn(3000000);
	_exit(0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "exec-check") == 0)
		return exec_check(argv[2]);
	self_path = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);

	pthread_t threads[THREADS];
	int created = 0;
	for (int i = 0; i < THREADS; i++)
		created += pthread_create(&threads[i], NULL, count, NULL) == 0;
	long own_total = 0;
	for (int i = 0; i < created; i++) {
		void *rounds;
		pthread_join(threads[i], &rounds);
		own_total += (long)rounds;
	}
	check(created == THREADS && shared_counter == THREADS * ROUNDS,
	      "4 threads, a mutex: the shared counter is exact");
	check(own_total == THREADS * ROUNDS && my_rounds == 0,
	      "__thread: each thread counted in its own copy (TLS through the FS base)");

	pthread_t t;
	pthread_create(&t, NULL, ids, NULL);
	pthread_join(t, NULL);
	check(thread_pid == getpid() && thread_tid != getpid() && thread_tid > 0,
	      "a thread shares the pid and has a tid of its own");

	pthread_create(&t, NULL, pong, NULL);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < PINGS; i++) {
		turn = 1;
		pthread_cond_signal(&turn_changed);
		while (turn != 0)
			pthread_cond_wait(&turn_changed, &lock);
	}
	pthread_mutex_unlock(&lock);
	check(pthread_join(t, NULL) == 0, "200 condition-variable ping-pongs between two threads");

	int status = status_of_child(thread_calls_exit);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 5,
	      "exit(5) in a thread ends the process (the main thread too): status 5");
	status = status_of_child(main_exits_while_thread_spins);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 4,
	      "_exit(4) in the main thread ends a spinning thread too: status 4");
	status = status_of_child(thread_faults);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "a segfault in a thread kills the whole process: SIGSEGV");

	status = status_of_child(thread_execs);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 7,
	      "execve in a thread: the new program is the process, with its pid (status 7)");
	status = status_of_child(main_ends_then_thread_execs);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 7,
	      "execve in a thread after the main thread's pthread_exit: status 7");

	status = status_of_child(blocked_then_unblocked);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	      "a blocked SIGTERM waits, and ends the process once unblocked");
	status = status_of_child(ignored);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 6, "an ignored SIGTERM is dropped");
	struct sigaction old, ign = {.sa_handler = SIG_IGN};
	sigaction(SIGUSR1, &ign, NULL);
	sigaction(SIGUSR1, NULL, &old);
	check(old.sa_handler == SIG_IGN, "sigaction reads back the action it set");
	check(sigaction(SIGKILL, &ign, NULL) == -1, "SIGKILL's action cannot be changed");
	thread_directed();

	struct rusage before, after, child, children;
	getrusage(RUSAGE_SELF, &before);
	/* Until ticks have sampled the loop more in ring 3 than in the kernel: on a busy host
	 * Linux's times are tick-sampled, and one tick landing in a system call can match the
	 * loop's first one. */
	for (int tries = 0; tries < 100; tries++) {
		burn(3000000);
		getrusage(RUSAGE_SELF, &after);
		long long u = usec(after.ru_utime) - usec(before.ru_utime);
		long long s = usec(after.ru_stime) - usec(before.ru_stime);
		if (u > 0 && u > s)
			break;
	}
	long long user = usec(after.ru_utime) - usec(before.ru_utime);
	long long sys = usec(after.ru_stime) - usec(before.ru_stime);
	check(user > 0 && user > sys, "getrusage(RUSAGE_SELF): a loop in ring 3 is mostly user time");
	pid_t pid = fork();
	if (pid == 0)
		burn_in_child();
	status = -1;
	check(wait4(pid, &status, 0, &child) == pid && usec(child.ru_utime) > 0,
	      "wait4's rusage: the child's CPU time");
	getrusage(RUSAGE_CHILDREN, &children);
	check(usec(children.ru_utime) >= usec(child.ru_utime),
	      "getrusage(RUSAGE_CHILDREN) includes the reaped child");

	if (failures)
		printf("cthreads: %d checks failed\n", failures);
	else
		printf("cthreads: all checks passed\n");
	return failures != 0;
}
