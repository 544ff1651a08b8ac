/* Covers: 2-byte witnesses. A 512-leaf tree of branches on the bits of
 * a pseudo-random number: at its root, every leaf's witness may come
 * first after either side of some branch, so no two leaves can share a
 * witness id and the procedure needs more than 256 of them (smaller
 * procedures share ids and write one byte). In a data trace the
 * branches are decided from x, known from the records. argv[1]: rounds
 * (default 2000). */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned int sink;

#define B0(n) sink = (n);
#define B1(n) if (x & 1u) { B0(2 * (n)) } else { B0(2 * (n) + 1) }
#define B2(n) if (x & 2u) { B1(2 * (n)) } else { B1(2 * (n) + 1) }
#define B3(n) if (x & 4u) { B2(2 * (n)) } else { B2(2 * (n) + 1) }
#define B4(n) if (x & 8u) { B3(2 * (n)) } else { B3(2 * (n) + 1) }
#define B5(n) if (x & 16u) { B4(2 * (n)) } else { B4(2 * (n) + 1) }
#define B6(n) if (x & 32u) { B5(2 * (n)) } else { B5(2 * (n) + 1) }
#define B7(n) if (x & 64u) { B6(2 * (n)) } else { B6(2 * (n) + 1) }
#define B8(n) if (x & 128u) { B7(2 * (n)) } else { B7(2 * (n) + 1) }
#define B9(n) if (x & 256u) { B8(2 * (n)) } else { B8(2 * (n) + 1) }

__attribute__((noinline)) static void leaf(unsigned int x)
{
	B9(1)
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	unsigned int x = 1, sum = 0;

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		leaf(x);
		sum += sink;
	}
	printf("wide_witness %u\n", sum);
	return 0;
}
