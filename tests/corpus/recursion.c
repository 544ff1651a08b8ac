/* Covers: deep recursion (ackermann) and mutual recursion (even/odd),
 * i.e. many nested calls and returns. */
#include <stdio.h>

__attribute__((noinline)) static unsigned ack(unsigned m, unsigned n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static int is_odd(unsigned n);

__attribute__((noinline)) static int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

__attribute__((noinline)) static int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

int main(void)
{
	unsigned s = ack(2, 60) + ack(3, 4);
	int i, e = 0;

	for (i = 0; i < 30; i++)
		e += is_even(i * 13);
	printf("recursion %u %d\n", s, e);
	return 0;
}
