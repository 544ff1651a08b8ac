// SPDX-License-Identifier: MIT
/*
 * vcprof.c - read a value-cache profile (include/aetrace/vcprof.h) into
 * a hash table of places. The profile orders the tests a record's code
 * makes and says which places write plain records: the regenerator reads
 * either from the schema, so a stale one (another build, an edited
 * source) costs speed or bytes, not correctness; places it does not name
 * keep the default.
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
	uint32_t objid, insn, reg, used;	/* (reg: 0-15 after, 16-31 before; insn < 2^27) */
	uint64_t recs, lc_hits, one_byte, bytes;
};

struct ae_vcprof {
	struct place *t;	/* open addressing, size a power of two */
	size_t size, n;
};

static size_t place_hash(uint32_t objid, uint32_t insn, uint32_t reg, size_t size)
{
	uint64_t h = ((uint64_t)objid << 32 | (insn << 5 | reg)) * 0x9e3779b97f4a7c15ull;

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

/* The next field of *p: digits of base 10 or 16 only (no sign, no 0x),
 * a number at most max; then past the spaces after it. Returns 0 or -1. */
static int field(char **p, int base, uint64_t max, uint64_t *out)
{
	size_t n = strcspn(*p, " \t");
	char *end;

	if (!n || strspn(*p, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != n)
		return -1;
	errno = 0;
	*out = strtoull(*p, &end, base);
	if (errno || end != *p + n || *out > max)
		return -1;
	*p = end + strspn(end, " \t");
	return 0;
}

/* x + y, or UINT64_MAX past it (counts of one place that add up past
 * 2^64 saturate: a hint) */
static uint64_t sat_add(uint64_t x, uint64_t y)
{
	return x + y < y ? UINT64_MAX : x + y;
}

/* One place's line into the table. Returns 0 or -1 (not a profile line). */
static int place_line(struct ae_vcprof *p, char *line)
{
	uint64_t objid, insn, reg, recs, lc, one, bytes;
	struct place *x;
	int before;

	line += strspn(line, " \t");
	if (field(&line, 16, UINT32_MAX, &objid) || field(&line, 10, (1u << 27) - 1, &insn) ||
	    (*line != 'a' && *line != 'b') || (line[1] != ' ' && line[1] != '\t'))
		return -1;
	before = *line == 'b';
	line += 1 + strspn(line + 1, " \t");
	if (field(&line, 10, 15, &reg) || field(&line, 10, UINT64_MAX, &recs) ||
	    field(&line, 10, recs, &lc) || field(&line, 10, recs, &one) ||
	    field(&line, 10, UINT64_MAX, &bytes) || *line)
		return -1;
	reg += before ? 16 : 0;
	if (2 * (p->n + 1) > p->size)
		grow(p);
	x = find(p, objid, insn, reg);
	if (!x->used) {
		*x = (struct place){ .objid = objid, .insn = insn, .reg = reg, .used = 1 };
		p->n++;
	}
	x->recs = sat_add(x->recs, recs);
	x->lc_hits = sat_add(x->lc_hits, lc);
	x->one_byte = sat_add(x->one_byte, one);
	x->bytes = sat_add(x->bytes, bytes);
	return 0;
}

int ae_vcprof_load(const char *path, struct ae_vcprof **out)
{
	struct ae_vcprof *p = ae_xmalloc(sizeof(*p));
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;

	memset(p, 0, sizeof(*p));
	grow(p);
	if (!f) {
		fprintf(stderr, "aecc: -fae-vc-profile: %s: %s\n", path, strerror(errno));
		goto err_free_table;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if ((size_t)len != strlen(line)) {
			fprintf(stderr, "aecc: %s:%lu: a NUL byte: not a value-cache profile\n",
				path, lineno);
			goto err_free_line;
		}
		line[strcspn(line, "\r\n")] = 0;
		if (lineno == 1 ? strcmp(line, AE_VCPROF_HEADER) : 0) {
			fprintf(stderr, "aecc: %s:1: not a value-cache profile (the first line must be \"%s\")\n",
				path, AE_VCPROF_HEADER);
			goto err_free_line;
		}
		if (lineno == 1 || line[0] == '#' || !strcmp(line, AE_VCPROF_HEADER))
			continue;
		if (place_line(p, line)) {
			fprintf(stderr, "aecc: %s:%lu: not a profile line (OBJID INSN WHEN REG RECORDS ADDR_HITS ONE_BYTE BYTES: hex, then decimal, WHEN a or b, register 0-15, hits within RECORDS)\n",
				path, lineno);
			goto err_free_line;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "aecc: -fae-vc-profile: %s: %s\n", path, strerror(errno));
		goto err_free_line;
	}
	if (!lineno) {
		fprintf(stderr, "aecc: %s: empty, not a value-cache profile\n", path);
		goto err_free_line;
	}
	free(line);
	fclose(f);
	*out = p;
	return 0;

err_free_line:
	free(line);
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

int ae_vcprof_plain_at(const struct ae_vcprof *p, uint32_t objid, uint32_t insn, int before,
		       uint32_t reg, unsigned int plain)
{
	const struct place *x;

	if (!p)
		return 0;
	x = find(p, objid, insn, reg + (before ? 16 : 0));
	return x->used && ae_vcprof_plain(x->recs, x->bytes, plain);
}

void ae_vcprof_free(struct ae_vcprof *p)
{
	if (!p)
		return;
	free(p->t);
	free(p);
}
