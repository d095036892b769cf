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
 * - Mappings: an address munmap gives back is used again, however many times; MAP_FIXED,
 *   MAP_FIXED_NOREPLACE and a hint are honoured, with Linux's errors.
 * - execve: a string may be 32 pages with its NUL (E2BIG beyond), any number of them
 *   within the budget.
 * - A signal handler outside the user half (a non-canonical or a kernel address): the
 *   program dies of SIGSEGV, and no one else notices.
 * - The GS segment: a program may load its own selector into gs; the kernel, which reaches
 *   each CPU's data through a GS base of its own, swaps that in on every entry and the
 *   program's back on every exit, so system calls, a signal handler, page faults and timer
 *   interrupts all leave the program's gs as it was.
 *
 * `hostile pid1` (cfslab only: on a host it would signal the real init) sends SIGKILL to
 * pid 1, which Linux's init, like every task without a handler for it, ignores.
 * `hostile orphan` leaves a child running for ever and exits: the run must end anyway.
 * `hostile tables` (cfslab only) maps pages 2 MiB apart until the 64 MiB limit says no.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* <linux/futex.h> is not among musl's headers. */
enum { FUTEX_WAKE = 1 };

enum { PAGE = 4096 };

/* An `int` argument with garbage in its register's upper half. */
static long high(long value)
{
	return (long)((unsigned long)(unsigned int)value | (1UL << 32));
}

