// SPDX-License-Identifier: MIT
/*
 * timeline.c - the slices of `aetrace timeline`: which task ran on which
 * CPU when.
 *
 * From sched.bin alone, a traced task's slice runs from its SWITCH_IN (or
 * START) marker to the next SWITCH_IN on that CPU, or to its EXIT, EXEC or
 * STOP: the kernel writes no marker when an untraced task takes the CPU,
 * so these slices are upper bounds. With the BPF log every context switch
 * is known: slices are cut at the switches, and a slice is traced when a
 * SWITCH_IN or START marker of its task on its CPU falls inside it (the
 * marker is written just after the switch).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <linux/trbuf.h>
#include <aetrace/schedlog.h>
#include "sched_event.h"
#include "sysregen.h"
#include "timeline.h"

/* One lane per cpu: a corrupt cpu number must not draw 65536 (the
 * demultiplexer's limit too). */
#define AE_TL_MAX_CPUS	4096u

struct slices {
	struct ae_slice *s;
	size_t n, cap;
};

static struct ae_slice *slice_add(struct slices *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 1024;
		struct ae_slice *s = realloc(v->s, cap * sizeof(*s));

		if (!s)
			return NULL;
		v->s = s;
		v->cap = cap;
	}
	memset(&v->s[v->n], 0, sizeof(v->s[0]));
	return &v->s[v->n++];
}

/* Read a whole file; returns 0 or -errno (message printed). */
static int read_file(const char *path, void **buf, size_t *len)
{
	struct stat st;
	char *p;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		fprintf(stderr, "aetrace timeline: %s: %s\n", path, strerror(errno));
		goto out_close;
	}
	p = malloc(st.st_size ? st.st_size : 1);
	if (!p) {
		ret = -ENOMEM;
		fprintf(stderr, "aetrace timeline: %s: out of memory (%lld bytes)\n", path,
			(long long)st.st_size);
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, p + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -EIO;
			fprintf(stderr, "aetrace timeline: %s: read failed at offset %zu: %s\n",
				path, got, n ? strerror(errno) : "file shrank");
			free(p);
			goto out_close;
		}
		got += n;
	}
	*buf = p;
	*len = got;
out_close:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int cmp_marker(const void *a, const void *b)
{
	const struct trbuf_marker *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return a < b ? -1 : a > b;	/* stable: read order */
}

static int cmp_slice(const void *a, const void *b)
{
	const struct ae_slice *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int opens_slice(uint32_t type)
{
	return type == TRBUF_MK_SWITCH_IN || type == TRBUF_MK_START;
}

/* Traced slices from the markers alone (sorted by cpu, time). */
static int slices_from_markers(struct slices *v, const struct trbuf_marker *mk, size_t n,
			       uint64_t t_end)
{
	struct ae_slice *open = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct trbuf_marker *m = &mk[i];

		if (open && open->cpu != m->cpu) {
			open->end = t_end;
			open = NULL;
		}
		if (opens_slice(m->type)) {
			if (open)
				open->end = m->time_ns;
			open = slice_add(v);
			if (!open)
				return -ENOMEM;
			open->start = m->time_ns;
			open->cpu = m->cpu;
			open->pid = m->pid;
			open->tid = m->tid;
			open->traced = 1;
		} else if (open && open->tid == m->tid &&
			   (m->type == TRBUF_MK_EXIT || m->type == TRBUF_MK_EXEC ||
			    m->type == TRBUF_MK_STOP)) {
			open->end = m->time_ns;
			open = NULL;
		}
	}
	if (open)
		open->end = t_end;
	return 0;
}

