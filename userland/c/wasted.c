/*
 * wasted: the Wasted Cores lab's workloads as a program (docs/wasted-cores.md), the same
 * binary on cfslab and on Linux. Each mode prints where its tasks ran, by NUMA node, with
 * nodes of NODE_CPUS consecutive CPUs (`boot --numa`'s layout); the kernel's invariant
 * checker (`invariant=on`) says how long cores idled beside waiting work.
 *
 * `wasted construction A B N MS`: an application pinned to nodes A and B (the Scheduling
 * Group Construction bug wants two nodes two hops apart). It starts on node A, as threads
 * start on their parent's node: N children forked there, each then allowed both nodes,
 * burning MS ms of CPU; each says on which node it was at three quarters of its work.
 *
 * `wasted hotplug CPU N MS`: CPU hotplug, then an application (the Missing Scheduling
 * Domains bug): CPU goes offline and comes back (`/sys/devices/system/cpu/cpuCPU/online`,
 * as root), then N children are forked on node 0 and each allowed every node, burning MS ms
 * of CPU; each says on which node it was at three quarters of its work.
 *
 * `wasted imbalance JOBS TOTAL MS`: a build in uid 1 beside two hogs of uids 2 and 3 (the
 * Group Imbalance bug): the hogs are pinned to the first CPUs of nodes 0 and 2, the paper's
 * R processes on their nodes; the build runs TOTAL jobs of MS ms of CPU each, JOBS at a
 * time, and counts on which node each job ended.
 *
 * `wasted wakeup N MS`: the Overload-on-Wakeup bug. N - 1 threads pinned one a CPU from CPU 0
 * compute for MS ms; a database's worker made on node 0 first waits LATE_MS for a long read,
 * then runs transactions of 1-5 ms of CPU separated by I/O waits of 0.1-0.5 ms until it has
 * burnt MS ms, free to run anywhere. It wakes with node 0 full and CPU N - 1 idle: where
 * it wakes is in the trace (its first `sched_waking`; its pid is printed). The worker says
 * on which node it was at three quarters of its work, the pinned threads at their end.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NODE_CPUS 2
#define MAX_NODES 32

static int here(void)
{
	unsigned cpu = 0;
	syscall(SYS_getcpu, &cpu, NULL, NULL);
	return (int)cpu;
}

static long long cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Allows the caller the CPUs of `nodes` (a bit per node). */
static int allow_nodes(unsigned nodes)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int node = 0; node < MAX_NODES; node++)
		if (nodes & (1u << node))
			for (int i = 0; i < NODE_CPUS; i++)
				CPU_SET(node * NODE_CPUS + i, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static void burn_until(long long ns)
{
	while (cpu_ns() < ns)
		;
}

/* Forked children report their node through this pipe, one int each. */
static int report[2];

static void print_nodes(const char *what, const int *count, int nodes)
{
	printf("%s:", what);
	for (int n = 0; n < nodes; n++)
		printf(" node%d=%d", n, count[n]);
	printf("\n");
}

/* Whether the machine has the CPUs of `nodes` nodes; if not, says so. */
static int has_nodes(int nodes)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= nodes * NODE_CPUS)
		return 1;
	fprintf(stderr, "wasted: needs %d NUMA nodes of %d CPUs (boot with --smp %d --numa %d)\n",
		nodes, NODE_CPUS, nodes * NODE_CPUS, nodes);
	return 0;
}

/* Counts in `count` the nodes that N children report (one int each on `report`; fewer if
 * the pipe ends first), then reaps every child. Whether any child failed. */
static int count_and_reap(int n, int *count)
{
	for (int i = 0; i < n; i++) {
		int node = -1;
		if (read(report[0], &node, sizeof node) != sizeof node)
			break;
		if (node >= 0 && node < MAX_NODES)
			count[node]++;
	}
	int status, failed = 0;
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return failed;
}

/* N children forked on the nodes of `start` (a bit per node), each then allowed those of
 * `allowed`, burning MS ms of CPU; counts in `count` on which node each was at three
 * quarters of its work (all were running by then, and none had ended). */
