/* calls memmove, which in the C library calls memcpy: with own.c's
 * memcpy aecc refuses the link (tests/unit/aecc-errors.sh) */
#include <string.h>

static char buf[256];

int main(int argc, char **argv)
{
	(void)argv;
	memmove(buf + 100, buf, 50 + argc);
	return buf[100];
}
