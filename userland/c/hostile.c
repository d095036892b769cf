/*
 * hostile: calls a careless or hostile program makes, each checked against what Linux
 * answers. Built with `musl-gcc -static`, it runs unchanged on Linux and on cfslab;
 * tests/tests/hostile.rs checks that both print the same lines.
 *
 * - 32-bit arguments: Linux reads an `int` or `pid_t` argument as 32 bits, whatever the
 *   upper half of its register holds (the C library may leave anything there).
 * - SIGPIPE: a writer that ignores or blocks it gets EPIPE and lives on.
 * - Pipes: a blocking write of 1 MiB writes it all, waiting as the reader drains it.
 * - Bad pointers: a directory listing into a bad buffer fails with EFAULT and loses no
 *   entries.
 *
 * `hostile pid1` (cfslab only: on a host it would signal the real init) sends SIGKILL to
 * pid 1, which Linux's init, like every task without a handler for it, ignores.
 * `hostile orphan` leaves a child running for ever and exits: the run must end anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/* An `int` argument with garbage in its register's upper half. */
static long high(long value)
{
	return (long)((unsigned long)(unsigned int)value | (1UL << 32));
}

static void thirty_two_bit_arguments(void)
{
	pid_t child = fork();
	if (child == 0)
		_exit(7);
	int status = 0;
	/* -1 (any child) with the upper half zero, as glibc passes it. */
	long reaped = syscall(SYS_wait4, 0x00000000ffffffffL, &status, 0L, 0L);
	check(reaped == child && WIFEXITED(status) && WEXITSTATUS(status) == 7,
	      "wait4 reads its pid as 32 bits: 0xffffffff is -1, any child");
	check(syscall(SYS_kill, high(getpid()), 0L) == 0, "kill reads its pid as 32 bits");
	check(syscall(SYS_kill, (long)getpid(), high(0)) == 0, "kill reads its signal as 32 bits");

	int fds[2];
	if (pipe(fds) != 0) {
		check(0, "pipe");
		return;
	}
	long wrote = syscall(SYS_write, high(fds[1]), "x", 1L);
	char byte = 0;
	long got = syscall(SYS_read, high(fds[0]), &byte, 1L);
	check(wrote == 1 && got == 1 && byte == 'x', "read and write read their fd as 32 bits");
	check(syscall(SYS_close, high(fds[1])) == 0 && close(fds[0]) == 0,
	      "close reads its fd as 32 bits");
}

/* In a child: whether a write to a pipe with no reader gives EPIPE (after `prepare`),
 * and the child lives on to say so. */
static void sigpipe_case(void (*prepare)(void), const char *what)
{
	pid_t child = fork();
	if (child == 0) {
		prepare();
		int fds[2];
		if (pipe(fds) != 0)
			_exit(2);
		close(fds[0]);
		long wrote = write(fds[1], "x", 1);
		_exit(wrote == -1 && errno == EPIPE ? 0 : 1);
	}
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, what);
}

static void ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

static void block_sigpipe(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void sigpipe(void)
{
	sigpipe_case(ignore_sigpipe, "SIGPIPE ignored: the write gives EPIPE, the writer lives");
	sigpipe_case(block_sigpipe, "SIGPIPE blocked: the write gives EPIPE, the writer lives");
	pid_t child = fork();
	if (child == 0) {
		int fds[2];
		if (pipe(fds) != 0)
			_exit(2);
		close(fds[0]);
		write(fds[1], "x", 1);
		_exit(0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE,
	      "SIGPIPE at its default: the writer dies of it");
}

static void big_pipe_write(void)
{
	enum { SIZE = 1 << 20 };
	int fds[2];
	if (pipe(fds) != 0) {
		check(0, "pipe");
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		static char data[SIZE];
		close(fds[0]);
		memset(data, 'p', sizeof data);
		long wrote = write(fds[1], data, sizeof data);
		_exit(wrote == SIZE ? 0 : 1);
	}
	close(fds[1]);
	static char buf[65536];
	long total = 0, n;
	while ((n = read(fds[0], buf, sizeof buf)) > 0)
		total += n;
	close(fds[0]);
	int status = 0;
	waitpid(child, &status, 0);
	check(total == SIZE && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "a blocking 1 MiB write to a pipe writes it all as the reader drains it");
}

/* How many entries a listing of "/" yields, after a first getdents64 into `first`
 * (NULL: none); -1 if the listing fails. */
static long entries_after(void *first, long *first_result, int *first_errno)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	if (first) {
		errno = 0;
		*first_result = syscall(SYS_getdents64, fd, first, 4096L);
		*first_errno = errno;
	}
	static char buf[4096];
	long entries = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, (long)sizeof buf);
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		for (long at = 0; at < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + at + 16, sizeof reclen);
			at += reclen;
			entries++;
		}
	}
	close(fd);
	return entries;
}

static void bad_pointers(void)
{
	long all = entries_after(NULL, NULL, NULL);
	long result = 0;
	int error = 0;
	long after_fault = entries_after((void *)1, &result, &error);
	check(result == -1 && error == EFAULT, "getdents64 into a bad buffer gives EFAULT");
	check(all > 2 && after_fault == all, "and the listing after it loses no entries");
}

static void pid1(void)
{
	check(kill(1, SIGKILL) == 0, "kill(1, SIGKILL) as root succeeds");
	check(kill(1, 0) == 0, "and pid 1 is still there");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pid1") == 0) {
		pid1();
	} else if (argc > 1 && strcmp(argv[1], "orphan") == 0) {
		if (fork() == 0)
			for (;;)
				sleep(1);
		printf("hostile: left a child running\n");
		return 0;
	} else {
		thirty_two_bit_arguments();
		sigpipe();
		big_pipe_write();
		bad_pointers();
	}
	if (failures == 0)
		printf("hostile: all checks passed\n");
	return failures == 0 ? 0 : 1;
}
