// SPDX-License-Identifier: MIT
/*
 * segv_blocked.c - a worker thread fills sub-buffers while its SIGSEGV
 * is blocked ("handler": every signal blocked, as thread pools do, with
 * the program's own SIGSEGV handler installed) or while the process
 * ignores SIGSEGV ("ign"). Each overflow is a fault the kernel forces,
 * resetting a blocked or ignored SIGSEGV to the default (aerun's segv.c
 * must put it back). "fork": "handler" in a child, which inherits the
 * handler; "exec": the handler installed, then the program exec'd again
 * as "dfl", whose action is the default (a handler does not survive an
 * exec, so none may be put back). Prints what a native run prints:
 * whether the action and the worker's block were kept, and whether a
 * real fault afterwards reached the handler.
 *
 *   segv_blocked handler|ign|fork|exec|dfl [ITERATIONS]
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static sigjmp_buf jb;
static volatile int caught;
static unsigned long iterations = 2000000;
static int block_all;
static volatile int worker_kept = -1;

static void on_segv(int sig)
{
	(void)sig;
	caught++;
	siglongjmp(jb, 1);
}

static void *worker(void *arg)
{
	volatile unsigned long x = 0;
	sigset_t m;

	(void)arg;
	if (block_all) {
		sigfillset(&m);
		pthread_sigmask(SIG_BLOCK, &m, NULL);
	}
	for (unsigned long i = 0; i < iterations; i++)
		if (i % 3 == 0)	/* a branch: witness bytes */
			x += i;
		else
			x ^= i;
	pthread_sigmask(SIG_BLOCK, NULL, &m);
	worker_kept = !block_all || sigismember(&m, SIGSEGV);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa, now;
	const char *mode = argc > 1 ? argv[1] : "handler";
	void (*want)(int);
	pthread_t t;
	int kept;

	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 0);
	if (strcmp(mode, "handler") && strcmp(mode, "ign") && strcmp(mode, "fork") &&
	    strcmp(mode, "exec") && strcmp(mode, "dfl")) {
		fprintf(stderr, "usage: segv_blocked handler|ign|fork|exec|dfl [ITERATIONS]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = !strcmp(mode, "ign") ? SIG_IGN : on_segv;
	if (strcmp(mode, "dfl"))
		sigaction(SIGSEGV, &sa, NULL);
	if (!strcmp(mode, "exec")) {
		char *args[] = { argv[0], "dfl", argc > 2 ? argv[2] : NULL, NULL };

		fflush(stdout);
		execv("/proc/self/exe", args);
		return 1;
	}
	if (!strcmp(mode, "fork")) {
		pid_t c = fork();
		int status;

		if (c < 0)
			return 1;
		if (c > 0)
			return waitpid(c, &status, 0) != c || !WIFEXITED(status) ? 1 :
			       WEXITSTATUS(status);
	}
	want = !strcmp(mode, "dfl") ? SIG_DFL : sa.sa_handler;
	block_all = strcmp(mode, "ign");
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 1;
	sigaction(SIGSEGV, NULL, &now);
	kept = now.sa_handler == want;
	if (want == on_segv && !sigsetjmp(jb, 1))
		*(volatile int *)8 = 1;
	printf("segv_blocked %s: action kept %d, worker's block kept %d, caught %d\n", mode, kept,
	       worker_kept, caught);
	return 0;
}
