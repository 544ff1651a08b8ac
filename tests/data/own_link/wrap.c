/* with -Wl,--wrap=memcpy every call of memcpy comes here, the C
 * library's included (own_link/main.c), and goes on to the library's */
#include <stddef.h>

void *__real_memcpy(void *d, const void *s, size_t n);

unsigned long wrap_bytes;

void *__wrap_memcpy(void *d, const void *s, size_t n)
{
	wrap_bytes += n;
	return __real_memcpy(d, s, n);
}
