// SPDX-License-Identifier: MIT
/*
 * div128.c - 128-bit division helpers (libgcc's __udivmodti4 family),
 * compiled by aecc so traced programs contain only instrumented code.
 * Shift-subtract: slow but exact, and only used by __int128 division.
 */
typedef unsigned __int128 u128;
typedef __int128 s128;

/* Returns n / d and stores n % d in *rem (when rem is not NULL); d == 0
 * raises SIGFPE like the div instruction. */
u128 __udivmodti4(u128 n, u128 d, u128 *rem)
{
	u128 q = 0, r = 0;

	if (!d)
		return (unsigned long)n / (unsigned long)d;	/* traps like div */
	for (int i = 127; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) {
			r -= d;
			q |= (u128)1 << i;
		}
	}
	if (rem)
		*rem = r;
	return q;
}

/* Returns n / d (unsigned). */
u128 __udivti3(u128 n, u128 d)
{
	return __udivmodti4(n, d, 0);
}

/* Returns n % d (unsigned). */
u128 __umodti3(u128 n, u128 d)
{
	u128 r;

	__udivmodti4(n, d, &r);
	return r;
}

/* Returns n / d, rounded toward zero. */
s128 __divti3(s128 n, s128 d)
{
	int neg = (n < 0) ^ (d < 0);
	u128 q = __udivmodti4(n < 0 ? -(u128)n : (u128)n,
			      d < 0 ? -(u128)d : (u128)d, 0);

	return neg ? -(s128)q : (s128)q;
}

/* Returns n % d, with the sign of n. */
s128 __modti3(s128 n, s128 d)
{
	u128 r;

	__udivmodti4(n < 0 ? -(u128)n : (u128)n, d < 0 ? -(u128)d : (u128)d, &r);
	return n < 0 ? -(s128)r : (s128)r;
}
