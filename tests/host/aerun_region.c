// SPDX-License-Identifier: MIT
/*
 * aerun_region - checks and cuts multi-task aerun captures: each traced
 * thread writes into one region (virtual cpu) for life, a cpu hosts
 * successive threads (instrument/aerun/aerun.h).
 *
 *   aerun_region --check IN       validate the marker contract, print one
 *                                 line per thread
 *   aerun_region --extract IN LABEL IMAGE OUT
 *                                 write image IMAGE (0 = the thread's first,
 *                                 k = after its k-th EXEC) of thread LABEL
 *                                 as a single-cpu standalone capture, for
 *                                 `aetrace regen` of one image that starts
 *                                 at START (the first program or an exec'd
 *                                 one)
 *   aerun_region --bytes IN LABEL OUT
 *                                 write thread LABEL's witness bytes
 *
 * Threads are labelled by creation: "0" the first program, "L.k" the k-th
 * thread or child that L created (in FORK order), so two runs compare
 * thread by thread although tids differ; "?" for a thread no traced one
 * created (a traced program exec'd by an untraced process). LABEL may also
 * be "tid=N".
 *
 * --check: each cpu's sub-buffers run 0, 1, ... without gaps; its markers
 * come in (seq, offset) order, each before the DATA chunk of its sub-buffer
 * and inside it; on each cpu a thread begins with START (the first
 * program; or a program exec'd by an untraced one) or SWITCH_IN at a
 * sub-buffer's start and ends with EXIT (or EXEC
 * of an untraced program) before the next begins; EXEC of a traced program
 * is followed by START at the same position; every FORK's child begins
 * later than the FORK. Exit 0, or 1 with a message naming the marker
 * (cpu, index) at fault.
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

/* One traced thread: a stretch of one cpu's stream (aerun never migrates). */
struct task {
	int32_t pid, tid;
	unsigned cpu;
	uint64_t from, to;	/* its bytes in the cpu's stream */
	size_t m0, m1;		/* its markers: reg[cpu].mk[m0 .. m1) */
	int images;
	char label[64];
};

static struct task *tasks;
static size_t ntasks;

static struct task *task_of_tid(int32_t tid)
{
	for (size_t k = 0; k < ntasks; k++)
		if (tasks[k].tid == tid)
			return &tasks[k];
	return NULL;
}

static int check(void)
{
	const char *e = "aerun_region: cpu %u marker %zu: %s\n";

	ntasks = 0;
	for (unsigned c = 0; c < MAX_CPU; c++) {
		struct region *g = &reg[c];
		struct task *t = NULL;	/* open on this cpu */

		if (!g->used)
			continue;
		for (size_t i = 0; i < g->nmk; i++) {
			struct trbuf_marker *m = &g->mk[i];

			if (g->pos[i] == UINT64_MAX) {
				/* a marker after the last committed byte */
				if (m->seq != g->nsb || m->offset)
					return fail(e, c, i, "points at a sub-buffer that was never written, or comes after its DATA");
				g->pos[i] = g->len;
			}
			if (i && g->pos[i] < g->pos[i - 1])
				return fail(e, c, i, "out of (seq, offset) order");
			if (!t) {
				/* a thread begins: the first program with START, others
				 * with SWITCH_IN (created by a traced one) or START (a
				 * traced program exec'd by an untraced one) */
				if (c == 0 && !ntasks ? m->type != TRBUF_MK_START :
				    m->type != TRBUF_MK_SWITCH_IN && m->type != TRBUF_MK_START)
					return fail(e, c, i, "a cpu's next thread does not begin with START (first program) or SWITCH_IN");
				if (m->offset)
					return fail(e, c, i, "a thread does not begin at a sub-buffer's start");
				if (task_of_tid(m->tid))
					return fail(e, c, i, "a tid begins twice");
				tasks = grow(tasks, ntasks + 1, sizeof(*tasks));
				t = &tasks[ntasks++];
				memset(t, 0, sizeof(*t));
				t->pid = m->pid;
				t->tid = m->tid;
				t->cpu = c;
				t->from = g->pos[i];
				t->m0 = i;
				t->images = 1;
				continue;
			}
			if (m->tid != t->tid && !(t->images > 1 && m->tid == t->pid))
				return fail(e, c, i, "another thread's marker before this one's EXIT (a thread vanished?)");
			/* exec: the next image starts at the same place, under the
			 * leader's tid when another thread exec'd */
			if (m->type == TRBUF_MK_EXEC && i + 1 < g->nmk &&
			    (g->mk[i + 1].tid == t->tid ||
			     (g->mk[i + 1].tid == t->pid && g->mk[i + 1].type == TRBUF_MK_START))) {
				if (g->mk[i + 1].type != TRBUF_MK_START || g->mk[i + 1].offset != m->offset ||
				    g->mk[i + 1].seq != m->seq)
					return fail(e, c, i, "EXEC not followed by START at the same position");
				t->images++;
				i++;
				continue;
			}
			if (m->type == TRBUF_MK_EXIT || m->type == TRBUF_MK_EXEC) {
				/* exit, or exec of an untraced program */
				t->to = m->seq == g->nsb ? g->len : g->pos[i];
				t->m1 = i + 1;
				t = NULL;
			}
		}
		if (t)
			return fail(e, c, g->nmk - 1, "the last thread does not end with EXIT or EXEC");
	}
	for (size_t k = 0; k < ntasks; k++) {
		struct region *g = &reg[tasks[k].cpu];

		for (size_t i = tasks[k].m0; i < tasks[k].m1; i++) {
			struct task *ch;

			if (g->mk[i].type != TRBUF_MK_FORK)
				continue;
			ch = task_of_tid((int32_t)g->mk[i].arg);
			if (!ch)
				return fail(e, tasks[k].cpu, i, "FORK of a child that never began");
			if (reg[ch->cpu].mk[ch->m0].time_ns < g->mk[i].time_ns)
				return fail(e, tasks[k].cpu, i, "child begins before its FORK");
		}
	}
	/* labels: "0" for the first program, "P.k" for the k-th child of P */
	if (ntasks)
		snprintf(tasks[0].label, sizeof(tasks[0].label), "0");
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t k = 0; k < ntasks; k++) {
			struct region *g = &reg[tasks[k].cpu];
			int n = 0;

			if (!tasks[k].label[0])
				continue;
			for (size_t i = tasks[k].m0; i < tasks[k].m1; i++) {
				struct task *ch;

				if (g->mk[i].type != TRBUF_MK_FORK)
					continue;
				ch = task_of_tid((int32_t)g->mk[i].arg);
				if (!ch->label[0]) {
					int w = snprintf(ch->label, sizeof(ch->label), "%s.%d",
							 tasks[k].label, n);

					if (w < 0 || (size_t)w >= sizeof(ch->label))
						return fail(e, tasks[k].cpu, i,
							    "fork chain too deep to label its child");
					changed = 1;
				}
				n++;
			}
		}
	}
	for (size_t k = 0; k < ntasks && !quiet; k++) {
		struct task *t = &tasks[k];

		printf("task %s cpu %u pid %d tid %d images %d bytes %llu markers %zu\n",
		       t->label[0] ? t->label : "?", t->cpu, t->pid, t->tid, t->images,
		       (unsigned long long)(t->to - t->from), t->m1 - t->m0);
	}
	return 0;
}