/* Every slice of every task from the BPF switches. */
static int slices_from_bpf(struct slices *v, const struct sched_log_header *h,
			   const struct sched_event *ev, size_t n, unsigned int nr_cpus)
{
	/* per CPU: the running slice, IDLE, or UNSEEN before its first switch */
	size_t *cur = malloc(nr_cpus * sizeof(*cur));
	const size_t unseen = SIZE_MAX, idle = SIZE_MAX - 1;
	unsigned int c;
	size_t i;

	if (!cur)
		return -ENOMEM;
	for (c = 0; c < nr_cpus; c++)
		cur[c] = unseen;
	for (i = 0; i < n; i++) {
		const struct sched_event *e = &ev[i];
		struct ae_slice *s;

		if (e->type != SCHED_EV_SWITCH || e->cpu >= nr_cpus)
			continue;
		if (cur[e->cpu] < idle) {
			struct ae_slice *run = &v->s[cur[e->cpu]];

			/* a log out of time order on one CPU gives empty slices, not negative ones */
			run->end = e->time_ns > run->start ? e->time_ns : run->start;
		} else if (cur[e->cpu] == unseen && e->tid) {
			/* prev ran since before the recording began */
			s = slice_add(v);
			if (!s)
				goto err_nomem;
			s->start = h->start_ns < e->time_ns ? h->start_ns : e->time_ns;
			s->end = e->time_ns;
			s->cpu = e->cpu;
			s->pid = e->pid;
			s->tid = e->tid;
			memcpy(s->comm, e->comm, sizeof(s->comm) - 1);
		}
		cur[e->cpu] = idle;
		if (!e->tid2)
			continue;	/* the idle task: an empty stretch of the lane */
		s = slice_add(v);
		if (!s)
			goto err_nomem;
		s->start = s->end = e->time_ns;
		s->cpu = e->cpu;
		s->pid = e->pid2;
		s->tid = e->tid2;
		memcpy(s->comm, e->comm2, sizeof(s->comm) - 1);
		cur[e->cpu] = v->n - 1;
	}
	/* still running at the stop */
	for (c = 0; c < nr_cpus; c++) {
		if (cur[c] < idle && h->end_ns > v->s[cur[c]].start)
			v->s[cur[c]].end = h->end_ns;
	}
	free(cur);
	return 0;
err_nomem:
	free(cur);
	return -ENOMEM;
}

/*
 * Mark the BPF slices the markers show traced. Returns the number of
 * SWITCH_IN/START markers inside the BPF log's time that match no slice of
 * their task on their CPU.
 */
