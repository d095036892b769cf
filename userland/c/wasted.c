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
	for (int i = 0; i < n; i++) {
		int node = -1;
		read(report[0], &node, sizeof node);
		if (node >= 0 && node < MAX_NODES)
			count[node]++;
	}
	while (wait(NULL) > 0)
		;
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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 6 && argv[1][0] == 'c')
		return construction(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoll(argv[5]));
	if (argc == 5 && argv[1][0] == 'i')
		return imbalance(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]), 4);
	if (argc == 5 && argv[1][0] == 'h')
		return hotplug(atoi(argv[2]), atoi(argv[3]), atoll(argv[4]), 4);
	fprintf(stderr, "usage: wasted construction A B N MS | wasted imbalance JOBS TOTAL MS | "
			"wasted hotplug CPU N MS\n");
	return 2;
}
