/*
 * cqueue: real-time signals queue, as Linux 6.1 queues them, and the calls that send a
 * signal with a siginfo of the sender's own. Built with `musl-gcc -static`, it runs unchanged
 * on Linux and on cfslab; tests/tests/userland.rs checks that both print the same lines.
 *
 * - Each sigqueue() of a real-time signal is taken once, with its own value: the lowest
 *   number first, one number in the order sent; a standard signal sent twice is taken once.
 * - A handler gets sigqueue()'s SI_QUEUE, the sender's pid and the value.
 * - rt_sigqueueinfo may not pass a made-up siginfo for the kernel's or kill's (si_code >= 0)
 *   or tkill's (SI_TKILL) to another process (EPERM), but may to itself; rt_tgsigqueueinfo
 *   likewise.
 * - The queue has a limit (RLIMIT_SIGPENDING): sigqueue() then fails with EAGAIN, kill()
 *   of a standard signal still works, and draining the queue makes room again.
 * - Taking a signal with sigtimedwait does not reset an SA_RESETHAND action; running its
 *   handler does.
 * - pselect's signal mask holds while it waits: a pending signal it unblocks ends the wait
 *   (EINTR) after its handler, and the old mask is back; one it blocks waits until
 *   pselect returns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static sigset_t waited;

/* Takes one signal of `waited` that is pending; 0 if none. */
static int take(siginfo_t *info)
{
	struct timespec none = { 0, 0 };
	int r = sigtimedwait(&waited, info, &none);
	return r < 0 ? 0 : r;
}

static void ordering(void)
{
	sigemptyset(&waited);
	sigaddset(&waited, SIGRTMIN);
	sigaddset(&waited, SIGRTMIN + 1);
	sigaddset(&waited, SIGUSR1);
	sigprocmask(SIG_BLOCK, &waited, NULL);
	int values[] = { 10, 20, 11, 21 }, numbers[] = { 1, 0, 1, 0 };
	for (int i = 0; i < 4; i++)
		sigqueue(getpid(), SIGRTMIN + numbers[i], (union sigval){ .sival_int = values[i] });
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1);
	siginfo_t info;
	int signo;
	while ((signo = take(&info)) != 0) {
		if (signo == SIGUSR1)
			printf("took SIGUSR1, si_code %d\n", info.si_code);
		else
			printf("took SIGRTMIN+%d, si_code %d, value %d, from me: %d\n", signo - SIGRTMIN,
			       info.si_code, info.si_value.sival_int, info.si_pid == getpid());
	}
	sigprocmask(SIG_UNBLOCK, &waited, NULL);
}

static volatile sig_atomic_t got_code, got_value, got_pid;

static void on_rt(int signo, siginfo_t *info, void *uc)
{
	(void)signo, (void)uc;
	got_code = info->si_code;
	got_value = info->si_value.sival_int;
	got_pid = info->si_pid;
}

static void to_a_handler(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 2, &sa, NULL);
	sigqueue(getpid(), SIGRTMIN + 2, (union sigval){ .sival_int = 1234 });
	check(got_code == SI_QUEUE && got_value == 1234 && got_pid == getpid(),
	      "a handler gets sigqueue's SI_QUEUE, the sender's pid and the value");
	signal(SIGRTMIN + 2, SIG_DFL);
}

/* rt_sigqueueinfo (or rt_tgsigqueueinfo) of SIGRTMIN with si_code `code` to `pid`. */
static long queue_with(pid_t pid, int code, int thread)
{
	siginfo_t info;
	memset(&info, 0, sizeof info);
	info.si_signo = SIGRTMIN;
	info.si_code = code;
	info.si_pid = getpid();
	info.si_uid = getuid();
	if (thread)
		return syscall(SYS_rt_tgsigqueueinfo, pid, pid, SIGRTMIN, &info);
	return syscall(SYS_rt_sigqueueinfo, pid, SIGRTMIN, &info);
}

