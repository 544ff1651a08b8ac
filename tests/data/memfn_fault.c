/* Faults inside expanded library routines whose handler makes the page
 * writable and returns, so the routine goes on where it stopped: memcpy
 * and memset into a buffer whose next page is read-only (musl's C copy
 * loop and memset's stores fault at that page's first word; the marker's
 * ip, %rsp and %rcx name the step). With "kill", no handler: the memcpy's fault kills the
 * task there; with "jump", the handler leaves by siglongjmp; with "two",
 * two memcpys with no trace byte between them, the second one faulting:
 * its marker fits the first call as well (aetrace-errors: refused). With
 * "head", first a memcpy whose source's one unaligned byte lies on an
 * unreadable page: the fault comes at the byte copy before the aligned
 * loop, before memcpy writes %rcx, which its caller leaves unknown to
 * the regenerator (a switch point there, in a VM capture, was not placed:
 * the emulation's %rcx was 0). Deterministic: the regeneration must equal the
 * stepper's trace of the twin, which faults at the same iteration. With
 * "fork", the first fault's handler forks a child that exits in the
 * handler, with "forkret" one that returns into memcpy as its parent does,
 * with "forknest" the handler raises SIGUSR1, whose handler forks a
 * child that returns into the SIGSEGV handler and exits there
 * (aetrace-errors: the first and third regenerate, the second child is
 * refused). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static char *buf;
static long page;
static volatile int faults;
static sigjmp_buf jb;
static int jump;
static int forking;	/* 1: fork, 2: forkret, 3: forknest */
static volatile sig_atomic_t nested_child;

static void on_usr1(int sig)
{
	(void)sig;
	nested_child = fork() == 0;
}
static volatile size_t head_len = 64;	/* (not a constant gcc copies inline) */

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	(void)sig;
	(void)uc;
	faults++;
	if (forking == 3) {
		forking = 0;
		raise(SIGUSR1);
		if (nested_child)
			_exit(0);
		wait(NULL);
	}
	if (forking) {
		pid_t p = fork();

		if (p == 0 && forking == 1)
			_exit(0);
		forking = 0;
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	if (jump)
		siglongjmp(jb, 1);
	if (a < buf || a >= buf + 4 * page ||
	    mprotect(buf + (a - buf) / page * page, page, PROT_READ | PROT_WRITE))
		_exit(3);
}

/* two copies, the second into the page after the first's */
__attribute__((noinline)) static void copy2(char *d1, char *d2, const char *s, size_t n)
{
	memcpy(d1, s, n);
	memcpy(d2, s, n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void copy1(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	static char src[16384];
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	unsigned long sum = 0;

	page = sysconf(_SC_PAGESIZE);
	buf = mmap(0, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	jump = argc > 1 && !strcmp(argv[1], "jump");
	forking = argc > 1 && !strcmp(argv[1], "fork") ? 1 :
		  argc > 1 && !strcmp(argv[1], "forkret") ? 2 :
		  argc > 1 && !strcmp(argv[1], "forknest") ? 3 : 0;
	signal(SIGUSR1, on_usr1);
	sigemptyset(&sa.sa_mask);
	if (argc < 2 || strcmp(argv[1], "kill"))
		sigaction(SIGSEGV, &sa, 0);
	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (char)(i * 7);
	if (argc > 1 && !strcmp(argv[1], "head")) {
		mprotect(buf + 3 * page, page, PROT_NONE);
		copy1(src, buf + 3 * page + 3, head_len);
	}
	if (argc > 1 && !strcmp(argv[1], "two")) {
		mprotect(buf + 2 * page, page, PROT_READ);
		copy2(buf, buf + page + page / 2, src, page);
	}
	mprotect(buf + page, page, PROT_READ);
	if (!sigsetjmp(jb, 1))
		memcpy(buf, src, 2 * page);
	else if (!mprotect(buf + page, page, PROT_READ | PROT_WRITE))
		jump = 0;	/* memset's fault returns */
	mprotect(buf + 2 * page, page, PROT_READ);
	memset(buf + page, 'x', 2 * page);
	for (long i = 0; i < 4 * page; i++)
		sum += (unsigned char)buf[i] * (unsigned long)(i + 1);
	printf("memfn_fault %d faults, %lu\n", faults, sum);
	return 0;
}