static void fork_and_count(unsigned start, unsigned allowed, int n, long long ms, int *count)
{
	allow_nodes(start);
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			allow_nodes(allowed);
			burn_until(ms * 750000LL);
			int node = here() / NODE_CPUS;
			write(report[1], &node, sizeof node);
			burn_until(ms * 1000000LL);
			_exit(0);
		}
	}
	count_and_reap(n, count);
}

static int construction(int a, int b, int n, long long ms)
{
	if (a < 0 || b < 0 || a >= MAX_NODES || b >= MAX_NODES || a == b || n < 1 || n > 64 ||
	    ms < 1)
		return 2;
	if (!has_nodes((a > b ? a : b) + 1))
		return 3;
	if (pipe(report))
		return 2;
	int count[MAX_NODES] = {0};
	fork_and_count(1u << a, 1u << a | 1u << b, n, ms, count);
	int nodes = (a > b ? a : b) + 1;
	print_nodes("construction: threads at three quarters", count, nodes);
	printf("construction: %d of %d threads on node %d\n", count[b], n, b);
	return 0;
}

/* Writes `value` to CPU `cpu`'s online file; 0, or says why not. */
static int set_online(int cpu, const char *value)
{
	char path[64];
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/online", cpu);
	FILE *f = fopen(path, "w");
	if (f && fputs(value, f) >= 0 && fclose(f) == 0)
		return 0;
	perror(path);
	return -1;
}

static int hotplug(int cpu, int n, long long ms, int nodes)
{
	if (cpu < 1 || cpu >= nodes * NODE_CPUS || n < 1 || n > 64 || ms < 1)
		return 2;
	if (!has_nodes(nodes))
		return 3;
	if (pipe(report))
		return 2;
	if (set_online(cpu, "0") || set_online(cpu, "1"))
		return 4;
	int count[MAX_NODES] = {0};
	fork_and_count(1u, (1u << nodes) - 1, n, ms, count);
	print_nodes("hotplug: threads at three quarters", count, nodes);
	printf("hotplug: %d of %d threads off node 0\n", n - count[0], n);
	return 0;
}

/* Takes uid `uid` for good. On Linux, a uid's tasks share a `cpu` cgroup when the init made
 * one per uid (linuxinit --group-uid, as a login would): the caller joins it first. cfslab
 * groups by uid itself (group=uid), and has no such file. */
static int become(int uid)
{
	char path[64];
	snprintf(path, sizeof path, "/sys/fs/cgroup/uid%d/cgroup.procs", uid);
	FILE *group = fopen(path, "w");
	if (group) {
		fprintf(group, "%d\n", (int)getpid());
		fclose(group);
	}
	return setuid(uid);
}

/* A hog of uid `uid` pinned to `cpu` (so that its node is known); ends when killed. */
static pid_t hog(int uid, int cpu)
{
	pid_t pid = fork();
	if (pid == 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof set, &set);
		if (become(uid))
			_exit(2);
		for (;;)
			;
	}
	return pid;
}

static int imbalance(int jobs, int total, long long ms, int nodes)
{
	if (jobs < 1 || jobs > 64 || total < jobs || ms < 1)
		return 2;
	if (!has_nodes(nodes))
		return 3;
	if (pipe(report))
		return 2;
	pid_t hogs[2] = {hog(2, 0), hog(3, 2 * NODE_CPUS)};
	pid_t make = fork();
	if (make == 0) {
		if (become(1))
			_exit(2);
		int running = 0, started = 0;
		while (started < total || running > 0) {
			if (started < total && running < jobs) {
				if (fork() == 0) {
					burn_until(ms * 1000000LL);
					int node = here() / NODE_CPUS;
					write(report[1], &node, sizeof node);
					_exit(0);
				}
				started++;
				running++;
			} else if (wait(NULL) > 0) {
				running--;
			}
		}
		_exit(0);
	}
	int count[MAX_NODES] = {0};
	for (int i = 0; i < total; i++) {
		int node = -1;
		read(report[0], &node, sizeof node);
		if (node >= 0 && node < MAX_NODES)
			count[node]++;
	}
	waitpid(make, NULL, 0);
	for (int i = 0; i < 2; i++) {
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}
	print_nodes("imbalance: jobs ended", count, nodes);
	return 0;
}

/* The line that names the database's worker of `wasted wakeup` (bootopts::wasted's
 * WAKEUP_WORKER, which the boot tool and the tests read). */
