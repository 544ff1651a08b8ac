// SPDX-License-Identifier: MIT
/*
 * instrument.c - abstract-execution instrumentation of one assembly file
 * (paper section 2.2; docs/ARCHITECTURE.md "The instrumenter").
 *
 * 1. The uninstrumented source gets a local label before every instruction
 *    and an .ae_imap table of those labels; it is assembled into the twin
 *    object (emit.c). The twin's relocations give every instruction's
 *    place (scan.c), and capstone decodes it (decode.c): the CFG (cfg.c)
 *    comes from machine code, not from text.
 * 2. Witness placement on the instruction-level CFG (place.c).
 * 3. The schema events (events.c, schema_write.c) and the instrumented
 *    source with the witness sequences, value records, the sequence table
 *    __ae_seqtab, the schema and the embedded twin (emit.c).
 * Steps 1 and 2 and the events are ae_analyze(), which the instrumenter's
 * unit tests (tests/unit/) call on hand-written assembly.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "data.h"
#include "decode.h"
#include "emit.h"
#include "events.h"
#include "instrument.h"
#include "memfn.h"
#include "ir.h"
#include "place.h"
#include "run.h"
#include "scan.h"
#include "xalloc.h"

int ae_err(const struct ae_ctx *c, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aecc: %s", c->src);
	if (line > 0)
		fprintf(stderr, ":%d", line);
	fprintf(stderr, ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static uint32_t fnv1a(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

/* The whole file at `path`, NUL-terminated. Returns it, or NULL with errno. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			buf = ae_xrealloc(buf, cap);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		free(buf);
		errno = e ? e : EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* dst = dir/name. Returns 0, or -1 after one line when it does not fit. */
static int scratch_path(struct ae_ctx *c, char *dst, size_t len,
			const char *dir, const char *name)
{
	if ((size_t)snprintf(dst, len, "%s/%s", dir, name) >= len)
		return ae_err(c, 0, "scratch directory name too long: %s", dir);
	return 0;
}

static int assemble(struct ae_ctx *c, const struct ae_instr_opts *o,
		    const char *out, const char *in)
{
	char *argv[] = { (char *)(o->as ? o->as : "as"), "--64", "-o",
			 (char *)out, (char *)in, NULL };

	return ae_run(argv, o->verbose);
}

int ae_analyze(struct ae_ctx *c, const char *src_s, const struct ae_instr_opts *o)
{
	char orig_s[PATH_MAX], orig_o[PATH_MAX];
	struct ae_scan sc = { .fd = -1 };
	size_t len;
	char *buf;
	int ret = -1;

	memset(c, 0, sizeof(*c));
	c->src = src_s;
	c->data = o->data;
	c->no_memfn = o->no_memfn;
	c->memfn_lib = o->memfn_lib;
	/* code that runs before TLS exists (musl's start-up) is built with
	 * -fno-ae-vcache (instrument/musl/build-musl.sh) */
	c->vcache = o->data && !o->no_vcache;
	c->vcprof = o->vcprof;
	buf = read_file(src_s, &len);
	if (!buf)
		return ae_err(c, 0, "cannot read: %s", strerror(errno));
	if (ae_asm_parse(&c->a, src_s, buf, len)) {
		free(buf);
		return ae_err(c, 0, "cannot parse: out of memory");
	}
	c->objid = fnv1a(buf, len, 2166136261u);
	free(buf);
	if (scratch_path(c, orig_s, sizeof(orig_s), o->tmpdir, "orig.s") ||
	    scratch_path(c, orig_o, sizeof(orig_o), o->tmpdir, "orig.o"))
		return -1;

	/* 1. the twin, and what its machine code does */
	if (ae_write_twin_asm(c, orig_s))
		return -1;
	if (assemble(c, o, orig_o, orig_s))
		return ae_err(c, 0, "assembling the uninstrumented twin failed");
	if (ae_scan_twin(c, orig_o, &sc) || ae_decode(c, &sc))
		goto out;

	/* 2. the graph and the witnesses */
	ae_build_graph(c);
	ae_link_table_loads(c);
	ae_memfn_plan(c);
	if (c->data && ae_data_plan(c, &sc))
		goto out;
	if (ae_place(c))
		goto out;

	/* 3. the events */
	ae_make_events(c);
	ae_sort_events(c);
	ret = 0;
out:
	ae_scan_close(&sc);
	return ret;
}

void ae_ctx_free(struct ae_ctx *c)
{
	free(c->in);
	free(c->by_place);
	free(c->e);
	free(c->comp);
	free(c->compn);
	free(c->compw);
	free(c->ev);
	free(c->pool);
	ae_asm_free(&c->a);
	memset(c, 0, sizeof(*c));
}

int ae_instrument_file(const char *src_s, const char *out_o,
		       const struct ae_instr_opts *o)
{
	struct ae_ctx c;
	char orig_o[PATH_MAX], inst_s[PATH_MAX], schema_bin[PATH_MAX];
	int ret = -1;

	if (ae_analyze(&c, src_s, o))
		goto out;
	/* the twin object ae_analyze() assembled is embedded */
	if (scratch_path(&c, orig_o, sizeof(orig_o), o->tmpdir, "orig.o") ||
	    scratch_path(&c, inst_s, sizeof(inst_s), o->tmpdir, "inst.s") ||
	    scratch_path(&c, schema_bin, sizeof(schema_bin), o->tmpdir, "schema.bin"))
		goto out;
	if (ae_write_schema(&c, schema_bin) ||
	    ae_write_instrumented_asm(&c, inst_s, orig_o, schema_bin))
		goto out;
	if (assemble(&c, o, out_o, inst_s)) {
		ae_err(&c, 0, "assembling the instrumented file failed (kept in %s)", inst_s);
		goto out;
	}
	ret = 0;
out:
	ae_ctx_free(&c);
	return ret;
}
