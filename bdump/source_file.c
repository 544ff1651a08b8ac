// SPDX-License-Identifier: MIT
/*
 * source_file.c - an existing capture as bdump's source: its sub-buffers
 * and markers are sent again, so a standalone trace (aerun -o) can be
 * shipped through a pipe or to bdump-recv like a live capture. bdump
 * forwards it chunk by chunk (file_chunk): SESSION, DATA, MARKERS, EXIT
 * and END exactly as stored, so the copy decodes to the same chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

struct file_source {
	struct bdump_source s;
	const char *path;
	struct ae_reader *r;
	void *session;		/* SESSION chunk read at open; later the END copy */
	struct ae_chunk_hdr session_hdr;
	int session_sent;
	struct trbuf_marker *mk;
	size_t nmk, mkdone, capmk;
	int ended;
};

static int file_next(struct bdump_source *bs, struct bdump_subbuf *sb, int timeout_ms)
{
	struct file_source *f = (struct file_source *)bs;
	struct ae_chunk_hdr h;
	const void *p;
	int r = 0;

	(void)timeout_ms;
	while (!f->ended && (r = ae_reader_next(f->r, &h, &p)) == 1) {
		if (h.type == AE_CHUNK_DATA) {
			sb->cpu = h.cpu;
			sb->index = 0;
			sb->seq = h.seq;
			sb->data = p;
			sb->len = h.len;
			return 1;
		}
		if (h.type == AE_CHUNK_MARKERS) {
			size_t n = h.len / sizeof(struct trbuf_marker);

			if (f->nmk + n > f->capmk) {
				struct trbuf_marker *m;

				f->capmk = (f->nmk + n) * 2;
				m = realloc(f->mk, f->capmk * sizeof(*m));
				if (!m)
					return -ENOMEM;
				f->mk = m;
			}
			memcpy(f->mk + f->nmk, p, n * sizeof(*f->mk));
			f->nmk += n;
		}
		/* SESSION was read at open; END and EXIT end the capture */
	}
	if (!f->ended && r < 0) {
		fprintf(stderr, "bdump: %s\n", ae_reader_error(f->r));
		return -EIO;
	}
	f->ended = 1;
	return -ENODATA;
}

static int file_chunk(struct bdump_source *bs, struct ae_chunk_hdr *h, const void **payload)
{
	struct file_source *f = (struct file_source *)bs;
	int r;

	if (!f->session_sent) {
		f->session_sent = 1;
		*h = f->session_hdr;
		*payload = f->session;
		return 1;
	}
	if (f->ended)
		return 0;
	r = ae_reader_next(f->r, h, payload);
	if (r < 0) {
		fprintf(stderr, "bdump: %s\n", ae_reader_error(f->r));
		return -EIO;
	}
	if (r == 1 && h->type == AE_CHUNK_SESSION) {
		fprintf(stderr, "bdump: %s: offset %llu: second SESSION chunk: not one capture\n",
			f->path, (unsigned long long)ae_reader_offset(f->r));
		return -EINVAL;
	}
	if (r == 0) {
		f->ended = 1;	/* no END: forwarded as it is, a cut capture */
		return 0;
	}
	if (h->type == AE_CHUNK_END) {
		struct ae_chunk_hdr nh;
		const void *np;
		struct ae_chunk_hdr end = *h;
		void *copy = malloc(h->len ? h->len : 1);

		/* END closes the capture: anything after it is another one */
		if (!copy)
			return -ENOMEM;
		memcpy(copy, *payload, h->len);
		r = ae_reader_next(f->r, &nh, &np);
		if (r != 0) {
			fprintf(stderr, "bdump: %s: offset %llu: %s after END: concatenated captures? forward each on its own\n",
				f->path, (unsigned long long)ae_reader_offset(f->r),
				r < 0 ? ae_reader_error(f->r) : "more chunks");
			free(copy);
			return -EINVAL;
		}
		free(f->session);
		f->session = copy;	/* kept until close */
		*h = end;
		*payload = copy;
		f->ended = 1;
	}
	return 1;
}

static int file_put(struct bdump_source *bs, const struct bdump_subbuf *sb)
{
	return 0;
}

static ssize_t file_markers(struct bdump_source *bs, struct trbuf_marker *m, size_t max)
{
	struct file_source *f = (struct file_source *)bs;
	size_t n = f->nmk - f->mkdone;

	if (n > max)
		n = max;
	if (!n)
		return 0;	/* f->mk may still be NULL */
	memcpy(m, f->mk + f->mkdone, n * sizeof(*m));
	f->mkdone += n;
	return n;
}

static int file_flush(struct bdump_source *bs)
{
	return 0;
}

static uint64_t file_drops(struct bdump_source *bs)
{
	return 0;
}

static void file_close(struct bdump_source *bs)
{
	struct file_source *f = (struct file_source *)bs;

	ae_reader_close(f->r);
	free(f->session);
	free(f->mk);
	free(f);
}

int bdump_source_file_open(struct bdump_source **sp, const char *path)
{
	struct file_source *f = calloc(1, sizeof(*f));
	struct ae_chunk_hdr h;
	const void *p;
	int r;

	if (!f)
		return -ENOMEM;
	r = ae_reader_open(&f->r, path);
	if (r) {
		free(f);
		return r;
	}
	r = ae_reader_next(f->r, &h, &p);
	if (r != 1 || h.type != AE_CHUNK_SESSION || h.len < sizeof(struct ae_session)) {
		fprintf(stderr, "bdump: %s: %s\n", path,
			r < 0 ? ae_reader_error(f->r) : "does not start with a session chunk");
		ae_reader_close(f->r);
		free(f);
		return -EINVAL;
	}
	memcpy(&f->s.session, p, sizeof(f->s.session));
	f->path = path;
	f->session_hdr = h;
	f->session = malloc(h.len);
	if (!f->session) {
		ae_reader_close(f->r);
		free(f);
		return -ENOMEM;
	}
	memcpy(f->session, p, h.len);
	{
		const char *str = (const char *)p + sizeof(struct ae_session);
		size_t n = h.len - sizeof(struct ae_session);

		/* the original strings, NUL-separated, as one line */
		for (size_t i = 0; i < n && i < sizeof(f->s.strings) - 1; i++)
			f->s.strings[i] = str[i] ? str[i] : ' ';
	}
	f->s.next = file_next;
	f->s.put = file_put;
	f->s.markers = file_markers;
	f->s.flush = file_flush;
	f->s.drops = file_drops;
	f->s.close = file_close;
	f->s.chunk = file_chunk;
	*sp = &f->s;
	return 0;
}
