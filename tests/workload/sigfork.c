// SPDX-License-Identifier: MIT
/*
 * sigfork - forks inside signal handlers. Each child returns from its copy
 * of the handler's frame to the code the signal interrupted and goes on
 * with the parent's work there before it exits, so its trace begins
 * inside the handler and ends in the program. Round i of N, by i % 8:
 *   0  SIGUSR1's handler forks (raise(): delivered after a system call);
 *   1  SIGUSR2's handler raises SIGUSR1, whose handler forks: the child
 *      returns from both handlers;
 *   2  SIGALRM's handler vforks a child that loads an index and
 *      _exits, then forks with a bare system call (the child's replay
 *      passes the vfork, whose child's store into the shared value cache
 *      it must take from its parent, which has not used the cache since);
 *   3  SIGPROF's handler forks, and the child leaves the handler by
 *      siglongjmp;
 *   4  a load from a page made inaccessible faults: the SIGSEGV handler
 *      makes it readable and forks, and both load again;
 *   5  SIGUSR1's handler forks, and the child forks again before it
 *      leaves the handler: the grandchild's state is both traces (it
 *      replays a chain); the child waits for it in the handler;
 *   6  a memcpy into a read-only page faults (amid the expanded routine
 *      in a -fae-data build): the SIGSEGV handler makes it writable and
 *      returns into the memcpy; then SIGUSR1's handler forks (the
 *      child's replay passes the first handler's return).
 *   7  SIGPIPE's handler starts a thread and joins it; the thread forks
 *      (a thread made in a handler never returns from it: it starts at
 *      level 0, and its fork is an ordinary one).
 * REPEAT (default 1) repeats each round's work: with 300, a checkpoint
 * lies in the middle of the trace and the stream keeps only what
 * follows it.
 * The signals come from the program itself, where no timing decides, so
 * the stepper (ae-step --split) sees the run the capture saw. The parent
 * waits for each child before the next round.
 *
 * usage: sigfork N [REPEAT]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child;	/* forked inside a handler */
static volatile pid_t kid;		/* the child the last handler forked */
static volatile sig_atomic_t twice;	/* the child forks again (round 5) */
static volatile sig_atomic_t segv_fork;	/* SIGSEGV's handler forks (round 4) */
static volatile size_t cpy = 256;	/* (not a constant gcc copies inline) */
static sigjmp_buf jb;
static char *page;
static long data[64];

/* Some loads and stores that depend on i. */
static long work(int i)
{
	long s = 0;

	for (int j = 0; j < 64; j++) {
		data[(j * 7 + i) & 63] += j ^ i;
		s += data[j];
	}
	return s;
}

static void fork_here(void)
{
	pid_t p = fork();

	if (p > 0)
		kid = p;
	if (p)
		return;
	child = 1;
	if (twice) {	/* round 5: the child forks the grandchild here */
		twice = 0;
		p = fork();
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	fork_here();
	data[sig & 63]++;
}

static void on_usr2(int sig)
{
	(void)sig;
	raise(SIGUSR1);
	data[1] += 2;
}

/* fork(2) straight after vfork returns, before the value cache's next
 * use (musl's fork() would use it first) */
static pid_t raw_fork(void)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(SYS_fork) : "rcx", "r11", "memory");
	return (pid_t)r;
}

static void on_alrm(int sig)
{
	pid_t p, q;
	int st = 0;

	(void)sig;
	p = vfork();
	if (p == 0)	/* (a load whose value is an index: a value-cache record) */
		_exit((int)(data[data[3] & 63] & 0x7f));
	q = raw_fork();
	if (q == 0) {
		child = 1;
		return;
	}
	kid = q;
	if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st))
		data[2] += WEXITSTATUS(st);
}

static void on_prof(int sig)
{
	(void)sig;
	fork_here();
	if (child)
		siglongjmp(jb, 1);
}

static int go[2];	/* round 7: the thread forks once pthread_create returned */

static void *thread_forks(void *arg)
{
	pid_t p;
	char c;

	(void)arg;
	/* (pthread_create's caller holds a lock fork takes until it returns:
	 * a race whose spins differ between runs) */
	if (read(go[0], &c, 1) != 1)
		return NULL;
	p = fork();
	if (p == 0)
		_exit(work(3) & 0x7f);
	if (p > 0)
		waitpid(p, NULL, 0);
	return NULL;
}

static void on_pipe(int sig)
{
	pthread_t t;

	(void)sig;
	if (!pthread_create(&t, NULL, thread_forks, NULL)) {
		if (write(go[1], "", 1) != 1)
			_exit(1);
		pthread_join(t, NULL);
	}
}

static void on_segv(int sig)
{
	(void)sig;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
	if (segv_fork)
		fork_here();
}


int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	int repeat = argc > 2 ? atoi(argv[2]) : 1;
	int sigs[] = { SIGUSR1, SIGUSR2, SIGALRM, SIGPROF, SIGSEGV, SIGPIPE };
	void (*handlers[])(int) = { on_usr1, on_usr2, on_alrm, on_prof, on_segv, on_pipe };
	long total = 0;

	if (n <= 0 || repeat <= 0) {
		fprintf(stderr, "usage: sigfork N [REPEAT]\n");
		return 2;
	}
	for (int k = 0; k < 6; k++) {
		struct sigaction sa = { .sa_handler = handlers[k] };

		sigemptyset(&sa.sa_mask);
		sigaction(sigs[k], &sa, NULL);
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || pipe(go)) {
		perror("sigfork: mmap, pipe");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		long s = 0;
		int st;

		for (int r = 0; r < repeat; r++)
			s += work(i + r);
		switch (i % 8) {
		case 3:
			if (sigsetjmp(jb, 1))
				break;
			raise(SIGPROF);
			break;
		case 4:
			segv_fork = 1;
			mprotect(page, 4096, PROT_NONE);
			s += *(volatile long *)(page + 8 * (i & 7));
			segv_fork = 0;
			break;
		case 5:
			twice = 1;
			raise(SIGUSR1);
			twice = 0;
			break;
		case 6:
			mprotect(page, 4096, PROT_READ);
			memcpy(page + 64 + (i & 7), data, cpy);
			raise(SIGUSR1);
			break;
		case 7:
			raise(SIGPIPE);
			break;
		default:
			raise(sigs[i % 8]);
			break;
		}
		if (child)
			_exit((s + work(i + 1)) & 0x7f);
		if (kid > 0 && waitpid(kid, &st, 0) == kid && WIFEXITED(st))
			total += WEXITSTATUS(st);
		kid = 0;
	}
	printf("sigfork: %d rounds, %ld\n", n, total);
	return 0;
}
