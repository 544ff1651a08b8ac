/* Covers: libc qsort calling back a comparator (indirect calls from libc
 * into the program), plus bsearch. */
#include <stdio.h>
#include <stdlib.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	static int v[300];
	unsigned r = 1, sum = 0;
	int i, found = 0;

	for (i = 0; i < 300; i++) {
		r = r * 1664525 + 1013904223;
		v[i] = (int)(r >> 8) % 100000;
	}
	qsort(v, 300, sizeof(v[0]), cmp_int);
	for (i = 0; i < 300; i += 7) {
		int key = v[i];

		if (bsearch(&key, v, 300, sizeof(v[0]), cmp_int))
			found++;
		sum = sum * 31 + v[i];
	}
	printf("qsort_cmp %u %d\n", sum, found);
	return 0;
}