/* The other calls with `int` arguments: each succeeds only if it reads them as 32 bits. */
static void more_thirty_two_bit_arguments(void)
{
	long fd = syscall(SYS_openat, high(AT_FDCWD), "/", high(O_RDONLY | O_DIRECTORY), 0L);
	check(fd >= 0 && close((int)fd) == 0, "openat reads its dirfd and flags as 32 bits");
	struct stat st;
	check(syscall(SYS_newfstatat, high(AT_FDCWD), "/", &st, high(0)) == 0,
	      "newfstatat reads its dirfd and flags as 32 bits");
	sigset_t old;
	check(syscall(SYS_rt_sigprocmask, high(SIG_BLOCK), NULL, &old, 8L) == 0,
	      "rt_sigprocmask reads its how as 32 bits");
	char action[64];
	check(syscall(SYS_rt_sigaction, high(SIGUSR1), NULL, action, 8L) == 0,
	      "rt_sigaction reads its signal as 32 bits");
	errno = 0;
	long priority = syscall(SYS_getpriority, high(PRIO_PROCESS), high(0));
	check(priority >= 1 && priority <= 40, "getpriority reads which and who as 32 bits");
	check(syscall(SYS_setpriority, high(PRIO_PROCESS), high(0), high(0)) == 0,
	      "setpriority reads which, who and the nice value as 32 bits");
	struct timespec ts = { 0, 0 };
	check(syscall(SYS_clock_gettime, high(CLOCK_MONOTONIC), &ts) == 0,
	      "clock_gettime reads its clock as 32 bits");
	ts = (struct timespec){ 0, 1000 };
	check(syscall(SYS_clock_nanosleep, high(CLOCK_MONOTONIC), high(0), &ts, NULL) == 0,
	      "clock_nanosleep reads its clock and flags as 32 bits");
	check(syscall(SYS_poll, NULL, 0L, high(0)) == 0, "poll reads its timeout as 32 bits");
	struct rusage usage;
	check(syscall(SYS_getrusage, high(RUSAGE_SELF), &usage) == 0,
	      "getrusage reads its who as 32 bits");
	int word = 0;
	check(syscall(SYS_futex, &word, high(FUTEX_WAKE), 1L, NULL, NULL, 0L) == 0,
	      "futex reads its operation as 32 bits");
	check(syscall(SYS_setuid, high((long)getuid())) == 0, "setuid reads its uid as 32 bits");
	int fds[2];
	check(syscall(SYS_pipe2, fds, high(0)) == 0 && close(fds[0]) == 0 && close(fds[1]) == 0,
	      "pipe2 reads its flags as 32 bits");
	errno = 0;
	check(syscall(SYS_pipe2, fds, 1L) == -1 && errno == EINVAL, "pipe2 refuses unknown flags");
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
	more_thirty_two_bit_arguments();
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

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static char *map(void *at, long pages, int flags)
{
	return mmap(at, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags,
		    -1, 0);
}

static void mappings(void)
{
	char *first = map(NULL, 2, 0);
	munmap(first, 2 * PAGE);
	check(map(NULL, 2, 0) == first, "an address munmap gave back is used again");
	munmap(first, 2 * PAGE);
	for (int i = 0; i < 10000; i++)
		munmap(map(NULL, 2, 0), 2 * PAGE);
	check(map(NULL, 2, 0) == first, "and still after 10,000 mmap and munmap pairs");
	first[0] = 'a';
	first[PAGE] = 'b';
	char *second = map(first + PAGE, 1, MAP_FIXED);
	check(second == first + PAGE && second[0] == 0 && first[0] == 'a',
	      "MAP_FIXED gives the address asked for and replaces what was there");
	errno = 0;
	check(map(first, 1, MAP_FIXED_NOREPLACE) == MAP_FAILED && errno == EEXIST,
	      "MAP_FIXED_NOREPLACE over a mapping gives EEXIST");
	errno = 0;
	check(map(first + 1, 1, MAP_FIXED) == MAP_FAILED && errno == EINVAL,
	      "MAP_FIXED at an address not page-aligned gives EINVAL");
	errno = 0;
	check(map((void *)(0x7ffffffff000UL - PAGE), 2, MAP_FIXED) == MAP_FAILED && errno == ENOMEM,
	      "MAP_FIXED past the end of user space gives ENOMEM");
	munmap(first, 2 * PAGE);
	check(map(first, 2, MAP_FIXED_NOREPLACE) == first, "MAP_FIXED_NOREPLACE over nothing maps");
	munmap(first, 2 * PAGE);
	check(map(first + PAGE, 1, 0) == first + PAGE, "a free hint is honoured");
	munmap(first + PAGE, PAGE);
	/* A mapping placed over the heap goes with it when the break comes back down, as
	 * brk's munmap of the range takes every mapping in it (musl's brk() refuses to move
	 * the break: the system call moves it). */
	char *heap = (char *)syscall(SYS_brk, 0);
	char *top = (char *)(((unsigned long)heap + 3 * PAGE) & ~(PAGE - 1));
	if ((char *)syscall(SYS_brk, top + PAGE) == top + PAGE) {
		char *over = map(top - PAGE, 1, MAP_FIXED);
		int shrunk = (char *)syscall(SYS_brk, heap) == heap;
		check(over == top - PAGE && shrunk && map(top - PAGE, 1, MAP_FIXED_NOREPLACE) == top - PAGE,
		      "brk shrinking over a MAP_FIXED mapping frees its range");
		munmap(top - PAGE, PAGE);
	}
}

static const char *self;

/* The exit status of this program exec'd with `args` in a child: its argument count
 * (`hostile argc`), 254 if execve gave E2BIG, 255 if it failed otherwise. */
static int exec_status(char **args)
{
	pid_t child = fork();
	if (child == 0) {
		execv(self, args);
		_exit(errno == E2BIG ? 254 : 255);
	}
	int status = 0;
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A string of `n` bytes of 'x' (and a NUL). */
static char *string_of(long n)
{
	char *s = malloc(n + 1);
	memset(s, 'x', n);
	s[n] = 0;
	return s;
}

static void exec_limits(void)
{
	char *one_page[] = { (char *)self, "argc", string_of(4096), NULL };
	check(exec_status(one_page) == 3, "execve takes an argument of 4,096 bytes");
	enum { MANY = 1000 };
	char **many = calloc(MANY + 1, sizeof *many);
	many[0] = (char *)self;
	for (int i = 1; i < MANY; i++)
		many[i] = "argc";
	check(exec_status(many) == MANY % 256, "execve takes 1,000 arguments");
	char *too_long[] = { (char *)self, "argc", string_of(32 * PAGE), NULL };
	check(exec_status(too_long) == 254,
	      "an argument of more than 32 pages with its NUL gives E2BIG");
}

/* One page every 2 MiB from `base` until the first failure: how many were mapped. */
static long map_apart(char *base)
{
	long mapped = 0;
	while (mapped < 20000 && map(base + mapped * (2L << 20), 1, MAP_FIXED_NOREPLACE) != MAP_FAILED)
		mapped++;
	return mapped;
}

/* cfslab only: one page every 2 MiB, each with a page table of its own, until the 64 MiB
 * limit says no, since the tables count in it; then again elsewhere after unmapping them
 * all, since munmap frees the tables it left empty. */
static void tables(void)
{
	char *base = (char *)0x100000000000UL;
	long mapped = map_apart(base);
	printf("hostile: %ld pages mapped 2 MiB apart before ENOMEM (errno %d)\n", mapped, errno);
	munmap(base, mapped * (2L << 20));
	char *elsewhere = base + (1L << 40);
	long again = map_apart(elsewhere);
	printf("hostile: %ld mapped again 1 TiB further up\n", again);
	munmap(elsewhere, again * (2L << 20));
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int signal)
{
	(void)signal;
	usr1_seen = 1;
}

static unsigned short gs_selector(void)
{
	unsigned short value;
	__asm__ volatile("mov %%gs, %0" : "=r"(value));
	return value;
}

static void gs_segment(void)
{
	/* The stack's selector: a user data segment on either kernel, whatever its number. */
	unsigned short ss;
	__asm__ volatile("mov %%ss, %0" : "=r"(ss));
	__asm__ volatile("mov %0, %%gs" : : "r"(ss));
	check(getpid() > 0 && gs_selector() == ss, "gs loaded by the program: system calls keep it");
	signal(SIGUSR1, on_usr1);
	check(kill(getpid(), SIGUSR1) == 0 && usr1_seen && gs_selector() == ss,
	      "a signal handler runs, and gs is the program's after it");
	char *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page[0] = 1;
	check(page[0] == 1 && gs_selector() == ss, "a page's first touch keeps gs");
	munmap(page, PAGE);
	/* Long enough for timer interrupts to land in ring 3 and in the kernel. */
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec < 20000000L);
	nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	check(gs_selector() == ss, "20 ms of interrupts and a sleep keep gs");
	unsigned short null = 0;
	__asm__ volatile("mov %0, %%gs" : : "r"(null));
	check(getpid() > 0 && gs_selector() == 0, "a null gs: system calls keep it");
	nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	check(gs_selector() == 0, "and a sleep");
}

/* How a child that sets `handler` for SIGUSR1 and raises it ends: its signal, or 0. */
static int death_by_handler(unsigned long handler)
{
	pid_t child = fork();
	if (child == 0) {
		struct sigaction action = { 0 };
		action.sa_handler = (void (*)(int))handler;
		sigaction(SIGUSR1, &action, NULL);
		raise(SIGUSR1);
		_exit(0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void wild_handlers(void)
{
	check(death_by_handler(0x0000800000000000UL) == SIGSEGV,
	      "a handler at a non-canonical address: the program dies of SIGSEGV");
	check(death_by_handler(0xffffffff80000000UL) == SIGSEGV,
	      "a handler at a kernel address: the program dies of SIGSEGV");
}

static void pid1(void)
{
	check(kill(1, SIGKILL) == 0, "kill(1, SIGKILL) as root succeeds");
	check(kill(1, 0) == 0, "and pid 1 is still there");
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && strcmp(argv[1], "argc") == 0)
		return argc % 256;
	if (argc > 1 && strcmp(argv[1], "pid1") == 0) {
		pid1();
	} else if (argc > 1 && strcmp(argv[1], "tables") == 0) {
		tables();
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
		mappings();
		exec_limits();
		gs_segment();
		wild_handlers();
	}
	if (failures == 0)
		printf("hostile: all checks passed\n");
	return failures == 0 ? 0 : 1;
}
