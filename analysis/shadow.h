/* SPDX-License-Identifier: MIT */
/*
 * shadow.h - the stack bytes the regenerator knows (data tracing): what
 * known values the regenerated stores wrote at %rsp-based addresses,
 * forgotten where a later store of an unknown value lands, so that a
 * reload of a spilled register is known without a record (aecc relies on
 * it only for frames whose address never escapes: see data.c).
 */
#ifndef AE_SHADOW_H
#define AE_SHADOW_H

#include <stdint.h>

struct ae_shadow_word;

struct ae_shadow {
	struct ae_shadow_word *w;	/* open addressing, by address / 8 */
	uint64_t mask;			/* slots - 1; no table while w is NULL */
	uint64_t used;
	uint64_t lo, hi;		/* words ever entered: [lo, hi] */
};

/*
 * Note a store of size bytes at addr: when known, of value v (size at
 * most 8, little-endian), which `keep` lets enter the table; otherwise
 * the bytes are forgotten. Returns 0, or -1 when out of memory.
 */
int ae_shadow_store(struct ae_shadow *sh, uint64_t addr, unsigned int size,
		    int known, int keep, uint64_t v);

/* The size (at most 8) bytes at addr into *v. Returns 1 when all are
 * known, else 0. */
int ae_shadow_load(const struct ae_shadow *sh, uint64_t addr, unsigned int size, uint64_t *v);

/* dst = a copy of src (a forked child's stack). Returns 0, or -1 when out
 * of memory. */
int ae_shadow_copy(struct ae_shadow *dst, const struct ae_shadow *src);

/* Free what sh holds; it is empty again. Returns nothing. */
void ae_shadow_free(struct ae_shadow *sh);

#endif
