// SPDX-License-Identifier: MIT
/*
 * sigthreads - signals in a multithreaded program: 3 worker threads and the
 * main thread each raise SIGUSR1 at themselves N times while computing; the
 * handler counts in a thread-local counter and mixes a per-thread hash.
 * raise() delivers to the calling thread at once, so every thread's control
 * flow is fixed. First, each thread's `rep stosb` runs into a read-only
 * page of its own after 96 bytes: the SIGSEGV handler opens the page and
 * the instruction resumes with the iterations its %rcx has left (the
 * kernel's SIGNAL marker carries them). Workers report through a pipe and
 * return when released (as in threads.c). Exits 0 when every count and
 * hash is right.
 *
 * usage: sigthreads [N]   (default 20)
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NW 3

static __thread unsigned count;
static __thread uint64_t mix;

static void on_usr1(int sig)
{
	count++;
	mix = (mix ^ (uint64_t)sig) * 1099511628211ull;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	mprotect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)4095), 4096,
		 PROT_READ | PROT_WRITE);
}

/* 200 bytes from 96 before the read-only second page of a (mapped by
 * main before the threads start: the same addresses in every run) */
static int rep_fault(char *a)
{
	char *p = a + 4000;
	unsigned long n = 200;

	if (mprotect(a + 4096, 4096, PROT_READ))
		return -1;
	__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(9) : "memory");
	return a[4199] == 9 && a[4000] == 9 ? 0 : -1;
}

struct worker {
	pthread_t t;
	int n;
	char *area;
	int done[2], go[2];
};

static uint64_t run(int n, char *area)
{
	uint64_t h = 0;

	count = 0;
	mix = 14695981039346656037ull;
	if (rep_fault(area))
		return 0;
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < 100; k++)
			h = h * 31 + (uint64_t)(i ^ k);
		raise(SIGUSR1);
	}
	return count == (unsigned)n ? h ^ mix : 0;
}

static void *worker_main(void *arg)
{
	struct worker *me = arg;
	uint64_t r = run(me->n, me->area);
	char c;

	if (write(me->done[1], &r, sizeof(r)) != sizeof(r) || read(me->go[0], &c, 1) != 1)
		return (void *)1;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	static struct worker w[NW];
	struct sigaction sa;
	uint64_t want;
	int bad = 0;
	char *areas = mmap(NULL, (NW + 1) * 8192, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	if (n <= 0 || sigaction(SIGUSR1, &sa, NULL)) {
		fprintf(stderr, "sigthreads: bad N or sigaction failed\n");
		return 2;
	}
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (areas == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL)) {
		fprintf(stderr, "sigthreads: mmap or sigaction(SIGSEGV) failed\n");
		return 2;
	}
	for (int i = 0; i < NW; i++) {
		w[i].n = n;
		w[i].area = areas + (i + 1) * 8192;
		if (pipe(w[i].done) || pipe(w[i].go) ||
		    pthread_create(&w[i].t, NULL, worker_main, &w[i])) {
			fprintf(stderr, "sigthreads: cannot start worker %d\n", i);
			return 1;
		}
	}
	want = run(n, areas);
	if (!want)
		bad++;
	for (int i = 0; i < NW; i++) {
		uint64_t r;
		void *ret;

		if (read(w[i].done[0], &r, sizeof(r)) != sizeof(r) || r != want) {
			fprintf(stderr, "sigthreads: worker %d: wrong result\n", i);
			bad++;
		}
		if (write(w[i].go[1], "x", 1) != 1 || pthread_join(w[i].t, &ret) || ret)
			bad++;
	}
	if (bad)
		return 1;
	printf("sigthreads: %d threads x %d signals ok\n", NW + 1, n);
	return 0;
}
