// SPDX-License-Identifier: MIT
/* out.c - instruction output of aetrace regen (out.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "out.h"
#include "program.h"

struct obuf {
	FILE *f;
	char *path;
	char buf[1 << 16];
	size_t n;
	int err;
};

/*
 * A task image's --split file. A task that execs the program of one of its
 * earlier images, or a later task on a reused pid and tid, must not write
 * over that image's file, and the tasks of a capture are regenerated in no
 * set order (a vfork child's image after its exec can be regenerated
 * before the one before it). So only the first task of its pid and tid
 * writes under its name from the start; a later one writes under a name
 * of its own, DIR/PID.TID.SERIAL.part, and gets its name, by creation
 * order, when the output is closed (split_names()).
 */
struct split {
	int32_t pid, tid;
	uint64_t serial;	/* the task's (struct ae_task_info) */
	char *prog;
	char *path;		/* where it is written now */
	int part;		/* path is DIR/PID.TID.SERIAL.part */
	struct obuf *b;		/* NULL once the image ended */
	struct split *next;	/* every split */
	struct split *tnext;	/* the splits of tids in its bucket */
};

#define SPLIT_BUCKETS 1024

struct ae_out {
	struct ae_out_opts o;
	struct obuf *all;	/* NULL when split or per-cpu only */
	struct obuf **cpu;
	/* per CPU file: the task of its last switch line, and the task of
	 * the late block being written after it, if any (0: none) */
	struct cpu_owner {
		int32_t tid, late_tid;
	} *owner;
	int ncpu;
	struct split *splits;	/* every image's, ended ones too */
	struct split *by_tid[SPLIT_BUCKETS];
	struct split *last;	/* the last record's (a task's come in runs) */
	int err;
	int thread_seen;	/* --thread's task had records */
};

static struct obuf *ob_open(const char *path)
{
	struct obuf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->f = path ? fopen(path, "wb") : stdout;
	if (!b->f) {
		fprintf(stderr, "aetrace: %s: %s\n", path, strerror(errno));
		free(b);
		return NULL;
	}
	b->path = strdup(path ? path : "standard output");
	return b;
}

static void ob_flush(struct obuf *b)
{
	if (b->n && fwrite(b->buf, 1, b->n, b->f) != b->n && !b->err)
		b->err = errno ? errno : EIO;
	b->n = 0;
}

static int ob_close(struct obuf *b)
{
	int ret = 0;

	if (!b)
		return 0;
	ob_flush(b);
	if ((fflush(b->f) || b->err) && !b->err)
		b->err = errno ? errno : EIO;
	if (b->f != stdout && fclose(b->f) && !b->err)
		b->err = errno ? errno : EIO;
	if (b->err) {
		fprintf(stderr, "aetrace: writing %s: %s\n", b->path, strerror(b->err));
		ret = -1;
	}
	free(b->path);
	free(b);
	return ret;
}

static void ob_put(struct obuf *b, const char *s, size_t n)
{
	if (b->n + n > sizeof(b->buf))
		ob_flush(b);
	memcpy(b->buf + b->n, s, n);
	b->n += n;
}

/* Room for n more bytes at the end of b's buffer: where to write them. */
static char *ob_room(struct obuf *b, size_t n)
{
	if (b->n + n > sizeof(b->buf))
		ob_flush(b);
	return b->buf + b->n;
}

/* One instruction in the output format; returns its length. */
static size_t fmt_insn(const struct ae_out *o, char *p, uint64_t addr, unsigned int size)
{
	static const char hex[] = "0123456789abcdef";
	char *s = p;
	int digits = 8;

	if (o->o.bin) {
		memcpy(p, &addr, 8);
		p[8] = (char)size;
		return 9;
	}
	if (o->o.din)
		return sprintf(p, "2 %llx %u\n", (unsigned long long)addr, size);
	while (digits < 16 && (addr >> (4 * digits)))
		digits++;
	*p++ = 'I';
	*p++ = ' ';
	*p++ = ' ';
	for (int i = digits - 1; i >= 0; i--)
		*p++ = hex[(addr >> (4 * i)) & 15];
	*p++ = ',';
	if (size >= 10)
		*p++ = '0' + size / 10;
	*p++ = '0' + size % 10;
	*p++ = '\n';
	return p - s;
}

