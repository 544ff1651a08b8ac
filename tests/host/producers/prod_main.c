// SPDX-License-Identifier: MIT
/*
 * prod_main.c - driver of the aerun test producers (freestanding, no
 * libc, compiled with -ffixed-r15 like all traced code).
 *
 * usage: prod ITERS [STATUS [MINSIG [PAUSE_US [FROM]]]]
 *   writes blocks 0..ITERS-1 (prod.h), continuing until MINSIG SIGUSR1
 *   have been handled (each handler writes the handler pattern), then
 *   exits with STATUS, or kills itself with signal STATUS-128 if >= 128.
 *   PAUSE_US: from block FROM on, sleep that long after every 8192
 *   blocks (1 MiB of trace): a slower producer (aerun's pacing tests).
 * prod sp      prints the entry stack pointer and rdx, and whether fd 1023
 *              is open
 * prod fork    calls fork (aerun must refuse)
 */
#include <asm/unistd.h>
#include "prod.h"

void prod_emit_block(unsigned long i);
void prod_handler_emit(void);
void prod_restorer(void);
void prod_main(unsigned long *sp, unsigned long rdx);

static volatile unsigned long prod_nsig;

static long sys(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static void out(int fd, const char *s)
{
	long n = 0;

	while (s[n])
		n++;
	sys(__NR_write, fd, (long)s, n, 0);
}

static void __attribute__((noreturn)) quit(int status)
{
	for (;;)
		sys(__NR_exit_group, status, 0, 0, 0);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static unsigned long num(const char *s)
{
	unsigned long v = 0;

	if (!*s) {
		out(2, "prod: empty number\n");
		quit(2);
	}
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			out(2, "prod: bad number\n");
			quit(2);
		}
		v = v * 10 + (*s - '0');
	}
	return v;
}

static void handler(int sig)
{
	prod_nsig++;
	prod_handler_emit();
}

static void print_hex(const char *name, unsigned long v)
{
	char buf[64];
	int n = 0, k;

	while (*name)
		buf[n++] = *name++;
	buf[n++] = '0';
	buf[n++] = 'x';
	for (k = 60; k >= 0; k -= 4)
		buf[n++] = "0123456789abcdef"[(v >> k) & 15];
	buf[n] = 0;
	out(1, buf);
}

static void print_sp(unsigned long *sp, unsigned long rdx)
{
	print_hex("sp=", (unsigned long)sp);
	print_hex(" rdx=", rdx);
	out(1, sys(__NR_fcntl, 1023, 1, 0, 0) < 0 ? " fd1023=closed\n" :
						 " fd1023=open\n");
}

void prod_main(unsigned long *sp, unsigned long rdx)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	unsigned long iters, status = 0, minsig = 0, pause_us = 0, from = 0, i, cap;
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		unsigned long mask;
	} sa = { (void *)handler, 0x04000000 /* SA_RESTORER */,
		 (void *)prod_restorer, 0 };

	if (argc < 2) {
		out(2, "usage: prod ITERS [STATUS [MINSIG [PAUSE_US [FROM]]]] | prod sp | prod fork\n");
		quit(2);
	}
	if (streq(argv[1], "sp")) {
		print_sp(sp, rdx);
		quit(0);
	}
	if (streq(argv[1], "fork")) {
		sys(__NR_fork, 0, 0, 0, 0);
		quit(0);
	}
	iters = num(argv[1]);
	if (argc > 2)
		status = num(argv[2]);
	if (argc > 3)
		minsig = num(argv[3]);
	if (argc > 4)
		pause_us = num(argv[4]);
	if (argc > 5)
		from = num(argv[5]);
	if (sys(__NR_rt_sigaction, PROD_SIGNAL, (long)&sa, 0, 8) < 0) {
		out(2, "prod: rt_sigaction failed\n");
		quit(2);
	}
	/* Waiting for signals is bounded: a lost storm ends the run (exit 3). */
	cap = iters + 40000000;
	for (i = 0; i < iters || prod_nsig < minsig; i++) {
		if (i >= cap)
			quit(3);
		prod_emit_block(i);
		if (pause_us && i >= from && !(i % 8192)) {
			long ts[2] = { pause_us / 1000000, pause_us % 1000000 * 1000 };

			sys(__NR_nanosleep, (long)ts, 0, 0, 0);
		}
	}
	if (status >= 128) {
		sys(__NR_kill, sys(__NR_getpid, 0, 0, 0, 0), status - 128, 0, 0);
		quit(4);
	}
	quit(status);
}
