// SPDX-License-Identifier: MIT
/*
 * aerun_check.c - verify an aerun trace of the test producers
 * (tests/host/producers): every witness byte present exactly once and in
 * order across all sub-buffers, signal markers delimiting exactly the
 * handlers' bytes, chunk bookkeeping (seq numbers, END totals, EXIT).
 *
 * usage: aerun_check [--blocks N] [--min-blocks N] [--min-signals N]
 *                    [--status N] trace.zst
 * Prints one "blocks=... signals=... bytes=..." line; exit 0 if the trace
 * is intact, 1 (with the first problem on stderr) if not, 2 on usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/trbuf.h>
#include <aetrace/container.h>
#include <aetrace/regrec.h>
#include "producers/prod.h"

struct trace {
	uint8_t *data;
	size_t len, cap;
	uint64_t *prefix;	/* prefix[seq] = stream offset of sub-buffer seq */
	uint64_t nr_data;
	struct trbuf_marker *mk;
	size_t nr_mk;
	int have_session, have_exit, have_end;
	struct ae_exit exit;
	struct ae_end end;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "aerun_check: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return 1;
}

static int load(struct trace *t, const char *path)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *p;
	int ret;

	ret = ae_reader_open(&r, path);
	if (ret)
		return fail("%s: %s", path, strerror(-ret));
	while ((ret = ae_reader_next(r, &h, &p)) == 1) {
		switch (h.type) {
		case AE_CHUNK_SESSION: {
			const struct ae_session *s = p;

			if (h.len < sizeof(*s) || s->mode != AE_MODE_STANDALONE || !s->nr_cpus)
				return fail("%s: bad session chunk", path);
			t->have_session = 1;
			break;
		}
		case AE_CHUNK_DATA:
			if (!t->have_session)
				return fail("%s: DATA before SESSION", path);
			if (h.cpu != 0 || h.seq != t->nr_data)
				return fail("%s: DATA chunk cpu %u seq %llu, expected seq %llu",
					    path, h.cpu, (unsigned long long)h.seq,
					    (unsigned long long)t->nr_data);
			t->prefix = realloc(t->prefix, (t->nr_data + 2) * sizeof(*t->prefix));
			t->prefix[t->nr_data++] = t->len;
			if (t->len + h.len > t->cap) {
				t->cap = 2 * (t->len + h.len);
				t->data = realloc(t->data, t->cap);
			}
			memcpy(t->data + t->len, p, h.len);
			t->len += h.len;
			t->prefix[t->nr_data] = t->len;
			break;
		case AE_CHUNK_MARKERS: {
			size_t n = h.len / sizeof(struct trbuf_marker);

			if (h.len % sizeof(struct trbuf_marker))
				return fail("%s: MARKERS chunk of %u bytes", path, h.len);
			t->mk = realloc(t->mk, (t->nr_mk + n) * sizeof(*t->mk));
			memcpy(t->mk + t->nr_mk, p, h.len);
			t->nr_mk += n;
			break;
		}
		case AE_CHUNK_EXIT:
			memcpy(&t->exit, p, sizeof(t->exit));
			t->have_exit = 1;
			break;
		case AE_CHUNK_END:
			memcpy(&t->end, p, sizeof(t->end));
			t->have_end = 1;
			break;
		}
	}
	if (ret < 0)
		return fail("%s", ae_reader_error(r));
	ae_reader_close(r);
	if (!t->have_end || !t->have_exit)
		return fail("%s: no %s chunk", path, t->have_end ? "EXIT" : "END");
	if (t->end.raw_bytes != t->len || t->end.data_chunks != t->nr_data ||
	    t->end.markers != t->nr_mk)
		return fail("%s: END says %llu bytes/%llu chunks/%llu markers, found %zu/%llu/%zu",
			    path, (unsigned long long)t->end.raw_bytes,
			    (unsigned long long)t->end.data_chunks,
			    (unsigned long long)t->end.markers, t->len,
			    (unsigned long long)t->nr_data, t->nr_mk);
	return 0;
}

static int marker_pos(const struct trace *t, const struct trbuf_marker *m, uint64_t *pos)
{
	if (m->seq > t->nr_data)
		return fail("marker type %u: seq %llu beyond %llu sub-buffers", m->type,
			    (unsigned long long)m->seq, (unsigned long long)t->nr_data);
	*pos = (m->seq < t->nr_data ? t->prefix[m->seq] : t->len) + m->offset;
	if (*pos > t->len || (m->seq < t->nr_data && *pos > t->prefix[m->seq + 1]))
		return fail("marker type %u: offset %u beyond its sub-buffer %llu", m->type,
			    m->offset, (unsigned long long)m->seq);
	return 0;
}

