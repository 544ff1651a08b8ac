// SPDX-License-Identifier: GPL-2.0
/*
 * gather_kinds: runs vector gathers (VSIB addressing), each once, with
 * known indices and masks, and prints for each, in execution order,
 *	G <mnemonic>
 * followed by the loads it makes in lackey's format, " L %08lx,<size>",
 * one per loaded element in ascending element order, at
 * base + index[i] * scale (&table[index[i]]), computed here in scalar C.
 * Which elements are loaded is written by hand for each mask (the "active"
 * bitmaps below) and checked against the hardware: a loaded element of
 * the result must equal the memory at its address, any other the
 * destination's old value (else "BAD" and status 1). tests/host/
 * oracle-data.sh compares these lines with ae-step --data's L records at
 * each gather instruction, so the stepper's addresses, sizes, order and
 * masking are checked against an independent source. One gather crosses
 * into a page nothing touched before, so that its fault stops it part
 * done.
 *
 * No libc: glibc's static start-up runs EVEX string functions capstone 4
 * cannot decode (ae-step would stop there). Build:
 *	gcc -O2 -mavx2 -static -no-pie -nostdlib -ffreestanding
 *	    -fno-tree-vectorize -fno-stack-protector
 * (no auto-vectorized gathers: the only ones are the intrinsics below);
 * with -mavx512f the AVX-512 (EVEX.512: capstone 4 decodes no AVX512VL
 * gather) gathers run too, and -DSCATTER ends with an EVEX scatter, which
 * ae-step --data must refuse.
 */
#include <immintrin.h>
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

/* gathered from; pseudo-random bytes so each load is told by its value */
static uint8_t tab[4096] __attribute__((aligned(64)));

static char obuf[16384];
static unsigned int olen;
static int bad;

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			  : "rcx", "r11", "memory");
	return ret;
}

static void put_s(const char *s)
{
	while (*s && olen < sizeof(obuf))
		obuf[olen++] = *s++;
}

/* @v in lower-case hex, at least @digits digits (lackey's %08lx) */
static void put_hex(uint64_t v, int digits)
{
	char b[17];
	int i = 16;

	b[16] = 0;
	do {
		b[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
		digits--;
	} while (v || digits > 0);
	put_s(b + i);
}

static int same(const uint8_t *a, const uint8_t *b, int n)
{
	while (n--)
		if (*a++ != *b++)
			return 0;
	return 1;
}

/*
 * Prints gather @name's expected loads and checks its result @res: @n
 * elements (fewer of destination and index) of @esz bytes; indices @ix of
 * @isz bytes (sign-extended) times @scale from @base; element i loaded iff
 * bit i of @active; @src the destination's value before the gather.
 */
static void report(const char *name, const uint8_t *base, int scale, const void *ix,
		   int isz, int esz, int n, unsigned int active, const uint8_t *res,
		   const uint8_t *src)
{
	int i;

	put_s("G ");
	put_s(name);
	put_s("\n");
	for (i = 0; i < n; i++) {
		int64_t idx = isz == 4 ? ((const int32_t *)ix)[i] : ((const int64_t *)ix)[i];
		const uint8_t *a = base + idx * scale;

		if ((active >> i) & 1) {
			put_s(" L ");
			put_hex((uintptr_t)a, 8);
			put_s(esz == 4 ? ",4\n" : ",8\n");
			if (!same(res + i * esz, a, esz))
				bad = 1;
		} else if (!same(res + i * esz, src + i * esz, esz)) {
			bad = 1;
		}
		if (bad) {
			put_s("BAD ");
			put_s(name);
			put_s("\n");
			return;
		}
	}
}

/* AVX2 (VEX): the mask is a vector, element i active iff its sign bit */

NOINLINE static void dd_ymm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m256i r = _mm256_mask_i32gather_epi32(_mm256_loadu_si256(src), b,
						_mm256_loadu_si256(ix), _mm256_loadu_si256(mk), 4);

	_mm256_storeu_si256(out, r);
}

NOINLINE static void dd_xmm_s1(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128i r = _mm_mask_i32gather_epi32(_mm_loadu_si128(src), b, _mm_loadu_si128(ix),
					     _mm_loadu_si128(mk), 1);

	_mm_storeu_si128(out, r);
}

NOINLINE static void dq_ymm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m256i r = _mm256_mask_i32gather_epi64(_mm256_loadu_si256(src), b, _mm_loadu_si128(ix),
						_mm256_loadu_si256(mk), 8);

	_mm256_storeu_si256(out, r);
}

