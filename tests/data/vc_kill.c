/* Tasks stopped between a branch and the value-cache record that tells
 * the regenerator its side (docs/ARCHITECTURE.md item 23): pick()'s
 * fall-through side writes no witness, its first byte is the record of
 * the pointer it loads. With a bad pointer, that load faults before any
 * byte after the branch is written: NCHILD children die of the SIGSEGV
 * there, and the parent catches it and leaves its handler by siglongjmp,
 * so the handler never returns either. NCHILD more children make the
 * value cache's pages inaccessible, then call pick_blocked(), the same
 * code entered with its pointer known (no record at its entry, which
 * would fault first): its load runs and the record's own code faults
 * reading its slot. No byte tells the side: the marker's ip must. Prints
 * how many children died and faults the parent caught. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCHILD	4
#define ROUNDS	40

static long cells[ROUNDS];
static long *ptrs[ROUNDS];
static sigjmp_buf env;
static volatile int caught, zero;
/* a page of its own: the main thread's TLS, the cache with it, is in
 * musl's .bss, and the pages made inaccessible hold its neighbours */
static long *safe[512] __attribute__((aligned(4096)));

extern __thread uint64_t __ae_vc[];	/* 4096 slots (schema.h) */

__attribute__((noinline, noipa)) static long other(long **p)
{
	return (long)p[1] & 1;
}

/* The taken side calls; the other loads q, which the next load uses. */
static inline __attribute__((always_inline)) long pick_body(long **p, int c)
{
	long *q;

	if (c)
		return other(p) + 1;
	q = *p;
	return *q;
}

__attribute__((noinline, noipa)) static long pick(long **p, int c)
{
	return pick_body(p, c);
}

__attribute__((noinline, noipa)) static long pick_blocked(long **p, int c)
{
	return pick_body(p, c);
}

/* mprotect with no library code after it, whose records would fault */
static inline long raw_mprotect(uintptr_t a, uintptr_t n, long prot)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "0"(10L), "D"(a), "S"(n), "d"(prot)
			 : "rcx", "r11", "memory");
	return r;
}

/* A child: dies in pick()'s load, or when blocked in the record after
 * pick_blocked()'s (nothing else it touches after the mprotect is on
 * those pages). */
static void child(int blocked)
{
	uintptr_t lo = (uintptr_t)&__ae_vc[0] & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)&__ae_vc[4096] + 4095) & ~(uintptr_t)4095;
	int c = zero;

	if (!blocked)
		_exit((int)pick((long **)8, 0));
	safe[0] = &cells[0];
	if (raw_mprotect(lo, hi - lo, 0))
		_exit(2);
	_exit((int)pick_blocked(safe, c));
}

static void on_segv(int sig)
{
	(void)sig;
	caught++;
	siglongjmp(env, 1);
}

int main(void)
{
	struct sigaction sa;
	static volatile long sum;
	int dead = 0;

	for (int i = 0; i < ROUNDS; i++) {
		cells[i] = i * 3;
		ptrs[i] = &cells[i];
	}
	for (int i = 0; i < 2 * NCHILD; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			child(i >= NCHILD);
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
		    WTERMSIG(st) == SIGSEGV)
			dead++;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		if (sigsetjmp(env, 1))
			continue;
		sum += pick(&ptrs[i], i % 3 == 1);
		if (i % 2)
			sum += pick((long **)8, 0);
	}
	printf("%d children died of SIGSEGV, %d faults caught, sum %ld\n", dead, caught, sum);
	return dead != 2 * NCHILD || caught != ROUNDS / 2;
}
