// SPDX-License-Identifier: MIT
/*
 * ctx_values.c - signal handlers whose frames' bytes and restored state
 * differ, for the producer's compare of what a handler changed (docs/
 * ARCHITECTURE.md item 30), by the program's argument:
 *   pad   each handler writes a new value into its frame's fxsave padding
 *         (bytes 416 to 463), which no instruction loads: nothing
 *         changes, and every return must say so;
 *   race  a second thread flips a bit of %xmm15 in the frame on the
 *         alternate stack, over and over, while the handlers run and
 *         return: whether a return restored the flipped bit depends on
 *         where the flips land, and the program, which reads %xmm15
 *         after each return, prints how many did. A producer that
 *         compares the frame's bytes before the kernel reads them is
 *         wrong about about half of them;
 *   gpr   the same with a bit of %r12: a flip between the kernel's save
 *         and the producer's read of the frame at the handler's entry
 *         must leave that return unchecked, not compared against what
 *         the kernel did not save.
 * Prints "ctx_values MODE: N returns, K changed REG: BITS", BITS a 1 for
 * each return that changed the register, a 0 for each that did not.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define RETURNS	200

static char altstack[65536] __attribute__((aligned(64)));
static volatile uint32_t *volatile flip_at;
static volatile int done;
static const char *mode = "pad";
static uint8_t pad;

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint8_t *fx = (uint8_t *)uc->uc_mcontext.fpregs;

	(void)sig;
	(void)si;
	if (!fx)
		return;
	if (!strcmp(mode, "pad"))
		memset(fx + 416, ++pad, 48);
	else if (flip_at)
		return;
	else if (!strcmp(mode, "race"))
		flip_at = (volatile uint32_t *)(fx + 160 + 15 * 16);
	else
		flip_at = (volatile uint32_t *)&uc->uc_mcontext.gregs[REG_R12];
}

static void *flipper(void *arg)
{
	(void)arg;
	while (!done) {
		volatile uint32_t *p = flip_at;

		if (p)
			*p ^= 1;
	}
	return NULL;
}

/* REG = v, a SIGUSR1 to this thread, REG after its handler */
#define SIGNAL_WITH(reg)							\
static uint64_t signal_with_##reg(uint64_t v)					\
{										\
	long nr = SYS_tgkill, pid = getpid(), tid = syscall(SYS_gettid);	\
	uint64_t out;								\
										\
	__asm__ volatile("movq %[v], %%" #reg "\n\t"				\
			 "syscall\n\t"						\
			 "movq %%" #reg ", %[out]"				\
			 : [out] "=r"(out), "+a"(nr)				\
			 : [v] "r"(v), "D"(pid), "S"(tid), "d"((long)SIGUSR1)	\
			 : "rcx", "r11", #reg, "memory");			\
	return out;								\
}
SIGNAL_WITH(xmm15)
SIGNAL_WITH(r12)

int main(int argc, char **argv)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	const uint64_t v = 0x5555aaaa00f0f0f0ull;
	pthread_t th;
	char bits[RETURNS + 1] = "";
	int changed = 0, gpr;

	if (argc > 1)
		mode = argv[1];
	gpr = !strcmp(mode, "gpr");
	if (strcmp(mode, "pad") && strcmp(mode, "race") && !gpr) {
		fprintf(stderr, "usage: ctx_values pad|race|gpr\n");
		return 2;
	}
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) {
		perror("ctx_values");
		return 1;
	}
	if (strcmp(mode, "pad") && pthread_create(&th, NULL, flipper, NULL)) {
		fprintf(stderr, "ctx_values: pthread_create failed\n");
		return 1;
	}
	for (int i = 0; i < RETURNS; i++) {
		bits[i] = (gpr ? signal_with_r12(v) : signal_with_xmm15(v)) != v ? '1' : '0';
		changed += bits[i] == '1';
	}
	done = 1;
	if (strcmp(mode, "pad"))
		pthread_join(th, NULL);
	printf("ctx_values %s: %d returns, %d changed %s: %s\n", mode, RETURNS, changed,
	       gpr ? "%r12" : "%xmm15", bits);
	return 0;
}
