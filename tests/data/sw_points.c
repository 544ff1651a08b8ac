/* Faults that put switch points where only analysis/regen.c's fixes
 * place them (tests/host/regen-synth.sh cuts the captures at their
 * markers with capmix --switch-at-signals; every SIGSEGV handler opens
 * the closed pages):
 * "walk": a fault on one side of a branch, more instructions down it
 * than side_reaches() follows (1024): the side is read past the handler
 * (peek()), whose first byte is the other side's (it runs probe(0));
 * "nest": a fault in touch(), whose handler calls touch() again before
 * it writes a byte and faults at the same ip with another %rsp;
 * "twice": a fault, then leaf() twice and a fault with no byte between
 * them: leaf()'s entry is reached twice at that offset, with one %rsp. */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#define N1 "nop\n"
#define N10 N1 N1 N1 N1 N1 N1 N1 N1 N1 N1
#define N100 N10 N10 N10 N10 N10 N10 N10 N10 N10 N10
#define N1000 N100 N100 N100 N100 N100 N100 N100 N100 N100 N100

static char *area;		/* 3 pages: 0 and 1 closed, 2 open */
static char *volatile next;	/* where on_nest() touches */
static volatile int quick, slow, sink;

static void open_pages(void)
{
	mprotect(area, 2 * 4096, PROT_READ | PROT_WRITE);
}

__attribute__((noinline)) static void probe(int far)
{
	if (far) {
		__asm__ volatile(N1000 N1000);
		*(volatile char *)area = 1;
		if (++slow > 1000)
			quick--;
	} else if (++quick > 1000) {
		slow--;
	}
}

__attribute__((noinline)) static void touch(char *p)
{
	*(volatile char *)p = 1;
}

__attribute__((noinline)) static void leaf(void)
{
	sink = 1;
}

static void on_walk(int sig)
{
	(void)sig;
	probe(0);
	open_pages();
}

/* no branch before touch(): its fault comes at the first one's offset */
static void on_nest(int sig)
{
	char *p = next;

	(void)sig;
	next = area + 2 * 4096;
	touch(p);
	open_pages();
}

static void on_segv(int sig)
{
	(void)sig;
	open_pages();
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_segv, .sa_flags = SA_NODEFER };
	const char *mode = argc > 1 ? argv[1] : "";

	area = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	if (!strcmp(mode, "walk"))
		sa.sa_handler = on_walk;
	else if (!strcmp(mode, "nest"))
		sa.sa_handler = on_nest;
	if (sigaction(SIGSEGV, &sa, 0))
		return 1;
	mprotect(area, 2 * 4096, PROT_NONE);
	if (!strcmp(mode, "walk")) {
		probe(1);
	} else if (!strcmp(mode, "nest")) {
		next = area + 4096;
		touch(area);
	} else if (!strcmp(mode, "twice")) {
		area[0] = 1;
		mprotect(area, 4096, PROT_NONE);
		leaf();
		leaf();
		area[0] = 2;
	} else {
		return 2;
	}
	return 0;
}