/* One data access in the output format; returns its length. */
static size_t fmt_mem(const struct ae_out *o, char *p, int acc, uint64_t addr, unsigned int size)
{
	static const char kind[] = " LSM";
	char *s = p;
	int digits = 8;

	if (o->o.bin) {
		uint16_t sz = size;

		memcpy(p, &addr, 8);
		p[8] = (char)(0xf0 | acc);
		memcpy(p + 9, &sz, 2);
		return 11;
	}
	if (o->o.din) {
		if (acc == AE_ACC_M)
			return sprintf(p, "0 %llx %u\n1 %llx %u\n", (unsigned long long)addr, size,
				       (unsigned long long)addr, size);
		return sprintf(p, "%d %llx %u\n", acc == AE_ACC_S, (unsigned long long)addr, size);
	}
	while (digits < 16 && (addr >> (4 * digits)))
		digits++;
	*p++ = ' ';
	*p++ = kind[acc & 3];
	*p++ = ' ';
	for (int i = digits - 1; i >= 0; i--)
		*p++ = "0123456789abcdef"[(addr >> (4 * i)) & 15];
	p += sprintf(p, ",%u\n", size);
	return p - s;
}

/* DIR/PID.TID.PROG.FMT, or with ".K" before FMT for the K-th image of PROG. */
static char *split_path(const struct ae_out *o, const struct split *s, int k)
{
	const char *fmt = o->o.bin ? "bin" : o->o.din ? "din" : "lackey";
	char *path;
	int n;

	if (k > 1)
		n = asprintf(&path, "%s/%d.%d.%s.%d.%s", o->o.split_dir, s->pid, s->tid, s->prog,
			     k, fmt);
	else
		n = asprintf(&path, "%s/%d.%d.%s.%s", o->o.split_dir, s->pid, s->tid, s->prog, fmt);
	return n < 0 ? NULL : path;
}

static struct obuf *split_buf(struct ae_out *o, const struct ae_task_info *t)
{
	struct split **bucket = &o->by_tid[(uint32_t)t->tid % SPLIT_BUCKETS], *s;
	int n;

	s = o->last;
	if (s && s->b && s->serial == t->serial)
		return s->b;
	for (s = *bucket; s; s = s->tnext) {
		if (s->b && s->serial == t->serial) {
			o->last = s;
			return s->b;
		}
	}
	if (o->err)
		return NULL;	/* (a file failed to open: said once) */
	s = calloc(1, sizeof(*s));
	if (!s)
		goto err_nomem;
	s->pid = t->pid;
	s->tid = t->tid;
	s->serial = t->serial;
	s->prog = strdup(t->prog ? t->prog : "unknown");
	if (!s->prog)
		goto err_free_split;
	s->part = t->nth > 0;
	if (s->part)
		n = asprintf(&s->path, "%s/%d.%d.%llu.part", o->o.split_dir, s->pid, s->tid,
			     (unsigned long long)s->serial);
	else
		n = (s->path = split_path(o, s, 1)) ? 0 : -1;
	if (n < 0) {
		s->path = NULL;
		goto err_free_split;
	}
	s->b = ob_open(s->path);
	if (!s->b) {
		o->err = 1;
		goto err_free_split;
	}
	s->next = o->splits;
	o->splits = s;
	s->tnext = *bucket;
	*bucket = s;
	o->last = s;
	return s->b;

err_free_split:
	free(s->prog);
	free(s->path);
	free(s);
err_nomem:
	if (!o->err)
		fprintf(stderr, "aetrace: out of memory\n");
	o->err = 1;
	return NULL;
}

