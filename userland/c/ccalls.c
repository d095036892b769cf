/*
 * ccalls: the calls glibc programs (Debian's busybox) make beyond what musl's start-up and
 * stdio need, each checked against what Linux answers. Built with `musl-gcc -static`, it
 * runs unchanged on Linux and on cfslab; tests/tests/userland.rs checks that both print the
 * same lines.
 *
 * - Descriptors: fcntl's F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD/F_SETFD and F_GETFL (busybox's
 *   printf asks F_GETFL before it writes); dup3; execve closing what is close-on-exec.
 * - getrandom, time, getgroups, sched_getaffinity/sched_setaffinity (nproc), getcpu,
 *   getrlimit and prlimit64 (ulimit -n), tkill and tgkill.
 * - The working directory (chdir, fchdir, getcwd, relative paths and execve) and /dev's
 *   null and zero.
 * - madvise (MADV_DONTNEED zeroes), prctl's names, and a robust mutex whose owner thread
 *   ended without unlocking it (the kernel's walk of the robust list at the thread's exit).
 * - setpriority and getpriority on a process group (renice -g).
 * - execve in a process that shares its parent's descriptor table (clone with CLONE_FILES)
 *   closes its close-on-exec descriptors in a copy of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *self;

/* `ccalls open CLOSED OPEN`, exec'd by descriptors(): 0 if descriptor CLOSED was closed
 * by the exec (close-on-exec) and OPEN was not. */
static int still_open(const char *closed, const char *open)
{
	int gone = fcntl(atoi(closed), F_GETFD) == -1 && errno == EBADF;
	return gone && fcntl(atoi(open), F_GETFD) == 0 ? 0 : 1;
}

