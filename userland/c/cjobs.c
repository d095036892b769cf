/*
 * cjobs: process groups, sessions and job control as Linux has them, each checked against
 * what Linux does. Built with `musl-gcc -static`, it runs unchanged on Linux and on cfslab;
 * tests/tests/userland.rs checks that both print the same lines.
 *
 * - setpgid, getpgid, getpgrp, setsid, getsid, and their errors (EPERM, ESRCH, EINVAL).
 * - kill of a process group (a negative pid, and 0 for the caller's).
 * - SIGSTOP and SIGTSTP stop a child and SIGCONT continues it: wait4 reports each with
 *   WUNTRACED and WCONTINUED (once), and SIGCHLD carries CLD_STOPPED and CLD_CONTINUED.
 * - waitpid on a process group, and on the caller's group (0).
 * - An orphaned process group: when a process's exit leaves its child's group with no
 *   parent in another group of the session, and a member is stopped, the group gets SIGHUP
 *   then SIGCONT; SIGTSTP to an orphaned group is dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void pause_forever(void)
{
	for (;;)
		pause();
}

/* A child that sleeps until killed. */
static pid_t sleeper(void)
{
	pid_t child = fork();
	if (child == 0)
		pause_forever();
	return child;
}

static void groups_and_sessions(void)
{
	pid_t me = getpid();
	/* Run in a session of our own, so that the checks hold however we were started. */
	pid_t leader = fork();
	if (leader == 0) {
		pid_t self = getpid();
		int ok = setsid() == self && getsid(0) == self && getpgrp() == self;
		ok = ok && setsid() == -1 && errno == EPERM; /* a group leader already */
		pid_t child = sleeper();
		ok = ok && getpgid(child) == self && getsid(child) == self;
		ok = ok && setpgid(child, child) == 0 && getpgid(child) == child;
		ok = ok && setpgid(child, 0) == 0; /* 0: its own pid, as it is now */
		ok = ok && setpgid(child, self) == 0 && getpgid(child) == self;
		ok = ok && setpgid(child, 999999) == -1 && errno == EPERM; /* no such group */
		ok = ok && setpgid(child, -1) == -1 && errno == EINVAL;
		ok = ok && setpgid(0, 0) == -1 && errno == EPERM; /* a session leader */
		ok = ok && setpgid(getppid(), 0) == -1 && errno == ESRCH; /* not a child */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		_exit(ok ? 0 : 1);
	}
	int status;
	waitpid(leader, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "setsid, setpgid and their errors as Linux's");
	check(getpgid(999999) == -1 && errno == ESRCH, "getpgid of no process: ESRCH");
	check(getsid(0) == getsid(me), "getsid(0) is the caller's");
}

static void group_kill(void)
{
	pid_t a = sleeper();
	setpgid(a, a);
	pid_t b = fork();
	if (b == 0)
		pause_forever();
	setpgid(b, a);
	check(kill(-a, SIGTERM) == 0, "kill(-pgid) signals the group");
	int sa, sb;
	waitpid(a, &sa, 0);
	waitpid(b, &sb, 0);
	check(WIFSIGNALED(sa) && WTERMSIG(sa) == SIGTERM && WIFSIGNALED(sb) &&
		      WTERMSIG(sb) == SIGTERM,
	      "both members end with SIGTERM");
	check(kill(-a, 0) == -1 && errno == ESRCH, "an empty group: ESRCH");

	/* kill(0, ...) signals the caller's group: a child leads one and signals it */
	pid_t leader = fork();
	if (leader == 0) {
		setpgid(0, 0);
		pid_t member = sleeper();
		signal(SIGUSR1, SIG_IGN);
		kill(0, SIGUSR1);
		int s;
		waitpid(member, &s, 0);
		_exit(WIFSIGNALED(s) && WTERMSIG(s) == SIGUSR1 ? 0 : 1);
	}
	int status;
	waitpid(leader, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "kill(0) signals the caller's group");
}

static volatile sig_atomic_t chld_codes[8];
static volatile sig_atomic_t chld_count;

static void on_chld(int signo, siginfo_t *info, void *context)
{
	(void)signo;
	(void)context;
	if (chld_count < 8)
		chld_codes[chld_count++] = info->si_code;
}

