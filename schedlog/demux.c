// SPDX-License-Identifier: MIT
/*
 * demux.c - a capture as per-task byte streams (include/aetrace/schedlog.h).
 *
 * Each CPU's sub-buffers, concatenated in sequence order, form one byte
 * stream; each marker names a position (seq, offset) in it. The bytes
 * between two markers of a CPU belong to the task that owns the CPU there:
 * the task of the last START or SWITCH_IN, until it exits, execs or stops.
 * Every CPU has its own reader of the trace (and of sched.bin), so a CPU
 * that lags behind in the file costs no buffering of the others; the
 * CPUs' markers are merged by time, and a task's bytes on its previous
 * CPU are handed out before its switch-in elsewhere.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/container.h>
#include <aetrace/schedlog.h>

#define POS_END	UINT64_MAX

struct sb {
	uint64_t seq;
	uint32_t len;
	uint8_t *data;
};

struct qmk {
	struct trbuf_marker m;
	uint64_t index;
};

struct cpu_src {
	struct schedlog_demux *d;
	uint16_t cpu;
	struct ae_reader *r;
	struct schedlog_markers *ms;	/* with a separate sched file */
	struct qmk *q;			/* markers read ahead */
	size_t qh, qn, qcap;
	struct sb *sbs;			/* sub-buffers read ahead */
	size_t sbh, sbn, sbcap;
	uint64_t seq;			/* consumed position */
	uint32_t off;
	uint64_t last_seq;		/* position of the last marker */
	uint32_t last_off;
	uint64_t last_time;		/* and its time */
	uint64_t next_data_seq;		/* expected seq of the next DATA chunk */
	uint64_t nmk_file;		/* markers counted in file order */
	int data_eof, mk_eof;
	int end_seen;			/* this reader met the END chunk */
	int has_owner;
	int32_t owner_pid, owner_tid;
};

enum { ACT_DATA = 1, ACT_MARKER = 2 };

struct act {
	int kind;
	struct cpu_src *src;
	uint64_t seq;			/* DATA: deliver up to (seq, off) */
	uint32_t off;
	int has_owner;
	int handoff;			/* DATA to POS_END: the owner's bytes
					 * before its switch-in elsewhere */
	int empty;			/* DATA: from where it ends (nothing
					 * to lose) */
	int32_t pid, tid;
	struct qmk mk;			/* MARKER */
};

struct schedlog_demux {
	const char *trace, *sched;
	struct schedlog_geom g;
	struct cpu_src *src;
	struct act *acts;
	size_t ah, an, acap;
	struct trbuf_marker cur;	/* the marker handed out last */
	uint8_t *to_free;		/* sub-buffer finished by the last piece */
	uint8_t *unused;		/* aerun: cpus no chunk names (no reader) */
	int ended;
	uint64_t drops;			/* the END chunk's, once a reader met it */
	/* The first CPU with a reader checks the chunks of every CPU: the
	 * markers' cpus and types, and END's counters against the chunks
	 * before it (a chunk cut out with its CRC is noticed there). */
	struct cpu_src *first;
	struct ae_end tally;		/* counted by first */
	int end_seen;			/* first met the END chunk */
};

