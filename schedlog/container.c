// SPDX-License-Identifier: MIT
/*
 * container.c - the aetrace trace container codec (include/aetrace/container.h,
 * docs/FORMAT.md "Container"): chunks in a zstd stream, CRC-32C per chunk.
 *
 * The writer keeps one ZSTD_CCtx for its whole life and flushes the zstd
 * stream at a chunk end when asked, so a reader can follow a growing file.
 * Large payloads become frames of their own, compressed without a copy
 * (container.h, ae_writer_opts.frame_min); a reader sees one stream
 * either way.
 * The reader keeps one ZSTD_DCtx, decompresses into a linear buffer that
 * always holds at least the current chunk, and validates every header.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <linux/trbuf.h>
#include <zstd.h>

#include <aetrace/container.h>
#include <aetrace/container_sink.h>
#include <aetrace/fullio.h>

/* ---------------------------------------------------------------- CRC-32C */

/*
 * ISA-L's crc32_iscsi is CRC-32C without the conditioning (the caller
 * inverts before and after) and takes an int length: fed in 1 MiB pieces.
 */
uint32_t ae_crc32c(uint32_t crc, const void *buf, size_t len)
{
	unsigned char *p = (unsigned char *)buf;
	uint32_t c = ~crc;

	while (len) {
		int n = len > AE_CRC32C_PIECE ? AE_CRC32C_PIECE : (int)len;

		c = crc32_iscsi(p, n, c);
		p += n;
		len -= n;
	}
	return ~c;
}

/* ------------------------------------------------------------------ writer */

struct ae_writer {
	ZSTD_CCtx *cctx;
	ae_sink_fn sink;
	void *sink_ctx;
	int fd;
	void *out;
	size_t out_cap;
	void *frame;		/* output of one large payload's frame */
	size_t frame_cap;
	int threads;
	int level;		/* in use */
	int top;		/* opened with: pacing goes no higher */
	int low;		/* lowest in use so far */
	uint32_t down, up;	/* steps taken */
	int adapt;
	int level_pending;	/* set while a streaming frame was open */
	uint64_t paced_at;	/* in_bytes at the last step */
	uint64_t pace_in;	/* in_bytes at the last ae_writer_pace() */
	uint64_t calm;		/* bytes written since the last step or behind */
	int idle_seen;		/* ... with an idle call among them */
	int was_behind;		/* the last call said AE_PACE_BEHIND */
	uint64_t zstd_ns;	/* recent time in zstd ... */
	uint64_t sink_ns;	/* ... and in the sink (file, pipe, network) */
	uint32_t frame_min;
	int in_frame;		/* a streaming frame is open: to end before another */
	uint64_t in_bytes;
	uint64_t out_bytes;
	uint64_t chunks;
	int err;		/* sticky: first failure */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}

/* The sink, timed for pacing. */
static int writer_sink(struct ae_writer *w, const void *buf, size_t len)
{
	uint64_t t = w->adapt ? now_ns() : 0;
	int ret = w->sink(w->sink_ctx, buf, len);

	if (w->adapt)
		w->sink_ns += now_ns() - t;
	return ret;
}

/* Default sink: write everything to the fd. */
static int fd_sink(void *ctx, const void *buf, size_t len)
{
	struct ae_writer *w = ctx;

	return schedlog_write_full(w->fd, buf, len);
}

int ae_writer_open_sink(struct ae_writer **wp, ae_sink_fn sink, void *ctx,
			const struct ae_writer_opts *o)
{
	struct ae_writer *w;
	int level = o && o->level ? o->level : 1;
	int threads = o ? o->threads : 0;
	size_t r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->threads = threads;
	w->level = w->top = w->low = level;
	w->adapt = o && o->adapt;
	w->frame_min = o && o->frame_min ? o->frame_min : AE_WRITER_FRAME_MIN;
	w->sink = sink;
	w->sink_ctx = ctx;
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx)
		goto err_free_w;
	w->out_cap = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_cap);
	if (!w->out)
		goto err_free_cctx;
	r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	if (ZSTD_isError(r))
		goto err_inval;
	r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);
	if (ZSTD_isError(r))
		goto err_inval;
	if (threads > 0) {
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_nbWorkers, threads);
		if (ZSTD_isError(r))
			goto err_inval;
	}
	*wp = w;
	return 0;

err_inval:
	free(w->out);
	ZSTD_freeCCtx(w->cctx);
	free(w);
	return -EINVAL;
