// SPDX-License-Identifier: MIT
/*
 * vcprof.c - read a value-cache profile (include/aetrace/vcprof.h) into
 * a hash table of places. The profile only orders the tests a record's
 * code makes, never what it writes, so a stale one (another build, an
 * edited source) costs speed, not correctness: places it does not name
 * keep the default order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/vcprof.h>

#include "vcprof.h"
#include "xalloc.h"

struct place {
	uint32_t objid, insn, reg, used;
	uint64_t lc_hits, one_byte;
};

struct ae_vcprof {
	struct place *t;	/* open addressing, size a power of two */
	size_t size, n;
};

static size_t place_hash(uint32_t objid, uint32_t insn, uint32_t reg, size_t size)
{
	uint64_t h = ((uint64_t)objid << 32 | (insn << 4 | reg)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (size - 1);
}

static struct place *find(const struct ae_vcprof *p, uint32_t objid, uint32_t insn, uint32_t reg)
{
	for (size_t i = place_hash(objid, insn, reg, p->size);; i = (i + 1) & (p->size - 1)) {
		struct place *x = &p->t[i];

		if (!x->used || (x->objid == objid && x->insn == insn && x->reg == reg))
			return x;
	}
}

static void grow(struct ae_vcprof *p)
{
	struct place *old = p->t;
	size_t n = p->size;

	p->size = n ? n * 2 : 1024;
	p->t = ae_xmalloc(p->size * sizeof(*p->t));
	memset(p->t, 0, p->size * sizeof(*p->t));
	for (size_t i = 0; i < n; i++)
		if (old[i].used)
			*find(p, old[i].objid, old[i].insn, old[i].reg) = old[i];
	free(old);
}

int ae_vcprof_load(const char *path, struct ae_vcprof **out)
{
	struct ae_vcprof *p = ae_xmalloc(sizeof(*p));
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned long lineno = 0;
	int header = 0;

	memset(p, 0, sizeof(*p));
	grow(p);
	if (!f) {
		fprintf(stderr, "aecc: -fae-vc-profile: %s: %s\n", path, strerror(errno));
		goto err_free_table;
	}
	while (fgets(line, sizeof(line), f)) {
		uint32_t objid, insn, reg;
		uint64_t recs, lc, one;
		struct place *x;
		char end;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "aecc: %s:%lu: line too long\n", path, lineno);
			goto err_close;
		}
		if (line[0] == '#' || !strcmp(line, AE_VCPROF_HEADER "\n") ||
		    !strcmp(line, AE_VCPROF_HEADER)) {
			header = 1;
			continue;
		}
		if (!header) {
			fprintf(stderr, "aecc: %s:%lu: not a value-cache profile (no \"%s\" line first)\n",
				path, lineno, AE_VCPROF_HEADER);
			goto err_close;
		}
		if (sscanf(line, "%8" SCNx32 " %" SCNu32 " %" SCNu32 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %c", &objid, &insn, &reg, &recs, &lc, &one, &end) != 6 ||
		    reg > 15 || insn >= 1u << 28 || lc > recs || one > recs || lc + one > recs) {
			fprintf(stderr, "aecc: %s:%lu: not a profile line (OBJID INSN REG RECORDS ADDR_HITS ONE_BYTE, counts within RECORDS)\n",
				path, lineno);
			goto err_close;
		}
		if (2 * (p->n + 1) > p->size)
			grow(p);
		x = find(p, objid, insn, reg);
		if (!x->used) {
			*x = (struct place){ .objid = objid, .insn = insn, .reg = reg, .used = 1 };
			p->n++;
		}
		if (x->lc_hits + lc < lc || x->one_byte + one < one) {
			fprintf(stderr, "aecc: %s:%lu: counts overflow\n", path, lineno);
			goto err_close;
		}
		x->lc_hits += lc;
		x->one_byte += one;
	}
	if (ferror(f)) {
		fprintf(stderr, "aecc: -fae-vc-profile: %s: %s\n", path, strerror(errno));
		goto err_close;
	}
	if (!header) {
		fprintf(stderr, "aecc: %s: empty, not a value-cache profile\n", path);
		goto err_close;
	}
	fclose(f);
	*out = p;
	return 0;

err_close:
	fclose(f);
err_free_table:
	ae_vcprof_free(p);
	return -1;
}

int ae_vcprof_lookup(const struct ae_vcprof *p, uint32_t objid, uint32_t insn, uint32_t reg)
{
	const struct place *x;

	if (!p)
		return 0;
	x = find(p, objid, insn, reg);
	return x->used && ae_vcprof_addr_first(x->lc_hits, x->one_byte);
}

void ae_vcprof_free(struct ae_vcprof *p)
{
	if (!p)
		return;
	free(p->t);
	free(p);
}