static void descriptors(void)
{
	int fds[2];
	if (pipe(fds) != 0) {
		check(0, "pipe");
		return;
	}
	check((fcntl(fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY &&
	      (fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_WRONLY,
	      "F_GETFL gives a pipe's ends their access modes");
	int high = fcntl(fds[0], F_DUPFD, 10);
	check(high >= 10 && fcntl(high, F_GETFD) == 0, "F_DUPFD gives the lowest free from 10");
	int marked = fcntl(fds[0], F_DUPFD_CLOEXEC, 0);
	check(marked > 2 && fcntl(marked, F_GETFD) == FD_CLOEXEC,
	      "F_DUPFD_CLOEXEC marks the copy close-on-exec");
	check(fcntl(marked, F_SETFD, 0) == 0 && fcntl(marked, F_GETFD) == 0,
	      "F_SETFD clears it");
	check(dup3(fds[0], high, O_CLOEXEC) == high && fcntl(high, F_GETFD) == FD_CLOEXEC,
	      "dup3 with O_CLOEXEC marks the new descriptor");
	errno = 0;
	check(dup3(high, high, 0) == -1 && errno == EINVAL, "dup3 onto itself gives EINVAL");
	errno = 0;
	check(fcntl(99, F_GETFD) == -1 && errno == EBADF, "fcntl of a closed descriptor: EBADF");
	char closed[16], open[16];
	snprintf(closed, sizeof closed, "%d", high);
	snprintf(open, sizeof open, "%d", marked);
	char *args[] = { (char *)self, "open", closed, open, NULL };
	pid_t child = fork();
	if (child == 0) {
		execv(self, args);
		_exit(2);
	}
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "execve closes the descriptors marked close-on-exec, and only those");
	close(fds[0]);
	close(fds[1]);
	close(high);
	close(marked);
}

static void random_bytes(void)
{
	unsigned char a[64] = { 0 }, b[64] = { 0 };
	long got = syscall(SYS_getrandom, a, sizeof a, 0L);
	syscall(SYS_getrandom, b, sizeof b, 0L);
	check(got == (long)sizeof a && memcmp(a, b, sizeof a) != 0,
	      "getrandom fills the buffer, different bytes each time");
	errno = 0;
	check(syscall(SYS_getrandom, a, 8L, 0x100L) == -1 && errno == EINVAL,
	      "getrandom refuses unknown flags");
	errno = 0;
	check(syscall(SYS_getrandom, (void *)8, 8L, 0L) == -1 && errno == EFAULT,
	      "getrandom into a bad buffer: EFAULT");
}

static void clocks_and_ids(void)
{
	time_t t = 0;
	long now = syscall(SYS_time, &t);
	check(now >= 0 && t == now, "time returns the seconds and stores them");
	int groups = getgroups(0, NULL);
	gid_t list[64];
	check(groups >= 0 && groups <= 64 && getgroups(64, list) == groups,
	      "getgroups(0) counts the groups getgroups lists");
	errno = 0;
	check(getgroups(-1, NULL) == -1 && errno == EINVAL, "getgroups of a negative size: EINVAL");
}

static void affinity(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	long bytes = syscall(SYS_sched_getaffinity, 0, sizeof set, &set);
	check(bytes >= 8 && bytes % 8 == 0 && CPU_ISSET(0, &set),
	      "sched_getaffinity: whole words, CPU 0 among them");
	errno = 0;
	check(syscall(SYS_sched_getaffinity, 0, 4L, &set) == -1 && errno == EINVAL,
	      "sched_getaffinity into 4 bytes: EINVAL");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	check(sched_setaffinity(0, sizeof set, &set) == 0, "sched_setaffinity to CPU 0");
	unsigned cpu = 99, node = 99;
	check(syscall(SYS_getcpu, &cpu, &node, NULL) == 0 && cpu == 0 && node == 0,
	      "getcpu once pinned to CPU 0: CPU 0, node 0");
	check(syscall(SYS_getcpu, NULL, NULL, NULL) == 0, "getcpu with nowhere to write: 0");
	errno = 0;
	check(syscall(SYS_getcpu, (void *)8, NULL, NULL) == -1 && errno == EFAULT,
	      "getcpu to a bad pointer: EFAULT");
	errno = 0;
	check(sched_getaffinity(999999, sizeof set, &set) == -1 && errno == ESRCH,
	      "sched_getaffinity of no process: ESRCH");
	CPU_ZERO(&set);
	errno = 0;
	check(sched_setaffinity(0, sizeof set, &set) == -1 && errno == EINVAL,
	      "sched_setaffinity to no CPU: EINVAL");
	errno = 0;
	check(syscall(SYS_sched_setaffinity, 0, sizeof set, (void *)8) == -1 && errno == EFAULT,
	      "sched_setaffinity from a bad pointer: EFAULT");
	errno = 0;
	check(syscall(SYS_sched_getaffinity, 0, sizeof set, (void *)8) == -1 && errno == EFAULT,
	      "sched_getaffinity into a bad pointer: EFAULT");
}

static void limits(void)
{
	struct rlimit limit;
	check(getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur >= 3 &&
	      limit.rlim_cur <= limit.rlim_max, "getrlimit(RLIMIT_NOFILE): soft within hard");
	struct rlimit old;
	check(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &old) == 0 &&
	      old.rlim_cur == limit.rlim_cur, "prlimit64 reads the same limit");
	errno = 0;
	check(getrlimit(999, &limit) == -1 && errno == EINVAL, "getrlimit of no resource: EINVAL");
	/* The descriptors the limit allows are there to use. */
	int fd = fcntl(0, F_DUPFD, (int)limit.rlim_cur - 1);
	check(fd == (int)limit.rlim_cur - 1 && close(fd) == 0, "the last descriptor it allows is usable");
	errno = 0;
	check(fcntl(0, F_DUPFD, (int)limit.rlim_cur) == -1 && errno == EINVAL,
	      "F_DUPFD at the limit: EINVAL");
}

static void thread_kills(void)
{
	pid_t me = getpid();
	check(syscall(SYS_tgkill, me, me, 0) == 0, "tgkill of this thread with signal 0");
	errno = 0;
	check(syscall(SYS_tgkill, me + 100000, me, 0) == -1 && errno == ESRCH,
	      "tgkill with the wrong process: ESRCH");
	errno = 0;
	check(syscall(SYS_tkill, 0, 0) == -1 && errno == EINVAL, "tkill of thread 0: EINVAL");
	pid_t child = fork();
	if (child == 0)
		for (;;)
			sleep(1);
	check(syscall(SYS_tgkill, child, child, SIGKILL) == 0, "tgkill kills a child");
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "which dies of it");
}

