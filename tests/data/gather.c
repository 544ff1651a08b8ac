/* Vector gathers (VSIB operands, issue 12 item 2): AVX2's with full and
 * partial masks, dword and qword indices, negative indices, from a base
 * the trace must record (a heap pointer), and, where the CPU has AVX-512,
 * its gathers with an opmask. The indices come from data, so only the
 * trace's records of the index and mask registers can give the
 * addresses. Prints "no avx2" where the CPU lacks AVX2 (the test then
 * skips), else sums that the twin must print too. */
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static uint32_t seed = 12345;

static uint32_t next(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

__attribute__((target("avx2"), noinline))
static long avx2_sums(const int *mid, const double *dmid, const float *fmid, int rounds)
{
	__m256i acc = _mm256_setzero_si256();
	__m256d dacc = _mm256_setzero_pd();
	__m128 facc = _mm_setzero_ps();
	__m128i qacc = _mm_setzero_si128();
	double d[4];
	float f[4];
	int out[8], q[4];
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		int i8[8];
		long long i4[4];

		for (int j = 0; j < 8; j++)
			i8[j] = (int)(next() % N) - N / 2;
		for (int j = 0; j < 4; j++)
			i4[j] = (long long)(next() % N) - N / 2;
		__m256i idx = _mm256_loadu_si256((const __m256i *)i8);
		__m256i qidx = _mm256_loadu_si256((const __m256i *)i4);
		/* mask from data: the sign bit of each element */
		__m256i m = _mm256_set_epi32(-(int)(next() & 1), -(int)(next() & 1),
					     -(int)(next() & 1), -(int)(next() & 1),
					     -(int)(next() & 1), -(int)(next() & 1),
					     -(int)(next() & 1), -(int)(next() & 1));
		__m256i m64 = _mm256_set_epi64x(-(long long)(next() & 1), -(long long)(next() & 1),
						-(long long)(next() & 1), -(long long)(next() & 1));

		acc = _mm256_add_epi32(acc, _mm256_i32gather_epi32(mid, idx, 4));
		acc = _mm256_add_epi32(acc, _mm256_mask_i32gather_epi32(acc, mid, idx, m, 4));
		qacc = _mm_add_epi32(qacc, _mm256_i64gather_epi32(mid, qidx, 4));
		dacc = _mm256_add_pd(dacc, _mm256_mask_i64gather_pd(dacc, dmid, qidx,
								    _mm256_castsi256_pd(m64), 8));
		facc = _mm_add_ps(facc, _mm_i32gather_ps(fmid, _mm256_castsi256_si128(idx), 4));
	}
	_mm256_storeu_si256((__m256i *)out, acc);
	_mm_storeu_si128((__m128i *)q, qacc);
	_mm256_storeu_pd(d, dacc);
	_mm_storeu_ps(f, facc);
	for (int j = 0; j < 8; j++)
		sum += out[j];
	for (int j = 0; j < 4; j++)
		sum += q[j] + (long)d[j] + (long)f[j];
	return sum;
}

__attribute__((target("avx512f"), noinline))
static long avx512_sums(const int *mid, const double *dmid, int rounds)
{
	__m512i acc = _mm512_setzero_si512();
	__m512d dacc = _mm512_setzero_pd();
	__m512i qacc = _mm512_setzero_si512();
	__m256i hacc = _mm256_setzero_si256();
	int h[8];
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		int i16[16];
		long long i8[8];

		for (int j = 0; j < 16; j++)
			i16[j] = (int)(next() % N) - N / 2;
		for (int j = 0; j < 8; j++)
			i8[j] = (long long)(next() % N) - N / 2;
		__m512i idx = _mm512_loadu_si512(i16);
		__m512i qidx = _mm512_loadu_si512(i8);
		__mmask16 k = (__mmask16)next();
		__mmask8 k8 = (__mmask8)next();

		acc = _mm512_add_epi32(acc, _mm512_mask_i32gather_epi32(acc, k, idx, mid, 4));
		dacc = _mm512_add_pd(dacc, _mm512_i64gather_pd(qidx, dmid, 8));
		qacc = _mm512_add_epi64(qacc, _mm512_mask_i32gather_epi64(qacc, k8,
					_mm512_castsi512_si256(idx), (const long long *)mid, 4));
		/* qword indices, dword elements (vpgatherqd ymm, zmm index) */
		hacc = _mm256_add_epi32(hacc, _mm512_mask_i64gather_epi32(hacc, (__mmask8)~k8,
									   qidx, mid, 4));
	}
	_mm256_storeu_si256((__m256i *)h, hacc);
	for (int j = 0; j < 8; j++)
		sum += h[j];
	sum += _mm512_reduce_add_epi32(acc) + (long)_mm512_reduce_add_pd(dacc) +
	       _mm512_reduce_add_epi64(qacc);
	return sum;
}

/* Whether the CPU and the kernel (XCR0: the registers' state is saved)
 * give AVX2 (what = 0) or AVX-512F (what = 1); cpuid, as musl links no
 * libgcc __builtin_cpu_supports(). */
static int has(int what)
{
	unsigned int a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6 || (what && (lo & 0xe0) != 0xe0))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return what ? !!(b & bit_AVX512F) : !!(b & bit_AVX2);
}

int main(void)
{
	int *tab = malloc((N + 8) * sizeof(int));
	double *dtab = malloc(N * sizeof(double));
	float *ftab = malloc(N * sizeof(float));

	if (!tab || !dtab || !ftab)
		return 1;
	for (int i = 0; i < N + 8; i++)
		tab[i] = i * 7 - 3;
	for (int i = 0; i < N; i++) {
		dtab[i] = i * 0.5;
		ftab[i] = i * 0.25f;
	}
	if (!has(0)) {
		puts("no avx2");
		return 0;
	}
	printf("gather avx2 %ld\n", avx2_sums(tab + N / 2, dtab + N / 2, ftab + N / 2, 200));
	if (has(1))
		printf("gather avx512 %ld\n", avx512_sums(tab + N / 2, dtab + N / 2, 200));
	free(tab);
	free(dtab);
	free(ftab);
	return 0;
}
