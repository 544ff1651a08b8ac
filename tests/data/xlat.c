// SPDX-License-Identifier: MIT
/*
 * xlat - xlatb, a byte load at %rbx + %al of which capstone 4 shows no
 * operand (data tracing wrote no record for it). valgrind has no xlatb,
 * so data-exact compares it with the stepper alone.
 */
#include <stdio.h>

static unsigned char tab[256];

int main(int argc, char **argv)
{
	long v = 77 + argc, sum = 0;

	(void)argv;
	for (int i = 0; i < 256; i++)
		tab[i] = (unsigned char)(i * 3 + 1);
	for (int i = 0; i < 4; i++) {
		__asm__ volatile("xlatb" : "+a"(v) : "b"(tab), "m"(tab));
		v &= 0xff;
		sum += v;
	}
	printf("xlat %ld\n", sum);
	return 0;
}
