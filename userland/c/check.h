/*
 * check.h: the one way the C test programs report. Each check prints `ok WHAT` or
 * `FAIL WHAT`; a program ends with `NAME: all checks passed` (and status 0) only if none
 * failed. The same lines natively and on cfslab are what the system tests compare.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

#endif
