// SPDX-License-Identifier: MIT
/*
 * bits.c - the libgcc helpers GCC calls for bit operations on x86-64
 * without -mpopcnt. Traced programs link only instrumented code, so these
 * are compiled by aecc like the program instead of coming from libgcc.
 */
/* Returns the number of bits set in x. */
int __popcountdi2(unsigned long x)
{
	x = x - ((x >> 1) & 0x5555555555555555ul);
	x = (x & 0x3333333333333333ul) + ((x >> 2) & 0x3333333333333333ul);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0ful;
	return (int)((x * 0x0101010101010101ul) >> 56);
}

/* Returns the number of bits set in x. */
int __popcountsi2(unsigned int x)
{
	return __popcountdi2(x);
}

/* Returns 1 when an odd number of bits is set in x, else 0. */
int __paritydi2(unsigned long x)
{
	return __popcountdi2(x) & 1;
}

/* Returns 1 when an odd number of bits is set in x, else 0. */
int __paritysi2(unsigned int x)
{
	return __popcountdi2(x) & 1;
}