static int handler_bytes_ok(const uint8_t *p)
{
	uint64_t magic = PROD_HANDLER_MAGIC;

	if (memcmp(p, &magic, 8))
		return 0;
	for (int k = 0; k < PROD_HANDLER_NTAIL; k++)
		if (p[8 + k] != PROD_HANDLER_TAIL0 + k)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "blocks", required_argument, NULL, 'b' },
		{ "min-blocks", required_argument, NULL, 'm' },
		{ "min-signals", required_argument, NULL, 's' },
		{ "status", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	long blocks = -1, min_blocks = 0, min_signals = 0, status = -1;
	struct trace t = { 0 };
	uint64_t last = 0, sig_pos = 0, nsig = 0, main_len = 0, nblocks;
	uint8_t *main_stream;
	int c, in_handler = 0;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'b': blocks = atol(optarg); break;
		case 'm': min_blocks = atol(optarg); break;
		case 's': min_signals = atol(optarg); break;
		case 'x': status = atol(optarg); break;
		default: return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: aerun_check [--blocks N] [--min-blocks N] [--min-signals N] [--status N] trace.zst\n");
		return 2;
	}
	if (load(&t, argv[optind]))
		return 1;

	/* The runtime's registration record comes first (regrec.h). */
	if (t.len >= sizeof(struct ae_reg_record) && !memcmp(t.data, &(uint64_t){ AE_REG_MAGIC }, 8)) {
		const struct ae_reg_record *rec = (const void *)t.data;

		if (rec->len < sizeof(*rec) || rec->len % 8 || rec->len > t.len)
			return fail("registration record of bad length %u", rec->len);
		last = rec->len;
	}
	/* Cut the handlers' bytes out, checking them on the way. */
	main_stream = malloc(t.len + 1);
	for (size_t i = 0; i < t.nr_mk; i++) {
		const struct trbuf_marker *m = &t.mk[i];
		uint64_t pos = 0;

		if (marker_pos(&t, m, &pos))
			return 1;
		if (m->type == TRBUF_MK_START)
			continue;
		if (pos < last)
			return fail("marker %zu (type %u) at stream offset %llu goes back from %llu",
				    i, m->type, (unsigned long long)pos, (unsigned long long)last);
		if (m->type == TRBUF_MK_SIGNAL) {
			if (in_handler)
				return fail("nested SIGNAL marker %zu at %llu", i,
					    (unsigned long long)pos);
			if (m->arg2 != PROD_SIGNAL || !m->arg)
				return fail("SIGNAL marker %zu: signal %u handler %#llx", i,
					    m->arg2, (unsigned long long)m->arg);
			memcpy(main_stream + main_len, t.data + last, pos - last);
			main_len += pos - last;
			sig_pos = pos;
			in_handler = 1;
		} else if (m->type == TRBUF_MK_SIGRETURN) {
			if (!in_handler)
				return fail("SIGRETURN marker %zu at %llu without SIGNAL", i,
					    (unsigned long long)pos);
			/* the handler changes nothing in its frame, and
			 * aerun compared it (its registers at delivery) */
			if (!(m->flags & TRBUF_MKF_CTX_CHECKED) || !(m->flags & TRBUF_MKF_CTX_FULL) ||
			    m->arg)
				return fail("SIGRETURN marker %zu: flags %#x, changed %#llx (expected checked, nothing)",
					    i, m->flags, (unsigned long long)m->arg);
			if (pos - sig_pos != PROD_HANDLER_LEN ||
			    !handler_bytes_ok(t.data + sig_pos))
				return fail("handler %llu: bytes [%llu, %llu) are not exactly the handler pattern",
					    (unsigned long long)nsig, (unsigned long long)sig_pos,
					    (unsigned long long)pos);
			nsig++;
			in_handler = 0;
		} else {
			continue;
		}
		last = pos;
	}
	if (in_handler)
		return fail("SIGNAL marker at %llu without SIGRETURN", (unsigned long long)sig_pos);
	memcpy(main_stream + main_len, t.data + last, t.len - last);
	main_len += t.len - last;

	/* The rest is blocks 0, 1, 2, ... with nothing lost or repeated. */
	if (main_len % PROD_BLOCK_LEN)
		return fail("main stream of %llu bytes is not whole blocks",
			    (unsigned long long)main_len);
	nblocks = main_len / PROD_BLOCK_LEN;
	for (uint64_t b = 0; b < nblocks; b++) {
		const uint8_t *p = main_stream + b * PROD_BLOCK_LEN;
		uint64_t v = b ^ PROD_ITER_TAG;

		if (memcmp(p, &v, 8))
			return fail("main stream block %llu: bad block header", (unsigned long long)b);
		for (int j = 0; j < PROD_NBYTES; j++)
			if (p[8 + j] != PROD_BYTE(j))
				return fail("main stream block %llu byte %d: %#x, expected %#x",
					    (unsigned long long)b, j, p[8 + j], PROD_BYTE(j));
	}
	printf("blocks=%llu signals=%llu bytes=%zu subbufs=%llu markers=%zu\n",
	       (unsigned long long)nblocks, (unsigned long long)nsig, t.len,
	       (unsigned long long)t.nr_data, t.nr_mk);
	if (blocks >= 0 && nblocks != (uint64_t)blocks)
		return fail("%llu blocks, expected %ld", (unsigned long long)nblocks, blocks);
	if (nblocks < (uint64_t)min_blocks)
		return fail("%llu blocks, expected at least %ld", (unsigned long long)nblocks, min_blocks);
	if (nsig < (uint64_t)min_signals)
		return fail("%llu handled signals, expected at least %ld",
			    (unsigned long long)nsig, min_signals);
	if (status >= 0 && t.exit.status != status)
		return fail("EXIT chunk has wait status %#x, expected %#lx", t.exit.status, status);
	return 0;
}
