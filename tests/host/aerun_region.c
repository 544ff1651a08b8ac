// SPDX-License-Identifier: MIT
/*
 * aerun_region - checks and cuts multi-task aerun captures (one region, a
 * virtual cpu, per traced thread; instrument/aerun/aerun.h).
 *
 *   aerun_region --check IN       validate the marker contract, print one
 *                                 line per region and image
 *   aerun_region --extract IN CPU IMAGE OUT
 *                                 write image IMAGE (0 = the region's first,
 *                                 k = after its k-th EXEC) of region CPU as
 *                                 a single-cpu standalone capture, for
 *                                 `aetrace regen` (which needs the image to
 *                                 start at START: the first program or an
 *                                 exec'd one)
 *   aerun_region --bytes IN CPU OUT
 *                                 write region CPU's witness bytes
 *
 * --check prints one line per region: cpu, label ("0" the first program,
 * "L.k" the k-th child that region L forked, in FORK order), pid, tid,
 * number of program images, bytes, markers, first marker.
 *
 * --check: each region's sub-buffers run 0, 1, ... without gaps; its
 * markers come in (seq, offset) order, each before the DATA chunk of its
 * sub-buffer and inside it; a region starts with START (cpu 0) or
 * SWITCH_IN at (0, 0); every FORK's child has a region that starts with
 * SWITCH_IN later in time; EXEC is followed by START at the same position
 * or ends the region; nothing follows EXIT; a region has one tid.
 * Exit 0, or 1 with a message naming the marker (cpu, index) at fault.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/trbuf.h>
#include <aetrace/container.h>

struct sb {
	uint64_t seq, len, base;
	uint8_t *data;
};

struct region {
	struct sb *sb;
	size_t nsb;
	struct trbuf_marker *mk;
	uint64_t *pos;		/* absolute position in the region */
	size_t nmk;
	uint64_t len;
	int used;
	int images;
	char label[64];
};

#define MAX_CPU 65536
static struct region reg[MAX_CPU];
static uint8_t *session;
static int quiet;
static uint32_t session_len;
static const char *mk_name[] = {
	"?", "START", "SWITCH_IN", "SWITCH_OUT", "SIGNAL", "SIGRETURN", "FORK",
	"EXEC", "EXIT", "SUBBUF", "STOP", "ROLLBACK",
};

static const char *tname(uint32_t t)
{
	return t < sizeof(mk_name) / sizeof(mk_name[0]) ? mk_name[t] : "?";
}

static int fail(const char *fmt, unsigned cpu, size_t i, const char *what)
{
	fprintf(stderr, fmt, cpu, i, what);
	return 1;
}

static void *grow(void *p, size_t n, size_t sz)
{
	p = realloc(p, n * sz);
	if (!p) {
		fprintf(stderr, "aerun_region: out of memory\n");
		exit(2);
	}
	return p;
}

static int load(const char *path)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *p;
	int ret;

	if (ae_reader_open(&r, path)) {
		fprintf(stderr, "aerun_region: cannot open %s\n", path);
		return -1;
	}
	while ((ret = ae_reader_next(r, &h, &p)) == 1) {
		if (h.type == AE_CHUNK_SESSION) {
			session = malloc(h.len);
			memcpy(session, p, h.len);
			session_len = h.len;
		} else if (h.type == AE_CHUNK_MARKERS) {
			const struct trbuf_marker *m = p;

			for (size_t i = 0; i < h.len / sizeof(*m); i++) {
				struct region *g = &reg[m[i].cpu];

				g->mk = grow(g->mk, g->nmk + 1, sizeof(*g->mk));
				g->pos = grow(g->pos, g->nmk + 1, sizeof(*g->pos));
				g->mk[g->nmk] = m[i];
				/* position known once its DATA is read: must come later */
				g->pos[g->nmk++] = UINT64_MAX;
				g->used = 1;
			}
		} else if (h.type == AE_CHUNK_DATA) {
			struct region *g = &reg[h.cpu];
			struct sb *s;

			g->sb = grow(g->sb, g->nsb + 1, sizeof(*g->sb));
			s = &g->sb[g->nsb++];
			s->seq = h.seq;
			s->len = h.len;
			s->base = g->len;
			s->data = malloc(h.len ? h.len : 1);
			memcpy(s->data, p, h.len);
			if (h.seq != g->nsb - 1) {
				fprintf(stderr, "aerun_region: %s: cpu %u: sub-buffer seq %llu where %zu was due\n",
					path, h.cpu, (unsigned long long)h.seq, g->nsb - 1);
				return -1;
			}
			g->len += h.len;
			g->used = 1;
			/* place the markers of this sub-buffer */
			for (size_t i = 0; i < g->nmk; i++) {
				struct trbuf_marker *m = &g->mk[i];

				if (m->seq != h.seq)
					continue;
				if (g->pos[i] != UINT64_MAX)
					continue;
				if (m->offset > h.len) {
					fprintf(stderr, "aerun_region: %s: cpu %u marker %zu (%s) at offset %u beyond sub-buffer %llu of %u bytes\n",
						path, h.cpu, i, tname(m->type), m->offset,
						(unsigned long long)h.seq, h.len);
					return -1;
				}
				g->pos[i] = s->base + m->offset;
			}
		}
	}
	if (ret < 0) {
		fprintf(stderr, "aerun_region: %s\n", ae_reader_error(r));
		return -1;
	}
	ae_reader_close(r);
	return 0;
}