static void permissions(void)
{
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	int ready[2];
	pipe(ready);
	pid_t child = fork();
	if (child == 0) {
		/* SIGRTMIN stays blocked: it waits here, pending. */
		write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	read(ready[0], &c, 1);
	errno = 0;
	check(queue_with(child, SI_USER, 0) == -1 && errno == EPERM,
	      "rt_sigqueueinfo: SI_USER made up for another process: EPERM");
	errno = 0;
	check(queue_with(child, SI_TKILL, 0) == -1 && errno == EPERM, "SI_TKILL: EPERM");
	errno = 0;
	check(queue_with(child, SI_KERNEL, 1) == -1 && errno == EPERM,
	      "rt_tgsigqueueinfo: SI_KERNEL for another: EPERM");
	check(queue_with(child, SI_QUEUE, 0) == 0 && queue_with(child, SI_QUEUE, 1) == 0,
	      "SI_QUEUE to another process: allowed");
	check(queue_with(getpid(), SI_USER, 0) == 0 && queue_with(getpid(), SI_KERNEL, 0) == 0,
	      "any si_code to itself: allowed");
	sigemptyset(&waited);
	sigaddset(&waited, SIGRTMIN);
	siginfo_t info;
	int first = take(&info), code = info.si_code, second = take(&info);
	check(first == SIGRTMIN && code == SI_USER && second == SIGRTMIN && info.si_code == SI_KERNEL,
	      "and it takes them with those codes");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	sigprocmask(SIG_UNBLOCK, &rt, NULL);
}

static void limit(void)
{
	struct rlimit lim;
	getrlimit(RLIMIT_SIGPENDING, &lim);
	/* A limit too high to fill in a test is lowered first (anyone may lower a limit). */
	if (lim.rlim_cur > 100000) {
		lim.rlim_cur = 4096;
		check(setrlimit(RLIMIT_SIGPENDING, &lim) == 0, "RLIMIT_SIGPENDING lowered to fill");
	}
	sigemptyset(&waited);
	sigaddset(&waited, SIGRTMIN);
	sigaddset(&waited, SIGUSR2);
	sigprocmask(SIG_BLOCK, &waited, NULL);
	unsigned long sent = 0;
	while (sent <= lim.rlim_cur && sigqueue(getpid(), SIGRTMIN, (union sigval){ 0 }) == 0)
		sent++;
	int full = errno == EAGAIN;
	check(full && sent > 0 && sent <= lim.rlim_cur,
	      "sigqueue fails with EAGAIN once RLIMIT_SIGPENDING signals are queued");
	check(kill(getpid(), SIGUSR2) == 0, "kill of a standard signal still works");
	siginfo_t info;
	unsigned long taken = 0, usr2 = 0;
	int signo;
	while ((signo = take(&info)) != 0) {
		if (signo == SIGUSR2)
			usr2++;
		else
			taken++;
	}
	check(taken == sent && usr2 == 1, "each queued one is taken, and the SIGUSR2");
	check(sigqueue(getpid(), SIGRTMIN, (union sigval){ 0 }) == 0 && take(&info) == SIGRTMIN,
	      "then there is room again");
	sigprocmask(SIG_UNBLOCK, &waited, NULL);
}

static volatile sig_atomic_t ran;

static void count(int signo)
{
	(void)signo;
	ran++;
}

static void resethand(void)
{
	struct sigaction sa = { 0 }, now;
	sa.sa_handler = count;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&waited);
	sigaddset(&waited, SIGUSR2);
	sigprocmask(SIG_BLOCK, &waited, NULL);
	raise(SIGUSR2);
	siginfo_t info;
	int signo = take(&info);
	sigaction(SIGUSR2, NULL, &now);
	check(signo == SIGUSR2 && ran == 0 && now.sa_handler == count,
	      "SA_RESETHAND: sigtimedwait takes the signal and the handler stays");
	sigprocmask(SIG_UNBLOCK, &waited, NULL);
	raise(SIGUSR2);
	sigaction(SIGUSR2, NULL, &now);
	check(ran == 1 && now.sa_handler == SIG_DFL, "running the handler resets it");
}

static void pselect_mask(void)
{
	sigset_t usr1, old, now, none;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&none);
	struct sigaction sa = { 0 };
	sa.sa_handler = count;
	sigaction(SIGUSR1, &sa, NULL);
	ran = 0;
	sigprocmask(SIG_BLOCK, &usr1, &old);
	raise(SIGUSR1);
	struct timespec second = { 1, 0 }, short_wait = { 0, 200000000 };
	errno = 0;
	int r = pselect(0, NULL, NULL, NULL, &second, &none);
	check(r == -1 && errno == EINTR && ran == 1,
	      "pselect's mask unblocks a pending signal: its handler runs, EINTR");
	sigprocmask(SIG_BLOCK, NULL, &now);
	check(sigismember(&now, SIGUSR1), "and the old mask is back after it");

	/* The signal comes from a timer 20 ms into the 200 ms wait, not from another process:
	 * the kernel sends it on time however loaded the machine (a child that slept, then
	 * sent it, once came too late on a busy host). */
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval in_20ms = { { 0, 0 }, { 0, 20000 } };
	setitimer(ITIMER_REAL, &in_20ms, NULL);
	r = pselect(0, NULL, NULL, NULL, &short_wait, &alrm);
	check(r == 0 && ran == 2,
	      "a signal pselect's mask blocks does not end the wait; its handler runs as it returns");
	signal(SIGALRM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	ordering();
	to_a_handler();
	permissions();
	limit();
	resethand();
	pselect_mask();
	if (failures)
		return 1;
	printf("cqueue: all checks passed\n");
	return 0;
}
