/* Covers: a sparse switch that gcc compiles to a compare tree (no jump
 * table), next to a small dense switch, on string-derived keys. */
#include <stdio.h>

__attribute__((noinline)) static int classify(unsigned k)
{
	switch (k) {
	case 3: return 1;
	case 100: return 2;
	case 1000: return 3;
	case 4096: return 4;
	case 65537: return 5;
	case 99999: return 6;
	case 123456: return 7;
	case 7777777: return 8;
	default: return 0;
	}
}

int main(void)
{
	static const unsigned keys[] = { 3, 100, 1000, 4096, 65537, 99999, 123456, 7777777, 5, 6 };
	unsigned s = 0, r = 9;
	int i;

	for (i = 0; i < 12000; i++) {
		r = r * 69069 + 1;
		s = s * 3 + classify(keys[(r >> 16) % 10] + ((r & 7) == 0));
	}
	printf("switch_sparse %u\n", s);
	return 0;
}