static struct region *region_of_tid(int32_t tid, unsigned *cpu)
{
	for (unsigned c = 0; c < MAX_CPU; c++)
		if (reg[c].used && reg[c].nmk && reg[c].mk[0].tid == tid) {
			*cpu = c;
			return &reg[c];
		}
	return NULL;
}

static int check(void)
{
	const char *e = "aerun_region: cpu %u marker %zu: %s\n";

	for (unsigned c = 0; c < MAX_CPU; c++) {
		struct region *g = &reg[c];
		int image = 0, ended = 0;

		if (!g->used)
			continue;
		if (!g->nmk)
			return fail(e, c, 0, "region without markers");
		for (size_t i = 0; i < g->nmk; i++) {
			struct trbuf_marker *m = &g->mk[i];

			if (g->pos[i] == UINT64_MAX) {
				/* a marker after the last committed byte */
				if (m->seq != g->nsb || m->offset)
					return fail(e, c, i, "points at a sub-buffer that was never written, or comes after its DATA");
				g->pos[i] = g->len;
			}
			if (m->tid != g->mk[0].tid)
				return fail(e, c, i, "another tid in the region");
			if (i && g->pos[i] < g->pos[i - 1])
				return fail(e, c, i, "out of (seq, offset) order");
			if (ended)
				return fail(e, c, i, "after the region's EXIT/EXEC end");
			if (!i && c == 0 && m->type != TRBUF_MK_START)
				return fail(e, c, i, "the first program's region does not begin with START");
			if (!i && c && m->type != TRBUF_MK_SWITCH_IN)
				return fail(e, c, i, "a new thread's region does not begin with SWITCH_IN");
			if (!i && g->pos[i])
				return fail(e, c, i, "first marker not at the region's start");
			if (m->type == TRBUF_MK_EXIT)
				ended = 1;
			if (m->type == TRBUF_MK_EXEC) {
				if (i + 1 < g->nmk) {
					if (g->mk[i + 1].type != TRBUF_MK_START || g->pos[i + 1] != g->pos[i])
						return fail(e, c, i, "EXEC not followed by START at the same position");
					image++;
				} else {
					ended = 1;	/* exec'd an untraced program */
				}
			}
			if (m->type == TRBUF_MK_FORK) {
				unsigned cc;
				struct region *k = region_of_tid((int32_t)m->arg, &cc);

				if (!k)
					return fail(e, c, i, "FORK of a child without a region");
				if (k->mk[0].time_ns < m->time_ns)
					return fail(e, c, i, "child starts before its FORK");
			}
		}
		if (!ended)
			return fail(e, c, g->nmk - 1, "region does not end with EXIT or EXEC");
		g->images = image + 1;
	}
	/* labels: "0" for the first program, "P.k" for the k-th child of P */
	snprintf(reg[0].label, sizeof(reg[0].label), "0");
	for (int changed = 1; changed;) {
		changed = 0;
		for (unsigned c = 0; c < MAX_CPU; c++) {
			struct region *g = &reg[c];
			int k = 0;

			if (!g->used || !g->label[0])
				continue;
			for (size_t i = 0; i < g->nmk; i++) {
				unsigned cc;
				struct region *ch;

				if (g->mk[i].type != TRBUF_MK_FORK)
					continue;
				ch = region_of_tid((int32_t)g->mk[i].arg, &cc);
				if (ch && !ch->label[0]) {
					snprintf(ch->label, sizeof(ch->label), "%s.%d", g->label, k);
					changed = 1;
				}
				k++;
			}
		}
	}
	for (unsigned c = 0; c < MAX_CPU && !quiet; c++) {
		struct region *g = &reg[c];

		if (!g->used)
			continue;
		printf("cpu %u label %s pid %d tid %d images %d bytes %llu markers %zu first %s\n", c,
		       g->label[0] ? g->label : "?", g->mk[0].pid, g->mk[0].tid, g->images,
		       (unsigned long long)g->len, g->nmk, tname(g->mk[0].type));
	}
	return 0;
}

