// SPDX-License-Identifier: MIT
/*
 * stream.c - read a standalone trace container into one witness stream:
 * the DATA chunks of cpu 0 in sequence order, and the markers placed at
 * their byte positions in that stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/container.h>

#include <aetrace/capture.h>

#include "regen.h"

struct seqbase {
	uint64_t seq, base, len;
};

static int sb_cmp(const void *a, const void *b)
{
	const struct seqbase *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int serr(const char *path, const char *msg, uint64_t off)
{
	fprintf(stderr, "aetrace: %s: %s (decompressed offset %llu)\n", path, msg,
		(unsigned long long)off);
	return -1;
}

/*
 * A raw capture (AE_CAPTURE=FILE, instrument/runtime/capture.c): header,
 * witness bytes; the end is "after the first system call of _Exit".
 */
static int load_capture(struct ae_stream *s, const char *path, FILE *f)
{
	struct ae_capture_hdr h;

	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != AE_CAPTURE_MAGIC)
		return serr(path, "bad capture header", 0);
	s->data = malloc(h.len ? h.len : 1);
	s->mk = calloc(1, sizeof(*s->mk));
	s->mkpos = calloc(1, sizeof(*s->mkpos));
	if (!s->data || !s->mk || !s->mkpos)
		return serr(path, "out of memory", 0);
	if (fread(s->data, 1, h.len, f) != h.len)
		return serr(path, "capture file truncated", sizeof(h));
	s->len = h.len;
	s->mk[0].type = TRBUF_MK_EXIT;
	s->mk[0].flags = AE_MK_EXIT_AT_SYSCALL;
	s->mk[0].ip = h.exit_entry;
	s->mkpos[0] = h.len;
	s->nmk = 1;
	s->exited = 1;
	return 0;
}

int ae_stream_load(struct ae_stream *s, const char *path)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	struct seqbase *sb = NULL;
	size_t nsb = 0, cap = 0, capd = 0, capm = 0;
	uint8_t **chunks = NULL;
	int ret, seen_session = 0;

	memset(s, 0, sizeof(*s));
	{
		FILE *f = fopen(path, "rb");
		uint64_t magic = 0;

		if (f && fread(&magic, 8, 1, f) == 1 && magic == AE_CAPTURE_MAGIC) {
			rewind(f);
			ret = load_capture(s, path, f);
			fclose(f);
			return ret;
		}
		if (f)
			fclose(f);
	}
	ret = ae_reader_open(&r, path);
	if (ret) {
		fprintf(stderr, "aetrace: %s: %s\n", path, strerror(-ret));
		return -1;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (h.type == AE_CHUNK_SESSION) {
			const struct ae_session *ss = pl;

			if (h.len < sizeof(*ss) || ss->version != AE_FORMAT_VERSION) {
				ret = serr(path, "unsupported session header", ae_reader_offset(r));
				goto out;
			}
			if (ss->mode != AE_MODE_STANDALONE) {
				ret = serr(path, "not a standalone (aerun) trace; per-thread regeneration of bdump captures needs their schedule", ae_reader_offset(r));
				goto out;
			}
			seen_session = 1;
		} else if (h.type == AE_CHUNK_DATA) {
			if (h.cpu != 0) {
				ret = serr(path, "standalone trace with data for cpu != 0", ae_reader_offset(r));
				goto out;
			}
			if (nsb == cap) {
				cap = cap ? cap * 2 : 64;
				sb = realloc(sb, cap * sizeof(*sb));
				chunks = realloc(chunks, cap * sizeof(*chunks));
			}
			sb[nsb].seq = h.seq;
			sb[nsb].len = h.len;
			sb[nsb].base = nsb;	/* index of the payload until sorted */
			chunks[nsb] = malloc(h.len ? h.len : 1);
			memcpy(chunks[nsb], pl, h.len);
			nsb++;
		} else if (h.type == AE_CHUNK_MARKERS) {
			size_t n = h.len / sizeof(struct trbuf_marker);

			if (h.len % sizeof(struct trbuf_marker)) {
				ret = serr(path, "marker chunk of odd size", ae_reader_offset(r));
				goto out;
			}
			if (s->nmk + n > capm) {
				capm = (s->nmk + n) * 2;
				s->mk = realloc(s->mk, capm * sizeof(*s->mk));
			}
			memcpy(s->mk + s->nmk, pl, h.len);
			s->nmk += n;
		} else if (h.type == AE_CHUNK_EXIT) {
			const struct ae_exit *e = pl;

			if (h.len >= sizeof(*e)) {
				s->exited = 1;
				s->exit_status = e->status;
			}
		}
	}
	if (ret < 0) {
		fprintf(stderr, "aetrace: %s\n", ae_reader_error(r));
		goto out;
	}
	if (!seen_session) {
		ret = serr(path, "no session header: not an aetrace container", 0);
		goto out;
	}
	/* concatenate the sub-buffers in sequence order */
	qsort(sb, nsb, sizeof(*sb), sb_cmp);
	for (size_t i = 0; i < nsb; i++) {
		if (i && sb[i].seq == sb[i - 1].seq) {
			ret = serr(path, "duplicate sub-buffer sequence number", 0);
			goto out;
		}
		s->len += sb[i].len;
	}
	s->data = malloc(s->len ? s->len : 1);
	capd = 0;
	for (size_t i = 0; i < nsb; i++) {
		size_t idx = sb[i].base;

		memcpy(s->data + capd, chunks[idx], sb[i].len);
		free(chunks[idx]);
		sb[i].base = capd;
		capd += sb[i].len;
	}
	s->mkpos = calloc(s->nmk + 1, sizeof(uint64_t));
	for (size_t i = 0; i < s->nmk; i++) {
		struct trbuf_marker *m = &s->mk[i];
		size_t lo = 0, hi = nsb;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (sb[mid].seq < m->seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nsb && sb[lo].seq == m->seq && m->offset <= sb[lo].len)
			s->mkpos[i] = sb[lo].base + m->offset;
		else if (lo == nsb && m->offset == 0)
			s->mkpos[i] = s->len;	/* an empty, never-committed sub-buffer */
		else if (lo < nsb && sb[lo].seq != m->seq && m->offset == 0)
			s->mkpos[i] = sb[lo].base;
		else {
			ret = serr(path, "marker points outside the recorded data", 0);
			goto out;
		}
		if (m->type == TRBUF_MK_EXIT)
			s->exited = 1;
	}
	ret = 0;
out:
	free(sb);
	free(chunks);
	ae_reader_close(r);
	return ret < 0 ? -1 : 0;
}

void ae_stream_free(struct ae_stream *s)
{
	free(s->data);
	free(s->mk);
	free(s->mkpos);
	memset(s, 0, sizeof(*s));
}