err_free_cctx:
	ZSTD_freeCCtx(w->cctx);
err_free_w:
	free(w);
	return -ENOMEM;
}

int ae_writer_open(struct ae_writer **wp, int fd, const struct ae_writer_opts *o)
{
	int ret = ae_writer_open_sink(wp, fd_sink, NULL, o);

	if (ret)
		return ret;
	(*wp)->fd = fd;
	(*wp)->sink_ctx = *wp;
	return 0;
}

/* Feed `len` bytes with `op`; for flush/end, loop until zstd has emitted all. */
static int writer_feed(struct ae_writer *w, const void *src, size_t len,
		       ZSTD_EndDirective op)
{
	ZSTD_inBuffer in = { src, len, 0 };

	for (;;) {
		ZSTD_outBuffer out = { w->out, w->out_cap, 0 };
		uint64_t t = w->adapt ? now_ns() : 0;
		size_t rem = ZSTD_compressStream2(w->cctx, &out, &in, op);
		int ret;

		if (w->adapt)
			w->zstd_ns += now_ns() - t;
		if (ZSTD_isError(rem))
			return -EIO;
		if (out.pos) {
			ret = writer_sink(w, w->out, out.pos);
			if (ret)
				return ret;
			w->out_bytes += out.pos;
		}
		if (op == ZSTD_e_continue ? in.pos == in.size : rem == 0) {
			w->in_frame = op != ZSTD_e_end;
			return 0;
		}
	}
}

/*
 * Does a payload of len bytes go in a frame of its own (container.h)?
 * Only at levels up to 1, whose window (512 KiB) is an eighth of aerun's
 * sub-buffer: a higher level's reaches across chunks, and a new frame
 * forgets that history for no time saved. Not when the output buffer
 * cannot grow: the stream needs none.
 */
static int writer_own_frame(struct ae_writer *w, size_t len)
{
	size_t bound = ZSTD_compressBound(len);

	if (len < w->frame_min || w->threads || w->level > 1)
		return 0;
	if (bound > w->frame_cap) {
		void *p = realloc(w->frame, bound);

		if (!p)
			return 0;
		w->frame = p;
		w->frame_cap = bound;
	}
	return 1;
}

/*
 * The chunk header h ends the streaming frame, and all but the last byte
 * of the payload follow as one frame compressed in one call from the
 * caller's buffer, where ZSTD_compressStream2 would copy them into its
 * window. The last byte starts the next streaming frame: no frame ends
 * at a chunk's end, so a file cut there is still a truncated frame, an
 * error, as it is everywhere but after the close.
 */
static int writer_frame(struct ae_writer *w, const struct ae_chunk_hdr *h,
			const void *payload, size_t len)
{
	uint64_t t;
	size_t n;
	int ret;

	ret = writer_feed(w, h, sizeof(*h), ZSTD_e_end);
	if (ret)
		return ret;
	w->level_pending = 0;	/* that frame ended */
	t = w->adapt ? now_ns() : 0;
	n = ZSTD_compress2(w->cctx, w->frame, w->frame_cap, payload, len - 1);
	if (w->adapt)
		w->zstd_ns += now_ns() - t;
	if (ZSTD_isError(n))
		return -EIO;
	ret = writer_sink(w, w->frame, n);
	if (ret)
		return ret;
	w->out_bytes += n;
	return writer_feed(w, (const char *)payload + len - 1, 1, ZSTD_e_continue);
}

int ae_writer_chunk(struct ae_writer *w, uint16_t type, uint16_t cpu,
		    uint64_t seq, const void *payload, uint32_t len, int flush)
{
	struct ae_chunk_hdr h = {
		.magic = AE_CHUNK_MAGIC, .type = type, .cpu = cpu,
		.seq = seq, .len = len, .crc = 0,
	};
	int ret;

	if (w->err)
		return w->err;
	if (len > AE_CHUNK_MAX_LEN || (len && !payload))
		return -EINVAL;
	h.crc = ae_crc32c(ae_crc32c(0, &h, sizeof(h)), payload, len);
	if (writer_own_frame(w, len)) {
		ret = writer_frame(w, &h, payload, len);
	} else {
		/*
		 * A level set while a single-threaded frame was open applies
		 * from the next frame: end it after this header (never at a
		 * chunk's end, as in writer_frame()).
		 */
		int end = w->level_pending && len;

		ret = writer_feed(w, &h, sizeof(h), end ? ZSTD_e_end : ZSTD_e_continue);
		if (end)
			w->level_pending = 0;
		if (!ret && len)
			ret = writer_feed(w, payload, len, ZSTD_e_continue);
	}
	if (!ret && flush)
		ret = writer_feed(w, NULL, 0, ZSTD_e_flush);
	if (ret) {
		w->err = ret;
		return ret;
	}
	w->in_bytes += sizeof(h) + len;
	w->chunks++;
	return 0;
}

