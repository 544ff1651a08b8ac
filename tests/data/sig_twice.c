/* A branch-free leaf called twice from one frame with no trace byte
 * between: its store faults at the first call only (the page is
 * read-only until the SIGSEGV handler makes it writable), and the
 * fault's SIGNAL marker, an ip, a %rsp and a trace offset, fits both
 * visits of the store. The regenerator must refuse to choose
 * (tests/host/aetrace-errors.sh); in a data trace too, as long as the
 * pointers are known at both calls and no record comes between them.
 * With an argument, the leaf is a `rep stosb` that faults halfway at
 * the first call: its count is recorded before it, so a second visit
 * would have written another count before its fault's offset, and the
 * signal belongs to the first visit, after the 96 iterations the
 * marker's %rcx does not leave. With "exit", that handler ends the
 * program: the rep it interrupted must not run after it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *page;
static int end_in_handler;

static void on_segv(int sig)
{
	(void)sig;
	if (end_in_handler)
		_exit(0);
	mprotect(page, 8192, PROT_READ | PROT_WRITE);
}

__attribute__((noinline)) static void leaf(volatile long *p, long v)
{
	*p = v;
}

__attribute__((noinline)) static void fill(char *p, unsigned long n)
{
	__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(7) : "memory");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_segv };
	char *p;

	end_in_handler = argc > 1 && !strcmp(argv[1], "exit");
	page = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = page;	/* kept in a register across the calls: no reload */
	if (p == MAP_FAILED || sigaction(SIGSEGV, &sa, 0) ||
	    mprotect(argc > 1 ? p + 4096 : p, 4096, PROT_READ))
		return 1;
	if (argc > 1) {
		fill(p + 4000, 200);
		fill(p + 4100, 200);
	} else {
		leaf((long *)p, 1);
		leaf((long *)p + 1, 2);
	}
	printf("%ld %ld %d\n", ((long *)page)[0], ((long *)page)[1], page[4199]);
	return 0;
}
