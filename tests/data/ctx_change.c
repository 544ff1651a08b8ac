// SPDX-License-Identifier: MIT
/*
 * ctx_change.c - a SIGSEGV handler that changes the context it returns
 * to (its ucontext), by the program's argument: "reg" points %rbx, which
 * the next load's address comes from, at another array; "flags" flips
 * ZF between a compare and the branch that tests it; "dead" changes
 * %r10, which no address or branch depends on; "none" changes nothing.
 * A data trace must refuse the first two (aetrace-errors) and regenerate
 * the others exactly (data-exact: ctxchange). The handler makes the
 * faulting page readable, so the load runs again and goes on.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static char *page;
static long a[2] = { 1, 2 }, b[2] = { 3, 4 };
static long *volatile ptr = a;
static volatile long seed = 7;
static const char *mode = "none";

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	mprotect(page, 4096, PROT_READ);
	if (!strcmp(mode, "reg"))
		uc->uc_mcontext.gregs[REG_RBX] = (greg_t)b;
	else if (!strcmp(mode, "flags"))
		uc->uc_mcontext.gregs[REG_EFL] ^= 0x40;	/* ZF */
	else if (!strcmp(mode, "dead"))
		uc->uc_mcontext.gregs[REG_R10] = 42;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	long v, w, taken;

	if (argc > 1)
		mode = argv[1];
	page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || sigaction(SIGSEGV, &sa, 0))
		return 1;
	/* %rbx: an address from memory (recorded); %r10: a value nothing
	 * follows; the compare of %rbx decides the branch (no witness in a
	 * data trace), the load from page faults between them */
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
	return 0;
}