static void stop_and_continue(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	chld_count = 0;

	/* The child leads a group of its own: Linux discards SIGTSTP sent to a process group
	 * with no parent outside it in the session (an orphaned one), which the caller's own
	 * group may be (a test harness started in the background). */
	pid_t child = sleeper();
	setpgid(child, child);
	int status;
	kill(child, SIGSTOP);
	check(waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status) &&
		      WSTOPSIG(status) == SIGSTOP,
	      "WUNTRACED: a child stopped by SIGSTOP");
	check(waitpid(child, &status, WUNTRACED | WNOHANG) == 0, "a stop is reported once");
	kill(child, SIGCONT);
	check(waitpid(child, &status, WCONTINUED) == child && WIFCONTINUED(status),
	      "WCONTINUED: the child continued");
	/* Linux sends CLD_CONTINUED's SIGCHLD when the continued child next runs: let it, so
	 * that it is not merged with the next stop's (one SIGCHLD is pending at a time). */
	usleep(20000);
	kill(child, SIGTSTP);
	check(waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status) &&
		      WSTOPSIG(status) == SIGTSTP,
	      "SIGTSTP's default action stops it too");
	kill(child, SIGCONT);
	waitpid(child, &status, WCONTINUED);
	usleep(20000);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "then SIGKILL ends it");
	check(chld_count == 5 && chld_codes[0] == CLD_STOPPED && chld_codes[1] == CLD_CONTINUED &&
		      chld_codes[2] == CLD_STOPPED && chld_codes[3] == CLD_CONTINUED &&
		      chld_codes[4] == CLD_KILLED,
	      "SIGCHLD says CLD_STOPPED, CLD_CONTINUED and CLD_KILLED in turn");

	/* SA_NOCLDSTOP: no SIGCHLD for a stop */
	sa.sa_flags |= SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	chld_count = 0;
	child = sleeper();
	kill(child, SIGSTOP);
	waitpid(child, &status, WUNTRACED);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	check(chld_count == 1 && chld_codes[0] == CLD_KILLED, "SA_NOCLDSTOP: SIGCHLD only for the end");

	/* a stopped child killed without being continued */
	signal(SIGCHLD, SIG_DFL);
	child = sleeper();
	kill(child, SIGSTOP);
	waitpid(child, &status, WUNTRACED);
	kill(child, SIGTERM); /* pending: it is stopped */
	check(waitpid(child, &status, WNOHANG) == 0, "a stopped child takes SIGTERM only when continued");
	kill(child, SIGCONT);
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "SIGCONT lets it end");
}

static void group_wait(void)
{
	pid_t a = fork();
	if (a == 0) {
		usleep(20000);
		_exit(3);
	}
	setpgid(a, a);
	pid_t b = fork();
	if (b == 0)
		_exit(4);
	int status;
	check(waitpid(-a, &status, 0) == a && WEXITSTATUS(status) == 3,
	      "waitpid(-pgid) waits for that group only");
	check(waitpid(0, &status, 0) == b && WEXITSTATUS(status) == 4,
	      "waitpid(0) for the caller's group");
	check(waitpid(-a, &status, 0) == -1 && errno == ECHILD, "no child in the group: ECHILD");
}

static volatile sig_atomic_t hup, cont;

static void on_hup(int signo)
{
	(void)signo;
	hup = 1;
}

static void on_cont(int signo)
{
	(void)signo;
	cont = 1;
}

static void orphans(void)
{
	int fds[2];
	pipe(fds);
	pid_t middle = fork();
	if (middle == 0) {
		/* A group of its own in the session, kept by its parent in another group. */
		setpgid(0, 0);
		pid_t last = fork();
		if (last == 0) {
			close(fds[0]);
			signal(SIGHUP, on_hup);
			signal(SIGCONT, on_cont);
			alarm(5); /* if it were never continued */
			raise(SIGSTOP);
			while (!hup || !cont)
				pause();
			char line[80];
			int n = snprintf(line, sizeof line, "hup %d cont %d\n", hup, cont);
			write(fds[1], line, n);
			kill(0, SIGTSTP); /* its group is orphaned now: dropped */
			write(fds[1], "not stopped\n", 12);
			_exit(0);
		}
		int status;
		waitpid(last, &status, WUNTRACED);
		_exit(WIFSTOPPED(status) ? 0 : 1);
	}
	close(fds[1]);
	int status;
	waitpid(middle, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a grandchild in a group of its own stops");
	char got[80] = { 0 };
	size_t have = 0;
	ssize_t n;
	while (have < sizeof got - 1 && (n = read(fds[0], got + have, sizeof got - 1 - have)) > 0)
		have += n;
	close(fds[0]);
	check(strncmp(got, "hup 1 cont 1\n", 13) == 0,
	      "its parent's exit orphans its group: SIGHUP and SIGCONT");
	check(strcmp(got + 13, "not stopped\n") == 0, "SIGTSTP to an orphaned group is dropped");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	groups_and_sessions();
	group_kill();
	stop_and_continue();
	group_wait();
	orphans();
	if (failures)
		return 1;
	printf("cjobs: all checks passed\n");
	return 0;
}