/* Writes region CPU's witness bytes, all sub-buffers in order, to OUT. */
static int bytes(unsigned cpu, const char *out)
{
	struct region *g = &reg[cpu];
	FILE *f;

	quiet = 1;
	if (!g->used || check())
		return 1;
	f = fopen(out, "wb");
	if (!f)
		return 1;
	for (size_t s = 0; s < g->nsb; s++)
		fwrite(g->sb[s].data, 1, g->sb[s].len, f);
	return fclose(f) ? 1 : 0;
}

static int extract(unsigned cpu, int image, const char *out)
{
	struct region *g = &reg[cpu];
	struct ae_writer_opts o = { .level = 1 };
	struct ae_writer *w;
	uint64_t from = 0, to, nb = 0;
	size_t i, first = 0, nm = 0;
	struct trbuf_marker *mk;
	uint8_t *buf;
	int k = 0, fd;

	quiet = 1;
	if (!g->used || check())
		return 1;
	/* image k starts at the START after the k-th EXEC */
	for (i = 0; i < g->nmk && k < image; i++) {
		if (g->mk[i].type == TRBUF_MK_EXEC && i + 1 < g->nmk) {
			k++;
			first = i + 1;
			from = g->pos[i + 1];
		}
	}
	if (k != image || g->mk[first].type != TRBUF_MK_START) {
		fprintf(stderr, "aerun_region: cpu %u has no image %d starting with START\n", cpu, image);
		return 1;
	}
	to = g->len;
	mk = calloc(g->nmk, sizeof(*mk));
	for (i = first; i < g->nmk; i++) {
		struct trbuf_marker m = g->mk[i];

		if (m.type == TRBUF_MK_SUBBUF)
			continue;
		m.cpu = 0;
		m.seq = 0;
		m.offset = g->pos[i] - from;
		mk[nm++] = m;
		if (m.type == TRBUF_MK_EXEC || m.type == TRBUF_MK_EXIT) {
			to = g->pos[i];
			break;
		}
	}
	buf = malloc(to - from + 1);
	for (size_t s = 0; s < g->nsb; s++) {
		uint64_t lo = g->sb[s].base, hi = lo + g->sb[s].len;

		for (uint64_t p = lo > from ? lo : from; p < hi && p < to; p++)
			buf[nb++] = g->sb[s].data[p - lo];
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ae_writer_open(&w, fd, &o) ||
	    ae_writer_chunk(w, AE_CHUNK_SESSION, 0, 0, session, session_len, 0) ||
	    ae_writer_chunk(w, AE_CHUNK_MARKERS, 0, 0, mk, nm * sizeof(*mk), 0) ||
	    ae_writer_chunk(w, AE_CHUNK_DATA, 0, 0, buf, nb, 0) ||
	    ae_writer_close(w)) {
		fprintf(stderr, "aerun_region: cannot write %s\n", out);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check"))
		return load(argv[2]) ? 1 : check();
	if (argc == 6 && !strcmp(argv[1], "--extract"))
		return load(argv[2]) ? 1 : extract(atoi(argv[3]) & 0xffff, atoi(argv[4]), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "--bytes"))
		return load(argv[2]) ? 1 : bytes(atoi(argv[3]) & 0xffff, argv[4]);
	fprintf(stderr, "usage: aerun_region --check IN | --extract IN CPU IMAGE OUT | --bytes IN CPU OUT\n");
	return 2;
}
