// SPDX-License-Identifier: MIT
/*
 * ctx_change.c - a SIGSEGV handler that changes the context it returns
 * to (its ucontext), by the program's argument:
 *   reg     points %rbx, which the next load's address comes from, at
 *           another array;
 *   flags   flips ZF between a compare and the branch that tests it;
 *   dead    changes %r10, which no address or branch depends on;
 *   none    changes nothing;
 *   saved   points %rbx elsewhere in a callee that restored it already
 *           (the caller's load uses it after the return);
 *   nested  as reg, after a SIGUSR2 handled on an alternate stack above
 *           the first frame (main's array) returned within the handler;
 *   vector  changes the index register of the AVX2 gather that faulted
 *           (prints "no avx2" where the CPU lacks it);
 *   fork    forks in the handler: the child, returning from its copy of
 *           the frame, points %rbx at another array; the parent changes
 *           nothing, and waits for the child at the end.
 * A data trace must refuse reg, flags, saved, nested, vector and the
 * child of fork (which replays its parent to the fork, then returns with
 * %rbx changed) (aetrace-errors), and regenerate the others exactly
 * (data-exact: ctxchange). The handler makes the faulting page readable, so the load
 * runs again and goes on.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <ucontext.h>

static char *page;
static long a[2] = { 1, 2 }, b[2] = { 3, 4 };
static long *volatile ptr = a;
static volatile long seed = 7;
static const char *mode = "none";
static volatile int usr2;

/* a callee that restores %rbx, then faults */
asm(".text\n"
    ".globl ctx_change_leaf\n"
    ".type ctx_change_leaf, @function\n"
    "ctx_change_leaf:\n\t"
    "push %rbx\n\t"
    "mov $5, %ebx\n\t"
    "pop %rbx\n\t"
    "movb (%rdi), %al\n\t"
    "ret\n"
    ".size ctx_change_leaf, .-ctx_change_leaf\n");

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	mprotect(page, 4096, PROT_READ);
	if (!strcmp(mode, "nested"))
		raise(SIGUSR2);
	if (!strcmp(mode, "reg") || !strcmp(mode, "saved") || !strcmp(mode, "nested") ||
	    (!strcmp(mode, "fork") && fork() == 0))
		uc->uc_mcontext.gregs[REG_RBX] = (greg_t)b;
	else if (!strcmp(mode, "flags"))
		uc->uc_mcontext.gregs[REG_EFL] ^= 0x40;	/* ZF */
	else if (!strcmp(mode, "dead"))
		uc->uc_mcontext.gregs[REG_R10] = 42;
	else if (!strcmp(mode, "vector"))
		for (int i = 0; i < 4; i++)
			uc->uc_mcontext.fpregs->_xmm[1].element[i] = 100 + i;
}

/* %rbx: an address from memory (recorded); %r10: a value nothing
 * follows; the compare of %rbx decides the branch (no witness in a data
 * trace), the load from page faults between them */
static void direct(void)
{
	long v, w, taken;

	asm volatile("mov %[p], %%rbx\n\t"
		     "mov %[s], %%r10\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     "cmp $0, %%rbx\n\t"
		     "movb (%[pg]), %%al\n\t"
		     "jne 1f\n\t"
		     ".globl ctx_change_zero\n"
		     "ctx_change_zero:\n\t"
		     "mov $1, %%ecx\n"
		     "1:\n\t"
		     "mov (%%rbx), %[v]\n\t"
		     "mov %%r10, %[w]\n\t"
		     "mov %%rcx, %[t]"
		     : [v] "=r" (v), [w] "=r" (w), [t] "=r" (taken)
		     : [p] "m" (ptr), [s] "m" (seed), [pg] "r" (page)
		     : "rax", "rbx", "rcx", "r10", "cc", "memory");
	printf("ctx_change %s: loaded %ld, r10 %ld, zero side %ld\n", mode, v, w, taken);
}

static void saved(void)
{
	long v;

	asm volatile("mov %[p], %%rbx\n\t"
		     "mov %[pg], %%rdi\n\t"
		     "call ctx_change_leaf\n\t"
		     "mov (%%rbx), %[v]"
		     : [v] "=r" (v)
		     : [p] "m" (ptr), [pg] "r" (page)
		     : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		       "cc", "memory");
	printf("ctx_change %s: loaded %ld\n", mode, v);
}

/* The CPU and the kernel give AVX2 (cpuid, XCR0; musl links no libgcc
 * __builtin_cpu_supports()). */
static int has_avx2(void)
{
	unsigned int a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	asm volatile("xgetbv" : "=a" (lo), "=d" (hi) : "c" (0));
	return (lo & 6) == 6 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}

static void vector(void)
{
	static const int idx[4] = { 0, 1, 2, 3 };
	int out[4];

	if (!has_avx2()) {
		puts("no avx2");
		return;
	}
	asm volatile("vmovdqu %[ix], %%xmm1\n\t"
		     "vpcmpeqd %%xmm2, %%xmm2, %%xmm2\n\t"
		     "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
		     "vpgatherdd %%xmm2, (%[pg], %%xmm1, 4), %%xmm0\n\t"
		     "vmovdqu %%xmm0, %[o]"
		     : [o] "=m" (out)
		     : [ix] "m" (idx), [pg] "r" (page)
		     : "xmm0", "xmm1", "xmm2", "memory");
	printf("ctx_change %s: gathered %d %d %d %d\n", mode, out[0], out[1], out[2], out[3]);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	struct sigaction su = { .sa_handler = on_usr2, .sa_flags = SA_ONSTACK };
	char alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };

	if (argc > 1)
		mode = argv[1];
	page = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	for (int i = 0; i < 1024; i++)
		((int *)page)[i] = i;
	if (mprotect(page, 4096, PROT_NONE) || sigaction(SIGSEGV, &sa, 0) ||
	    sigaltstack(&ss, 0) || sigaction(SIGUSR2, &su, 0))
		return 1;
	if (!strcmp(mode, "saved"))
		saved();
	else if (!strcmp(mode, "vector"))
		vector();
	else
		direct();
	if (usr2)
		printf("ctx_change %s: %d SIGUSR2 on the alternate stack\n", mode, usr2);
	if (!strcmp(mode, "fork"))
		wait(NULL);
	return 0;
}
