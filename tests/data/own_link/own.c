/* the program's memcpy, linked after its callers (own_link/main.c) */
#include <stddef.h>

/* no loop idiom recognition: it would turn the loop into a memcpy call */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)d)[i] = ((const unsigned char *)s)[i];
	return d;
}