NOINLINE static void qd_ymmidx(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128i r = _mm256_mask_i64gather_epi32(_mm_loadu_si128(src), b, _mm256_loadu_si256(ix),
						_mm_loadu_si128(mk), 4);

	_mm_storeu_si128(out, r);
}

NOINLINE static void qd_xmmidx(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128i r = _mm_mask_i64gather_epi32(_mm_loadu_si128(src), b, _mm_loadu_si128(ix),
					     _mm_loadu_si128(mk), 4);

	_mm_storeu_si128(out, r);
}

NOINLINE static void qq_ymm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m256i r = _mm256_mask_i64gather_epi64(_mm256_loadu_si256(src), b, _mm256_loadu_si256(ix),
						_mm256_loadu_si256(mk), 8);

	_mm256_storeu_si256(out, r);
}

NOINLINE static void dps_ymm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m256 r = _mm256_mask_i32gather_ps(_mm256_loadu_ps(src), b, _mm256_loadu_si256(ix),
					    _mm256_loadu_ps(mk), 8);

	_mm256_storeu_ps(out, r);
}

NOINLINE static void dpd_xmm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128d r = _mm_mask_i32gather_pd(_mm_loadu_pd(src), b, _mm_loadu_si128(ix),
					  _mm_loadu_pd(mk), 8);

	_mm_storeu_pd(out, r);
}

NOINLINE static void qps_ymmidx(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128 r = _mm256_mask_i64gather_ps(_mm_loadu_ps(src), b, _mm256_loadu_si256(ix),
					    _mm_loadu_ps(mk), 2);

	_mm_storeu_ps(out, r);
}

NOINLINE static void qpd_xmm(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m128d r = _mm_mask_i64gather_pd(_mm_loadu_pd(src), b, _mm_loadu_si128(ix),
					  _mm_loadu_pd(mk), 8);

	_mm_storeu_pd(out, r);
}

/*
 * gcc puts the whole base in a register; these two are written by hand
 * for the displacement: 0x28 on a base register, and tab + 96 (a
 * link-time constant, non-PIE) as the displacement with no base register.
 * The mask is cleared by the gather, the destination written: "+&x".
 */
NOINLINE static void dd_ymm_disp(const void *b, const void *ix, const void *mk, const void *src, void *out)
{
	__m256i d = _mm256_loadu_si256(src), m = _mm256_loadu_si256(mk);

	__asm__ volatile ("vpgatherdd %1, 0x28(%3,%2,4), %0"
			  : "+&x"(d), "+&x"(m) : "x"(_mm256_loadu_si256(ix)), "r"(b) : "memory");
	_mm256_storeu_si256(out, d);
}

NOINLINE static void qq_ymm_nobase(const void *ix, const void *src, void *out)
{
	__m256i d = _mm256_loadu_si256(src), m = _mm256_set1_epi64x(-1);

	__asm__ volatile ("vpgatherqq %1, %c3(,%2,8), %0"
			  : "+&x"(d), "+&x"(m) : "x"(_mm256_loadu_si256(ix)), "i"(tab + 96) : "memory");
	_mm256_storeu_si256(out, d);
}

/*
 * Right after vzeroupper the upper halves of all ymm are zero and the
 * YMM_Hi128 XSAVE component may be in its init state (its xstate_bv bit
 * clear, as it is on the AMD EPYC this was written on): ae-step must then
 * take the halves as zeros. Mask: elements 0-3 (its upper half zero);
 * indices all 0: four loads of b + 8.
 */
NOINLINE static void dd_ymm_init(const void *b, void *out)
{
	__asm__ volatile ("vzeroupper\n\t"
			  "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"
			  "vpxor %%xmm2, %%xmm2, %%xmm2\n\t"
			  "vpcmpeqd %%xmm3, %%xmm3, %%xmm3\n\t"
			  "vpgatherdd %%ymm3, 8(%0,%%ymm2,4), %%ymm1\n\t"
			  "vmovdqu %%ymm1, (%1)"
			  : : "r"(b), "r"(out) : "xmm1", "xmm2", "xmm3", "memory");
}

#ifdef __AVX512F__
/* AVX-512 (EVEX): element i active iff bit i of the opmask */

NOINLINE static void dd_zmm(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512i r = _mm512_mask_i32gather_epi32(_mm512_loadu_si512(src), (__mmask16)k,
						_mm512_loadu_si512(ix), b, 4);

	_mm512_storeu_si512(out, r);
}

