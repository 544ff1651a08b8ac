/* Covers: indirect calls through a table of function pointers (call *%rax)
 * selected by data, including a pointer passed through a struct. */
#include <stdio.h>

typedef unsigned (*op_fn)(unsigned, unsigned);

static unsigned f_add(unsigned a, unsigned b) { return a + b; }
static unsigned f_sub(unsigned a, unsigned b) { return a - b * 3; }
static unsigned f_mix(unsigned a, unsigned b) { return (a ^ b) * 0x9e3779b1u; }
static unsigned f_rot(unsigned a, unsigned b) { return (a << (b & 31)) | (a >> (-b & 31)); }
static unsigned f_max(unsigned a, unsigned b) { return a > b ? a : b + 1; }

static op_fn volatile table[] = { f_add, f_sub, f_mix, f_rot, f_max };

struct obj {
	op_fn fn;
	unsigned state;
};

int main(void)
{
	struct obj o = { f_mix, 99 };
	unsigned x = 5;
	int i;

	for (i = 0; i < 15000; i++) {
		x = table[(x >> 3) % 5](x, i);
		if ((i & 7) == 0)
			o.state = o.fn(o.state, x);
	}
	printf("fnptr_table %u %u\n", x, o.state);
	return 0;
}
