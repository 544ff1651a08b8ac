/* Covers: alloca and variable-length arrays (dynamic stack adjustment,
 * frame pointer based addressing), in a recursive function. */
#include <alloca.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static unsigned vla_sum(int n, int depth)
{
	unsigned v[n], s = 0;
	unsigned char *scratch = alloca(n * 3 + 1);
	int i;

	for (i = 0; i < n; i++)
		v[i] = i * depth + 1;
	memset(scratch, depth, n * 3 + 1);
	for (i = 0; i < n; i++)
		s = s * 7 + v[n - 1 - i] + scratch[i * 3];
	if (depth > 0)
		s += vla_sum(n + 5, depth - 1);
	return s;
}

int main(void)
{
	unsigned s = 0;
	int i;

	for (i = 1; i < 30; i++)
		s ^= vla_sum(i, 12);
	printf("alloca_vla %u\n", s);
	return 0;
}