int ae_writer_flush(struct ae_writer *w)
{
	int ret;

	if (w->err)
		return w->err;
	if (!w->in_frame)
		return 0;
	ret = writer_feed(w, NULL, 0, ZSTD_e_flush);
	if (ret)
		w->err = ret;
	return ret;
}

int ae_writer_close(struct ae_writer *w, uint64_t *out_bytes)
{
	int ret = w->err;

	/* an empty stream is still one (empty) frame */
	if (!ret && (w->in_frame || !w->out_bytes))
		ret = writer_feed(w, NULL, 0, ZSTD_e_end);
	if (out_bytes)
		*out_bytes = w->out_bytes;
	ZSTD_freeCCtx(w->cctx);
	free(w->frame);
	free(w->out);
	free(w);
	return ret;
}

/*
 * One step down the pacing ladder: halving to 1 (19, 9, 4, 2, 1), then
 * zstd's fast levels -1, -2, -4, ... AE_WRITER_LEVEL_MIN.
 */
static int pace_down(int level)
{
	if (level > 1)
		return level / 2 > 1 ? level / 2 : 1;
	if (level == 1)
		return -1;
	return level * 2 < AE_WRITER_LEVEL_MIN ? AE_WRITER_LEVEL_MIN : level * 2;
}

/* One step back up (... -2, -1, 1, 3, 7, 15), never above top. */
static int pace_up(int level, int top)
{
	int up = level >= 1 ? 2 * level + 1 : level == -1 ? 1 : level / 2;

	return up > top ? top : up;
}

/* Returns 0, or -1 when zstd refused the level (the old one stays). */
static int writer_set_level(struct ae_writer *w, int level)
{
	size_t r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);

	if (ZSTD_isError(r))
		return -1;
	w->level = level;
	if (level < w->low)
		w->low = level;
	if (w->in_frame && !w->threads)
		w->level_pending = 1;
	w->paced_at = w->in_bytes;
	return 0;
}

static void writer_step(struct ae_writer *w, int level)
{
	int down = level < w->level;

	if (writer_set_level(w, level))
		return;
	if (down)
		w->down++;
	else
		w->up++;
	w->calm = 0;
	w->idle_seen = 0;
}

int ae_writer_pace(struct ae_writer *w, enum ae_pace pace)
{
	int due;

	if (!w->adapt)
		return w->level;
	if (!w->was_behind)
		w->calm += w->in_bytes - w->pace_in;
	if (pace == AE_PACE_BEHIND) {
		w->calm = 0;
		w->idle_seen = 0;
	} else if (pace == AE_PACE_IDLE) {
		w->idle_seen = 1;
	}
	due = w->in_bytes - w->paced_at >= AE_WRITER_PACE_BYTES;
	if (pace == AE_PACE_BEHIND && due) {
		/*
		 * A lower level pays while zstd clearly takes the time; when
		 * the sink does, fewer bytes (a higher level) help instead.
		 */
		if (w->zstd_ns >= 2 * w->sink_ns && w->level > AE_WRITER_LEVEL_MIN)
			writer_step(w, pace_down(w->level));
		else if (w->sink_ns > w->zstd_ns && w->level < w->top)
			writer_step(w, pace_up(w->level, w->top));
	} else if (pace != AE_PACE_BEHIND && w->idle_seen && w->level < w->top &&
		   w->calm >= AE_WRITER_PACE_CALM) {
		writer_step(w, pace_up(w->level, w->top));
	}
	/* recent time counts: each call keeps three quarters */
	w->zstd_ns -= w->zstd_ns / 4;
	w->sink_ns -= w->sink_ns / 4;
	w->was_behind = pace == AE_PACE_BEHIND;
	w->pace_in = w->in_bytes;
	return w->level;
}

