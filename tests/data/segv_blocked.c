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
 * exec, so none may be put back); "oneshot": an SA_RESETHAND handler
 * taken once, so the default again (nor may it be put back); "threads":
 * four workers, every other one blocking, faulting at once; "clear": a
 * child of clone3(CLONE_CLEAR_SIGHAND), whose handler is the default (nor
 * may it be put back); "toggle": the main thread switches the action
 * between the handler and the default while a worker that does not
 * block fills sub-buffers (an overflow between the kernel's change and
 * aerun's sight of the call's end must not undo it). Prints what a native
 * run prints: whether the action was kept (each time, with "toggle"),
 * whether each blocking worker kept its block, how many workers that did
 * not block found SIGSEGV blocked, and whether a real fault afterwards
 * reached the handler.
 *
 *   segv_blocked handler|ign|fork|exec|dfl|oneshot|threads|clear|toggle
 *                [ITERATIONS]
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAX_WORKERS	4
#define CLEAR_SIGHAND	0x100000000ull	/* clone3's CLONE_CLEAR_SIGHAND */
#define TOGGLES		4000

/* clone3's arguments (linux/sched.h, version 0) */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static sigjmp_buf jb;
static volatile int caught;
static unsigned long iterations = 2000000;
static int block_all, nworkers = 1;
static int lost[MAX_WORKERS], gained[MAX_WORKERS];
static volatile int toggling;

static void on_segv(int sig)
{
	(void)sig;
	caught++;
	siglongjmp(jb, 1);
}

static void on_segv_once(int sig)
{
	(void)sig;
	caught++;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	int blocks = block_all && (nworkers == 1 || (id & 1));
	volatile unsigned long x = 0;
	sigset_t m;

	if (blocks) {
		sigfillset(&m);
		pthread_sigmask(SIG_BLOCK, &m, NULL);
	}
	for (unsigned long i = 0; i < iterations || toggling; i++) {
		if (i % 3 == 0)	/* a branch: witness bytes */
			x += i;
		else
			x ^= i;
		if (!(i & 4095) || i + 1 == iterations) {
			pthread_sigmask(SIG_BLOCK, NULL, &m);
			if (sigismember(&m, SIGSEGV) != blocks)
				*(blocks ? &lost[id] : &gained[id]) = 1;
		}
	}
	return NULL;
}

/* The parent's part of a fork: child c's exit status (1: no child). */
static int parent_of(pid_t c)
{
	int status;

	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

static int known(const char *mode)
{
	static const char *const modes[] = { "handler", "ign", "fork", "exec", "dfl", "oneshot",
					     "threads", "clear", "toggle" };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa, now;
	const char *mode = argc > 1 ? argv[1] : "handler";
	pthread_t t[MAX_WORKERS];
	void (*want)(int);
	int kept, nlost = 0, ngained = 0;

	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 0);
	if (!known(mode)) {
		fprintf(stderr, "usage: segv_blocked handler|ign|fork|exec|dfl|oneshot|threads|clear|toggle [ITERATIONS]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = !strcmp(mode, "ign") ? SIG_IGN : on_segv;
	if (!strcmp(mode, "oneshot")) {
		sa.sa_handler = on_segv_once;
		sa.sa_flags = SA_RESETHAND;
	}
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

		if (c)
			return parent_of(c);
	}
	if (!strcmp(mode, "clear")) {
		struct clone3_args ca = { .flags = CLEAR_SIGHAND, .exit_signal = SIGCHLD };
		long c = syscall(SYS_clone3, &ca, sizeof(ca));

		if (c)
			return parent_of((pid_t)c);
		/* (the child runs the worker itself: a raw clone's child
		 * must not create threads) */
		worker(NULL);
		sigaction(SIGSEGV, NULL, &now);
		printf("segv_blocked clear: action kept %d, gained %d\n", now.sa_handler == SIG_DFL,
		       gained[0]);
		fflush(stdout);
		_exit(0);
	}
	if (!strcmp(mode, "oneshot"))
		raise(SIGSEGV);	/* the handler, once: then the default */
	want = !strcmp(mode, "dfl") || !strcmp(mode, "oneshot") ? SIG_DFL : sa.sa_handler;
	block_all = strcmp(mode, "ign") && strcmp(mode, "toggle");
	nworkers = !strcmp(mode, "threads") ? MAX_WORKERS : 1;
	toggling = !strcmp(mode, "toggle");
	for (long i = 0; i < nworkers; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	if (toggling) {
		int bad = 0;

		for (int i = 0; i < TOGGLES; i++) {
			sa.sa_handler = (i & 1) ? on_segv : SIG_DFL;
			sigaction(SIGSEGV, &sa, NULL);
			sigaction(SIGSEGV, NULL, &now);
			bad += now.sa_handler != sa.sa_handler;
		}
		toggling = 0;
		want = sa.sa_handler;
		printf("segv_blocked toggle: %d of %d actions not as set\n", bad, TOGGLES);
	}
	for (int i = 0; i < nworkers; i++) {
		if (pthread_join(t[i], NULL))
			return 1;
		nlost += lost[i];
		ngained += gained[i];
	}
	sigaction(SIGSEGV, NULL, &now);
	kept = now.sa_handler == want;
	if (want == on_segv && !sigsetjmp(jb, 1))
		*(volatile int *)8 = 1;
	printf("segv_blocked %s: action kept %d, blocks lost %d, gained %d, caught %d\n", mode,
	       kept, nlost, ngained, caught);
	return 0;
}
