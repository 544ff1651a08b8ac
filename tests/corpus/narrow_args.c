/* Covers: records as narrow as what reads them (aecc -fae-data). 32-bit
 * arguments recorded by their low half (4 bytes when the callee never
 * reads the upper 32 bits before writing the register whole) while
 * their callers leave garbage in the upper half (a long cast to int is
 * passed as is): an index used at 32 bits (and, lea, movslq), an int
 * passed on to a callee, a return of the argument, a loop counter, and
 * 64-bit arguments beside them that must stay whole. Negative indices
 * loaded by sign-extending loads (movslq, movsbq, movswq: recorded by
 * their source's size and sign-extended offline), int results used as
 * negative indices (cltq), 64-bit loads with a garbage upper half of
 * which only the low half is used, and a loaded stack pointer (above
 * 4 GiB) that must stay whole. A recorded low half
 * used as 64 bits, or a sign lost, would move the addresses. */
#include <stdio.h>

static int tab[64];
static long ltab[64];
static char str[128];

__attribute__((noinline)) static int idx_and(int i, const int *a)
{
	return a[i & 7];
}

__attribute__((noinline)) static int idx_lea(unsigned int i, const char *a)
{
	return a[i + 1] + a[(i + 5) & 63];
}

__attribute__((noinline)) static long idx_sext(int i, const long *a)
{
	return a[i] + a[i + 1];
}

__attribute__((noinline)) static long whole(long i, const long *a)
{
	/* a long: its upper half is read (i is masked only after) */
	return a[(i >> 40) & 15] + a[i & 15];
}

__attribute__((noinline)) static int pass_on(int i, const int *a)
{
	return idx_and(i, a) + idx_and(i + 1, a);
}

__attribute__((noinline)) static unsigned int ret_arg(unsigned int i)
{
	return i;
}

__attribute__((noinline)) static int count(int n, const char *s)
{
	int h = 0;

	for (int k = 0; k < n; k++)
		h = h * 31 + s[k];
	return h;
}

/* Call f(g, a) with all 64 bits of g in %rdi (C callers truncate an int
 * argument themselves): below the red zone, as the callee expects. */
static long call_whole_reg(const void *f, long g, const void *a)
{
	long r;

	__asm__ volatile("sub $128, %%rsp\n\tcall *%[f]\n\tadd $128, %%rsp"
			 : "=a"(r), "+D"(g), "+S"(a)
			 : [f] "r"(f)
			 : "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc");
	return r;
}

static long (*volatile p_whole)(long, const long *) = whole;

static long wide[16];
static long *volatile p_stack;	/* a pointer above 4 GiB, loaded whole */

__attribute__((noinline)) static int int_result(int k)
{
	return (k % 13) - 6;
}

static int offs32[16] = { -3, 5, -8, 0, 7, -1, 2, -6, 1, -2, 6, -7, 3, -5, 4, -4 };
static signed char offs8[16] = { 3, -5, 8, 0, -7, 1, -2, 6, -1, 2, -6, 7, -3, 5, -4, 4 };
static short offs16[16] = { -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, -7, 7, -8, 0 };

__attribute__((noinline)) static long neg_index(const long *mid, int n)
{
	long h = 0;

	for (int i = 0; i < n; i++)
		h = h * 5 + mid[offs32[i & 15]] + mid[offs8[(i + 3) & 15]] + mid[offs16[(i + 7) & 15]];
	return h;
}
static int (*volatile p_idx_and)(int, const int *) = idx_and;

int main(int argc, char **argv)
{
	volatile long garbage = 0x5a5a5a5a00000000l;
	long h = 0, local[4] = { 11, 12, 13, 14 };

	for (int i = 0; i < 64; i++) {
		tab[i] = i * 3;
		ltab[i] = i * 7;
		str[i] = (char)('a' + i % 26);
	}
	for (int i = 0; i < 16; i++)
		wide[i] = garbage | (i * 5);
	for (long k = 0; k < 40; k++) {
		long g = garbage + k;

		h = h * 3 + idx_and((int)g, tab);
		h = h * 3 + idx_lea((unsigned int)g, str);
		h = h * 3 + idx_sext((int)(g & 0xffffffff00000000l) + (int)(k % 60), ltab);
		h = h * 3 + whole(((k % 15) << 40) | (k % 16), ltab);
		h = h * 3 + p_whole(k % 16, ltab);
		h = h * 3 + pass_on((int)g, tab);
		h = h * 3 + p_idx_and((int)(g + 2), tab);
		h = h * 3 + tab[ret_arg((unsigned int)g) % 64];
		h = h * 3 + count((int)(g % 64), str);
		/* the upper half is garbage where the callee gets it */
		h = h * 3 + (int)call_whole_reg((const void *)idx_and, g, tab);
		h = h * 3 + (int)call_whole_reg((const void *)idx_lea, g, str);
		h = h * 3 + call_whole_reg((const void *)idx_sext, garbage + k % 60, ltab);
		h = h * 3 + (int)call_whole_reg((const void *)pass_on, g, tab);
		h = h * 3 + (unsigned int)call_whole_reg((const void *)ret_arg, g, NULL);
		h = h * 3 + (int)call_whole_reg((const void *)count, garbage + k % 64, str);
		h = h * 3 + neg_index(ltab + 32, (int)k);
		h = h * 3 + ltab[32 + int_result((int)k)];
		h = h * 3 + tab[(int)wide[k & 15] & 63];
		p_stack = local;
		h = h * 3 + p_stack[k & 3];
	}
	printf("narrow_args %ld %d\n", h, argc);
	return 0;
}
