/* Covers: varargs functions (va_list passing, vsnprintf) and printf-heavy
 * formatting of integers, strings, hex, padding and floating point. */
#include <stdarg.h>
#include <stdio.h>

static unsigned hash;

__attribute__((noinline)) static void logf_(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n, i;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (i = 0; i < n; i++)
		hash = hash * 131 + (unsigned char)buf[i];
}

__attribute__((noinline)) static long sum_ints(int count, ...)
{
	va_list ap;
	long s = 0;

	va_start(ap, count);
	while (count--)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 40; i++) {
		logf_("%d|%5u|%-8s|%08x|%c|%ld|%.3f|%e", i, i * 7u, "abc",
		      i * 2654435761u, 'a' + i % 26, (long)i * 100003,
		      i / 7.0, i * 1.5e10);
		s += sum_ints(6, i, 2, 3, 4, 5, i * 2);
	}
	printf("varargs_printf %u %ld %s %5.2f\n", hash, s, "done", 3.14159);
	return 0;
}
