/* A branch-free leaf called twice from one frame with no trace byte
 * between (instruction traces): its store faults at the first call only
 * (the page is read-only until the SIGSEGV handler makes it writable),
 * and the fault's SIGNAL marker, an ip, a %rsp and a trace offset, fits
 * both visits of the store. The regenerator must refuse to choose
 * (tests/host/aetrace-errors.sh), in a data trace too: the pointers
 * are known at both calls, so no record comes between them. */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

static char *page;

static void on_segv(int sig)
{
	(void)sig;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

__attribute__((noinline)) void leaf(volatile long *p, long v)
{
	*p = v;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_segv };

	page = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || sigaction(SIGSEGV, &sa, 0))
		return 1;
	leaf((long *)page, 1);
	leaf((long *)page + 1, 2);
	printf("%ld %ld\n", ((long *)page)[0], ((long *)page)[1]);
	return 0;
}
