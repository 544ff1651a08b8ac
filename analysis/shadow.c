// SPDX-License-Identifier: MIT
/*
 * shadow.c - known stack bytes, per 8-byte word: the word's value and
 * which of its bytes are known. Words are never removed (a stack is
 * bounded); forgetting clears their bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "shadow.h"

struct ae_shadow_word {
	uint64_t key;		/* address / 8 + 1; 0: free */
	uint64_t v;
	uint8_t known;		/* bit i: byte i of v is memory's */
};

static uint64_t hash(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> 17;
}

static struct ae_shadow_word *find(const struct ae_shadow *sh, uint64_t key)
{
	if (!sh->w || key < sh->lo || key > sh->hi)
		return NULL;
	for (uint64_t i = hash(key) & sh->mask;; i = (i + 1) & sh->mask) {
		if (sh->w[i].key == key)
			return &sh->w[i];
		if (!sh->w[i].key)
			return NULL;
	}
}

static int grow(struct ae_shadow *sh)
{
	uint64_t n = sh->w ? 2 * (sh->mask + 1) : 1024;
	struct ae_shadow_word *w = calloc(n, sizeof(*w));

	if (!w)
		return -1;
	for (uint64_t j = 0; sh->w && j <= sh->mask; j++) {
		uint64_t i;

		if (!sh->w[j].key)
			continue;
		for (i = hash(sh->w[j].key) & (n - 1); w[i].key; i = (i + 1) & (n - 1))
			;
		w[i] = sh->w[j];
	}
	free(sh->w);
	sh->w = w;
	sh->mask = n - 1;
	return 0;
}

static struct ae_shadow_word *enter(struct ae_shadow *sh, uint64_t key)
{
	struct ae_shadow_word *f = find(sh, key);
	uint64_t i;

	if (f)
		return f;
	if ((!sh->w || 2 * (sh->used + 1) > sh->mask + 1) && grow(sh))
		return NULL;
	for (i = hash(key) & sh->mask; sh->w[i].key; i = (i + 1) & sh->mask)
		;
	sh->w[i].key = key;
	sh->used++;
	if (sh->used == 1 || key < sh->lo)
		sh->lo = key;
	if (sh->used == 1 || key > sh->hi)
		sh->hi = key;
	return &sh->w[i];
}

int ae_shadow_store(struct ae_shadow *sh, uint64_t addr, unsigned int size,
		    int known, int keep, uint64_t v)
{
	if (size > 8)
		known = 0;
	for (unsigned int done = 0; done < size;) {
		uint64_t a = addr + done, key = a / 8 + 1;
		unsigned int b = a % 8, n = size - done < 8 - b ? size - done : 8 - b;
		uint8_t bits = (uint8_t)(((1u << n) - 1) << b);
		struct ae_shadow_word *w = known && keep ? enter(sh, key) : find(sh, key);

		if (known && keep && !w)
			return -1;
		if (w && known) {
			uint64_t m = (n == 8 ? ~0ull : (1ull << (8 * n)) - 1) << (8 * b);

			w->v = (w->v & ~m) | ((v >> (8 * done)) << (8 * b) & m);
			w->known |= bits;
		} else if (w) {
			w->known &= (uint8_t)~bits;
		}
		done += n;
	}
	return 0;
}

int ae_shadow_load(const struct ae_shadow *sh, uint64_t addr, unsigned int size, uint64_t *v)
{
	uint64_t r = 0;

	if (size > 8)
		return 0;
	for (unsigned int done = 0; done < size;) {
		uint64_t a = addr + done;
		unsigned int b = a % 8, n = size - done < 8 - b ? size - done : 8 - b;
		uint8_t bits = (uint8_t)(((1u << n) - 1) << b);
		const struct ae_shadow_word *w = find(sh, a / 8 + 1);
		uint64_t m = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;

		if (!w || (w->known & bits) != bits)
			return 0;
		r |= ((w->v >> (8 * b)) & m) << (8 * done);
		done += n;
	}
	*v = r;
	return 1;
}

int ae_shadow_copy(struct ae_shadow *dst, const struct ae_shadow *src)
{
	*dst = *src;
	if (!src->w)
		return 0;
	dst->w = malloc((src->mask + 1) * sizeof(*dst->w));
	if (!dst->w) {
		memset(dst, 0, sizeof(*dst));
		return -1;
	}
	memcpy(dst->w, src->w, (src->mask + 1) * sizeof(*dst->w));
	return 0;
}

void ae_shadow_free(struct ae_shadow *sh)
{
	free(sh->w);
	memset(sh, 0, sizeof(*sh));
}