void ae_writer_pacing(const struct ae_writer *w, struct ae_writer_pacing *p)
{
	*p = (struct ae_writer_pacing){ .level = w->level, .low = w->low,
					.down = w->down, .up = w->up };
}

uint64_t ae_writer_in_bytes(const struct ae_writer *w)
{
	return w->in_bytes;
}

uint64_t ae_writer_out_bytes(const struct ae_writer *w)
{
	return w->out_bytes;
}

/* ------------------------------------------------------------------ reader */

#define HDR_LEN	sizeof(struct ae_chunk_hdr)

struct ae_reader {
	char *path;
	int fd;
	int own_fd;
	ZSTD_DCtx *dctx;
	uint8_t *in;		/* compressed input window */
	size_t in_cap, in_pos, in_len;
	uint64_t in_off;	/* compressed bytes consumed */
	uint8_t *buf;		/* decompressed bytes [start, end) not yet parsed */
	size_t cap, start, end;
	uint64_t base_off;	/* decompressed offset of buf[0] */
	size_t consumed;	/* bytes of the chunk returned last */
	size_t zret;		/* last zstd return: 0 = at a frame boundary */
	int pending;		/* zstd may hold output we have not taken */
	int eof;
	int err;		/* sticky */
	int truncated;		/* err: the file ends inside a chunk or frame */
	char msg[512];
};

static int reader_fail(struct ae_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->msg, sizeof(r->msg), "%s: ", r->path);
	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof(r->msg) - n, fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

int ae_reader_open(struct ae_reader **rp, const char *path)
{
	struct ae_reader *r;
	int ret = -ENOMEM;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->path = strdup(path);
	r->in_cap = ZSTD_DStreamInSize();
	r->in = malloc(r->in_cap);
	r->cap = 1 << 20;
	r->buf = malloc(r->cap);
	r->dctx = ZSTD_createDCtx();
	if (!r->path || !r->in || !r->buf || !r->dctx)
		goto err_free_r;
	if (!strcmp(path, "-")) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			ret = -errno;
			goto err_free_r;
		}
		r->own_fd = 1;
	}
	*rp = r;
	return 0;

err_free_r:
	ZSTD_freeDCtx(r->dctx);
	free(r->buf);
	free(r->in);
	free(r->path);
	free(r);
	return ret;
}

/* Make room for `need` bytes from buf[start]; grow only up to one chunk. */
static int reader_space(struct ae_reader *r, size_t need)
{
	if (r->start && r->cap - r->start < need + (1 << 16)) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->base_off += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->start < need) {
		size_t ncap = r->cap;
		uint8_t *nb;

		while (ncap - r->start < need)
			ncap *= 2;
		nb = realloc(r->buf, ncap);
		if (!nb)
			return reader_fail(r, -ENOMEM, "out of memory");
		r->buf = nb;
		r->cap = ncap;
	}
	return 0;
}

/*
 * Decompress until `need` bytes are available from buf[start].
 * 1: available; 0: end of input first; <0: error (message set).
 */
static int reader_fill(struct ae_reader *r, size_t need)
{
	int ret = reader_space(r, need);

	if (ret)
		return ret;
	while (r->end - r->start < need) {
		ZSTD_outBuffer out;
		ZSTD_inBuffer in;
		size_t zr;

		if (r->in_pos == r->in_len && !r->pending) {
			ssize_t n;

			if (r->eof)
				return 0;
			n = read(r->fd, r->in, r->in_cap);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return reader_fail(r, -errno, "read error at compressed offset %llu: %s",
						   (unsigned long long)r->in_off, strerror(errno));
			}
			if (n == 0) {
				r->eof = 1;
				continue;
			}
			r->in_len = n;
			r->in_pos = 0;
		}
		out = (ZSTD_outBuffer){ r->buf, r->cap, r->end };
		in = (ZSTD_inBuffer){ r->in, r->in_len, r->in_pos };
		zr = ZSTD_decompressStream(r->dctx, &out, &in);
		if (ZSTD_isError(zr)) {
			unsigned long long doff = r->base_off + r->end;

			if (r->zret == 0 && r->in_off > 0)
				return reader_fail(r, -EBADMSG,
					"trailing garbage or a corrupt frame after the end of a zstd frame at compressed offset %llu (decompressed offset %llu): %s",
					(unsigned long long)r->in_off, doff, ZSTD_getErrorName(zr));
			return reader_fail(r, -EBADMSG,
				"corrupt zstd data near compressed offset %llu (decompressed offset %llu): %s",
				(unsigned long long)r->in_off, doff, ZSTD_getErrorName(zr));
		}
		r->in_off += in.pos - r->in_pos;
		r->in_pos = in.pos;
		r->end = out.pos;
		r->pending = out.pos == out.size;
		r->zret = zr;
	}
	return 1;
}

