/* Covers: setjmp/longjmp, including longjmp out of several nested calls
 * and setjmp returning twice in a loop. */
#include <setjmp.h>
#include <stdio.h>

/* The recursion ends in exit/longjmp, which gcc does not see as a base case. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"

static jmp_buf env;
static unsigned acc;

__attribute__((noinline)) static void deep(int depth, int target)
{
	acc = acc * 33 + depth;
	if (depth == target)
		longjmp(env, depth + 1);
	deep(depth + 1, target);
	acc++;	/* not a tail call */
}

int main(void)
{
	volatile int rounds = 0;
	int r;

	r = setjmp(env);
	acc += r;
	if (rounds < 2000) {
		rounds++;
		deep(0, rounds % 23);
	}
	printf("setjmp_nested %u %d\n", acc, rounds);
	return 0;
}