static size_t mark_traced(struct slices *v, const struct trbuf_marker *mk, size_t n,
			  uint64_t t0, uint64_t t1, size_t *inside, size_t *outside)
{
	size_t i, bad = 0;

	*inside = *outside = 0;
	for (i = 0; i < n; i++) {
		const struct trbuf_marker *m = &mk[i];
		size_t lo = 0, hi = v->n;

		if (m->time_ns < t0 || m->time_ns > t1) {
			(*outside)++;
			continue;
		}
		if (!opens_slice(m->type))
			continue;
		(*inside)++;
		/* last slice with (cpu, start) <= (m->cpu, m->time_ns) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct ae_slice *s = &v->s[mid];

			if (s->cpu < m->cpu || (s->cpu == m->cpu && s->start <= m->time_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && v->s[lo - 1].cpu == m->cpu && v->s[lo - 1].tid == m->tid &&
		    m->time_ns <= v->s[lo - 1].end)
			v->s[lo - 1].traced = 1;
		else
			bad++;
	}
	return bad;
}

static int load_markers(const char *path, struct trbuf_marker **mk, size_t *n)
{
	size_t len, i;
	void *buf;

	if (read_file(path, &buf, &len))
		return -1;
	if (len % sizeof(struct trbuf_marker)) {
		fprintf(stderr, "aetrace timeline: %s: %zu bytes, not a whole number of %zu-byte markers (cut at offset %zu)\n",
			path, len, sizeof(struct trbuf_marker), len - len % sizeof(struct trbuf_marker));
		free(buf);
		return -1;
	}
	*mk = buf;
	*n = len / sizeof(struct trbuf_marker);
	for (i = 0; i < *n; i++) {
		const struct trbuf_marker *m = &(*mk)[i];

		if (m->type < TRBUF_MK_START || m->type > TRBUF_MK_ROLLBACK) {
			fprintf(stderr, "aetrace timeline: %s: marker %zu (offset %zu): unknown type %u\n",
				path, i, i * sizeof(*m), m->type);
			free(buf);
			*mk = NULL;
			return -1;
		}
		if (m->cpu >= AE_TL_MAX_CPUS) {
			fprintf(stderr, "aetrace timeline: %s: marker %zu: cpu %u (a capture has at most %u)\n",
				path, i, m->cpu, AE_TL_MAX_CPUS);
			free(buf);
			*mk = NULL;
			return -1;
		}
	}
	return 0;
}

/* The markers of a trace's MARKERS chunks (schedlog's reader). */
static int load_trace_markers(const char *path, struct trbuf_marker **mk, size_t *n)
{
	struct schedlog_markers *ms;
	struct trbuf_marker m;
	uint64_t index;
	size_t cap = 0;
	int r;

	*mk = NULL;
	*n = 0;
	if (schedlog_markers_open(&ms, path, -1)) {
		fprintf(stderr, "aetrace timeline: %s\n", ms ? schedlog_markers_error(ms) : path);
		schedlog_markers_close(ms);
		return -1;
	}
	while ((r = schedlog_markers_next(ms, &m, &index)) == 1) {
		/* (one lane per cpu: a corrupt cpu number would draw 65536) */
		if (m.cpu >= AE_TL_MAX_CPUS) {
			fprintf(stderr, "aetrace timeline: %s: marker %llu: cpu %u (a capture has at most %u)\n",
				path, (unsigned long long)index, m.cpu, AE_TL_MAX_CPUS);
			schedlog_markers_close(ms);
			free(*mk);
			*mk = NULL;
			return -1;
		}
		if (*n == cap) {
			struct trbuf_marker *p = realloc(*mk, (cap ? cap * 2 : 1024) * sizeof(*p));

			if (!p) {
				r = -ENOMEM;
				break;
			}
			*mk = p;
			cap = cap ? cap * 2 : 1024;
		}
		(*mk)[(*n)++] = m;
	}
	if (r < 0)
		fprintf(stderr, "aetrace timeline: %s\n", r == -ENOMEM ? "out of memory" :
			schedlog_markers_error(ms));
	schedlog_markers_close(ms);
	if (r < 0) {
		free(*mk);
		*mk = NULL;
	}
	return r < 0 ? -1 : 0;
}

/* A regenerated slice, with its program's name: the one it points at is
 * gone once ae_sysregen() returns. */
struct counted_slice {
	struct ae_slice_info si;
	char prog[16];
};

_Static_assert(sizeof(((struct counted_slice *)0)->prog) == sizeof(((struct ae_slice *)0)->comm),
	       "a program's name is a slice's comm");

/* Instructions per slice from sysregen, gathered in marker order. */
struct insn_counts {
	struct counted_slice *s;
	size_t n, cap;
	int oom;
};

static void on_slice(void *ctx, const struct ae_slice_info *si)
{
	struct insn_counts *ic = ctx;

	if (ic->n == ic->cap) {
		size_t cap = ic->cap ? ic->cap * 2 : 256;
		struct counted_slice *p = realloc(ic->s, cap * sizeof(*p));

		if (!p) {
			ic->oom = 1;
			return;
		}
		ic->s = p;
		ic->cap = cap;
	}
	ic->s[ic->n].si = *si;
	/* (a program's name, as the BPF log's comm: its first 15 bytes) */
	snprintf(ic->s[ic->n].prog, sizeof(ic->s[ic->n].prog), "%s",
		 si->task.prog ? si->task.prog : "");
	ic->s[ic->n].si.task.prog = NULL;
	ic->n++;
}

/*
 * Regenerate the capture and add each regenerated slice's instructions to
 * the drawn slice of its task on its CPU that holds its first marker.
 * Returns 0, 1 when some tasks did not regenerate (their slices are drawn
 * without counts), or -1 when the capture could not be regenerated at all.
 */
static int add_insns(struct slices *v, const char *trace, const char *sched, char **progs,
		     int nprogs)
{
	struct insn_counts ic = { 0 };
	struct ae_sysregen_opts o = { .trace = trace, .sched = sched, .progs = progs,
				      .nprogs = nprogs, .slice = on_slice, .ctx = &ic };
	size_t i, unplaced = 0;
	int r = ae_sysregen(&o);

	if (r < 0 || ic.oom) {
		fprintf(stderr, "aetrace timeline: %s: %s; no instruction counts\n", trace,
			ic.oom ? "out of memory" : "could not be regenerated");
		free(ic.s);
		return -1;
	}
	if (r > 0)
		fprintf(stderr, "aetrace timeline: %s: some tasks did not regenerate; their slices lack instruction counts\n",
			trace);
	for (i = 0; i < ic.n; i++) {
		const struct ae_slice_info *si = &ic.s[i].si;
		size_t lo = 0, hi = v->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct ae_slice *s = &v->s[mid];

			if (s->cpu < si->task.cpu || (s->cpu == si->task.cpu && s->start <= si->t_begin))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && v->s[lo - 1].cpu == si->task.cpu && v->s[lo - 1].tid == si->task.tid &&
		    si->t_begin <= v->s[lo - 1].end) {
			struct ae_slice *d = &v->s[lo - 1];

			d->insns += si->insns;
			if (!d->comm[0])	/* no BPF log: the program's name */
				memcpy(d->comm, ic.s[i].prog, sizeof(d->comm));
		} else if (si->insns)
			unplaced++;
	}
	if (unplaced)
		fprintf(stderr, "aetrace timeline: warning: %zu regenerated slices fall in no drawn slice of their task\n",
			unplaced);
	free(ic.s);
	return r > 0;
}

static int load_bpf(const char *path, struct sched_log_header *h, struct sched_event **ev,
		    size_t *n)
{
	size_t len, body, i;
	void *buf;
	char *p;

	if (read_file(path, &buf, &len))
		return -1;
	p = buf;
	if (len < sizeof(*h)) {
		fprintf(stderr, "aetrace timeline: %s: %zu bytes, shorter than the %zu-byte header\n",
			path, len, sizeof(*h));
		goto err_free;
	}
	memcpy(h, p, sizeof(*h));
	if (h->magic != SCHED_LOG_MAGIC) {
		fprintf(stderr, "aetrace timeline: %s: offset 0: not a BPF schedule log (bad magic)\n", path);
		goto err_free;
	}
	if (h->version != SCHED_LOG_VERSION || h->record_size != sizeof(struct sched_event)) {
		fprintf(stderr, "aetrace timeline: %s: version %u, record size %u: this aetrace reads version %d, %zu-byte records\n",
			path, h->version, h->record_size, SCHED_LOG_VERSION, sizeof(struct sched_event));
		goto err_free;
	}
	body = len - sizeof(*h);
	if (body % sizeof(struct sched_event))
		fprintf(stderr, "aetrace timeline: %s: warning: cut inside a record at offset %zu; using the whole records before it\n",
			path, len - body % sizeof(struct sched_event));
	*n = body / sizeof(struct sched_event);
	if (!(h->flags & SCHED_LOG_COMPLETE)) {
		fprintf(stderr, "aetrace timeline: %s: warning: the recorder did not stop cleanly; using its %zu records\n",
			path, *n);
		h->end_ns = 0;
	}
	*ev = malloc(*n ? *n * sizeof(**ev) : 1);
	if (!*ev) {
		fprintf(stderr, "aetrace timeline: %s: out of memory\n", path);
		goto err_free;
	}
	memcpy(*ev, p + sizeof(*h), *n * sizeof(**ev));
	free(buf);
	for (i = 0; i < *n; i++) {
		const struct sched_event *e = &(*ev)[i];

		if (e->type < SCHED_EV_SWITCH || e->type > SCHED_EV_END) {
			fprintf(stderr, "aetrace timeline: %s: record %zu (offset %zu): unknown type %u\n",
				path, i, sizeof(*h) + i * sizeof(*e), e->type);
			free(*ev);
			*ev = NULL;
			return -1;
		}
		if (e->type == SCHED_EV_LOST)
			fprintf(stderr, "aetrace timeline: %s: warning: record %zu: %llu events lost here; slices nearby may be wrong\n",
				path, i, (unsigned long long)e->arg);
		if (e->time_ns > h->end_ns)
			h->end_ns = e->time_ns;
	}
	return 0;
err_free:
	free(buf);
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: aetrace timeline [--sched SCHED] [--bpf ALL] [--trace TRACE PROG...]\n"
"                        [--format json|svg] -o OUT.json|OUT.svg\n"
"  SCHED  the kernel's markers (bdump's SCHED file, sched.bin); default: the\n"
"         MARKERS chunks of TRACE\n"
"  TRACE  the capture (bdump's TRACE, aerun -o) and its instrumented programs:\n"
"         regenerated to put instruction counts in the slices\n"
"  ALL    the BPF schedule log of the same run (bdump --bpf-sched ALL):\n"
"         adds every untraced task and the exact end of every slice\n"
"  OUT.json  Chrome/Perfetto trace events (ui.perfetto.dev, chrome://tracing)\n"
"  OUT.svg   a picture: one lane per CPU, one colour per process\n"
"Status 1 when some tasks of TRACE did not regenerate: OUT is written,\n"
"their slices without instruction counts.\n");
}

