// SPDX-License-Identifier: MIT
/*
 * mtexec - a thread that is not the leader execs PROG (the kernel kills
 * the other threads, and the exec'ing thread takes the leader's tid).
 *
 * usage: mtexec PROG [ARG...]   (mtexec ./mtexec PROG: twice, the second
 *                                time into the program it runs already)
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

extern char **environ;

static char **av;

static void *thread_main(void *unused)
{
	execve(av[0], av, environ);
	perror("mtexec: execve");
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2) {
		fprintf(stderr, "usage: mtexec PROG [ARG...]\n");
		return 2;
	}
	av = argv + 1;
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 1;
	for (;;)
		pause();
}
