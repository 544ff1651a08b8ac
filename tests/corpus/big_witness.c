/* Covers: a long branchy loop (~200M instructions with the ARGS count)
 * that makes an instrumented run write many witnesses, so the trace
 * buffer fills and is handed over many times. Fast natively (<0.2 s).
 * argv[1]: number of outer iterations (default 1000). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned x = 1, a = 0, b = 0, c = 0;
	long i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < 10000; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			if (x & 1)
				a += x >> 3;
			else if (x & 2)
				b ^= x;
			else
				c += 1;
			if ((x & 0x30) == 0x10)
				a ^= b;
		}
	}
	printf("big_witness %u %u %u\n", a, b, c);
	return 0;
}
