/* Covers: a dense switch that -O2 compiles to a jump table (16 cases),
 * driven by a pseudo-random sequence. */
#include <stdio.h>

static unsigned step(unsigned x, unsigned k)
{
	switch (k & 15) {
	case 0: return x + 1;
	case 1: return x * 3;
	case 2: return x ^ 0x5a5a;
	case 3: return x - 7;
	case 4: return x << 1;
	case 5: return x >> 1;
	case 6: return x + k;
	case 7: return x * 5 + 1;
	case 8: return ~x;
	case 9: return x | 0x100;
	case 10: return x & 0xfffff;
	case 11: return x + (x >> 3);
	case 12: return x * 7;
	case 13: return x - k;
	case 14: return x ^ (x << 5);
	default: return x + 11;
	}
}

int main(void)
{
	unsigned x = 1, r = 12345;
	int i;

	for (i = 0; i < 20000; i++) {
		r = r * 1103515245 + 12345;
		x = step(x, r >> 16);
	}
	printf("switch_dense %u\n", x);
	return 0;
}