static int derr(struct schedlog_demux *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int derr(struct schedlog_demux *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "schedlog: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

static int push_act(struct schedlog_demux *d, const struct act *a)
{
	if (d->ah + d->an == d->acap) {
		if (d->ah) {
			memmove(d->acts, d->acts + d->ah, d->an * sizeof(*a));
			d->ah = 0;
		} else {
			size_t cap = d->acap ? d->acap * 2 : 16;
			struct act *n = realloc(d->acts, cap * sizeof(*n));

			if (!n)
				return derr(d, "out of memory");
			d->acts = n;
			d->acap = cap;
		}
	}
	d->acts[d->ah + d->an++] = *a;
	return 0;
}

static int push_marker(struct cpu_src *s, const struct trbuf_marker *m, uint64_t index)
{
	if (s->qh + s->qn == s->qcap) {
		if (s->qh) {
			memmove(s->q, s->q + s->qh, s->qn * sizeof(*s->q));
			s->qh = 0;
		} else {
			size_t cap = s->qcap ? s->qcap * 2 : 64;
			struct qmk *n = realloc(s->q, cap * sizeof(*n));

			if (!n)
				return derr(s->d, "out of memory");
			s->q = n;
			s->qcap = cap;
		}
	}
	s->q[s->qh + s->qn].m = *m;
	s->q[s->qh + s->qn].index = index;
	s->qn++;
	return 0;
}

/* A marker's cpu, type and flags must be ones this reader knows what to
 * do with (only SIGRETURN markers carry flags: TRBUF_MKF_CTX_*). */
static int check_marker_cpu(struct cpu_src *s, const struct trbuf_marker *m, uint64_t index)
{
	if (m->type < TRBUF_MK_START || m->type > TRBUF_MK_ROLLBACK)
		return derr(s->d, "%s: marker %llu: unknown marker type %u",
			    s->d->sched ? s->d->sched : s->d->trace,
			    (unsigned long long)index, m->type);
	if (m->flags & ~(m->type == TRBUF_MK_SIGRETURN ? TRBUF_MKF_CTX_CHECKED |
			 TRBUF_MKF_CTX_FULL | TRBUF_MKF_CTX_FLAGS : 0))
		return derr(s->d, "%s: marker %llu: unknown flags %#x for its type %u",
			    s->d->sched ? s->d->sched : s->d->trace,
			    (unsigned long long)index, m->flags, m->type);
	if (m->cpu >= s->d->g.nr_cpus)
		return derr(s->d, "%s: marker %llu: cpu %u, but the capture has %u cpus",
			    s->d->sched ? s->d->sched : s->d->trace,
			    (unsigned long long)index, m->cpu, s->d->g.nr_cpus);
	return 0;
}

/* END (at @off): its counters must be the chunks'; -1 if not. */
static int end_check(struct schedlog_demux *d, const struct ae_chunk_hdr *h,
		     const void *pl, uint64_t off)
{
	struct ae_end e;

	if (h->len != sizeof(e))
		return derr(d, "%s: END chunk of %u bytes (not %zu) at offset %llu",
			    d->trace, h->len, sizeof(e), (unsigned long long)off);
	memcpy(&e, pl, sizeof(e));
	if (!ae_end_matches(&e, &d->tally))
		return derr(d, "%s: END chunk at offset %llu counts %llu DATA chunks, %llu witness bytes and %llu markers, the file holds %llu, %llu and %llu before it: chunks are missing or were added",
			    d->trace, (unsigned long long)off, (unsigned long long)e.data_chunks,
			    (unsigned long long)e.raw_bytes, (unsigned long long)e.markers,
			    (unsigned long long)d->tally.data_chunks,
			    (unsigned long long)d->tally.raw_bytes,
			    (unsigned long long)d->tally.markers);
	d->end_seen = 1;
	return 0;
}

/* Read the next chunk of this CPU's reader: 1, 0 at the end, -1. */
static int read_chunk(struct cpu_src *s)
{
	struct schedlog_demux *d = s->d;
	struct ae_chunk_hdr h;
	const void *pl;
	int ret = ae_reader_next(s->r, &h, &pl);

	if (ret < 0)
		return derr(d, "%s", ae_reader_error(s->r));
	if (ret == 0) {
		s->data_eof = 1;
		if (!d->sched)
			s->mk_eof = 1;
		return 0;
	}
	if (s == d->first) {
		/* (bdump --check and bdump's file source refuse it alike) */
		if (d->end_seen)
			return derr(d, "%s: chunk type %u at offset %llu after the END chunk: the file was written on after its end",
				    d->trace, h.type, (unsigned long long)ae_reader_offset(s->r));
		if (h.type == AE_CHUNK_DATA && h.cpu >= d->g.nr_cpus)
			return derr(d, "%s: DATA chunk cpu %u seq %llu at offset %llu: the capture has %u cpus",
				    d->trace, h.cpu, (unsigned long long)h.seq,
				    (unsigned long long)ae_reader_offset(s->r), d->g.nr_cpus);
		ae_end_tally(&d->tally, &h);
		if (h.type == AE_CHUNK_END && end_check(d, &h, pl, ae_reader_offset(s->r)))
			return -1;
	}
	if (h.type == AE_CHUNK_DATA && h.cpu == s->cpu) {
		struct sb *b;

		if (h.seq < s->next_data_seq)
			return derr(d, "%s: DATA chunk cpu %u seq %llu at offset %llu: sequence numbers go back (expected %llu)",
				    d->trace, s->cpu, (unsigned long long)h.seq,
				    (unsigned long long)ae_reader_offset(s->r),
				    (unsigned long long)s->next_data_seq);
		s->next_data_seq = h.seq + 1;
		if (s->sbh + s->sbn == s->sbcap) {
			if (s->sbh) {
				memmove(s->sbs, s->sbs + s->sbh, s->sbn * sizeof(*s->sbs));
				s->sbh = 0;
			} else {
				size_t cap = s->sbcap ? s->sbcap * 2 : 8;
				struct sb *n = realloc(s->sbs, cap * sizeof(*n));

				if (!n)
					return derr(d, "out of memory");
				s->sbs = n;
				s->sbcap = cap;
			}
		}
		b = &s->sbs[s->sbh + s->sbn];
		b->seq = h.seq;
		b->len = h.len;
		b->data = malloc(h.len ? h.len : 1);
		if (!b->data)
			return derr(d, "out of memory");
		memcpy(b->data, pl, h.len);
		s->sbn++;
	} else if (h.type == AE_CHUNK_END && h.len >= sizeof(struct ae_end)) {
		struct ae_end e;

		memcpy(&e, pl, sizeof(e));
		d->drops = e.drops;
		s->end_seen = 1;
	} else if (h.type == AE_CHUNK_MARKERS && !d->sched) {
		struct trbuf_marker m;
		size_t n = h.len / sizeof(m);

		if (h.len % sizeof(m))
			return derr(d, "%s: MARKERS chunk of %u bytes (not a multiple of %zu) at offset %llu",
				    d->trace, h.len, sizeof(m),
				    (unsigned long long)ae_reader_offset(s->r));
		for (size_t i = 0; i < n; i++) {
			uint64_t index = s->nmk_file++;

			/* (a copy: the payload need not be aligned) */
			memcpy(&m, (const char *)pl + i * sizeof(m), sizeof(m));
			if (s == d->first && check_marker_cpu(s, &m, index))
				return -1;
			if (m.cpu == s->cpu && push_marker(s, &m, index))
				return -1;
		}
	}
	return 1;
}

/* The next marker of this CPU, or NULL (end or error in *err). */
static struct qmk *peek_marker(struct cpu_src *s, int *err)
{
	*err = 0;
	while (!s->qn && !s->mk_eof) {
		if (s->ms) {
			struct trbuf_marker m;
			uint64_t index;
			int ret = schedlog_markers_next(s->ms, &m, &index);

			if (ret < 0) {
				*err = derr(s->d, "%s", schedlog_markers_error(s->ms));
				return NULL;
			}
			if (ret == 0) {
				s->mk_eof = 1;
				break;
			}
			if (s->cpu == 0 && check_marker_cpu(s, &m, index)) {
				*err = -1;
				return NULL;
			}
			if (m.cpu == s->cpu && push_marker(s, &m, index)) {
				*err = -1;
				return NULL;
			}
		} else if (read_chunk(s) < 0) {
			*err = -1;
			return NULL;
		}
	}
	return s->qn ? &s->q[s->qh] : NULL;
}

/* The loaded sub-buffer `seq` (read ahead as needed), or NULL with *err
 * set if it is missing. */
static struct sb *load_sb(struct cpu_src *s, uint64_t seq, int *err)
{
	*err = 0;
	for (;;) {
		if (s->sbn) {
			struct sb *b = &s->sbs[s->sbh];

			if (b->seq == seq)
				return b;
			if (b->seq > seq) {
				*err = derr(s->d, "%s: cpu %u: sub-buffer seq %llu is missing (the next one in the trace is seq %llu)",
					    s->d->trace, s->cpu, (unsigned long long)seq,
					    (unsigned long long)b->seq);
				return NULL;
			}
			/* below seq: a sub-buffer no marker points into */
			free(b->data);
			s->sbh++;
			s->sbn--;
			continue;
		}
		if (s->data_eof)
			return NULL;
		if (read_chunk(s) < 0) {
			*err = -1;
			return NULL;
		}
	}
}

static int pos_before(uint64_t s1, uint32_t o1, uint64_t s2, uint32_t o2)
{
	return s1 < s2 || (s1 == s2 && o1 < o2);
}

/*
 * Next piece of the bytes from the CPU's position up to (seq, off):
 * 1 with the piece in p and len, 0 when there, 2 when the file has no
 * more of this CPU's bytes and no END chunk (cut short: whether the CPU
 * had more is unknown; at POS_END too), -1 on an error.
 */
static int piece(struct cpu_src *s, uint64_t seq, uint32_t off, const uint8_t **p,
		 size_t *len, uint64_t *pseq, uint32_t *poff)
{
	for (;;) {
		struct sb *b;
		uint32_t end;
		int err;

		if (seq != POS_END && !pos_before(s->seq, s->off, seq, off))
			return 0;
		b = load_sb(s, s->seq, &err);
		if (!b) {
			if (err)
				return -1;
			if (!s->end_seen)
				return 2;
			if (seq == POS_END)
				return 0;
			return derr(s->d, "%s: cpu %u: markers point to sub-buffer seq %llu offset %u, but the trace ends before it (missing sub-buffer)",
				    s->d->trace, s->cpu, (unsigned long long)seq, off);
		}
		end = s->seq == seq ? off : b->len;
		if (end > b->len)
			return derr(s->d, "%s: cpu %u: a marker points to offset %u of sub-buffer seq %llu, which holds %u bytes",
				    s->d->trace, s->cpu, end, (unsigned long long)b->seq, b->len);
		if (s->off < end) {
			*p = b->data + s->off;
			*len = end - s->off;
			*pseq = s->seq;
			*poff = s->off;
			s->off = end;
			return 1;
		}
		if (s->seq == seq)
			return 0;
		/* sub-buffer done: freed at the next call (the piece points in) */
		free(s->d->to_free);
		s->d->to_free = b->data;
		s->sbh++;
		s->sbn--;
		s->seq++;
		s->off = 0;
	}
}

/* Queue the CPU's bytes from its last marker up to (seq, off). */
static int data_to(struct schedlog_demux *d, struct cpu_src *s, uint64_t seq, uint32_t off,
		   int handoff)
{
	struct act a = { .kind = ACT_DATA, .src = s, .seq = seq, .off = off,
			 .has_owner = s->has_owner, .handoff = handoff,
			 .empty = seq == s->last_seq && off == s->last_off,
			 .pid = s->owner_pid, .tid = s->owner_tid };

	return push_act(d, &a);
}

/* Take the earliest marker of all CPUs and queue what it implies. */
static int step(struct schedlog_demux *d)
{
	struct cpu_src *best = NULL;
	struct qmk *bm = NULL, mk;
	int err;

	for (uint32_t c = 0; c < d->g.nr_cpus; c++) {
		struct qmk *q = peek_marker(&d->src[c], &err);

		if (err)
			return -1;
		if (q && (!bm || q->m.time_ns < bm->m.time_ns)) {
			best = &d->src[c];
			bm = q;
		}
	}
	if (!bm) {
		if (d->ended)
			return 0;
		d->ended = 1;
		for (uint32_t c = 0; c < d->g.nr_cpus; c++)
			if (data_to(d, &d->src[c], POS_END, 0, 0))
				return -1;
		return 1;
	}
	mk = *bm;
	best->qh++;
	best->qn--;
	if (pos_before(mk.m.seq, mk.m.offset, best->last_seq, best->last_off))
		return derr(d, "%s: marker %llu (cpu %u, %s) at seq %llu offset %u lies before the previous marker of cpu %u (seq %llu offset %u)",
			    d->sched ? d->sched : d->trace, (unsigned long long)mk.index,
			    mk.m.cpu, schedlog_type_name(mk.m.type),
			    (unsigned long long)mk.m.seq, mk.m.offset, mk.m.cpu,
			    (unsigned long long)best->last_seq, best->last_off);
	/* a CPU's markers are in time order (the kernel takes the time
	 * under the CPU's lock): a marker out of it would hand its bytes
	 * to tasks in the wrong order across CPUs */
	if (mk.m.time_ns < best->last_time)
		return derr(d, "%s: marker %llu (cpu %u, %s): its time %llu ns goes back on this cpu (the previous marker's: %llu ns)",
			    d->sched ? d->sched : d->trace, (unsigned long long)mk.index,
			    mk.m.cpu, schedlog_type_name(mk.m.type),
			    (unsigned long long)mk.m.time_ns, (unsigned long long)best->last_time);
	if (mk.m.type == TRBUF_MK_SWITCH_IN || mk.m.type == TRBUF_MK_START) {
		/* the task's bytes on its previous CPU come first */
		for (uint32_t c = 0; c < d->g.nr_cpus; c++) {
			struct cpu_src *o = &d->src[c];
			struct qmk *q;

			if (o == best || !o->has_owner || o->owner_tid != mk.m.tid)
				continue;
			q = peek_marker(o, &err);
			if (err)
				return -1;
			if (data_to(d, o, q ? q->m.seq : POS_END, q ? q->m.offset : 0, !q))
				return -1;
			o->has_owner = 0;
		}
	}
	if (data_to(d, best, mk.m.seq, mk.m.offset, 0))
		return -1;
	best->last_seq = mk.m.seq;
	best->last_off = mk.m.offset;
	best->last_time = mk.m.time_ns;
	{
		struct act a = { .kind = ACT_MARKER, .src = best, .mk = mk };

		if (push_act(d, &a))
			return -1;
	}
	switch (mk.m.type) {
	case TRBUF_MK_START:
	case TRBUF_MK_SWITCH_IN:
		best->has_owner = 1;
		best->owner_pid = mk.m.pid;
		best->owner_tid = mk.m.tid;
		break;
	case TRBUF_MK_EXIT:
	case TRBUF_MK_EXEC:
	case TRBUF_MK_STOP:
		if (best->has_owner && best->owner_tid == mk.m.tid)
			best->has_owner = 0;
		break;
	default:
		break;
	}
	return 1;
}

int schedlog_demux_next(struct schedlog_demux *d, struct schedlog_ev *ev)
{
	free(d->to_free);
	d->to_free = NULL;
	for (;;) {
		struct act *a;

		if (!d->an) {
			int ret = step(d);

			if (ret <= 0)
				return ret;
			continue;
		}
		a = &d->acts[d->ah];
		memset(ev, 0, sizeof(*ev));
		ev->cpu = a->src->cpu;
		if (a->kind == ACT_MARKER) {
			d->cur = a->mk.m;
			ev->kind = SCHEDLOG_EV_MARKER;
			ev->pid = d->cur.pid;
			ev->tid = d->cur.tid;
			ev->index = a->mk.index;
			ev->m = &d->cur;
			ev->seq = d->cur.seq;
			ev->offset = d->cur.offset;
			d->ah++;
			d->an--;
			return 1;
		}
		{
			int ret = piece(a->src, a->seq, a->off, &ev->data, &ev->len,
					&ev->seq, &ev->offset);

			if (ret < 0)
				return -1;
			if (ret == 2 && (a->seq != POS_END || a->handoff) && a->has_owner &&
			    !a->empty) {
				/* its bytes there ran out before it left: cut */
				ev->kind = SCHEDLOG_EV_CUT;
				ev->pid = a->pid;
				ev->tid = a->tid;
				ev->seq = a->src->seq;
				ev->offset = a->src->off;
				d->ah++;
				d->an--;
				return 1;
			}
			if (ret != 1) {
				d->ah++;
				d->an--;
				continue;
			}
			if (!a->has_owner)
				return derr(d, "%s: cpu %u: %zu bytes at sub-buffer seq %llu offset %u belong to no traced task (no START or SWITCH_IN marker before them)",
					    d->trace, a->src->cpu, ev->len,
					    (unsigned long long)ev->seq, ev->offset);
			ev->kind = SCHEDLOG_EV_DATA;
			ev->pid = a->pid;
			ev->tid = a->tid;
			return 1;
		}
	}
}

const struct schedlog_geom *schedlog_demux_geom(const struct schedlog_demux *d)
{
	return &d->g;
}

/* A separate schedule of an aerun capture: its regions, too. */
static int max_sched_cpu(struct schedlog_demux *d)
{
	struct schedlog_markers *ms;
	struct trbuf_marker m;
	uint64_t index;
	int ret;

	if (schedlog_markers_open(&ms, d->sched, -1)) {
		derr(d, "%s", schedlog_markers_error(ms));
		schedlog_markers_close(ms);
		return -1;
	}
	while ((ret = schedlog_markers_next(ms, &m, &index)) == 1)
		if (m.cpu >= d->g.nr_cpus && m.cpu < 4096)
			d->g.nr_cpus = m.cpu + 1;
	if (ret < 0)
		derr(d, "%s", schedlog_markers_error(ms));
	schedlog_markers_close(ms);
	return ret < 0 ? -1 : 0;
}

static int read_session(struct schedlog_demux *d)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	const struct ae_session *ss;
	int ret = ae_reader_open(&r, d->trace);

	if (ret)
		return derr(d, "%s: %s", d->trace, strerror(-ret));
	ret = ae_reader_next(r, &h, &pl);
	if (ret < 0) {
		derr(d, "%s", ae_reader_error(r));
		goto out;
	}
	ss = pl;
	if (ret == 0 || h.type != AE_CHUNK_SESSION || h.len < sizeof(*ss)) {
		ret = derr(d, "%s: no SESSION chunk at offset 0: not an aetrace capture", d->trace);
		goto out;
	}
	if (ss->version != AE_FORMAT_VERSION) {
		ret = derr(d, "%s: format version %u (this reader knows %u)", d->trace,
			   ss->version, AE_FORMAT_VERSION);
		goto out;
	}
	d->g.mode = ss->mode;
	d->g.nr_cpus = ss->nr_cpus ? ss->nr_cpus : 1;
	d->g.subbuf_size = ss->subbuf_size;
	d->g.nr_subbufs = ss->nr_subbufs;
	if (d->g.nr_cpus > 4096) {
		ret = derr(d, "%s: SESSION claims %u cpus", d->trace, d->g.nr_cpus);
		goto out;
	}
	ret = 0;
	if (d->g.mode != AE_MODE_STANDALONE)
		goto out;
	/*
	 * aerun: one region per thread, as many as it had threads; regions
	 * that no chunk names get no reader (each reader decompresses the
	 * whole file).
	 */
	d->unused = malloc(4096);
	if (!d->unused) {
		ret = derr(d, "out of memory");
		goto out;
	}
	memset(d->unused, !d->sched, 4096);
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (h.type == AE_CHUNK_DATA && h.cpu < 4096) {
			d->unused[h.cpu] = 0;
			if (h.cpu >= d->g.nr_cpus)
				d->g.nr_cpus = h.cpu + 1;
		}
		if (h.type == AE_CHUNK_MARKERS && !d->sched)
			for (size_t i = 0; i + sizeof(struct trbuf_marker) <= h.len;
			     i += sizeof(struct trbuf_marker)) {
				struct trbuf_marker m;

				memcpy(&m, (const char *)pl + i, sizeof(m));
				if (m.cpu >= 4096)
					continue;
				d->unused[m.cpu] = 0;
				if (m.cpu >= d->g.nr_cpus)
					d->g.nr_cpus = m.cpu + 1;
			}
	}
	if (ret < 0)
		derr(d, "%s", ae_reader_error(r));
	else if (d->sched && max_sched_cpu(d))
		ret = -1;
out:
	ae_reader_close(r);
	return ret < 0 ? -1 : 0;
}

