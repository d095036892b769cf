/*
 * csignals: signal handlers as Linux runs them, each checked against what Linux does. Built
 * with `musl-gcc -static`, it runs unchanged on Linux and on cfslab; tests/tests/userland.rs
 * checks that both print the same lines.
 *
 * - A handler runs with its siginfo and ucontext, the signal and sa_mask blocked meanwhile,
 *   and every register (general and SSE) back as it was after rt_sigreturn.
 * - SA_RESTART restarts a read that a signal interrupted; without it the read fails with
 *   EINTR; nanosleep fails with EINTR and says how much time was left.
 * - SA_RESETHAND, SA_NODEFER, SA_ONSTACK with sigaltstack.
 * - rt_sigsuspend, rt_sigpending, rt_sigtimedwait, pause.
 * - SIGCHLD to a handler, with the child's pid and status.
 * - alarm, setitimer and getitimer (ITIMER_REAL), and a SIGALRM that interrupts a loop that
 *   makes no system call (the timer interrupt's way back to ring 3 runs the handler).
 * - No restorer (SA_RESTORER unset): the process dies with SIGSEGV, as on Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t caught, caught_signo, caught_code, caught_pid, caught_status;
static volatile sig_atomic_t blocked_inside, usr2_blocked_inside;
static volatile uintptr_t handler_stack;
static const char *self;

static void on_signal(int signo, siginfo_t *info, void *ucontext)
{
	sigset_t now;
	(void)ucontext;
	caught++;
	caught_signo = signo;
	caught_code = info->si_code;
	caught_pid = info->si_pid;
	caught_status = info->si_status;
	sigprocmask(SIG_BLOCK, NULL, &now);
	blocked_inside = sigismember(&now, signo);
	usr2_blocked_inside = sigismember(&now, SIGUSR2);
	handler_stack = (uintptr_t)&now;
}

/* A handler that clobbers the registers a system call keeps (r8-r10) and the SSE ones. */
static void clobber(int signo)
{
	(void)signo;
	caught++;
	__asm__ volatile("mov $1, %%r8\n\tmov $2, %%r9\n\tmov $3, %%r10\n\tpxor %%xmm0, %%xmm0\n\t"
			 "pxor %%xmm5, %%xmm5"
			 :
			 :
			 : "r8", "r9", "r10", "xmm0", "xmm5");
}

static void count(int signo)
{
	(void)signo;
	caught++;
}

static void install(int signo, void (*handler)(int), int flags)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(signo, &sa, NULL);
}

static void install_info(int signo, int flags)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(signo, &sa, NULL);
}

