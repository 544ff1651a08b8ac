// SPDX-License-Identifier: MIT
/*
 * spawn - starts PROG twice through the vfork paths: posix_spawn (musl:
 * clone with CLONE_VM | CLONE_VFORK and a child stack of its own) and
 * vfork + execve; checks both exit 0.
 *
 * With -t, a second thread does it N times (default 2) while the first
 * computes, and PROG is this program itself (/proc/self/exe -c): every
 * child runs the program its parent runs, before its exec and after.
 *
 * usage: spawn PROG [ARG]
 *        spawn -t [N]
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile unsigned long sink;

/* A child of -t: a little work, then exit 0. */
static int child(void)
{
	for (unsigned long i = 0; i < 200; i++)
		sink += i * i;
	return 0;
}

/* PROG av[0] by posix_spawn, then by vfork + execve: 0 if both exit 0. */
static int spawn2(char **av)
{
	int st1 = -1, st2 = -1;
	pid_t pid;

	fflush(stdout);
	if (posix_spawn(&pid, av[0], NULL, NULL, av, environ) ||
	    waitpid(pid, &st1, 0) != pid)
		return 1;
	pid = vfork();
	if (!pid) {
		execve(av[0], av, environ);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st2, 0) != pid)
		return 1;
	if (st1 || st2) {
		fprintf(stderr, "spawn: children exited with status %#x and %#x\n", st1, st2);
		return 1;
	}
	return 0;
}

static void *spawner(void *arg)
{
	char *av[] = { "/proc/self/exe", "-c", NULL };
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		if (spawn2(av))
			return (void *)1;
		for (unsigned long j = 0; j < 1000; j++)
			sink += j ^ i;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char *av[3];

	if (argc == 2 && !strcmp(argv[1], "-c"))
		return child();
	if (argc >= 2 && !strcmp(argv[1], "-t")) {
		long n = argc > 2 ? atol(argv[2]) : 2;
		pthread_t t;
		void *ret;

		if (pthread_create(&t, NULL, spawner, (void *)n))
			return 1;
		for (unsigned long j = 0; j < 20000; j++)
			sink += j;
		if (pthread_join(t, &ret) || ret)
			return 1;
		printf("spawn: %ld x 2 children of the second thread ok\n", n);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: spawn PROG [ARG]\n       spawn -t [N]\n");
		return 2;
	}
	av[0] = argv[1];
	av[1] = argc > 2 ? argv[2] : NULL;
	av[2] = NULL;
	if (spawn2(av))
		return 1;
	printf("spawn: both children ok\n");
	return 0;
}
