/* A branch whose two sides join before the value-cache record that
 * begins both (docs/ARCHITECTURE.md item 23): one side gets the witness,
 * the other, 72 instructions long, writes nothing before the join, a
 * store to a constant address, then the record of a pointer it loads.
 * The store faults on an inaccessible page in three ways, each after
 * either side: a handler that makes the page writable and returns (its
 * bytes are read past), one that leaves by siglongjmp, and none: the
 * task dies there, on the long side. The regenerator must place each
 * stop on the side that ran, every instruction and address as the
 * stepper saw them. Prints what it caught. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define ADD1	"add $1,%0\n\t"
#define ADD8	ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
#define ROUNDS	12

static volatile long rare;
static long cell = 5;
static long *volatile gp = &cell;
static long *page;		/* mapped at PAGE: a store's known address */

#define PAGE	0x10000000L
static sigjmp_buf env;
static volatile int returned, jumped, leave;

__attribute__((noinline)) static long f(long x)
{
	long c = rare;

	if (__builtin_expect(c != 0, 0))
		__asm__ volatile(ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 : "+r"(x));
	*(volatile long *)PAGE = x;
	return *gp + x;
}

static void on_segv(int sig)
{
	(void)sig;
	if (leave) {
		jumped++;
		siglongjmp(env, 1);
	}
	returned++;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa;
	long sum = 0;

	page = mmap((void *)PAGE, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (page == MAP_FAILED)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		leave = i >= ROUNDS / 2;
		rare = i & 1;
		mprotect(page, 4096, PROT_NONE);
		if (sigsetjmp(env, 1))
			continue;
		sum += f(i);
	}
	printf("%d handlers returned, %d left by siglongjmp, sum %ld\n", returned, jumped, sum);
	fflush(stdout);
	signal(SIGSEGV, SIG_DFL);
	mprotect(page, 4096, PROT_NONE);
	rare = 1;
	return (int)f(1);
}
