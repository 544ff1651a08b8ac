/* Covers: frames the regenerator's %rsp must follow exactly, each with a
 * signal it places by that %rsp: `enter` (capstone 4.0 lists none of its
 * writes) and a callee-pops `ret $8` (a return not back at its call's
 * %rsp). A %rsp followed wrong makes the marker's %rsp match no visit and
 * the trace refused. */
#include <signal.h>
#include <stdio.h>

static volatile int got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

__attribute__((noipa)) void inner(void)
{
	raise(SIGUSR1);
}

void outer(void);
void wrap(void);
__asm__(".text\n.globl outer\n.type outer,@function\nouter:\n"
	"\tenter $32, $0\n\tcall inner\n\tleave\n\tret\n.size outer,.-outer\n"
	".type pops,@function\npops:\n\tret $8\n.size pops,.-pops\n"
	".globl wrap\n.type wrap,@function\nwrap:\n"
	"\tpushq $0\n\tcall pops\n\tsub $8, %rsp\n\tcall inner\n\tadd $8, %rsp\n\tret\n"
	".size wrap,.-wrap\n");

/* 50 rounds: most of the run after the C library's start-up, which the
 * oracles' comparison window leaves out */
int main(void)
{
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 50; i++) {
		outer();
		wrap();
	}
	printf("%d\n", got);
	return got != 100;
}
