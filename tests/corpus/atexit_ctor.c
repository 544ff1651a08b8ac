/* Covers: constructors and destructors (.init_array/.fini_array, with
 * priorities), atexit handlers run in reverse order at exit. */
#include <stdio.h>
#include <stdlib.h>

static unsigned acc = 1;

static void mix(unsigned v)
{
	unsigned i;

	for (i = 0; i < 2000; i++)
		acc = acc * 31 + v + i;
}

__attribute__((constructor(101))) static void ctor_first(void) { mix(1); }
__attribute__((constructor(102))) static void ctor_second(void) { mix(2); }
__attribute__((destructor)) static void dtor(void)
{
	mix(3);
	printf("dtor %u\n", acc);
}

static void at1(void) { mix(4); printf("at1 %u\n", acc); }
static void at2(void) { mix(5); printf("at2 %u\n", acc); }

int main(void)
{
	atexit(at1);
	atexit(at2);
	mix(6);
	printf("atexit_ctor main %u\n", acc);
	return 0;
}
