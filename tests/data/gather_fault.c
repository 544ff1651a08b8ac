/* A gather that faults on its first element, whose SIGSEGV handler makes
 * the page readable and runs a gather of its own before the interrupted
 * one restarts: the regeneration must give the interrupted gather its own
 * index and mask, not the handler's (the trace holds both records, the
 * handler's last). With "span", the gather's first four elements are on a
 * readable page and the fault comes at the fifth, on the next: the CPU
 * loads some before it faults and restarts with the rest, which the trace
 * does not say (aetrace-errors: refused). Prints "no avx2" where the CPU
 * lacks AVX2. */
#include <cpuid.h>
#include <immintrin.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int *page;	/* the page the handler makes readable */
static int other[4096];
static volatile int hidx[8] = { 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700 };
static volatile int midx[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static volatile long hsum;

__attribute__((target("avx2"), noinline))
static void on_segv(int sig)
{
	__m256i idx = _mm256_setr_epi32(hidx[0], hidx[1], hidx[2], hidx[3],
					hidx[4], hidx[5], hidx[6], hidx[7]);

	(void)sig;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
	hsum += _mm256_extract_epi32(_mm256_i32gather_epi32(other, idx, 4), 0);
}

__attribute__((target("avx2"), noinline))
static int gather_page(const int *base)
{
	__m256i idx = _mm256_setr_epi32(midx[0], midx[1], midx[2], midx[3],
					midx[4], midx[5], midx[6], midx[7]);

	return _mm256_extract_epi32(_mm256_i32gather_epi32(base, idx, 4), 3);
}

int main(int argc, char **argv)
{
	int span = argc > 1 && !strcmp(argv[1], "span");
	struct sigaction sa;
	unsigned int a, b, c, d;
	int *base;
	int v;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2)) {
		puts("no avx2");
		return 0;
	}
	for (int i = 0; i < 4096; i++)
		other[i] = i;
	base = mmap(0, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	page = span ? base + 1024 : base;
	if (mprotect(page, 4096, PROT_NONE))
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, 0);
	v = gather_page(span ? page - 4 : page);
	printf("gather_fault %d %ld\n", v, hsum);
	return 0;
}