/* 1 + how many images of @s's pid and tid ran its program before it. */
static int split_rank(const struct ae_out *o, const struct split *s)
{
	int k = 1;

	for (const struct split *e = o->by_tid[(uint32_t)s->tid % SPLIT_BUCKETS]; e; e = e->tnext)
		if (e->tid == s->tid && e->pid == s->pid && e->serial < s->serial &&
		    !strcmp(e->prog, s->prog))
			k++;
	return k;
}

/* Is @path some other split's now? (A name DIR/PID.TID.... can only be
 * one of that pid and tid's, which share a bucket.) */
static int split_taken(const struct ae_out *o, const struct split *s, const char *path)
{
	for (const struct split *e = o->by_tid[(uint32_t)s->tid % SPLIT_BUCKETS]; e; e = e->tnext)
		if (e != s && !strcmp(e->path, path))
			return 1;
	return 0;
}

static int serial_cmp(const void *a, const void *b)
{
	const struct split *x = *(struct split *const *)a, *y = *(struct split *const *)b;

	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/*
 * The later images' files get their names, in creation order: the plain
 * one for a pid and tid's first image of a program, ".K" for its K-th.
 * A name that another image's file has (a program named like PROG.K)
 * gets ".dup" added, with a note; a file that cannot be renamed keeps its
 * name. Returns 0, or -1 after saying which file could not be renamed.
 */
static int split_names(struct ae_out *o)
{
	struct split **v, *s;
	size_t n = 0, i;
	int ret = 0;

	for (s = o->splits; s; s = s->next)
		n += s->part;
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v) {
		fprintf(stderr, "aetrace: out of memory: the files DIR/PID.TID.SERIAL.part keep their names\n");
		return -1;
	}
	for (s = o->splits, i = 0; s; s = s->next)
		if (s->part)
			v[i++] = s;
	qsort(v, n, sizeof(*v), serial_cmp);
	for (i = 0; i < n; i++) {
		char *want = split_path(o, v[i], split_rank(o, v[i]));
		size_t len;

		while (want && split_taken(o, v[i], want)) {
			char *d;

			len = strlen(want) - strlen(strrchr(want, '.'));
			if (asprintf(&d, "%.*s.dup%s", (int)len, want, want + len) < 0)
				d = NULL;
			else
				fprintf(stderr, "aetrace: note: %s is another image's file (a program named like it): this image is in %s\n",
					want, d);
			free(want);
			want = d;
		}
		if (!want) {
			fprintf(stderr, "aetrace: out of memory: %s keeps its name\n", v[i]->path);
			ret = -1;
		} else if (rename(v[i]->path, want)) {
			fprintf(stderr, "aetrace: renaming %s to %s: %s\n", v[i]->path, want,
				strerror(errno));
			ret = -1;
			free(want);
		} else {
			free(v[i]->path);
			v[i]->path = want;
			v[i]->part = 0;
		}
	}
	free(v);
	return ret;
}

static struct obuf *cpu_buf(struct ae_out *o, int cpu)
{
	char path[4096];

	if (cpu < 0)
		return NULL;
	if (cpu >= o->ncpu) {
		struct obuf **n = realloc(o->cpu, (cpu + 1) * sizeof(*n));
		struct cpu_owner *w;

		if (!n)
			return NULL;
		o->cpu = n;
		w = realloc(o->owner, (cpu + 1) * sizeof(*w));
		if (!w)
			return NULL;
		o->owner = w;
		memset(n + o->ncpu, 0, (cpu + 1 - o->ncpu) * sizeof(*n));
		memset(w + o->ncpu, 0, (cpu + 1 - o->ncpu) * sizeof(*w));
		o->ncpu = cpu + 1;
	}
	if (!o->cpu[cpu] && !o->err) {
		snprintf(path, sizeof(path), "%s/cpu%d.%s", o->o.cpu_dir, cpu,
			 o->o.bin ? "bin" : o->o.din ? "din" : "lackey");
		o->cpu[cpu] = ob_open(path);
		if (!o->cpu[cpu])
			o->err = 1;
	}
	return o->cpu[cpu];
}

