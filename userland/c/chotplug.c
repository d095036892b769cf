/*
 * chotplug: CPU hotplug from user space, through /sys/devices/system/cpu/, the same binary
 * on cfslab and on Linux (as root, on a machine of two CPUs or more; it mounts sysfs and
 * proc where nothing has). Its last CPU goes offline under running hogs, one of them pinned there,
 * and comes back, a few times: every hog ends and says where (never on the offline CPU),
 * the pinned one is let run elsewhere, and the lists and the `online` file say what
 * happened. Then what a write may not do: a value kstrtobool refuses (EINVAL), a write
 * by another uid (EACCES), cpu0, which has no `online` file on x86 (ENOENT).
 *
 * `chotplug cycle N`: the last CPU goes offline and comes back N times while CPU hogs
 * and a 1 ms sleeper run throughout; then every one of them is told to stop (SIGTERM) and
 * must say so (none lost, none stuck on a queue no CPU serves), and the sleeper must have
 * slept.
 */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CPU_DIR "/sys/devices/system/cpu"
#define HOGS 6
#define HOG_MS 60

/* The text of `path` (at most 63 bytes), or "" if it cannot be read. */
static const char *text_of(const char *path)
{
	static char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* Writes `value` to cpuN/online; 0, or the errno. */
static int set_online(int cpu, const char *value)
{
	char path[64];
	snprintf(path, sizeof path, CPU_DIR "/cpu%d/online", cpu);
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	ssize_t n = write(fd, value, strlen(value));
	int e = n < 0 ? errno : 0;
	close(fd);
	return e;
}

static long long cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Hogs burn HOG_MS of CPU each, then write the CPU they ended on to `report`. */
static int report[2];

static pid_t hog(int pinned_to)
{
	pid_t pid = fork();
	if (pid == 0) {
		while (cpu_ns() < HOG_MS * 1000000LL)
			;
		int cpu = sched_getcpu();
		write(report[1], &cpu, sizeof cpu);
		_exit(0);
	}
	/* The parent pins it, not the child: a child that has not run yet by the time its CPU
	 * goes offline would pin itself too late, and the offlining would find nothing to widen. */
	if (pinned_to >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(pinned_to, &set);
		sched_setaffinity(pid, sizeof set, &set);
	}
	return pid;
}

/* Sleeps 5 ms, so that the hogs are under way when their CPU goes. */
static void let_run(void)
{
	struct timespec t = {0, 5000000};
	nanosleep(&t, NULL);
}

/* HOGS hogs and one pinned to `victim`; `victim` goes offline while they run (and, with
 * `back`, online again before they end). Checks that every hog ends, none on `victim`. */
static void offline_under_hogs(int victim, int back, const char *what)
{
	pid_t pids[HOGS + 1];
	for (int i = 0; i < HOGS; i++)
		pids[i] = hog(-1);
	pids[HOGS] = hog(victim);
	let_run();
	check(set_online(victim, "0") == 0, what);
	cpu_set_t set;
	int widened = sched_getaffinity(pids[HOGS], sizeof set, &set) == 0 &&
		      CPU_COUNT(&set) > 0 && !CPU_ISSET(victim, &set);
	if (back)
		check(set_online(victim, "1") == 0, "the CPU comes back while they run");
	int ended = 0, on_victim = 0;
	for (int i = 0; i < HOGS + 1; i++) {
		int cpu = -1;
		if (read(report[0], &cpu, sizeof cpu) == sizeof cpu) {
			ended++;
			on_victim += cpu == victim;
		}
	}
	for (int i = 0; i < HOGS + 1; i++)
		waitpid(pids[i], NULL, 0);
	check(ended == HOGS + 1, "every hog ends: none is lost");
	if (!back) {
		check(widened, "the hog pinned to it may run on the others now");
		check(on_victim == 0, "no hog ends on the offline CPU");
	}
}

/* The `cycle` mode's tasks run until a SIGTERM; each then writes what it did (a hog: the
 * CPU it ended on; the sleeper: its sleeps, negative) to `report`. (A signal, not a
 * non-blocking pipe: cfslab's pipes do not honour O_NONBLOCK yet.) */
static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static void stop_on_term(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
}

static pid_t long_hog(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		while (!stopping)
			;
		int cpu = sched_getcpu();
		write(report[1], &cpu, sizeof cpu);
		_exit(0);
	}
	return pid;
}

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		int sleeps = 0;
		while (!stopping) {
			struct timespec t = {0, 1000000};
			if (nanosleep(&t, NULL) == 0)
				sleeps++;
		}
		/* Negative: told apart from the hogs' CPU numbers. */
		int said = -sleeps;
		write(report[1], &said, sizeof said);
		_exit(0);
	}
	return pid;
}

