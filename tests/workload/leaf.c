// SPDX-License-Identifier: MIT
/*
 * leaf - a small traced program that forkexec runs: sums the Collatz
 * sequence lengths of 1..N and checks the sum against a second,
 * differently written computation. Exits 0 when both agree.
 *
 * usage: leaf [N]   (default 3000)
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned collatz_len(unsigned long long x)
{
	unsigned n = 1;

	while (x != 1) {
		x = x & 1 ? 3 * x + 1 : x / 2;
		n++;
	}
	return n;
}

/* The same lengths, with a memo of the small values. */
static unsigned long long memo_sum(unsigned lim)
{
	static unsigned short memo[1 << 14];
	unsigned long long sum = 0;

	for (unsigned i = 1; i <= lim; i++) {
		unsigned long long x = i;
		unsigned n = 0;

		while (x != 1 && !(x < (1u << 14) && memo[x])) {
			x = x % 2 ? 3 * x + 1 : x >> 1;
			n++;
		}
		n += x == 1 ? 1 : memo[x];
		if (i < (1u << 14))
			memo[i] = n;
		sum += n;
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned lim = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
	unsigned long long a = 0, b;

	if (!lim || lim > 1000000) {
		fprintf(stderr, "leaf: N must be 1..1000000\n");
		return 2;
	}
	for (unsigned i = 1; i <= lim; i++)
		a += collatz_len(i);
	b = memo_sum(lim);
	if (a != b) {
		fprintf(stderr, "leaf: sums differ: %llu %llu\n", a, b);
		return 1;
	}
	printf("leaf: collatz length sum of 1..%u = %llu\n", lim, a);
	return 0;
}
