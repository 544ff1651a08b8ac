// SPDX-License-Identifier: MIT
/*
 * vc_low - 32-bit values the value cache codes as low halves
 * (AE_VAL_REG_VC_LOW, docs/FORMAT.md): an unsigned argument that only a
 * 32-bit lea reads (its upper half is the caller's garbage) and the low
 * half of a loaded 64-bit value, in every coding: hits, 1-, 2- and 3-byte
 * differences, full values, and differences that wrap at 32 bits
 * (0xffffffff then 0: one apart as low halves, 2^32 apart as 64-bit
 * values). For tests/host/data-exact.sh; prints a checksum so the traced
 * run and the twin can be compared.
 */
#include <stdio.h>

#define BIG (1u << 22)

static unsigned char big[BIG];
static long cells[2];

/* the argument's low half, read by a 32-bit lea only; a global name, so
 * recorded at its entry (a local function's would be recorded in main,
 * where the value comes from) */
unsigned int at_next(const unsigned char *b, unsigned int i);
__attribute__((noinline, noipa)) unsigned int at_next(const unsigned char *b, unsigned int i)
{
	return b[i + 1u];
}

/* the loaded value's low half, read by a 32-bit lea only */
__attribute__((noinline, noipa)) static unsigned int at_cell(const unsigned char *b,
							      const long *c)
{
	return b[(unsigned int)*c + 1u];
}

int main(int argc, char **argv)
{
	/* hits, steps of each coding's size both ways, full values, and
	 * 0xffffffff (index 0) next to 0: 1 apart as low halves */
	static const unsigned int steps[] = {
		5, 5, 5, 6, 3, 70, 8000, 100, 1000000, 2000, 3999999, 1,
		0xffffffffu, 0, 0xffffffffu, 2, 0xffffffffu, 4000000, 7,
	};
	unsigned long sum = 0, x = (unsigned long)argc;
	unsigned int i = 0;

	(void)argv;
	for (unsigned int k = 0; k < BIG; k += 4099)
		big[k] = (unsigned char)(k * 7 + 1);
	for (unsigned int k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		sum = sum * 31 + at_next(big, steps[k]);
		/* a 64-bit cell whose upper half changes */
		cells[0] = (long)(x << 33) | steps[k];
		sum = sum * 31 + at_cell(big, cells);
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	}
	/* a walk over the array: jumps, medium and small steps */
	for (unsigned int k = 0; k < 4000; k++) {
		unsigned int r;

		x = x * 6364136223846793005ul + 1442695040888963407ul;
		r = (unsigned int)(x >> 60);
		if (r < 4)
			i = (unsigned int)(x >> 20) % (BIG - 1);
		else if (r < 8)
			i = (i + (unsigned int)(x >> 40) % 16000 - 8000) % (BIG - 1);
		else
			i = (i + (unsigned int)(x >> 50) % 128 - 64) % (BIG - 1);
		sum = sum * 31 + at_next(big, i);
		cells[1] = (long)(x & ~0xffffffffull) | i;
		sum = sum * 31 + at_cell(big, cells + 1);
	}
	printf("%lu\n", sum);
	return 0;
}
