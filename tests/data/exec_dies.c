// SPDX-License-Identifier: MIT
/*
 * exec_dies.c - writes trace bytes, then execs itself with an address
 * space limit its runtime's trace buffer does not fit in: under aerun the
 * new image dies before its runtime asks for its cursor, so its region
 * holds the old image's bytes up to the EXEC marker and nothing after
 * (aerun committed it empty: the marker then pointed past the data and
 * the whole capture was refused).
 *
 *   exec_dies [LIMIT_MIB]	(the child: exec_dies child)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
	struct rlimit rl;
	volatile unsigned long x = 0;
	char *args[] = { argv[0], "child", NULL };

	if (argc > 1 && !strcmp(argv[1], "child")) {
		printf("exec_dies: the child ran\n");
		return 0;
	}
	for (unsigned long i = 0; i < 100000; i++)	/* witness bytes */
		if (i % 3 == 0)
			x += i;
		else
			x ^= i;
	rl.rlim_cur = rl.rlim_max = (argc > 1 ? strtoul(argv[1], NULL, 0) : 48) << 20;
	if (setrlimit(RLIMIT_AS, &rl))
		return 1;
	fflush(stdout);
	execv("/proc/self/exe", args);
	return 1;
}