/* The thread labelled @label, or "tid=N": the thread N. */
static struct task *task_of_label(const char *label)
{
	if (!strncmp(label, "tid=", 4) && task_of_tid(atoi(label + 4)))
		return task_of_tid(atoi(label + 4));
	for (size_t k = 0; k < ntasks; k++)
		if (!strcmp(tasks[k].label, label))
			return &tasks[k];
	fprintf(stderr, "aerun_region: no thread labelled %s\n", label);
	return NULL;
}

/* Copies the cpu stream's bytes [from, to) into buf; returns the count. */
static uint64_t copy_bytes(struct region *g, uint64_t from, uint64_t to, uint8_t *buf)
{
	uint64_t nb = 0;

	for (size_t s = 0; s < g->nsb; s++) {
		uint64_t lo = g->sb[s].base, hi = lo + g->sb[s].len;

		for (uint64_t p = lo > from ? lo : from; p < hi && p < to; p++)
			buf[nb++] = g->sb[s].data[p - lo];
	}
	return nb;
}

static int extract(const char *label, int image, const char *out)
{
	struct ae_writer_opts o = { .level = 1 };
	struct ae_writer *w;
	struct trbuf_marker *mk;
	struct region *g;
	struct task *t;
	uint64_t from, to, nb;
	size_t i, first, nm = 0;
	uint8_t *buf;
	int k = 0, fd;

	quiet = 1;
	if (check() || !(t = task_of_label(label)))
		return 1;
	g = &reg[t->cpu];
	first = t->m0;
	from = t->from;
	/* image k starts at the START after the k-th EXEC */
	for (i = t->m0; i + 1 < t->m1 && k < image; i++) {
		if (g->mk[i].type == TRBUF_MK_EXEC && g->mk[i + 1].type == TRBUF_MK_START) {
			k++;
			first = i + 1;
			from = g->pos[i + 1];
		}
	}
	if (k != image || g->mk[first].type != TRBUF_MK_START) {
		fprintf(stderr, "aerun_region: thread %s has no image %d starting with START\n", label, image);
		return 1;
	}
	to = t->to;
	mk = calloc(t->m1 - first, sizeof(*mk));
	for (i = first; i < t->m1; i++) {
		struct trbuf_marker m = g->mk[i];

		/* positions only, or children that are not in the extract */
		if (m.type == TRBUF_MK_SUBBUF || m.type == TRBUF_MK_FORK)
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
	nb = copy_bytes(g, from, to, buf);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ae_writer_open(&w, fd, &o) ||
	    ae_writer_chunk(w, AE_CHUNK_SESSION, 0, 0, session, session_len, 0) ||
	    ae_writer_chunk(w, AE_CHUNK_MARKERS, 0, 0, mk, nm * sizeof(*mk), 0) ||
	    ae_writer_chunk(w, AE_CHUNK_DATA, 0, 0, buf, nb, 0) ||
	    ae_writer_close(w, NULL)) {
		fprintf(stderr, "aerun_region: cannot write %s\n", out);
		return 1;
	}
	return 0;
}

/* Writes the witness bytes of the thread labelled @label to OUT. */
static int bytes(const char *label, const char *out)
{
	struct task *t;
	uint8_t *buf;
	FILE *f;
	uint64_t nb;

	quiet = 1;
	if (check() || !(t = task_of_label(label)))
		return 1;
	buf = malloc(t->to - t->from + 1);
	nb = copy_bytes(&reg[t->cpu], t->from, t->to, buf);
	f = fopen(out, "wb");
	if (!f)
		return 1;
	fwrite(buf, 1, nb, f);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check"))
		return load(argv[2]) ? 1 : check();
	if (argc == 6 && !strcmp(argv[1], "--extract"))
		return load(argv[2]) ? 1 : extract(argv[3], atoi(argv[4]), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "--bytes"))
		return load(argv[2]) ? 1 : bytes(argv[3], argv[4]);
	fprintf(stderr, "usage: aerun_region --check IN | --extract IN LABEL IMAGE OUT | --bytes IN LABEL OUT\n");
	return 2;
}
