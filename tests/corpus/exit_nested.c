/* Covers: exit() called from deeply nested calls (no return from main),
 * with stdio buffers flushed by exit. */
#include <stdio.h>

/* The recursion ends in exit/longjmp, which gcc does not see as a base case. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"
#include <stdlib.h>

static unsigned acc;

__attribute__((noinline)) static void descend(int n)
{
	unsigned i;

	for (i = 0; i < 40; i++)
		acc = acc * 17 + (i ^ n);
	if (n == 0) {
		printf("exit_nested %u\n", acc);
		exit(3);
	}
	descend(n - 1);
	acc++;
}

int main(void)
{
	descend(1000);
	return 0;
}