int ae_timeline_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sched", required_argument, NULL, 's' },
		{ "bpf", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "trace", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *sched = NULL, *bpf = NULL, *out = NULL, *fmt = NULL, *trace = NULL;
	struct trbuf_marker *mk = NULL;
	struct sched_event *ev = NULL;
	struct sched_log_header h;
	struct slices v = { 0 };
	struct ae_timeline tl = { 0 };
	size_t nmk = 0, nev = 0, i;
	int c, svg, ret = 1, partial = 0;
	FILE *f;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			sched = optarg;
			break;
		case 'b':
			bpf = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			fmt = optarg;
			break;
		case 't':
			trace = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!fmt && out)
		fmt = strrchr(out, '.') ? strrchr(out, '.') + 1 : "";
	if ((!sched && !trace) || !out || (optind != argc && !trace) || (trace && optind == argc)) {
		usage(stderr);
		return 2;
	}
	if (strcmp(fmt, "json") && strcmp(fmt, "svg")) {
		fprintf(stderr, "aetrace timeline: %s: the output name must end in .json or .svg (or give --format json|svg)\n",
			out);
		return 2;
	}
	svg = !strcmp(fmt, "svg");
	if (sched && !schedlog_is_container(sched) ? load_markers(sched, &mk, &nmk) :
	    load_trace_markers(sched ? sched : trace, &mk, &nmk))
		goto out_free;
	if (nmk)
		qsort(mk, nmk, sizeof(*mk), cmp_marker);
	if (bpf) {
		unsigned int nr_cpus = 0;
		size_t inside, outside, bad;

		if (load_bpf(bpf, &h, &ev, &nev))
			goto out_free;
		for (i = 0; i < nev; i++)
			if (ev[i].type == SCHED_EV_SWITCH && ev[i].cpu >= nr_cpus)
				nr_cpus = ev[i].cpu + 1;
		if (slices_from_bpf(&v, &h, ev, nev, nr_cpus))
			goto out_nomem;
		if (v.n)
			qsort(v.s, v.n, sizeof(*v.s), cmp_slice);
		bad = mark_traced(&v, mk, nmk, h.start_ns, h.end_ns, &inside, &outside);
		if (bad)
			fprintf(stderr, "aetrace timeline: warning: %zu of %zu switch-in markers inside the BPF log's time match no switch to their task on their CPU\n",
				bad, inside);
		if (outside)
			fprintf(stderr, "aetrace timeline: warning: %zu of %zu markers lie outside the BPF log's time and are not drawn\n",
				outside, nmk);
		tl.have_bpf = 1;
	} else {
		uint64_t t_end = 0;

		for (i = 0; i < nmk; i++)
			if (mk[i].time_ns > t_end)
				t_end = mk[i].time_ns;
		if (slices_from_markers(&v, mk, nmk, t_end))
			goto out_nomem;
	}
	if (trace) {
		if (v.n)
			qsort(v.s, v.n, sizeof(*v.s), cmp_slice);
		partial = add_insns(&v, trace, sched, argv + optind, argc - optind);
		if (partial < 0)
			goto out_free;
	}
	tl.s = v.s;
	tl.n = v.n;
	tl.t0 = UINT64_MAX;
	for (i = 0; i < v.n; i++) {
		if (v.s[i].start < tl.t0)
			tl.t0 = v.s[i].start;
		if (v.s[i].end > tl.t1)
			tl.t1 = v.s[i].end;
		if (v.s[i].cpu >= tl.nr_cpus)
			tl.nr_cpus = v.s[i].cpu + 1;
	}
	if (!v.n)
		tl.t0 = tl.t1 = 0;
	if (bpf && h.nr_cpus > tl.nr_cpus && h.nr_cpus <= 4096)
		tl.nr_cpus = h.nr_cpus;
	tl.title = sched ? sched : trace;

	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "aetrace timeline: %s: %s\n", out, strerror(errno));
		goto out_free;
	}
	c = svg ? ae_timeline_svg(&tl, f) : ae_timeline_json(&tl, f);
	if (fclose(f) && !c)
		c = -errno;
	if (c) {
		fprintf(stderr, "aetrace timeline: %s: write failed: %s\n", out, strerror(-c));
		goto out_free;
	}
	ret = partial;	/* drawn, but some tasks' counts are missing: status 1 */
	goto out_free;
out_nomem:
	fprintf(stderr, "aetrace timeline: out of memory\n");
out_free:
	free(v.s);
	free(ev);
	free(mk);
	return ret;
}
