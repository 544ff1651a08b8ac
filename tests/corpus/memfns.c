/* Covers: the library routines data tracing expands from their arguments
 * (memcpy, memmove, memset, strlen, stpcpy under strcpy, memchr under
 * strnlen, memcmp, strcmp, strncmp; issue 12 item 3) at many sizes and
 * alignments: 0, 1, 7, 8, 15, 16, 4095 bytes, unaligned source and
 * destination, overlapping memmove in both directions, strings that end
 * right before an inaccessible page, a zeroing memset followed by strlen
 * on the same bytes, memchr found and not found, for the byte 0, 1 and
 * others; compares that stop at every place of a run, on a terminator of
 * either string or both, at the bound, with bytes that differ in sign
 * (0x80 and more), of overlapping and identical areas and of a literal.
 * Called through volatile pointers so that GCC neither inlines nor drops
 * them. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void *(*volatile p_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile p_memmove)(void *, const void *, size_t) = memmove;
static void *(*volatile p_memset)(void *, int, size_t) = memset;
static size_t (*volatile p_strlen)(const char *) = strlen;
static char *(*volatile p_strcpy)(char *, const char *) = strcpy;
static char *(*volatile p_stpcpy)(char *, const char *) = stpcpy;
static void *(*volatile p_memchr)(const void *, int, size_t) = memchr;
static size_t (*volatile p_strnlen)(const char *, size_t) = strnlen;
static int (*volatile p_memcmp)(const void *, const void *, size_t) = memcmp;
static int (*volatile p_strcmp)(const char *, const char *) = strcmp;
static int (*volatile p_strncmp)(const char *, const char *, size_t) = strncmp;

static unsigned char src[8192 + 64], dst[8192 + 64];
static const size_t sizes[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100 };
static const int offs[] = { 0, 1, 3, 4, 7 };

static unsigned sum(const unsigned char *p, size_t n)
{
	unsigned h = 0;

	for (size_t i = 0; i < n; i++)
		h = h * 31 + p[i];
	return h;
}

int main(void)
{
	const int nsz = sizeof(sizes) / sizeof(sizes[0]), nof = sizeof(offs) / sizeof(offs[0]);
	unsigned h = 0;
	char *pages;

	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	/* memcpy: every size at every source and destination alignment */
	for (int s = 0; s < nsz; s++)
		for (int a = 0; a < nof; a++)
			for (int b = 0; b < nof; b += 2) {
				p_memcpy(dst + offs[b], src + offs[a], sizes[s]);
				h = h * 3 + dst[offs[b] + sizes[s] / 2];
			}
	/* one page less a byte, aligned and not */
	for (int a = 0; a < 3; a++) {
		p_memcpy(dst + a, src + 2 * a, 4095);
		h = h * 3 + sum(dst, 64);
	}
	/* memset: sizes and alignments, zero and nonzero bytes */
	for (int s = 0; s < nsz; s++)
		for (int a = 0; a < nof; a++) {
			p_memset(dst + offs[a], s & 1 ? 0 : 0x5a + s, sizes[s]);
			h = h * 3 + dst[offs[a]];
		}
	p_memset(dst + 3, 0x11, 4095);
	p_memset(dst, 0, 4096);
	/* memmove: overlapping both ways, aligned (word loop) and not */
	{
		static const int shifts[] = { -9, -8, -1, 1, 8, 9 };

		for (int s = 0; s < nsz; s++)
			for (int k = 0; k < 6; k++) {
				p_memcpy(dst, src, 256);
				p_memmove(dst + 64 + shifts[k], dst + 64, sizes[s]);
				h = h * 3 + sum(dst + 48, 32);
			}
		for (int k = 0; k < 6; k++) {
			p_memmove(dst + 64 + shifts[k], dst + 64, k == 1 || k == 4 ? 4095 : 700);
			h = h * 3 + dst[100];
		}
		/* disjoint (memmove calls memcpy) and identical */
		p_memmove(dst, src + 4096, 300);
		p_memmove(dst, dst, 300);
		h = h * 3 + sum(dst, 300);
	}
	/* strlen: lengths 0..17 at every alignment of the start */
	for (int a = 0; a < 8; a++)
		for (int n = 0; n < 18; n++) {
			p_memset(dst + a, 'x', n);
			dst[a + n] = 0;
			h = h * 3 + p_strlen((char *)dst + a);
		}
	/* after a zeroing memset of the same bytes */
	p_memset(dst, 0, 64);
	p_memset(dst, 'y', 40);
	h = h * 3 + p_strlen((char *)dst);
	h = h * 3 + p_strlen("a literal in read-only data");
	/* strings whose terminator is the last byte before a PROT_NONE page */
	pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || mprotect(pages + 2 * 4096, 4096, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	{
		static const int lens[] = { 0, 1, 7, 8, 9, 15, 16, 4095 };

		for (int i = 0; i < 8; i++) {
			char *end = pages + 2 * 4096 - 1;

			p_memset(end - lens[i], 'z', lens[i]);
			*end = 0;
			h = h * 3 + p_strlen(end - lens[i]);
		}
	}
	/* strcpy and stpcpy: lengths 0..17, source and destination at the
	 * same alignment (word loop) and not */
	for (int a = 0; a < 4; a++)
		for (int n = 0; n < 18; n += a + 1) {
			p_memset(src + a, 'q', n);
			src[a + n] = 0;
			h = h * 3 + (unsigned)(p_stpcpy((char *)dst + (a & 1 ? a : 8 + a), (char *)src + a) - (char *)dst);
			p_strcpy((char *)dst + 5, (char *)src + a);
			h = h * 3 + dst[5 + n / 2];
		}
	/* memchr: found at every place of a short run, not found, 0 and 1 */
	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i % 251 + 2);
	for (int a = 0; a < 8; a += 3)
		for (int n = 0; n < 20; n++) {
			unsigned char *p;

			src[a + n] = 1;
			p = p_memchr(src + a, 1, 20);
			h = h * 3 + (p ? (unsigned)(p - src) : 999);
			src[a + n] = 0;
			h = h * 3 + (unsigned)p_strnlen((char *)src + a, 20);
			src[a + n] = (unsigned char)((a + n) % 251 + 2);
			h = h * 3 + (p_memchr(src + a, 1, n) ? 1 : 0);
		}
	h = h * 3 + (p_memchr(src + 1, 200, 4095) ? 1 : 0);
	h = h * 3 + (unsigned)p_strnlen("literal", 4);
	{
		char *end = pages + 2 * 4096 - 1;

		p_memset(end - 30, 'w', 31);
		h = h * 3 + (unsigned)p_strnlen(end - 30, 31);
		h = h * 3 + (p_memchr(end - 30, 'v', 31) ? 1 : 0);
		p_memset(dst, 'p', 4096);
		dst[4096] = 0;
		h = h * 3 + (unsigned)(p_stpcpy(end - 4096, (char *)dst) - end);
	}
	/* compares: equal runs of 0..19 bytes, then a difference (of
	 * either sign, 0x80 and more), a terminator of either or both; the
	 * bound before, at and after the stop */
	for (int a = 0; a < 3; a++)
		for (int n = 0; n < 20; n++) {
			static const unsigned char diffs[][2] = {
				{ 'a', 'b' }, { 'b', 'a' }, { 0, 'a' }, { 'a', 0 }, { 0, 0 },
				{ 0x80, 1 }, { 1, 0xff },
			};

			for (int d = 0; d < 7; d++) {
				p_memset(src + a, 'k', n);
				p_memset(dst + 2 * a, 'k', n);
				src[a + n] = diffs[d][0];
				dst[2 * a + n] = diffs[d][1];
				src[a + n + 1] = dst[2 * a + n + 1] = 0;
				h = h * 3 + (unsigned)p_strcmp((char *)src + a, (char *)dst + 2 * a);
				for (int b = n > 1 ? n - 1 : 0; b <= n + 2; b++) {
					h = h * 3 + (unsigned)p_memcmp(src + a, dst + 2 * a, b);
					h = h * 3 + (unsigned)p_strncmp((char *)src + a, (char *)dst + 2 * a, b);
				}
			}
		}
	/* longer runs, identical and overlapping areas, a literal */
	p_memset(src, 'r', 5000);
	p_memset(dst, 'r', 5000);
	src[4999] = dst[4999] = 0;
	h = h * 3 + (unsigned)p_memcmp(src, dst, 5000);
	h = h * 3 + (unsigned)p_strcmp((char *)src, (char *)dst);
	dst[3000] = 's';
	h = h * 3 + (unsigned)p_strncmp((char *)src, (char *)dst, 4000);
	h = h * 3 + (unsigned)p_memcmp(src, src, 300);
	h = h * 3 + (unsigned)p_strcmp((char *)src + 7, (char *)src + 7);
	for (int i = 0; i < 64; i++)
		src[i] = (unsigned char)(i < 20 ? 'o' : 'p');
	src[64] = 0;
	h = h * 3 + (unsigned)p_memcmp(src, src + 1, 40);
	h = h * 3 + (unsigned)p_strcmp((char *)src + 1, (char *)src);
	h = h * 3 + (unsigned)p_strncmp((char *)src, (char *)src + 3, 30);
	h = h * 3 + (unsigned)p_strcmp("a literal", (char *)src);
	h = h * 3 + (unsigned)p_strcmp("a literal", "a literal");
	{
		/* strings that end right before the inaccessible page */
		char *end = pages + 2 * 4096 - 1;

		p_memset(end - 20, 'u', 20);
		*end = 0;
		p_memset(dst, 'u', 20);
		dst[20] = 0;
		h = h * 3 + (unsigned)p_strcmp(end - 20, (char *)dst);
		h = h * 3 + (unsigned)p_strncmp((char *)dst, end - 20, 100);
		h = h * 3 + (unsigned)p_memcmp(end - 20, dst, 21);
	}
	printf("memfns %u\n", h);
	return 0;
}