NOINLINE static void dq_zmm(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512i r = _mm512_mask_i32gather_epi64(_mm512_loadu_si512(src), (__mmask8)k,
						_mm256_loadu_si256(ix), b, 8);

	_mm512_storeu_si512(out, r);
}

NOINLINE static void qd_zmmidx(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m256i r = _mm512_mask_i64gather_epi32(_mm256_loadu_si256(src), (__mmask8)k,
						_mm512_loadu_si512(ix), b, 4);

	_mm256_storeu_si256(out, r);
}

NOINLINE static void qq_zmm_all(const void *b, const void *ix, void *out)
{
	__m512i r = _mm512_i64gather_epi64(_mm512_loadu_si512(ix), b, 8);

	_mm512_storeu_si512(out, r);
}

NOINLINE static void dps_zmm(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512 r = _mm512_mask_i32gather_ps(_mm512_loadu_ps(src), (__mmask16)k,
					    _mm512_loadu_si512(ix), b, 4);

	_mm512_storeu_ps(out, r);
}

NOINLINE static void dpd_zmm(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512d r = _mm512_mask_i32gather_pd(_mm512_loadu_pd(src), (__mmask8)k,
					     _mm256_loadu_si256(ix), b, 8);

	_mm512_storeu_pd(out, r);
}

NOINLINE static void qps_zmmidx(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m256 r = _mm512_mask_i64gather_ps(_mm256_loadu_ps(src), (__mmask8)k,
					    _mm512_loadu_si512(ix), b, 1);

	_mm256_storeu_ps(out, r);
}

NOINLINE static void qpd_zmm(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512d r = _mm512_mask_i64gather_pd(_mm512_loadu_pd(src), (__mmask8)k,
					     _mm512_loadu_si512(ix), b, 8);

	_mm512_storeu_pd(out, r);
}

/* EVEX compresses an 8-bit displacement by the element size: -0x40 is -16 * 4 */
NOINLINE static void dd_zmm_disp(const void *b, const void *ix, unsigned int k, const void *src, void *out)
{
	__m512i d = _mm512_loadu_si512(src);
	__mmask16 m = k;

	__asm__ volatile ("vpgatherdd -0x40(%3,%2,4), %0%{%1%}"
			  : "+&v"(d), "+&Yk"(m) : "v"(_mm512_loadu_si512(ix)), "r"(b) : "memory");
	_mm512_storeu_si512(out, d);
}

#ifdef SCATTER
static uint8_t stab[1024] __attribute__((aligned(64)));

NOINLINE static void scatter_dd(const void *ix, unsigned int k)
{
	_mm512_mask_i32scatter_epi32(stab, (__mmask16)k, _mm512_loadu_si512(ix),
				     _mm512_set1_epi32(7), 4);
}
#endif
#endif

/* index and mask vectors: read through volatile so no gather is folded */
static volatile int32_t ix_dd8[8] = { 5, 1, 9, 30, -2, 17, 40, 3 };
static volatile int32_t mk_dd8[8] = { -1, 0, -1, INT32_MIN, 0x7fffffff, 0, -5, 0 };
static volatile int32_t ix_s1[4] = { 0, 6, 13, 101 };	/* byte offsets, unaligned */
static volatile int32_t mk_all4[4] = { -1, -1, -1, -1 };
/* from the first page of pages[] into the second, which nothing touched
 * before: the fault on element 4 stops the gather part done (the stepper
 * must count it once, with all eight loads) */