/* SIGALRM after `ms` milliseconds, once. */
static void alarm_in_ms(long ms)
{
	struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static void handler_basics(void)
{
	caught = 0;
	install_info(SIGUSR1, 0);
	kill(getpid(), SIGUSR1);
	check(caught == 1 && caught_signo == SIGUSR1, "a handler runs for kill(getpid())");
	check(caught_code == SI_USER && caught_pid == getpid(),
	      "its siginfo says SI_USER and the sender's pid");
	check(blocked_inside && usr2_blocked_inside,
	      "the signal and sa_mask are blocked while it runs");
	sigset_t after;
	sigprocmask(SIG_BLOCK, NULL, &after);
	check(!sigismember(&after, SIGUSR1) && !sigismember(&after, SIGUSR2),
	      "rt_sigreturn puts the mask back");
}

static void registers_survive(void)
{
	uint64_t r8, r9, r10, x0, x5;
	caught = 0;
	install(SIGUSR1, clobber, 0);
	__asm__ volatile("mov $0x1111, %%r8\n\t"
			 "mov $0x2222, %%r9\n\t"
			 "mov $0x3333, %%r10\n\t"
			 "mov $0x4444, %%rax\n\t"
			 "movq %%rax, %%xmm0\n\t"
			 "mov $0x5555, %%rax\n\t"
			 "movq %%rax, %%xmm5\n\t"
			 "mov %[nr], %%eax\n\t"
			 "mov %[pid], %%edi\n\t"
			 "mov %[sig], %%esi\n\t"
			 "syscall\n\t"
			 "mov %%r8, %[r8]\n\t"
			 "mov %%r9, %[r9]\n\t"
			 "mov %%r10, %[r10]\n\t"
			 "movq %%xmm0, %[x0]\n\t"
			 "movq %%xmm5, %[x5]"
			 : [r8] "=m"(r8), [r9] "=m"(r9), [r10] "=m"(r10), [x0] "=m"(x0), [x5] "=m"(x5)
			 : [nr] "i"(SYS_kill), [pid] "r"(getpid()), [sig] "i"(SIGUSR1)
			 : "rax", "rcx", "rdi", "rsi", "r8", "r9", "r10", "r11", "xmm0", "xmm5",
			   "memory");
	check(caught == 1, "a handler that clobbers registers ran");
	check(r8 == 0x1111 && r9 == 0x2222 && r10 == 0x3333,
	      "r8, r9 and r10 are back after the handler");
	check(x0 == 0x4444 && x5 == 0x5555, "xmm0 and xmm5 are back after the handler");
}

/* Reads a pipe whose writer writes after 200 ms, with SIGALRM after 20 ms. */
static void read_interrupted(int flags, ssize_t *got, int *err)
{
	int fds[2];
	pipe(fds);
	pid_t child = fork();
	if (child == 0) {
		close(fds[0]);
		usleep(200000);
		write(fds[1], "x", 1);
		_exit(0);
	}
	close(fds[1]);
	caught = 0;
	install(SIGALRM, count, flags);
	alarm_in_ms(20);
	char c;
	errno = 0;
	*got = read(fds[0], &c, 1);
	*err = errno;
	waitpid(child, NULL, 0);
	close(fds[0]);
}

static void restarts(void)
{
	ssize_t got;
	int err;
	read_interrupted(SA_RESTART, &got, &err);
	check(caught == 1 && got == 1, "SA_RESTART: the read goes on after the handler");
	read_interrupted(0, &got, &err);
	check(caught == 1 && got == -1 && err == EINTR, "without SA_RESTART the read fails: EINTR");

	struct timespec want = { 1, 0 }, left = { 0, 0 };
	caught = 0;
	install(SIGALRM, count, SA_RESTART);
	alarm_in_ms(20);
	int r = nanosleep(&want, &left);
	check(r == -1 && errno == EINTR && caught == 1, "nanosleep fails with EINTR, even with SA_RESTART");
	check(left.tv_sec == 0 && left.tv_nsec > 900000000, "and leaves what was left of it in rem");
}

static void flags(void)
{
	struct sigaction now;
	caught = 0;
	install(SIGUSR1, count, SA_RESETHAND);
	kill(getpid(), SIGUSR1);
	sigaction(SIGUSR1, NULL, &now);
	check(caught == 1 && now.sa_handler == SIG_DFL, "SA_RESETHAND: the action is the default after one");

	install_info(SIGUSR1, SA_NODEFER);
	kill(getpid(), SIGUSR1);
	check(!blocked_inside && usr2_blocked_inside, "SA_NODEFER: the signal is not blocked in its handler");

	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 }, old;
	check(sigaltstack(&ss, NULL) == 0, "sigaltstack sets a stack");
	install_info(SIGUSR1, SA_ONSTACK);
	kill(getpid(), SIGUSR1);
	check(handler_stack > (uintptr_t)altstack && handler_stack < (uintptr_t)altstack + sizeof altstack,
	      "SA_ONSTACK: the handler runs on it");
	sigaltstack(NULL, &old);
	check(old.ss_sp == altstack && old.ss_size == sizeof altstack && old.ss_flags == 0,
	      "sigaltstack reads it back");
	pid_t child = fork();
	if (child == 0) {
		sigaltstack(NULL, &old);
		_exit(old.ss_sp == altstack && old.ss_flags == 0 ? 0 : 1);
	}
	int status;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a forked child inherits it");
	child = fork();
	if (child == 0) {
		char *argv[] = { (char *)self, "altstack", NULL };
		execv(self, argv);
		_exit(2);
	}
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "execve takes it away");
	ss.ss_size = 1024;
	check(sigaltstack(&ss, NULL) == -1 && errno == ENOMEM, "a stack under MINSIGSTKSZ: ENOMEM");
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	sigaltstack(NULL, &old);
	check(old.ss_flags == SS_DISABLE, "SS_DISABLE takes it away");
	install(SIGUSR1, SIG_DFL, 0);
}

