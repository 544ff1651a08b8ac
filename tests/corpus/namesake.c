/* Covers: a program's own functions named like the C library routines
 * that data tracing expands from their arguments (a static strlen that
 * counts spaces, a static memset whose loop reads memory) must be traced
 * as the program's code, and the library's strlen and memchr still
 * expanded beside them: hostile review found the static strlen taking
 * over every strlen of the program and the memset regenerated with
 * invented stores. Also memchr and strnlen with n = SIZE_MAX (legal: the
 * scan stops at the first match), once refused as a corrupt size. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void *memchr(const void *s, int c, size_t n);
size_t strnlen(const char *s, size_t n);

static __attribute__((noinline)) size_t strlen(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == ' ';
	return n;
}

static __attribute__((noinline)) void *memset(void *d, int c, size_t n)
{
	volatile unsigned char *p = d;

	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)c)
			p[i] = c;
	return d;
}

static size_t (*volatile p_libc_strnlen)(const char *, size_t) = strnlen;
static void *(*volatile p_libc_memchr)(const void *, int, size_t) = memchr;

int main(int argc, char **argv)
{
	static char buf[300];
	const char *s = argc > 5 ? argv[1] : "one two three four";
	volatile size_t n = 256;
	const char *w;

	memset(buf, 'q', n);
	buf[3] = 'x';
	memset(buf, 'q', n);
	w = p_libc_memchr(s, 'w', SIZE_MAX);
	printf("spaces %zu, len %zu, buf %c%c, w at %td, n %zu\n",
	       strlen(s), p_libc_strnlen(s, SIZE_MAX), buf[0], buf[3],
	       w ? w - s : -1, p_libc_strnlen(buf, 1000));
	return 0;
}