/*
 * A separate schedule file must hold the trace's own markers, where the
 * trace has them (bdump writes both; the trace's chunks are checksummed,
 * the file is not): a flipped byte of the file's would be taken as is,
 * and some (a switch point's ip) move a signal silently. Returns 0 or -1.
 */
static int same_markers(struct schedlog_demux *d)
{
	struct schedlog_markers *a = NULL, *b = NULL;
	struct trbuf_marker ma, mb;
	uint64_t ia, ib;
	int ra, rb, ret = 0;

	if (schedlog_markers_open(&a, d->sched, -1)) {
		ret = derr(d, "%s", a ? schedlog_markers_error(a) : "out of memory");
		goto close_readers;
	}
	if (schedlog_markers_open(&b, d->trace, -1)) {
		ret = derr(d, "%s", b ? schedlog_markers_error(b) : "out of memory");
		goto close_readers;
	}
	rb = schedlog_markers_next(b, &mb, &ib);
	if (rb == 0)
		goto close_readers;	/* the trace has none: the file is the schedule */
	for (;;) {
		ra = schedlog_markers_next(a, &ma, &ia);
		if (ra < 0 || rb < 0) {
			ret = derr(d, "%s", schedlog_markers_error(ra < 0 ? a : b));
			break;
		}
		if (!ra && !rb)
			break;
		if (!ra) {
			ret = derr(d, "%s: ends at marker %llu, before the markers %s holds (checksummed: leave out the schedule file)",
				   d->sched, (unsigned long long)ib, d->trace);
			break;
		}
		if (!rb || memcmp(&ma, &mb, sizeof(ma))) {
			ret = derr(d, "%s: marker %llu %s the markers %s holds (checksummed: leave out the schedule file)",
				   d->sched, (unsigned long long)ia, !rb ? "is past" : "differs from",
				   d->trace);
			break;
		}
		rb = schedlog_markers_next(b, &mb, &ib);
	}
close_readers:
	schedlog_markers_close(a);
	schedlog_markers_close(b);
	return ret;
}

