/* Covers: a program that defines its own global memcpy and strlen, the
 * routines data tracing expands in the C library. Static linking makes
 * them the program's everywhere, musl's own callers included (snprintf
 * copies through memcpy, fputs measures with strlen), so the traced
 * program must run and regenerate with them as ordinary code; it first
 * failed to link with -fae-data (a second memcpy, the library's). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* no loop idiom recognition: it would turn the loop into a memcpy call */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *a = d;
	const unsigned char *b = s;

	while (n--)
		*a++ = *b++;
	return d;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return p - s;
}

int main(void)
{
	char buf[64], line[96];
	unsigned long sum = 0;

	for (int i = 0; i < 40; i++) {
		snprintf(line, sizeof(line), "line %d of the program's own routines", i);
		/* a length GCC cannot know: a call, not inline moves */
		memcpy(buf, line, strlen(line) + 1);
		sum += strlen(buf) * (i + 1);
		fputs(buf, stdout);
		fputs("\n", stdout);
	}
	printf("sum %lu\n", sum);
	return 0;
}