static void waiting(void)
{
	sigset_t usr1, old, none, pending;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&none);

	/* sigpending, then the handler as soon as the signal is unblocked */
	caught = 0;
	install(SIGUSR1, count, 0);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	kill(getpid(), SIGUSR1);
	sigpending(&pending);
	check(caught == 0 && sigismember(&pending, SIGUSR1), "a blocked signal is pending");
	sigprocmask(SIG_SETMASK, &old, NULL);
	check(caught == 1, "unblocking it runs the handler");

	/* sigsuspend: the child signals the parent, which waits with SIGUSR1 unblocked */
	caught = 0;
	sigprocmask(SIG_BLOCK, &usr1, &old);
	pid_t child = fork();
	if (child == 0) {
		usleep(20000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	int r = sigsuspend(&none);
	sigset_t after;
	sigprocmask(SIG_BLOCK, NULL, &after);
	check(r == -1 && errno == EINTR && caught == 1, "sigsuspend returns EINTR after the handler");
	check(sigismember(&after, SIGUSR1), "and puts the mask back");
	waitpid(child, NULL, 0);

	/* sigtimedwait takes a blocked signal without its handler */
	caught = 0;
	kill(getpid(), SIGUSR1);
	siginfo_t info;
	struct timespec ten_ms = { 0, 10000000 };
	r = sigtimedwait(&usr1, &info, &ten_ms);
	check(r == SIGUSR1 && info.si_code == SI_USER && info.si_pid == getpid() && caught == 0,
	      "sigtimedwait takes a pending signal, with its siginfo");
	r = sigtimedwait(&usr1, &info, &ten_ms);
	check(r == -1 && errno == EAGAIN, "and gives EAGAIN when its time is up");
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* pause */
	caught = 0;
	install(SIGALRM, count, 0);
	alarm_in_ms(10);
	r = pause();
	check(r == -1 && errno == EINTR && caught == 1, "pause returns EINTR after a handler");
}

static void children(void)
{
	sigset_t chld, old, none;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&none);
	caught = 0;
	install_info(SIGCHLD, 0);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid_t child = fork();
	if (child == 0)
		_exit(7);
	while (!caught)
		sigsuspend(&none);
	check(caught_signo == SIGCHLD && caught_code == CLD_EXITED, "SIGCHLD reaches a handler: CLD_EXITED");
	check(caught_pid == child && caught_status == 7, "with the child's pid and exit status");
	int status;
	check(waitpid(child, &status, WNOHANG) == child, "the child is a zombie to reap by then");
	sigprocmask(SIG_SETMASK, &old, NULL);
	install(SIGCHLD, SIG_DFL, 0);
}

static volatile sig_atomic_t rang;

static void ring(int signo)
{
	(void)signo;
	rang = 1;
}

static void timers(void)
{
	struct itimerval it = { { 0, 250000 }, { 1, 0 } }, now;
	setitimer(ITIMER_REAL, &it, NULL);
	getitimer(ITIMER_REAL, &now);
	check(now.it_value.tv_sec * 1000000 + now.it_value.tv_usec > 900000 &&
		      now.it_value.tv_sec * 1000000 + now.it_value.tv_usec <= 1000000 &&
		      now.it_interval.tv_usec == 250000,
	      "getitimer reads back what setitimer set");
	check(alarm(0) == 1, "alarm(0) says a second was left, and disarms it");
	getitimer(ITIMER_REAL, &now);
	check(now.it_value.tv_sec == 0 && now.it_value.tv_usec == 0, "getitimer: disarmed");

	install(SIGALRM, ring, 0);
	rang = 0;
	alarm_in_ms(10);
	while (!rang)
		; /* no system call: only the timer interrupt can run the handler */
	check(rang, "SIGALRM interrupts a loop that makes no system call");

	/* an interval timer rings again */
	caught = 0;
	install(SIGALRM, count, SA_RESTART);
	struct itimerval every = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_REAL, &every, NULL);
	while (caught < 3)
		pause();
	setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
	check(caught >= 3, "an interval timer rings again and again");
	install(SIGALRM, SIG_DFL, 0);
}

/* A handler installed without SA_RESTORER: Linux cannot return from it, and kills. */
static void no_restorer(void)
{
	pid_t child = fork();
	if (child == 0) {
		uint64_t act[4] = { (uint64_t)count, 0, 0, 0 };
		syscall(SYS_rt_sigaction, SIGUSR1, act, NULL, 8);
		kill(getpid(), SIGUSR1);
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "a handler without a restorer: SIGSEGV");
}

int main(int argc, char **argv)
{
	self = argv[0];
	/* `csignals altstack`, exec'd by flags(): 0 if no alternate stack came through. */
	if (argc > 1 && strcmp(argv[1], "altstack") == 0) {
		stack_t old;
		sigaltstack(NULL, &old);
		return old.ss_flags == SS_DISABLE ? 0 : 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	handler_basics();
	registers_survive();
	restarts();
	flags();
	waiting();
	children();
	timers();
	no_restorer();
	if (failures)
		return 1;
	printf("csignals: all checks passed\n");
	return 0;
}
