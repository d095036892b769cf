/*
 * check.h: the one way the C test programs report. Each check prints `ok WHAT` or
 * `FAIL WHAT`; a program ends with `NAME: all checks passed` (and status 0) only if none
 * failed. The same lines natively and on cfslab are what the system tests compare.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/*
 * A pipe made into `fds`, checked as Linux makes one: its two ends are the two lowest
 * descriptors free (a kernel that gave any other pair, or none, fails). The two are found
 * first by taking them with dup and giving them back.
 */
static inline void check_pipe(int fds[2], const char *what)
{
	int first = dup(1), second = dup(1);
	close(first);
	close(second);
	check(pipe(fds) == 0 && fds[0] == first && fds[1] == second, what);
}

#endif