/*
 * CPU t->cpu's file, for a record of task t. A task whose slice there
 * ended before its regeneration reached the slice's end (a slice "not
 * reached in time") writes after the next task's switch line: its lines
 * go in a block that says whose they are ("# late"), and the CPU's task
 * takes the file back with "# back".
 */
static struct obuf *cpu_buf_of(struct ae_out *o, const struct ae_task_info *t)
{
	struct obuf *b = cpu_buf(o, t->cpu);
	struct cpu_owner *w;
	char line[160];
	int n = 0;

	if (!b || o->o.bin)
		return b;
	w = &o->owner[t->cpu];
	if (w->tid == t->tid) {
		if (w->late_tid)
			n = snprintf(line, sizeof(line), "# back cpu %d (the switch above goes on)\n",
				     t->cpu);
		w->late_tid = 0;
	} else if (w->late_tid != t->tid) {
		n = snprintf(line, sizeof(line),
			     "# late cpu %d: %d/%d %.64s (of an earlier slice, regenerated after the switch above)\n",
			     t->cpu, t->pid, t->tid, t->prog ? t->prog : "(starting)");
		w->late_tid = t->tid;
	}
	if (n)
		ob_put(b, line, n);
	return b;
}

/*
 * Task t's record of n bytes at p, which fmt_insn() or fmt_mem() wrote
 * where ob_room() said in the single output's buffer (or in a line of
 * their caller's when there is none), goes to each of its outputs:
 * formatted once, in place, as every instruction is one.
 */
static int out_rec(struct ae_out *o, const struct ae_task_info *t, const char *p, size_t n)
{
	struct obuf *b;
	int err = o->err;

	if (o->all) {
		o->all->n += n;
		err |= o->all->err != 0;
	}
	if (o->o.split_dir && (b = split_buf(o, t))) {
		ob_put(b, p, n);
		err |= b->err != 0;
	}
	if (o->o.cpu_dir && (b = cpu_buf_of(o, t))) {
		ob_put(b, p, n);
		err |= b->err != 0;
	}
	/* a failed write (a full disk) stops the task */
	return err;
}

static int out_recs(void *ctx, const struct ae_task_info *t, const struct ae_rec *r, size_t n)
{
	struct ae_out *o = ctx;
	char line[96], *p;

	if (o->o.thread && t->tid != o->o.thread)
		return 0;
	o->thread_seen = 1;
	if (o->all && !o->o.split_dir && !o->o.cpu_dir) {
		/* one output (the common case): straight into its buffer
		 * (this loop apart from the one below, which goes through
		 * out_rec(), measured 7% faster on instruction traces) */
		for (; n; n--, r++) {
			if (!r->acc && o->o.original_only && t->program &&
			    !ae_is_original(t->program, r->addr))
				continue;
			p = ob_room(o->all, sizeof(line));
			o->all->n += r->acc ? fmt_mem(o, p, r->acc, r->addr, r->size) :
					      fmt_insn(o, p, r->addr, r->size);
		}
		return o->err || o->all->err;
	}
	for (size_t i = 0; i < n; i++, r++) {
		size_t len;

		if (!r->acc && o->o.original_only && t->program &&
		    !ae_is_original(t->program, r->addr))
			continue;
		p = o->all ? ob_room(o->all, sizeof(line)) : line;
		len = r->acc ? fmt_mem(o, p, r->acc, r->addr, r->size) :
			       fmt_insn(o, p, r->addr, r->size);
		if (out_rec(o, t, p, len))
			return -1;
	}
	return 0;
}

