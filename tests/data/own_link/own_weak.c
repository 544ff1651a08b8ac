/* the program's memcpy as a weak symbol, linked after its callers
 * (own_link/main.c): a weak definition keeps the library's out too */
#include <stddef.h>

__attribute__((weak, optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *a = d;
	const unsigned char *b = s;

	while (n != 0) {
		*a++ = *b++;
		n--;
	}
	return d;
}
