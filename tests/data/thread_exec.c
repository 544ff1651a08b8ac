// SPDX-License-Identifier: MIT
/*
 * thread_exec.c - a thread that is not the leader execs the program again
 * while the leader writes trace bytes in a loop: the exec kills the
 * leader wherever it is, at an overflow stop or running (often with no
 * exit stop), and the new image takes its tid. Under aerun the leader's
 * trace must end (EXIT or STOP) before that tid STARTs again, or the
 * capture does not regenerate ("START while it is traced already").
 *
 *   thread_exec		(the new image: thread_exec child)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char **av;

static void burn(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		if (i % 3 == 0)	/* a branch: witness bytes */
			x += i;
		else
			x ^= i;
}

static void *execer(void *arg)
{
	char *args[] = { av[0], "child", NULL };

	(void)arg;
	burn(100000);
	execv("/proc/self/exe", args);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		burn(100000);
		printf("thread_exec: the new image ran\n");
		return 0;
	}
	av = argv;
	burn(50000);
	if (pthread_create(&t, NULL, execer, NULL))
		return 1;
	for (;;)
		burn(1000);
}
