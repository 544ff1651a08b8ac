// SPDX-License-Identifier: MIT
/*
 * exit_workers.c - the process exits while three threads spin in a loop
 * with a branch in it: each is killed wherever it is, often after the
 * branch and before either side wrote a byte, where no byte says which
 * side ran. Each such trace must end at the branch, with a warning, and
 * the capture regenerate (it was refused whole).
 *
 *   exit_workers [USEC]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long limit = ~0ul;

static void *worker(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (unsigned long i = 0; i < limit; i++)
		if (i % 3 == 0)	/* a branch: witness bytes */
			x += i;
		else
			x ^= i;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
	usleep(argc > 1 ? atoi(argv[1]) : 20000);
	printf("exit_workers: exiting\n");
	exit(0);
}
