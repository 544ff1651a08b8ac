/* Covers: tail calls at -O2: direct (`return g(x)` becomes jmp g) and
 * indirect (`return fp(x)` becomes jmp *%rax), and self tail recursion. */
#include <stdio.h>

typedef unsigned long (*fn)(unsigned long, int);

static unsigned long tc_a(unsigned long x, int n);
static unsigned long tc_b(unsigned long x, int n);
static fn volatile next_fn[2] = { tc_a, tc_b };

__attribute__((noinline)) static unsigned long tc_a(unsigned long x, int n)
{
	if (n <= 0)
		return x;
	return next_fn[x & 1](x * 3 + 1, n - 1);	/* indirect tail call */
}

__attribute__((noinline)) static unsigned long tc_b(unsigned long x, int n)
{
	if (n <= 0)
		return x;
	return tc_a(x / 2 + n, n - 1);			/* direct tail call */
}

__attribute__((noinline)) static unsigned long gcd(unsigned long a, unsigned long b)
{
	if (!b)
		return a;
	return gcd(b, a % b);				/* self tail call */
}

int main(void)
{
	unsigned long s = 0;
	int i;

	for (i = 1; i < 300; i++) {
		s += tc_a(i, 40);
		s += gcd(s | 1, i * 7919UL);
	}
	printf("tailcall %lu\n", s);
	return 0;
}