/* execve of a relative path, from this program's own directory (before any chdir: argv[0]
 * may be relative to where it started). */
static void relative_execve(void)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s", self);
	char *slash = strrchr(dir, '/');
	if (!slash) {
		check(0, "argv[0] has a directory");
		return;
	}
	*slash = 0;
	char relative[300];
	snprintf(relative, sizeof relative, "./%s", slash + 1);
	pid_t child = fork();
	if (child == 0) {
		char *args[] = { relative, "argc", "x", NULL };
		if (chdir(dir) == 0)
			execv(relative, args);
		_exit(255);
	}
	int status = 0;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 3, "execve of ./NAME from its directory");
	char dotted[300];
	snprintf(dotted, sizeof dotted, "%s/.//%s", dir, slash + 1);
	child = fork();
	if (child == 0) {
		char *args[] = { dotted, "argc", NULL };
		execv(dotted, args);
		_exit(255);
	}
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 2, "execve of DIR/.//NAME");
}

static void working_directory(void)
{
	char buf[256];
	check(chdir("/") == 0 && getcwd(buf, sizeof buf) && strcmp(buf, "/") == 0,
	      "chdir to the root, and getcwd says so");
	struct stat st;
	check(chdir("proc") == 0 && getcwd(buf, sizeof buf) && strcmp(buf, "/proc") == 0 &&
	      stat("sys", &st) == 0 && S_ISDIR(st.st_mode),
	      "a relative chdir, and relative paths start there");
	errno = 0;
	check(getcwd(buf, 3) == NULL && errno == ERANGE, "getcwd into too small a buffer: ERANGE");
	check(chdir("..") == 0 && getcwd(buf, sizeof buf) && strcmp(buf, "/") == 0, "chdir ..");
	errno = 0;
	check(chdir("/no/such/place") == -1 && errno == ENOENT, "chdir to nothing: ENOENT");
	errno = 0;
	check(chdir("/proc/self/stat") == -1 && errno == ENOTDIR, "chdir to a file: ENOTDIR");
	struct stat st2;
	errno = 0;
	check(stat("/no/such/..", &st2) == -1 && errno == ENOENT,
	      "`..` leaves only a directory that exists: ENOENT");
	errno = 0;
	check(stat("/proc/uptime/..", &st2) == -1 && errno == ENOTDIR,
	      "`..` after a file: ENOTDIR");
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);
	check(fd >= 0 && fchdir(fd) == 0 && getcwd(buf, sizeof buf) && strcmp(buf, "/proc") == 0,
	      "fchdir to an open directory");
	close(fd);
}

static void devices(void)
{
	int fd = open("/dev/null", O_RDWR);
	char byte = 1;
	check(fd >= 0 && write(fd, "hello", 5) == 5 && read(fd, &byte, 1) == 0,
	      "/dev/null takes writes and reads as empty");
	close(fd);
	unsigned char zeros[16];
	memset(zeros, 0xff, sizeof zeros);
	fd = open("/dev/zero", O_RDONLY);
	check(fd >= 0 && read(fd, zeros, sizeof zeros) == sizeof zeros && zeros[0] == 0 &&
	      zeros[15] == 0, "/dev/zero reads as zeros");
	close(fd);
	struct stat st;
	check(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	      minor(st.st_rdev) == 3, "/dev/null is character device 1:3");
}

