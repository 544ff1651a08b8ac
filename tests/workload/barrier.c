// SPDX-License-Identifier: MIT
/*
 * barrier - N threads (default 6) that are all alive at once: each waits
 * at a barrier the main thread also waits at, so none returns before all
 * have started. For tests that need that many live threads (aerun's
 * sub-buffer pool); the barrier's futex waits make the control flow depend
 * on timing, so it is not compared with an oracle.
 *
 * usage: barrier [N]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t bar;

static void *thread_main(void *unused)
{
	pthread_barrier_wait(&bar);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	pthread_t t[64];

	if (n < 1 || n > 64 || pthread_barrier_init(&bar, NULL, n + 1)) {
		fprintf(stderr, "barrier: N must be 1..64\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return 1;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("barrier: %d threads ok\n", n);
	return 0;
}
