/* Covers: hot/cold splitting: __builtin_expect and noreturn/cold error
 * paths that gcc -O2 moves to foo.cold (a separate text range), some of
 * which are actually taken. */
#include <stdio.h>
#include <stdlib.h>

static unsigned errors;

__attribute__((cold, noinline)) static void report(const char *what, unsigned v)
{
	errors += v & 3;
	if (errors > 1000000)
		fprintf(stderr, "%s %u\n", what, v);
}

__attribute__((noinline)) static unsigned work(unsigned x)
{
	if (__builtin_expect(x % 97 == 0, 0)) {
		report("div97", x);
		return x + 1;
	}
	if (__builtin_expect(x == 0xdeadbeef, 0))
		abort();
	return x * 2654435761u >> 3;
}

int main(void)
{
	unsigned x = 1, s = 0;
	int i;

	for (i = 0; i < 25000; i++) {
		x = work(x + i);
		s ^= x;
	}
	printf("hotcold %u %u\n", s, errors);
	return 0;
}
