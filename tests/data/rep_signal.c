/* Signals in the middle of rep string instructions. Each rep below runs
 * into a page it may not touch; the fault's SIGSEGV handler opens the
 * page and returns, and the instruction resumes with the iterations its
 * %rcx has left. The regeneration must put the handler's accesses after
 * exactly the iterations that ran before it (data-exact compares it with
 * the native stepper, which sees every iteration): the SIGNAL marker's
 * %rcx says how many. repe cmpsb and repne scasb also write their count
 * after them, past the handler's bytes (cmp3's after a witness).
 * Other modes (tests/host/aetrace-errors.sh): "kill", no handler, the
 * program dies after 96 iterations of its first rep ("kill2": of stos2's);
 * "killcmp", after 40 of a repe cmpsb; "killmemset", "killstrlen", in
 * memset, strlen (which a data trace expands from its arguments and,
 * for strlen, its result); "killret", after get() returned
 * (tests move the kill back into the records after its call);
 * "killloop", after spin()'s loop (tests move it into its back edge's
 * witness, after the first iteration); "setcx",
 * the handler changes the rep's %rcx. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static char *area;		/* 4 pages: 0 and 2 open, 1 and 3 closed */
static volatile int faults;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	mprotect(area + 4096, 4096, PROT_READ | PROT_WRITE);
	mprotect(area + 3 * 4096, 4096, PROT_READ | PROT_WRITE);
}

/* "setcx": the handler cuts the fill short by giving its rep 10
 * iterations left (the regenerator must refuse: it cannot know) */
static void on_segv_setcx(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	mprotect(area + 4096, 4096, PROT_READ | PROT_WRITE);
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RCX] = 10;
}

static void close_pages(void)
{
	mprotect(area + 4096, 4096, PROT_NONE);
	mprotect(area + 3 * 4096, 4096, PROT_NONE);
}

__attribute__((noinline)) static void fill(char *p, unsigned long n, int c)
{
	__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(c) : "memory");
}

__attribute__((noinline)) static void copy8(long *d, const long *s, unsigned long n)
{
	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

/* bytes left when the first difference was found */
__attribute__((noinline)) static unsigned long cmp(const char *a, const char *b, unsigned long n)
{
	__asm__ volatile("repe cmpsb" : "+D"(a), "+S"(b), "+c"(n) : : "memory", "cc");
	return n;
}

__attribute__((noinline)) static unsigned long scan(const char *p, unsigned long n, int c)
{
	__asm__ volatile("repne scasb" : "+D"(p), "+c"(n) : "a"(c) : "memory", "cc");
	return n;
}

/* three repe cmpsb of n bytes, the last of a loop entered at its test:
 * its fall-through edge gets a witness, which aecc writes before the
 * count after it (hand-written: the layout matters) */
unsigned long cmp3(const char *a, const char *b, unsigned long n);
__asm__(".text\n"
	".globl cmp3\n"
	".type cmp3, @function\n"
	"cmp3:\n"
	"	movl $3, %r8d\n"
	"	jmp 2f\n"
	"1:	movq %rdx, %rcx\n"
	"	repe cmpsb\n"
	"2:	subl $1, %r8d\n"
	"	jnz 1b\n"
	"	movq %rcx, %rax\n"
	"	ret\n"
	".size cmp3, .-cmp3\n");

/* rep stosb of %rcx bytes %al at %rdi, hand-written as the routine's
 * first instruction so that a data trace records its count and %rdi
 * before it: two records a kill may come between */
__asm__(".text\n"
	".globl stos2\n"
	".type stos2, @function\n"
	"stos2:\n"
	"	rep stosb\n"
	"	ret\n"
	".size stos2, .-stos2\n");

__attribute__((noinline)) static void fill2(char *p, unsigned long n, int c)
{
	__asm__ volatile("call stos2" : "+D"(p), "+c"(n) : "a"(c) : "memory");
}

static volatile int sink;

/* a loop whose only byte is its back edge's witness */
__attribute__((noinline)) static void spin(int n)
{
	for (int i = 0; i < n; i++)
		sink = i;
}

/* a pointer loaded in a callee: recorded after the call returns */
__attribute__((noinline)) static char *get(char **pp)
{
	return *pp;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_segv };
	unsigned long r1, r2;

	area = mmap(0, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "kill")) {
		mprotect(area + 4096, 4096, PROT_READ);
		fill(area + 4000, 200, 1);	/* dies after 96 */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "kill2")) {
		mprotect(area + 4096, 4096, PROT_READ);
		fill2(area + 4000, 200, 1);	/* dies after 96 */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "killloop")) {
		spin(argc * 5);
		*(volatile char *)(long)(argc > 9) = 1;	/* dies here */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "killret")) {
		char *q = area, *p = get(argc > 5 ? &area : &q);

		*p = 5;
		*(volatile char *)(argc > 7 ? p : 0) = 1;	/* dies here */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "killstrlen")) {
		volatile size_t n;

		memset(area + 4000, 'x', 96);
		mprotect(area + 4096, 4096, PROT_NONE);
		n = strlen(area + 4000);	/* dies in strlen */
		return n == 0;
	}
	if (argc > 1 && !strcmp(argv[1], "killmemset")) {
		volatile unsigned long n = 200;	/* not inlined */

		mprotect(area + 4096, 4096, PROT_READ);
		memset(area + 4000, 1, n);	/* dies in the library's memset */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "killcmp")) {
		mprotect(area + 4096, 4096, PROT_NONE);
		cmp(area + 2 * 4096, area + 4096 - 40, 200);	/* after 40 */
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "setcx")) {
		sa.sa_sigaction = on_segv_setcx;
		sa.sa_flags = SA_SIGINFO;
	}
	if (sigaction(SIGSEGV, &sa, 0))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "setcx")) {
		mprotect(area + 4096, 4096, PROT_NONE);
		fill(area + 4000, 200, 7);
		printf("%d %d\n", area[4105], area[4106]);
		return 0;
	}
	/* 96 bytes, then the fault, then 104 */
	close_pages();
	fill(area + 4000, 200, 7);
	/* 10 quadwords read, then the fault, then 10 */
	close_pages();
	copy8((long *)(area + 2 * 4096), (long *)(area + 4096 - 80), 20);
	/* equal for 60 bytes, the fault at the 41st (page 1's first), the
	 * difference at the 61st */
	memset(area + 2 * 4096, 3, 4096);
	area[2 * 4096 + 60] = 4;
	memset(area + 4096 - 40, 3, 140);
	close_pages();
	r1 = cmp(area + 2 * 4096, area + 4096 - 40, 200);
	/* the fault at the 51st byte, page 3's first, the zero it finds */
	memset(area + 2 * 4096, 5, 4096);
	close_pages();
	r2 = scan(area + 3 * 4096 - 50, 100, 0);
	printf("%d faults, cmp left %lu, scan left %lu, cmp3 left %lu\n", faults, r1, r2,
	       cmp3("abcdefghijklmnop", "abcdefghXjklmnop", 16));
	return 0;
}