static volatile int32_t ix_cross[8] = { 0, 1, 2, 1023, 1024, 1025, 1030, 2047 };
static volatile int32_t mk_all8[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static uint8_t pages[8192] __attribute__((aligned(4096)));
static volatile int32_t ix_dq4[4] = { 7, -1, 3, 12 };
static volatile int64_t mk_dq4[4] = { -1, 1, INT64_MIN, -1 };
static volatile int64_t ix_qd4[4] = { 2, 100, -4, 33 };
static volatile int32_t mk_qd4[4] = { 0, -1, -1, INT32_MIN };
static volatile int64_t ix_qd2[2] = { 3, 8 };
static volatile int32_t mk_qd2[4] = { -1, 0, -1, -1 };	/* 2 and 3: no index */
static volatile int64_t ix_qq4[4] = { -7, 0, 250, 1 };
static volatile int64_t mk_qq4[4] = { -1, -1, 0, -1 };
static volatile int32_t ix_dps8[8] = { 9, 3, 0, 21, 2, 11, 7, 60 };
/* float masks: -1.0f, 1.0f, -0.0f (the sign bit alone), 0, -2.0f, 2.0f, a negative NaN, 0 */
static volatile uint32_t mk_dps8[8] = {
	0xbf800000, 0x3f800000, 0x80000000, 0, 0xc0000000, 0x40000000, 0xffc00000, 0
};
static volatile int32_t ix_dpd4[4] = { 4, -3, 99, 99 };	/* 2 and 3: no element */
static volatile int64_t mk_dpd2[2] = { INT64_MIN, -1 };
static volatile int64_t ix_qps4[4] = { 1, 2, 3, 500 };
static volatile uint32_t mk_qps4[4] = { 0, 0x80000000, 0, 0xffffffff };
static volatile int64_t ix_qpd2[2] = { 7, 11 };
static volatile int64_t mk_qpd2[2] = { 0, -1 };
static volatile int32_t ix_none4[4] = { 1, 2, 3, 4 };
static volatile int32_t mk_none4[4] = { 0, 1, 0x7fffffff, 0 };	/* no sign bit set */
#ifdef __AVX512F__
static volatile int32_t ix_dd16[16] = {
	0, 3, 1, 70, -9, 5, 2, 8, 44, 13, 100, -1, 6, 31, 7, 4
};
static volatile int32_t ix_dq8[8] = { 1, 5, -2, 9, 0, 30, 3, 2 };
static volatile int64_t ix_qd8[8] = { 100, 3, 9, 1, -8, 2, 7, 5 };
static volatile int64_t ix_qq8[8] = { 0, 1, 2, 3, 4, 5, 6, -1 };
static volatile int32_t ix_dps16[16] = {
	15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0
};
static volatile int32_t ix_dpd8[8] = { 2, 4, 6, 8, 10, 12, 14, 16 };
static volatile int64_t ix_qps8[8] = { 0, 5, 10, 15, 20, 25, 30, 35 };	/* scale 1 */
static volatile int64_t ix_qpd8[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static volatile unsigned int kmask[5] = { 0xa5b3, 0x5e, 0xc3, 0x8001, 0x10 };
static volatile unsigned int kmask2[2] = { 0x7e, 0 };
#endif

/* copies @n volatile bytes into a plain buffer the gathers read */
static void get(void *dst, const volatile void *src, int n)
{
	const volatile uint8_t *s = src;
	uint8_t *d = dst;

	while (n--)
		*d++ = *s++;
}

int kinds_main(void)
{
	uint8_t ix[64], mk[64], src[64], res[64];
	uint32_t x = 0x12345678;
	int i;

	for (i = 0; i < (int)sizeof(tab); i++) {
		x = x * 1103515245 + 12345;
		tab[i] = x >> 16;
	}
	for (i = 0; i < 64; i++)
		src[i] = 0xa0 + i;

	get(ix, ix_dd8, 32);
	get(mk, mk_dd8, 32);
	dd_ymm(tab + 256, ix, mk, src, res);
	report("vpgatherdd", tab + 256, 4, ix, 4, 4, 8, 0x4d, res, src);

	get(ix, ix_s1, 16);
	get(mk, mk_all4, 16);
	dd_xmm_s1(tab, ix, mk, src, res);
	report("vpgatherdd", tab, 1, ix, 4, 4, 4, 0xf, res, src);

	pages[0] = 1;
	get(ix, ix_cross, 32);
	get(mk, mk_all8, 32);
	dd_ymm(pages, ix, mk, src, res);
	report("vpgatherdd", pages, 4, ix, 4, 4, 8, 0xff, res, src);

	get(ix, ix_dq4, 16);
	get(mk, mk_dq4, 32);
	dq_ymm(tab + 512, ix, mk, src, res);
	report("vpgatherdq", tab + 512, 8, ix, 4, 8, 4, 0xd, res, src);

	get(ix, ix_qd4, 32);
	get(mk, mk_qd4, 16);
	qd_ymmidx(tab + 1024, ix, mk, src, res);
	report("vpgatherqd", tab + 1024, 4, ix, 8, 4, 4, 0xe, res, src);

	get(ix, ix_qd2, 16);
	get(mk, mk_qd2, 16);
	qd_xmmidx(tab + 64, ix, mk, src, res);
	report("vpgatherqd", tab + 64, 4, ix, 8, 4, 2, 0x1, res, src);

	get(ix, ix_qq4, 32);
	get(mk, mk_qq4, 32);
	qq_ymm(tab + 2048, ix, mk, src, res);
	report("vpgatherqq", tab + 2048, 8, ix, 8, 8, 4, 0xb, res, src);

	get(ix, ix_dps8, 32);
	get(mk, mk_dps8, 32);
	dps_ymm(tab + 64, ix, mk, src, res);
	report("vgatherdps", tab + 64, 8, ix, 4, 4, 8, 0x55, res, src);

	get(ix, ix_dpd4, 16);
	get(mk, mk_dpd2, 16);
	dpd_xmm(tab + 800, ix, mk, src, res);
	report("vgatherdpd", tab + 800, 8, ix, 4, 8, 2, 0x3, res, src);

	get(ix, ix_qps4, 32);
	get(mk, mk_qps4, 16);
	qps_ymmidx(tab, ix, mk, src, res);
	report("vgatherqps", tab, 2, ix, 8, 4, 4, 0xa, res, src);

	get(ix, ix_qpd2, 16);
	get(mk, mk_qpd2, 16);
	qpd_xmm(tab + 1536, ix, mk, src, res);
	report("vgatherqpd", tab + 1536, 8, ix, 8, 8, 2, 0x2, res, src);

	get(ix, ix_none4, 16);
	get(mk, mk_none4, 16);
	dd_xmm_s1(tab, ix, mk, src, res);
	report("vpgatherdd", tab, 1, ix, 4, 4, 4, 0, res, src);

	get(ix, ix_dd8, 32);
	get(mk, mk_dd8, 32);
	dd_ymm_disp(tab + 600, ix, mk, src, res);
	report("vpgatherdd", tab + 600 + 0x28, 4, ix, 4, 4, 8, 0x4d, res, src);

	get(ix, ix_qq4, 32);
	qq_ymm_nobase(ix, src, res);
	report("vpgatherqq", tab + 96, 8, ix, 8, 8, 4, 0xf, res, src);

	for (i = 0; i < 64; i++)
		ix[i] = mk[i] = 0;
	dd_ymm_init(tab + 2200, res);
	report("vpgatherdd", tab + 2200 + 8, 4, ix, 4, 4, 8, 0xf, res, mk);

#ifdef __AVX512F__
	get(ix, ix_dd16, 64);
	dd_zmm(tab + 300, ix, kmask[0], src, res);
	report("vpgatherdd", tab + 300, 4, ix, 4, 4, 16, 0xa5b3, res, src);

	dd_zmm_disp(tab + 700, ix, kmask[0], src, res);
	report("vpgatherdd", tab + 700 - 0x40, 4, ix, 4, 4, 16, 0xa5b3, res, src);

	get(ix, ix_dq8, 32);
	dq_zmm(tab + 1200, ix, kmask[1], src, res);
	report("vpgatherdq", tab + 1200, 8, ix, 4, 8, 8, 0x5e, res, src);

	get(ix, ix_qd8, 64);
	qd_zmmidx(tab + 1000, ix, kmask[2], src, res);
	report("vpgatherqd", tab + 1000, 4, ix, 8, 4, 8, 0xc3, res, src);

	get(ix, ix_qq8, 64);
	qq_zmm_all(tab + 3000, ix, res);
	report("vpgatherqq", tab + 3000, 8, ix, 8, 8, 8, 0xff, res, src);

	get(ix, ix_dps16, 64);
	dps_zmm(tab + 400, ix, kmask[3], src, res);
	report("vgatherdps", tab + 400, 4, ix, 4, 4, 16, 0x8001, res, src);

	get(ix, ix_dpd8, 32);
	dpd_zmm(tab + 1800, ix, kmask[4], src, res);
	report("vgatherdpd", tab + 1800, 8, ix, 4, 8, 8, 0x10, res, src);

	get(ix, ix_qps8, 64);
	qps_zmmidx(tab + 3500, ix, kmask2[0], src, res);
	report("vgatherqps", tab + 3500, 1, ix, 8, 4, 8, 0x7e, res, src);

	get(ix, ix_qpd8, 64);
	qpd_zmm(tab + 2500, ix, kmask2[1], src, res);
	report("vgatherqpd", tab + 2500, 8, ix, 8, 8, 8, 0, res, src);
#endif
	sys3(1, 1, (long)obuf, olen);	/* write(1, ...) */
#if defined(__AVX512F__) && defined(SCATTER)
	get(ix, ix_dd16, 64);
	scatter_dd(ix, 0xffff);
#endif
	return bad;
}

/* the ELF entry: rsp is 16-byte aligned here, a C function expects it
 * 8 off (after a call); exit_group with kinds_main's status */
__asm__(".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call kinds_main\n"
	"	mov %eax, %edi\n"
	"	mov $231, %eax\n"
	"	syscall\n"
	"	hlt\n");