int schedlog_demux_open(struct schedlog_demux **dp, const char *trace, const char *sched)
{
	struct schedlog_demux *d = calloc(1, sizeof(*d));

	*dp = d;
	if (!d)
		return -1;
	d->trace = trace;
	d->sched = sched;
	if (read_session(d))
		return -1;
	if (sched && same_markers(d))
		return -1;
	d->src = calloc(d->g.nr_cpus, sizeof(*d->src));
	if (!d->src)
		return derr(d, "out of memory");
	for (uint32_t c = 0; c < d->g.nr_cpus; c++) {
		struct cpu_src *s = &d->src[c];
		int ret;

		s->d = d;
		s->cpu = c;
		if (d->unused && d->unused[c]) {
			s->data_eof = 1;
			s->mk_eof = 1;
			continue;
		}
		ret = ae_reader_open(&s->r, trace);
		if (ret)
			return derr(d, "%s: %s", trace, strerror(-ret));
		if (!d->first)
			d->first = s;
		if (sched) {
			ret = schedlog_markers_open(&s->ms, sched, -1);
			if (ret)
				return derr(d, "%s", schedlog_markers_error(s->ms));
		}
	}
	return 0;
}

uint64_t schedlog_demux_drops(const struct schedlog_demux *d)
{
	return d->drops;
}

int schedlog_demux_complete(const struct schedlog_demux *d)
{
	return d->end_seen;
}

void schedlog_demux_close(struct schedlog_demux *d)
{
	if (!d)
		return;
	for (uint32_t c = 0; d->src && c < d->g.nr_cpus; c++) {
		struct cpu_src *s = &d->src[c];

		if (s->r)
			ae_reader_close(s->r);
		schedlog_markers_close(s->ms);
		for (size_t i = 0; i < s->sbn; i++)
			free(s->sbs[s->sbh + i].data);
		free(s->sbs);
		free(s->q);
	}
	free(d->src);
	free(d->acts);
	free(d->to_free);
	free(d->unused);
	free(d);
}