static const char *chunk_what(size_t avail)
{
	return avail < HDR_LEN ? "header" : "payload";
}

int ae_reader_next(struct ae_reader *r, struct ae_chunk_hdr *h, const void **payload)
{
	struct ae_chunk_hdr hdr;
	unsigned long long off;
	uint32_t crc;
	int ret;

	if (r->err)
		return r->err;
	r->start += r->consumed;
	r->consumed = 0;
	ret = reader_fill(r, HDR_LEN);
	off = r->base_off + r->start;
	if (ret < 0)
		return ret;
	if (ret == 0) {
		size_t avail = r->end - r->start;

		if (r->in_off == 0)
			return reader_fail(r, -EBADMSG, "empty file at offset 0: no zstd frame");
		r->truncated = avail || r->zret != 0;
		if (avail)
			return reader_fail(r, -EBADMSG,
				"truncated chunk header at offset %llu (%zu of %zu bytes)",
				off, avail, HDR_LEN);
		if (r->zret != 0)
			return reader_fail(r, -EBADMSG,
				"truncated zstd frame: file ends inside a frame at compressed offset %llu (decompressed offset %llu)",
				(unsigned long long)r->in_off, off);
		return 0;
	}
	memcpy(&hdr, r->buf + r->start, HDR_LEN);
	if (hdr.magic != AE_CHUNK_MAGIC)
		return reader_fail(r, -EBADMSG, "bad chunk magic 0x%08x at offset %llu",
				   hdr.magic, off);
	if (hdr.type < AE_CHUNK_SESSION || hdr.type > AE_CHUNK_EXIT)
		return reader_fail(r, -EBADMSG, "unknown chunk type %u at offset %llu",
				   hdr.type, off);
	if (hdr.len > AE_CHUNK_MAX_LEN)
		return reader_fail(r, -EBADMSG,
			"chunk length %u exceeds the maximum %u at offset %llu",
			hdr.len, AE_CHUNK_MAX_LEN, off);
	ret = reader_fill(r, HDR_LEN + hdr.len);
	if (ret < 0)
		return ret;
	r->truncated = ret == 0;
	if (ret == 0)
		return reader_fail(r, -EBADMSG,
			"truncated chunk %s at offset %llu (type %u, %zu of %zu bytes)",
			chunk_what(r->end - r->start), off, hdr.type,
			r->end - r->start, HDR_LEN + hdr.len);
	crc = hdr.crc;
	hdr.crc = 0;
	hdr.crc = ae_crc32c(ae_crc32c(0, &hdr, HDR_LEN), r->buf + r->start + HDR_LEN, hdr.len);
	if (hdr.crc != crc)
		return reader_fail(r, -EBADMSG,
			"CRC-32C mismatch in chunk at offset %llu (type %u, len %u): stored 0x%08x, computed 0x%08x",
			off, hdr.type, hdr.len, crc, hdr.crc);
	*h = hdr;
	*payload = r->buf + r->start + HDR_LEN;
	r->consumed = HDR_LEN + hdr.len;
	return 1;
}

const char *ae_reader_error(const struct ae_reader *r)
{
	return r->err ? r->msg : "no error";
}

int ae_reader_truncated(const struct ae_reader *r)
{
	return r->err && r->truncated;
}

uint64_t ae_reader_offset(const struct ae_reader *r)
{
	return r->base_off + r->start;
}

void ae_reader_close(struct ae_reader *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->buf);
	free(r->in);
	free(r->path);
	free(r);
}

void ae_end_tally(struct ae_end *t, const struct ae_chunk_hdr *h)
{
	if (h->type == AE_CHUNK_DATA) {
		t->raw_bytes += h->len;
		t->data_chunks++;
	} else if (h->type == AE_CHUNK_MARKERS) {
		t->markers += h->len / sizeof(struct trbuf_marker);
	}
}

int ae_end_matches(const struct ae_end *e, const struct ae_end *t)
{
	return e->raw_bytes == t->raw_bytes && e->data_chunks == t->data_chunks &&
	       e->markers == t->markers;
}