static void out_switch(void *ctx, const struct ae_task_info *t, uint64_t time_ns)
{
	struct ae_out *o = ctx;
	struct obuf *b;
	char line[160];
	int n;

	if (!o->o.cpu_dir || o->o.bin || !(b = cpu_buf(o, t->cpu)))
		return;
	n = snprintf(line, sizeof(line), "# switch cpu %d to %d/%d %.64s t=%llu\n", t->cpu,
		     t->pid, t->tid, t->prog ? t->prog : "(starting)",
		     (unsigned long long)time_ns);
	ob_put(b, line, n);
	o->owner[t->cpu] = (struct cpu_owner){ .tid = t->tid };
}

static void out_task_end(void *ctx, const struct ae_task_info *t, int end,
			 const struct ae_regen_stats *st)
{
	struct ae_out *o = ctx;
	struct split *s;

	/* not an error, but no trace of the task's end either: say so */
	if (end == AE_END_CAPTURE)
		fprintf(stderr, "aetrace: note: task %d/%d (%s): tracing stopped while it ran (the capture ended, it was untraced, or aerun saw it killed without an exit stop): its trace ends after %llu instructions\n",
			t->pid, t->tid, t->prog ? t->prog : "?", (unsigned long long)st->insns);
	/* nor is a handler's place that the markers could not tell */
	if (st->expanded_late)
		fprintf(stderr, "aetrace: note: task %d/%d (%s): %llu signals inside expanded library routines are delivered at the call's entry or end, not at the instruction they interrupted (aecc -fno-ae-memfn traces those routines exactly)\n",
			t->pid, t->tid, t->prog ? t->prog : "?",
			(unsigned long long)st->expanded_late);
	for (s = o->by_tid[(uint32_t)t->tid % SPLIT_BUCKETS]; s; s = s->tnext) {
		if (s->b && s->serial == t->serial) {
			if (ob_close(s->b))
				o->err = 1;
			s->b = NULL;
			return;
		}
	}
}

int ae_out_open(struct ae_out **op, const struct ae_out_opts *oo)
{
	struct ae_out *o = calloc(1, sizeof(*o));

	*op = o;
	if (!o)
		return -1;
	o->o = *oo;
	for (int i = 0; i < 2; i++) {
		const char *d = i ? oo->cpu_dir : oo->split_dir;

		if (d && mkdir(d, 0777) && errno != EEXIST) {
			fprintf(stderr, "aetrace: %s: %s\n", d, strerror(errno));
			return -1;
		}
	}
	if (oo->path || (!oo->split_dir && !oo->cpu_dir)) {
		o->all = ob_open(oo->path);
		if (!o->all)
			return -1;
	}
	return 0;
}

void ae_out_hooks(struct ae_out *o, struct ae_sysregen_opts *so)
{
	so->recs = out_recs;
	so->mem = 1;
	so->vex = o->o.lackey_compat;
	so->switch_in = out_switch;
	so->task_end = out_task_end;
	so->ctx = o;
}

int ae_out_close(struct ae_out *o)
{
	int ret;

	if (!o)
		return 0;
	ret = o->err ? -1 : 0;
	if (ob_close(o->all))
		ret = -1;
	for (int i = 0; i < o->ncpu; i++)
		if (ob_close(o->cpu[i]))
			ret = -1;
	for (struct split *s = o->splits; s; s = s->next) {
		if (ob_close(s->b))
			ret = -1;
		s->b = NULL;
	}
	if (o->o.split_dir && split_names(o))
		ret = -1;
	/* (an empty output is not an answer: a mistyped tid) */
	if (o->o.thread && !o->thread_seen && !ret) {
		fprintf(stderr, "aetrace: --thread %d: no task of the capture with that tid regenerated an instruction\n",
			o->o.thread);
		ret = -1;
	}
	while (o->splits) {
		struct split *s = o->splits;

		o->splits = s->next;
		free(s->prog);
		free(s->path);
		free(s);
	}
	free(o->cpu);
	free(o->owner);
	free(o);
	return ret;
}