static void memory_advice(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 0xab, 8192);
	check(madvise(p, 8192, MADV_DONTNEED) == 0 && p[0] == 0 && p[8191] == 0,
	      "madvise(MADV_DONTNEED): the pages read as zeros");
	errno = 0;
	check(madvise(p + 1, 4096, MADV_DONTNEED) == -1 && errno == EINVAL,
	      "madvise of an unaligned address: EINVAL");
	errno = 0;
	check(madvise(p, 4096, 999) == -1 && errno == EINVAL, "madvise with unknown advice: EINVAL");
	munmap(p, 8192);
	errno = 0;
	check(madvise(p, 4096, MADV_NORMAL) == -1 && errno == ENOMEM,
	      "madvise of unmapped memory: ENOMEM");
}

static void names(void)
{
	char name[16] = { 0 };
	check(prctl(PR_SET_NAME, "renamed-ccalls-long") == 0, "prctl(PR_SET_NAME)");
	prctl(PR_GET_NAME, name);
	check(strcmp(name, "renamed-ccalls-") == 0, "PR_GET_NAME: its first 15 bytes");
	errno = 0;
	check(prctl(9999, 0, 0, 0, 0) == -1 && errno == EINVAL, "an unknown prctl: EINVAL");
	prctl(PR_SET_NAME, "ccalls");
}

static pthread_mutex_t robust;

/* Takes the robust mutex and ends with the raw exit call: the C library's own thread exit
 * never runs, so only the kernel's walk of the robust list can mark the mutex. */
static void *die_holding(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	syscall(SYS_exit, 0);
	return NULL;
}

static void robust_lists(void)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	/* Process-shared: musl hands only those to the kernel's robust list. */
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&robust, &attr);
	pthread_t thread;
	pthread_create(&thread, NULL, die_holding, NULL);
	usleep(50000);
	int r = pthread_mutex_lock(&robust);
	check(r == EOWNERDEAD, "a robust mutex whose owner thread ended: EOWNERDEAD");
	pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);
	errno = 0;
	check(syscall(SYS_set_robust_list, NULL, 1) == -1 && errno == EINVAL,
	      "set_robust_list with a wrong length: EINVAL");
}

/* A child leads a process group of its own with a grandchild in it; PRIO_PGRP reaches
 * both, by the group's number and by 0 (the caller's group). */
static void group_priorities(void)
{
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		pid_t grandchild = fork();
		if (grandchild == 0) {
			pause();
			_exit(0);
		}
		int set = setpriority(PRIO_PGRP, 0, 7) == 0;
		int both = getpriority(PRIO_PROCESS, grandchild) == 7 &&
			   getpriority(PRIO_PROCESS, 0) == 7;
		int by_number = setpriority(PRIO_PGRP, getpid(), 9) == 0 &&
				getpriority(PRIO_PGRP, getpid()) == 9 &&
				getpriority(PRIO_PROCESS, grandchild) == 9;
		kill(grandchild, SIGKILL);
		waitpid(grandchild, NULL, 0);
		_exit(set && both && by_number ? 0 : 1);
	}
	int status;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "setpriority(PRIO_PGRP) renices every process of the group");
	errno = 0;
	check(getpriority(PRIO_PGRP, 999999) == -1 && errno == ESRCH,
	      "getpriority(PRIO_PGRP) of no group: ESRCH");
}

static int exec_self(void *arg)
{
	(void)arg;
	execl(self, self, "argc", (char *)NULL);
	_exit(127);
}

static void shared_table_exec(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	static char stack[64 * 1024];
	pid_t child = clone(exec_self, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
	int status = 0;
	waitpid(child, &status, 0);
	check(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2 &&
		      fcntl(fd, F_GETFD) == FD_CLOEXEC,
	      "execve with a shared descriptor table closes close-on-exec ones in its own copy");
	close(fd);
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && strcmp(argv[1], "argc") == 0)
		return argc;
	if (argc > 3 && strcmp(argv[1], "open") == 0)
		return still_open(argv[2], argv[3]);
	descriptors();
	random_bytes();
	clocks_and_ids();
	affinity();
	limits();
	thread_kills();
	relative_execve();
	working_directory();
	devices();
	memory_advice();
	names();
	robust_lists();
	group_priorities();
	shared_table_exec();
	if (failures == 0)
		printf("ccalls: all checks passed\n");
	return failures == 0 ? 0 : 1;
}