/* `rounds` times offline and back under HOGS hogs and a sleeper (see the file's docs). */
static int cycle(int victim, int rounds)
{
	if (pipe(report) != 0)
		return 1;
	/* Set before the forks, so that no child can miss its SIGTERM. */
	stop_on_term();
	pid_t pids[HOGS + 1];
	for (int i = 0; i < HOGS; i++)
		pids[i] = long_hog();
	pids[HOGS] = sleeper();
	close(report[1]);
	int failed = 0;
	for (int r = 0; r < rounds; r++) {
		struct timespec t = {0, 2000000};
		failed += set_online(victim, "0") != 0;
		nanosleep(&t, NULL);
		failed += set_online(victim, "1") != 0;
		nanosleep(&t, NULL);
	}
	check(failed == 0, "the last CPU goes offline and comes back, every time");
	for (int i = 0; i < HOGS + 1; i++)
		kill(pids[i], SIGTERM);
	int reports = 0, sleeps = 0, word;
	while (read(report[0], &word, sizeof word) == sizeof word) {
		reports++;
		if (word < 0)
			sleeps = -word;
	}
	int ended = 0;
	for (int i = 0; i < HOGS + 1; i++) {
		int status = -1;
		waitpid(pids[i], &status, 0);
		ended += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	check(reports == HOGS + 1 && ended == HOGS + 1,
	      "every hog and the sleeper stop when told: none is lost");
	/* Each round's two 2 ms pauses hold two of its 1 ms sleeps at least. */
	check(sleeps >= rounds, "the sleeper slept and woke throughout");
	check(strcmp(text_of(CPU_DIR "/offline"), "\n") == 0, "no CPU is offline at the end");
	if (failures)
		return 1;
	printf("chotplug: all checks passed\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (access(CPU_DIR "/online", R_OK) != 0) {
		mkdir("/sys", 0755);
		mount("sysfs", "/sys", "sysfs", 0, NULL);
	}
	if (access("/proc/cpuinfo", R_OK) != 0) {
		mkdir("/proc", 0755);
		mount("proc", "/proc", "proc", 0, NULL);
	}
	if (geteuid() != 0) {
		fprintf(stderr, "chotplug: run it as root\n");
		return 3;
	}
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2) {
		fprintf(stderr, "chotplug: needs two CPUs or more\n");
		return 3;
	}
	int victim = cpus - 1;
	if (argc == 3 && strcmp(argv[1], "cycle") == 0)
		return cycle(victim, atoi(argv[2]));
	char path[64];
	snprintf(path, sizeof path, CPU_DIR "/cpu%d/online", victim);
	check(strcmp(text_of(path), "1\n") == 0, "the last CPU's online file reads 1");
	check(strcmp(text_of(CPU_DIR "/offline"), "\n") == 0, "no CPU is offline");
	check_pipe(report, "pipe: the two lowest free descriptors");

	offline_under_hogs(victim, 0, "the last CPU goes offline under running hogs");
	check(strcmp(text_of(path), "0\n") == 0, "its online file reads 0");
	char expected[16];
	snprintf(expected, sizeof expected, "%d\n", victim);
	check(strcmp(text_of(CPU_DIR "/offline"), expected) == 0, "the offline list names it");
	check(sysconf(_SC_NPROCESSORS_ONLN) == cpus - 1, "one CPU fewer is online");
	int blocks = 0;
	FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
	char line[256];
	while (cpuinfo && fgets(line, sizeof line, cpuinfo))
		blocks += strncmp(line, "processor", 9) == 0;
	if (cpuinfo)
		fclose(cpuinfo);
	check(blocks == cpus - 1, "/proc/cpuinfo has a block per online CPU");
	cpu_set_t only;
	CPU_ZERO(&only);
	CPU_SET(victim, &only);
	check(sched_setaffinity(0, sizeof only, &only) == -1 && errno == EINVAL,
	      "an affinity of the offline CPU alone is EINVAL");
	check(set_online(victim, "0") == 0, "taking it offline again changes nothing");

	check(set_online(victim, "1") == 0, "it comes back online");
	check(strcmp(text_of(path), "1\n") == 0, "its online file reads 1 again");
	check(sched_setaffinity(0, sizeof only, &only) == 0 && sched_getcpu() == victim,
	      "a task pinned to it runs there");
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int c = 0; c < cpus; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof all, &all);

	for (int round = 0; round < 3; round++)
		offline_under_hogs(victim, 1, "offline and back, hogs running");
	check(strcmp(text_of(CPU_DIR "/offline"), "\n") == 0, "no CPU is offline at the end");

	/* Two writers at once, cycling the same CPU: each write waits for the other's. */
	pid_t other = fork();
	int failed = 0;
	for (int round = 0; round < 3; round++)
		failed += set_online(victim, "0") != 0 || set_online(victim, "1") != 0;
	if (other == 0)
		_exit(failed);
	int other_status = -1;
	waitpid(other, &other_status, 0);
	check(!failed && WIFEXITED(other_status) && WEXITSTATUS(other_status) == 0,
	      "two writers cycling it at once both succeed");
	check(strcmp(text_of(path), "1\n") == 0, "it is online after them");

	check(set_online(victim, "2") == EINVAL, "writing 2 is EINVAL");
	check(set_online(victim, "yes") == 0, "writing yes is a 1");
	check(set_online(victim, "x") == EINVAL, "writing x is EINVAL");
	check(set_online(0, "0") == ENOENT, "cpu0 has no online file");
	pid_t child = fork();
	if (child == 0)
		_exit(setuid(1) == 0 && set_online(victim, "0") == EACCES ? 0 : 1);
	int status = -1;
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another uid may not write it");
	check(strcmp(text_of(path), "1\n") == 0, "it is still online");

	if (failures)
		return 1;
	printf("chotplug: all checks passed\n");
	return 0;
}