#define WAKEUP_WORKER "wakeup: the database's worker is pid "

/* How long the database's worker of `wasted wakeup` waits before its first transaction. */
#define LATE_MS 50

/* The worker's random numbers: a linear congruential generator. */
static unsigned next_random(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* The database worker of `wasted wakeup`: transactions until MS ms of CPU are burnt; says
 * on which node it was at three quarters. */
static void transactions(long long ms)
{
	unsigned random = 1;
	long long quarter3 = cpu_ns() + ms * 750000LL, end = cpu_ns() + ms * 1000000LL;
	int reported = 0;
	while (cpu_ns() < end) {
		burn_until(cpu_ns() + 1000000LL + next_random(&random) % 4000001);
		if (!reported && cpu_ns() >= quarter3) {
			int node = here() / NODE_CPUS;
			write(report[1], &node, sizeof node);
			reported = 1;
		}
		struct timespec wait = {0, 100000 + (long)(next_random(&random) % 400001)};
		nanosleep(&wait, NULL);
	}
}

/* Pins the caller to CPU `cpu`; 0, or -1 with errno. */
static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

/* Child `i` of `wasted wakeup` (of n): made on CPU n - 1, it goes to its CPU and says so on
 * `ready` (a byte, then its end closed); a computing thread then waits for the end of
 * `start` and computes there, the database's worker (the last) is free to go anywhere. */
static void wakeup_child(int i, int n, long long ms, int nodes, int *ready, int *start)
{
	close(ready[0]);
	close(start[1]);
	if (pin(i < n - 1 ? i : 0)) {
		perror("wasted: sched_setaffinity");
		_exit(1);
	}
	char none = 0;
	write(ready[1], &none, 1);
	close(ready[1]);
	if (i < n - 1) {
		read(start[0], &none, 1);
		burn_until(cpu_ns() + ms * 1000000LL);
		int node = here() / NODE_CPUS;
		write(report[1], &node, sizeof node);
		_exit(0);
	}
	/* Its first sleep: the trace's first `sched_waking` of it is its wake-up. */
	allow_nodes((1u << nodes) - 1);
	struct timespec read_wait = {0, LATE_MS * 1000000L};
	nanosleep(&read_wait, NULL);
	transactions(ms);
	_exit(0);
}

static int wakeup(int n, long long ms, int nodes)
{
	int ready[2], start[2];
	if (n < 2 || n > nodes * NODE_CPUS || ms < 1)
		return 2;
	if (!has_nodes(nodes))
		return 3;
	if (pipe(report) || pipe(ready) || pipe(start))
		return 2;
	/* Made from the last CPU, each goes to its CPU and waits for all to be there: none is
	 * in another's way while they are made. */
	if (pin(n - 1))
		return 2;
	pid_t worker = -1;
	int made = 0;
	for (; made < n; made++) {
		worker = fork();
		if (worker < 0)
			break;
		if (worker == 0)
			wakeup_child(made, n, ms, nodes, ready, start);
	}
	close(ready[1]);
	close(report[1]);
	int there = 0;
	char byte;
	while (there < made && read(ready[0], &byte, 1) == 1)
		there++;
	close(start[1]);
	int count[MAX_NODES] = {0};
	int failed = count_and_reap(made, count);
	if (made < n || there < n || failed) {
		fprintf(stderr, "wasted: %d of %d threads made, %d in place, %s\n", made, n, there,
			failed ? "some failed" : "none failed");
		return 1;
	}
	print_nodes("wakeup: threads by node (at their end; the worker at three quarters)", count,
		    nodes);
	printf(WAKEUP_WORKER "%d\n", (int)worker);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 6 && argv[1][0] == 'c')
		return construction(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoll(argv[5]));
	if (argc == 5 && argv[1][0] == 'i')
		return imbalance(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]), 4);
	if (argc == 5 && argv[1][0] == 'h')
		return hotplug(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]), 4);
	if (argc == 4 && argv[1][0] == 'w')
		return wakeup(atoi(argv[2]), atoll(argv[3]), 4);
	fprintf(stderr, "usage: wasted construction A B N MS | wasted imbalance JOBS TOTAL MS | "
			"wasted hotplug CPU N MS | wasted wakeup N MS\n");
	return 2;
}
