// SPDX-License-Identifier: MIT
/*
 * threads - NTHREADS pthreads doing deterministic work: each sorts and
 * hashes its own array (no shared writes, no locks, no malloc), reports
 * through its own pipe, then waits on a second pipe until the main thread
 * lets it return. The main thread releases and joins the workers one at a
 * time, so no two threads ever contend for a lock in libc: every worker's
 * control flow depends only on its index. Only pthread_join in the main
 * thread may wait a varying number of times (the worker may still be
 * exiting). Exits 0 when every result equals the main thread's own
 * computation of it.
 *
 * usage: threads [N]   (array size, default 3000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 4
#define MAXN 20000

struct worker {
	pthread_t t;
	int idx;
	unsigned n;
	int done[2];	/* worker -> main: its result */
	int go[2];	/* main -> worker: return now */
	uint32_t a[MAXN];
};

static struct worker w[NTHREADS];

static uint64_t work(uint32_t *a, unsigned n, int idx)
{
	uint32_t x = 0x9e3779b9u * (idx + 1);
	uint64_t h = 14695981039346656037ull;

	for (unsigned i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		a[i] = x % 100000;
	}
	/* insertion sort: data-dependent, schedule-independent control flow */
	for (unsigned i = 1; i < n; i++) {
		uint32_t v = a[i];
		unsigned j = i;

		while (j && a[j - 1] > v) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
	for (unsigned i = 0; i < n; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	return h;
}

static void *worker_main(void *arg)
{
	struct worker *me = arg;
	uint64_t h = work(me->a, me->n, me->idx);
	char c;

	if (write(me->done[1], &h, sizeof(h)) != sizeof(h))
		return (void *)1;
	if (read(me->go[0], &c, 1) != 1)
		return (void *)2;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
	static uint32_t mine[MAXN];
	int bad = 0;

	if (!n || n > MAXN) {
		fprintf(stderr, "threads: N must be 1..%d\n", MAXN);
		return 2;
	}
	for (int i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		w[i].n = n;
		if (pipe(w[i].done) || pipe(w[i].go) ||
		    pthread_create(&w[i].t, NULL, worker_main, &w[i])) {
			fprintf(stderr, "threads: cannot start worker %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < NTHREADS; i++) {
		uint64_t h;
		void *ret;

		if (read(w[i].done[0], &h, sizeof(h)) != sizeof(h)) {
			fprintf(stderr, "threads: worker %d sent nothing\n", i);
			return 1;
		}
		if (h != work(mine, n, i)) {
			fprintf(stderr, "threads: worker %d: wrong hash\n", i);
			bad++;
		}
		if (write(w[i].go[1], "x", 1) != 1 || pthread_join(w[i].t, &ret) || ret) {
			fprintf(stderr, "threads: worker %d failed\n", i);
			bad++;
		}
	}
	if (bad)
		return 1;
	printf("threads: %d workers ok\n", NTHREADS);
	return 0;
}
