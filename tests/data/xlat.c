// SPDX-License-Identifier: MIT
/*
 * xlat - xlatb, a byte load at %rbx + %al of which capstone 4 shows no
 * operand (data tracing wrote no record for it): through a table on the
 * stack, its address loaded from memory (a 64-bit record: a review found
 * aecc cutting %rbx's record to its low half), with %rax's upper bits
 * set. valgrind has no xlatb, so data-exact compares with the stepper.
 */
#include <stdio.h>

static unsigned char *volatile tabp;

__attribute__((noinline)) static long look(long v)
{
	unsigned char *t = tabp;

	__asm__ volatile("xlatb" : "+a"(v) : "b"(t), "m"(*(unsigned char (*)[256])t));
	return v & 0xff;
}

int main(int argc, char **argv)
{
	unsigned char tab[256];
	long sum = 0;

	(void)argv;
	for (int i = 0; i < 256; i++)
		tab[i] = (unsigned char)(i * 3 + 1);
	tabp = tab;
	for (long i = 0; i < 4; i++)
		sum += look((0x1234567800L << 8) + 77 + argc + i);
	printf("xlat %ld\n", sum);
	return 0;
}
