/* Covers: computed goto (GNU labels as values): a threaded-code
 * interpreter dispatching with `goto *tab[op]`. */
#include <stdio.h>

int main(void)
{
	static const unsigned char code[] = { 0, 1, 2, 3, 1, 0, 2, 4 };
	static void *tab[] = { &&op_add, &&op_mul, &&op_xor, &&op_rot, &&op_next };
	unsigned x = 7, n = 0;
	int pc = 0;

	goto *tab[code[pc]];
op_add:
	x += 0x1234; goto *tab[code[++pc]];
op_mul:
	x *= 2654435761u; goto *tab[code[++pc]];
op_xor:
	x ^= x >> 13; goto *tab[code[++pc]];
op_rot:
	x = (x << 7) | (x >> 25); goto *tab[code[++pc]];
op_next:
	if (++n < 8000) {
		pc = n & 3;
		goto *tab[code[pc]];
	}
	printf("computed_goto %u\n", x);
	return 0;
}
