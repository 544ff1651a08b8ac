// SPDX-License-Identifier: MIT
/*
 * sysregen.c - whole-capture regeneration: the demultiplexer's events (in
 * time order) feed one coroutine per task, each running the regenerator on
 * its own stack; a task waits when it needs bytes or markers it has not
 * been given yet. Memory: the tasks alive, their unconsumed bytes, the
 * demultiplexer's per-CPU read-ahead, and 48 bytes for every SWITCH_IN of
 * the schedule, read in one more pass over the markers (over the whole
 * trace when there is no separate schedule file) when a slice first ends
 * because another task takes its CPU.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ucontext.h>

#include <aetrace/capture.h>
#include <aetrace/regrec.h>
#include <aetrace/schedlog.h>
#include <aetrace/vcprof.h>

#include "program.h"
#include "sysregen.h"

#define CO_STACK	(4u << 20)

enum tstate { T_NEW, T_WAIT_FORK, T_READY, T_DONE, T_FAILED };

struct prog {
	char *path;
	const char *base;
	struct ae_program *p;
	uint64_t id;
};

struct task {
	struct ae_task_info info;
	struct ae_tstream s;
	struct ae_regen *g;
	struct ae_regen_sink sink;
	struct ae_regen_ops ops;
	struct prog *prog;
	uint64_t pc;			/* fork child: where it continues */
	uint64_t start_ip, start_sp;	/* its START marker's */
	enum tstate state;
	int failed, end;
	/* no START or FORK announced it: skipped; an error in a complete
	 * capture, past the cut in one cut short (its first marker's) */
	int orphan;
	uint64_t orphan_index;
	uint32_t orphan_type;
	ucontext_t uc;
	void *stack;
	int running;			/* coroutine made */
	uint64_t slice_t, slice_insns, slice_bytes;
	uint64_t slice_index;		/* the marker that began it */
	int in_slice;
	/* switch points placed in its stream (its next SWITCH_IN, at the
	 * end of each slice), reached by its regeneration, and begun (their
	 * SWITCH_IN seen): a task that reaches one before its slice began
	 * waits there */
	uint64_t sw_count, sw_taken, sw_begun;
	uint64_t sw_last;		/* index + 1 of the last one placed */
	uint64_t sw_insns;		/* instructions when it reached the last */
	int sw_placed;			/* ... at its ip */
	int closed;			/* its EXIT/EXEC/STOP was seen */
	int at_end;			/* resumed for the capture's end */
	int ran;			/* switched in at least once */
	/* blocked in ops.wait_others until another task ends; stuck: none
	 * will (it fails) */
	int waits, stuck;
	struct sr *sr;
	struct task *next;
};

struct sr {
	const struct ae_sysregen_opts *o;
	struct prog **progs;		/* stable: tasks point at them */
	int nprogs, capprogs;
	struct task *tasks;		/* live and finished-not-freed */
	ucontext_t main;
	struct task *cur;
	int failed;
	int stopped;			/* the output refused a task's records
					 * (a failed write): read no further */
	struct task **cpu_owner;
	uint32_t ncpu;
	uint64_t now;
	uint64_t ntasks;		/* tasks made: the next one's serial */
	/* how many tasks each pid and tid had (n > 0), open addressing,
	 * keys pid << 32 | tid */
	struct pt_count { uint64_t key; int n; } *pt;
	size_t npt, cappt;
	/* every SWITCH_IN of the schedule, by task and time: where a task
	 * switched out resumes (read when a slice first ends that way) */
	struct sw_ent *sw;
	size_t nsw;
	int sw_read;
	/* tids whose bytes were cut (SCHEDLOG_EV_CUT) until a START: what
	 * follows of them is skipped */
	int32_t *cut;
	size_t ncut, capcut;
};

/* what a SWITCH_IN says, for its switch point */
struct sw_ent {
	uint64_t time_ns, index, ip, sp, cx;
	int32_t tid;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int add_prog(struct sr *r, const char *path)
{
	struct prog *pr;
	size_t len = 0;
	const uint32_t *tab;
	int err;

	if (r->nprogs == r->capprogs) {
		int cap = r->capprogs ? r->capprogs * 2 : 8;
		struct prog **n = realloc(r->progs, cap * sizeof(*n));

		if (!n)
			return -1;
		r->progs = n;
		r->capprogs = cap;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -1;
	err = ae_program_load(&pr->p, path);
	if (!err && r->o->vcprof && ae_program_vcprof_start(pr->p)) {
		fprintf(stderr, "aetrace: %s: out of memory\n", path);
		err = -1;
	}
	if (err) {
		ae_program_free(pr->p);
		free(pr);
		return -1;
	}
	r->progs[r->nprogs] = pr;
	pr->path = strdup(path);
	pr->base = base_name(pr->path);
	tab = (const uint32_t *)ae_image_section(&pr->p->prog, "__ae_seqtab", &len, NULL);
	pr->id = ae_image_id(tab, tab ? len / 4 : 0, pr->p->prog.entry);
	r->nprogs++;
	return 0;
}

/* The value-cache profile of every program (--vc-profile). Returns 0 or
 * -1 after naming the file. */
static int write_vcprof(struct sr *r)
{
	FILE *f = fopen(r->o->vcprof, "w");
	int err = !f || fprintf(f, "%s\n", AE_VCPROF_HEADER) < 0;

	for (int i = 0; !err && i < r->nprogs; i++)
		err = ae_program_vcprof_write(r->progs[i]->p, f) != 0;
	if (f && fclose(f))
		err = 1;
	if (err)
		fprintf(stderr, "aetrace: %s: %s\n", r->o->vcprof, strerror(errno));
	return err ? -1 : 0;
}

static struct task *find_task(struct sr *r, int32_t tid)
{
	for (struct task *t = r->tasks; t; t = t->next)
		if (t->info.tid == tid && t->state != T_DONE && !t->closed)
			return t;
	return NULL;
}

/* The child a FORK marker announced, waiting for its parent's state. */
static struct task *find_child(struct sr *r, int32_t tid)
{
	for (struct task *t = r->tasks; t; t = t->next)
		if (t->info.tid == tid && t->state == T_WAIT_FORK)
			return t;
	return NULL;
}

static void tfail(struct task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tfail(struct task *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "aetrace: task %d/%d: ", t->info.pid, t->info.tid);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	t->failed = 1;
	t->sr->failed = 1;
}

static int task_recs(void *ctx, const struct ae_rec *rec, size_t n)
{
	struct task *t = ctx;
	struct sr *r = t->sr;

	return r->o->recs(r->o->ctx, &t->info, rec, n);
}

static void co_wait(void *ctx)
{
	struct task *t = ctx;

	swapcontext(&t->uc, &t->sr->main);
}

/* ops.wait_others: resumed when a task ends (resume()), or stuck at the
 * capture's end when none is left to run (from then on it waits no
 * more). */
static int co_wait_others(void *ctx)
{
	struct task *t = ctx;

	if (t->stuck)
		return -1;
	t->waits = 1;
	co_wait(t);
	t->waits = 0;
	return t->stuck ? -1 : 0;
}

static int co_fork(void *ctx, struct ae_regen *g, const struct trbuf_marker *m, uint64_t pc);

/* The task reached where it was switched out: it waits there until its
 * next slice begins, so that what it runs after counts there. */
static void co_switched(void *ctx, uint64_t index, int placed)
{
	struct task *t = ctx;

	(void)index;
	t->sw_taken++;
	t->sw_placed = placed;
	t->sw_insns = ae_regen_stats(t->g)->insns;
	while (t->sw_taken > t->sw_begun)
		co_wait(t);
}

static const struct ae_regen_ops *task_ops(struct task *t)
{
	t->ops.wait = co_wait;
	t->ops.fork = co_fork;
	t->ops.switched = co_switched;
	t->ops.wait_others = co_wait_others;
	t->ops.ctx = t;
	return &t->ops;
}

static void name_regen(struct task *t)
{
	char name[96];

	snprintf(name, sizeof(name), "task %d/%d (%s): ", t->info.pid, t->info.tid,
		 t->info.prog ? t->info.prog : "?");
	ae_regen_set_name(t->g, name);
}

/* A child forked inside a handler replays its parent's trace from the
 * parent's last checkpoint to the fork first (ae_regen_clone_replay()). */
static int co_fork(void *ctx, struct ae_regen *g, const struct trbuf_marker *m, uint64_t pc)
{
	struct task *t = ctx, *c = find_child(t->sr, (int32_t)m->arg);
	const char *why = "out of memory";
	/* (a child with CLONE_VM runs on a stack of its own, or vfork's,
	 * and never returns from its parent's handlers: a thread, a spawn,
	 * a vfork child that execs or exits; it starts at level 0) */
	int replay = ae_regen_level(g) > 0 && !(m->arg2 & CLONE_VM);

	if (!c)
		return 0;
	c->pc = pc;
	if (replay)
		c->g = ae_regen_clone_replay(g, &c->s, &c->sink, task_ops(c), m->arg2, &c->pc, &why);
	else
		c->g = ae_regen_clone(g, &c->s, &c->sink, task_ops(c), m->arg2);
	c->state = T_READY;
	if (!c->g) {
		if (replay)
			tfail(c, "forked inside a signal handler of its parent: %s", why);
		else
			tfail(c, "%s", why);
		return 0;
	}
	c->prog = t->prog;
	c->info.prog = t->info.prog;
	c->info.program = t->info.program;
	name_regen(c);
	return 0;
}

/* Wait until the stream holds n bytes past base; 0, or -1 at its end. */
static int need_bytes(struct task *t, uint64_t n)
{
	while (t->s.end - t->s.base < n) {
		if (t->s.final)
			return -1;
		co_wait(t);
	}
	return 0;
}

/*
 * Its stream ended inside its registration record: a capture that ended
 * (or was cut) right after the task's START holds part of it, or none,
 * and nothing ran; otherwise an error. Returns NULL.
 */
static struct prog *record_cut(struct task *t)
{
	if (t->s.final == 2)
		t->end = AE_END_CAPTURE;
	else
		tfail(t, "trace ends inside its registration record");
	return NULL;
}

/* A task that started (START): its registration record names its image. */
static struct prog *task_image(struct task *t)
{
	struct sr *r = t->sr;
	struct ae_reg_record rec;
	char path[AE_REG_PATH_MAX + 1] = "";
	uint64_t plen, at;

	/*
	 * No record: not a program built by aecc (a hand-written /dev/trbuf
	 * producer). Guessing its program would regenerate foreign bytes
	 * through a program's control flow, which need not end: skip it.
	 * (A start of the magic at the capture's end is a record_cut.)
	 */
	if (need_bytes(t, 8) && t->s.final == 2 &&
	    (t->s.end == t->s.base ||
	     !memcmp(t->s.buf, &(uint64_t){ AE_REG_MAGIC }, t->s.end - t->s.base)))
		return record_cut(t);
	if (need_bytes(t, 8) || memcmp(t->s.buf, &(uint64_t){ AE_REG_MAGIC }, 8)) {
		tfail(t, "its stream has no registration record (not built by aecc, or its producer lost its trace: see the capture's drops): skipped");
		return NULL;
	}
	if (need_bytes(t, sizeof(rec)))
		return record_cut(t);
	memcpy(&rec, t->s.buf, sizeof(rec));
	if (rec.version != AE_REG_VERSION || rec.len < sizeof(rec) || rec.len % 8 ||
	    rec.len > sizeof(rec) + AE_REG_PATH_MAX) {
		tfail(t, "bad registration record at trace offset %llu (version %u, length %u)",
		      (unsigned long long)t->s.base, rec.version, rec.len);
		return NULL;
	}
	if (need_bytes(t, rec.len))
		return record_cut(t);
	plen = rec.len - sizeof(rec);
	memcpy(path, t->s.buf + sizeof(rec), plen);
	path[plen] = 0;
	/* the record is no witness: drop it */
	at = t->s.base;
	memmove(t->s.buf, t->s.buf + rec.len, t->s.end - t->s.base - rec.len);
	t->s.base += rec.len;
	for (int i = 0; i < r->nprogs; i++)
		if (r->progs[i]->id == rec.image_id)
			return r->progs[i];
	/* no programs given: the path it was started as, if the same image */
	if (!r->o->nprogs && path[0] && !access(path, R_OK)) {
		int n = r->nprogs;

		if (!add_prog(r, path) && r->progs[n]->id == rec.image_id)
			return r->progs[n];
		if (r->nprogs > n) {
			ae_program_free(r->progs[n]->p);
			free(r->progs[n]->path);
			free(r->progs[n]);
			r->nprogs = n;
		}
	}
	tfail(t, "no binary for program %s (image id %016llx, registration record at trace offset %llu)%s: give it on the command line",
	      path[0] ? path : "(unnamed)", (unsigned long long)rec.image_id,
	      (unsigned long long)at, r->o->nprogs ? ", which none of the given programs is" : "");
	return NULL;
}

static void co_main(unsigned int lo, unsigned int hi)
{
	struct task *t = (struct task *)(((uintptr_t)hi << 32) | lo);
	int ret;

	if (!t->g) {
		t->prog = task_image(t);
		if (t->prog) {
			t->info.prog = t->prog->base;
			t->info.program = t->prog->p;
			t->g = ae_regen_new(t->prog->p, &t->s, &t->sink, task_ops(t));
			if (!t->g)
				tfail(t, "out of memory");
			else
				name_regen(t);
			t->pc = t->prog->p->orig.entry;
			/* aerun's START comes at the entry (the driver's at
			 * the runtime's registration, later) */
			if (t->g && t->start_sp && ae_map_resume(t->prog->p, t->start_ip) == t->pc)
				ae_regen_set_sp(t->g, t->start_sp);
		}
	}
	if (t->g && !t->failed) {
		ret = ae_regen_run(t->g, t->pc);
		t->end = ret;
		if (ret < 0)
			t->failed = t->sr->failed = 1;
		if (ret == AE_END_STOPPED)
			t->sr->stopped = 1;
	}
	t->state = t->failed ? T_FAILED : T_DONE;
	if (t->sr->o->task_end)
		t->sr->o->task_end(t->sr->o->ctx, &t->info, t->failed ? -1 : t->end,
				   t->g ? ae_regen_stats(t->g) : &(struct ae_regen_stats){ 0 });
	/* returns to uc_link: the driver */
}

static void resume(struct sr *r, struct task *t)
{
	/* a child that never switched in did not run within the capture */
	if (t->state == T_DONE || t->state == T_FAILED || t->state == T_WAIT_FORK ||
	    t->failed || !t->ran)
		return;
	if (!t->running) {
		uintptr_t p = (uintptr_t)t;

		t->stack = mmap(NULL, CO_STACK, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (t->stack == MAP_FAILED) {
			t->stack = NULL;
			tfail(t, "cannot map a stack: %s", strerror(errno));
			return;
		}
		getcontext(&t->uc);
		t->uc.uc_stack.ss_sp = t->stack;
		t->uc.uc_stack.ss_size = CO_STACK;
		t->uc.uc_link = &r->main;
		makecontext(&t->uc, (void (*)(void))co_main, 2, (unsigned int)p,
			    (unsigned int)(p >> 32));
		t->running = 1;
	}
	r->cur = t;
	swapcontext(&r->main, &t->uc);
	r->cur = NULL;
	if (t->state != T_DONE && t->state != T_FAILED)
		return;
	if (t->stack) {
		munmap(t->stack, CO_STACK);
		t->stack = NULL;
	}
	/* the vfork child a task waited for may be this one */
	for (struct task *w = r->tasks; w; w = w->next)
		if (w->waits)
			resume(r, w);
}

/* Children made ready by a fork run over what they were given so far. */
static void resume_ready(struct sr *r)
{
	for (struct task *t = r->tasks; t; t = t->next)
		if (t->state == T_READY && !t->running && !t->failed && t->ran)
			resume(r, t);
}

/* How many tasks of pid and tid came before (counting this one from
 * now on); -1: no memory. */
static int pt_count(struct sr *r, int32_t pid, int32_t tid)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	size_t i;

	if (2 * (r->npt + 1) > r->cappt) {
		size_t cap = r->cappt ? 2 * r->cappt : 256;
		struct pt_count *n = calloc(cap, sizeof(*n));

		if (!n)
			return -1;
		for (size_t k = 0; k < r->cappt; k++) {
			if (!r->pt[k].n)
				continue;
			for (i = r->pt[k].key * 0x9e3779b97f4a7c15ull >> 32 & (cap - 1); n[i].n;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = r->pt[k];
		}
		free(r->pt);
		r->pt = n;
		r->cappt = cap;
	}
	for (i = key * 0x9e3779b97f4a7c15ull >> 32 & (r->cappt - 1); r->pt[i].n;
	     i = (i + 1) & (r->cappt - 1))
		if (r->pt[i].key == key)
			return r->pt[i].n++;
	r->pt[i].key = key;
	r->pt[i].n = 1;
	r->npt++;
	return 0;
}

static struct task *new_task(struct sr *r, int32_t pid, int32_t tid)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->info.nth = pt_count(r, pid, tid);
	if (t->info.nth < 0) {
		free(t);
		return NULL;
	}
	t->info.serial = r->ntasks++;
	t->info.pid = pid;
	t->info.tid = tid;
	t->info.cpu = -1;
	t->sr = r;
	t->sink.recs = r->o->recs ? task_recs : NULL;
	t->sink.mem = r->o->mem;
	t->sink.vex = r->o->vex;
	t->sink.ctx = t;
	t->next = r->tasks;
	r->tasks = t;
	return t;
}

/* Reap finished tasks (their state and streams). */
static void reap(struct sr *r)
{
	struct task **pp = &r->tasks;

	while (*pp) {
		struct task *t = *pp;

		/* (an orphan stays for orphans() to name at the end, also
		 * after a FORK of its tid retired it) */
		if (t->state == T_DONE && !t->stack && !t->orphan) {
			*pp = t->next;
			ae_regen_free(t->g);
			ae_tstream_free(&t->s);
			free(t);
		} else {
			pp = &t->next;
		}
	}
}

static int sw_cmp(const void *a, const void *b)
{
	const struct sw_ent *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Read every SWITCH_IN of the schedule (once). A file that cannot be
 * read to its end keeps the markers before the damage: the
 * demultiplexer stops there too, with the message.
 */
static void read_switches(struct sr *r)
{
	struct schedlog_markers *ms;
	struct trbuf_marker m;
	uint64_t index;
	size_t cap = 0;

	r->sw_read = 1;
	if (schedlog_markers_open(&ms, r->o->sched ? r->o->sched : r->o->trace, -1)) {
		schedlog_markers_close(ms);
		return;
	}
	while (schedlog_markers_next(ms, &m, &index) == 1) {
		if (m.type != TRBUF_MK_SWITCH_IN || !m.ip)
			continue;
		if (r->nsw == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			struct sw_ent *n = realloc(r->sw, ncap * sizeof(*n));

			if (!n)
				break;	/* (slices end late, as without) */
			r->sw = n;
			cap = ncap;
		}
		r->sw[r->nsw++] = (struct sw_ent){ .time_ns = m.time_ns, .index = index, .ip = m.ip,
						   .sp = m.sp, .cx = m.cx, .tid = m.tid };
	}
	schedlog_markers_close(ms);
	qsort(r->sw, r->nsw, sizeof(*r->sw), sw_cmp);
}

/* Task t's first SWITCH_IN after the marker that began its slice, or NULL. */
static const struct sw_ent *next_switch(struct sr *r, const struct task *t)
{
	struct sw_ent key = { .tid = t->info.tid, .time_ns = t->slice_t, .index = t->slice_index };
	size_t lo = 0, hi;

	if (!r->sw_read)
		read_switches(r);
	hi = r->nsw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sw_cmp(&r->sw[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nsw && r->sw[lo].tid == t->info.tid ? &r->sw[lo] : NULL;
}

/*
 * Task t's slice ends: place its switch point (marker m, at the end of
 * its bytes so far: a task switched out writes none) and let it run up
 * to it, so that the instructions before it count in this slice. 1 when
 * it got there.
 */
static int run_to_switch(struct sr *r, struct task *t, const struct trbuf_marker *m,
			 uint64_t index)
{
	if (!m || !m->ip || t->failed || t->state == T_DONE || t->state == T_FAILED)
		return 0;
	/* a task that starts before its registration record: its bytes
	 * begin after it, its regeneration at the program's entry. Still
	 * where its START was, with no byte written, it ran nothing (any
	 * path back to an ip writes a byte). */
	if (!t->g && t->state != T_WAIT_FORK)
		resume(r, t);
	if (!t->g && t->state != T_WAIT_FORK) {
		t->sw_insns = 0;
		t->sw_placed = 1;
		return !t->s.end && m->ip == t->start_ip;
	}
	if (t->sw_last != index + 1) {
		if (ae_tstream_marker(&t->s, m, index)) {
			tfail(t, "out of memory");
			return 0;
		}
		t->sw_last = index + 1;
		t->sw_count++;
	}
	resume(r, t);
	return t->sw_taken == t->sw_count;
}

/*
 * The slice on cpu ends at time now. Its task's next SWITCH_IN is m
 * (index) when that is what ends it; NULL: looked up (another task took
 * the CPU), or none (the task or the capture ended: lookup 0).
 */
static void slice_end(struct sr *r, uint32_t cpu, uint64_t now, const struct trbuf_marker *m,
		      uint64_t index, int lookup)
{
	struct task *t = r->cpu_owner[cpu];
	struct trbuf_marker look;
	int at_switch = 0, late = 0;

	if (!t)
		return;
	r->cpu_owner[cpu] = NULL;
	if (t->in_slice && (m || lookup)) {
		if (!m) {
			const struct sw_ent *e = next_switch(r, t);

			if (e) {
				look = (struct trbuf_marker){ .type = TRBUF_MK_SWITCH_IN,
							      .time_ns = e->time_ns, .pid = t->info.pid,
							      .tid = e->tid, .ip = e->ip, .sp = e->sp,
							      .cx = e->cx };
				m = &look;
				index = e->index;
			}
		}
		at_switch = run_to_switch(r, t, m, index);
		late = m && !at_switch;
	}
	if (r->o->slice && t->in_slice) {
		struct ae_slice_info si = { .task = t->info, .t_begin = t->slice_t, .t_end = now };

		si.task.cpu = cpu;
		si.insns = (at_switch ? t->sw_insns : t->g ? ae_regen_stats(t->g)->insns : 0) -
			   t->slice_insns;
		si.bytes = t->slice_bytes;
		si.end = at_switch ? (t->sw_placed ? AE_SLICE_END_SWITCH : AE_SLICE_END_NEAR) :
			 late ? AE_SLICE_END_LATE : AE_SLICE_END_TASK;
		r->o->slice(r->o->ctx, &si);
	}
	t->in_slice = 0;
}

/* Task t is switched in on cpu by marker index (time now; m NULL: a
 * START, or a capture with one task). */
static void slice_begin(struct sr *r, struct task *t, uint32_t cpu, uint64_t now,
			const struct trbuf_marker *m, uint64_t index)
{
	for (uint32_t c = 0; c < r->ncpu; c++)
		if (r->cpu_owner[c] == t)
			slice_end(r, c, now, m, index, 0);
		else if (c == cpu && r->cpu_owner[c])
			slice_end(r, c, now, NULL, 0, 1);
	/* a switch point it waits at, or will reach late */
	if (m && t->sw_last == index + 1)
		t->sw_begun = t->sw_count;
	r->cpu_owner[cpu] = t;
	t->ran = 1;
	t->info.cpu = cpu;
	t->in_slice = 1;
	t->slice_t = now;
	t->slice_index = index;
	t->slice_insns = t->g ? ae_regen_stats(t->g)->insns : 0;
	t->slice_bytes = 0;
	if (r->o->switch_in)
		r->o->switch_in(r->o->ctx, &t->info, now);
}

static void forget_task(struct sr *r, struct task *t)
{
	for (uint32_t c = 0; c < r->ncpu; c++)
		if (r->cpu_owner[c] == t)
			slice_end(r, c, r->now, NULL, 0, 0);
}

/*
 * A new task takes tid @t->tid (START or FORK): the old one is done; one
 * that had not failed yet fails, since a tid is reused only after it ended.
 */
static void retire_tid(struct sr *r, struct task *t, const char *what, uint64_t index)
{
	if (!t)
		return;
	if (!t->failed)
		tfail(t, "marker %llu: %s while it is traced already",
		      (unsigned long long)index, what);
	forget_task(r, t);
	t->state = T_DONE;
}

static int cut_index(const struct sr *r, int32_t tid)
{
	for (size_t i = 0; i < r->ncut; i++)
		if (r->cut[i] == tid)
			return (int)i;
	return -1;
}

static int add_cut(struct sr *r, int32_t tid)
{
	if (cut_index(r, tid) >= 0)
		return 0;
	if (r->ncut == r->capcut) {
		size_t cap = r->capcut ? r->capcut * 2 : 8;
		int32_t *n = realloc(r->cut, cap * sizeof(*n));

		if (!n) {
			fprintf(stderr, "aetrace: out of memory\n");
			return -1;
		}
		r->cut = n;
		r->capcut = cap;
	}
	r->cut[r->ncut++] = tid;
	return 0;
}

/* A new task (START, FORK) takes tid: it is traced whole. */
static void uncut(struct sr *r, int32_t tid)
{
	int c = cut_index(r, tid);

	if (c >= 0)
		r->cut[c] = r->cut[--r->ncut];
}

static int on_marker(struct sr *r, const struct schedlog_ev *ev)
{
	const struct trbuf_marker *m = ev->m;
	struct task *t = find_task(r, m->tid);

	r->now = m->time_ns;
	if (m->type == TRBUF_MK_START) {
		uncut(r, m->tid);
	} else if (cut_index(r, m->tid) >= 0) {
		/* (its switch-in ends the CPU's slice all the same) */
		if (m->type == TRBUF_MK_SWITCH_IN)
			slice_end(r, m->cpu, m->time_ns, NULL, 0, 0);
		/* (a child it forked past its cut has no state to start from) */
		if (m->type == TRBUF_MK_FORK) {
			fprintf(stderr, "aetrace: warning: task %d/%d: forked by %d/%d past its cut (marker %llu): skipped\n",
				(m->arg2 & CLONE_THREAD) ? m->pid : (int32_t)m->arg,
				(int32_t)m->arg, m->pid, m->tid, (unsigned long long)ev->index);
			return add_cut(r, (int32_t)m->arg);
		}
		return 0;
	}
	switch (m->type) {
	case TRBUF_MK_START:
		retire_tid(r, t, "START", ev->index);
		t = new_task(r, m->pid, m->tid);
		if (!t)
			return -1;
		t->start_ip = m->ip;
		t->start_sp = m->sp;
		slice_begin(r, t, m->cpu, m->time_ns, NULL, ev->index);
		return 0;
	case TRBUF_MK_FORK: {
		struct task *c;

		if (!t)
			break;
		uncut(r, (int32_t)m->arg);
		retire_tid(r, find_task(r, (int32_t)m->arg), "forked", ev->index);
		c = new_task(r, (m->arg2 & CLONE_THREAD) ? m->pid : (int32_t)m->arg, (int32_t)m->arg);
		if (!c)
			return -1;
		c->state = T_WAIT_FORK;
		if (t->failed) {
			/* its parent was skipped: nothing to continue from */
			tfail(c, "child of a task that was skipped or failed: skipped");
			c->state = T_READY;
			return 0;
		}
		if (!t->failed && ae_tstream_marker(&t->s, m, ev->index))
			return -1;
		resume(r, t);
		resume_ready(r);
		return 0;
	}
	case TRBUF_MK_SWITCH_IN:
		if (!t)
			break;
		slice_begin(r, t, m->cpu, m->time_ns, m, ev->index);
		resume(r, t);	/* (a task waiting at its switch point goes on) */
		return 0;
	case TRBUF_MK_SIGNAL:
	case TRBUF_MK_SIGRETURN:
	case TRBUF_MK_EXIT:
	case TRBUF_MK_EXEC:
	case TRBUF_MK_STOP:
		if (!t) {
			if (m->type == TRBUF_MK_STOP)
				return 0;	/* detach of an untraced consumer */
			break;
		}
		/* a skipped task keeps no markers (nor bytes: on_data) */
		if (m->type != TRBUF_MK_STOP && !t->failed && ae_tstream_marker(&t->s, m, ev->index))
			return -1;
		if (m->type == TRBUF_MK_EXIT || m->type == TRBUF_MK_EXEC)
			t->s.final = 1;
		else if (m->type == TRBUF_MK_STOP)
			t->s.final = 2;
		t->closed = t->s.final != 0;
		resume(r, t);
		if (t->s.final)
			forget_task(r, t);
		resume_ready(r);
		reap(r);
		return 0;
	default:
		return 0;	/* SUBBUF, ROLLBACK: positions only */
	}
	/* a marker of a task no START or FORK announced */
	{
		struct task *u = new_task(r, m->pid, m->tid);

		if (!u)
			return -1;
		/* said once the capture's end tells which (orphans()) */
		u->failed = 1;
		u->orphan = 1;
		u->orphan_index = ev->index;
		u->orphan_type = m->type;
		u->state = T_READY;
	}
	return 0;
}

/*
 * A file cut short lost bytes of this task on a CPU before it left it:
 * the task ends there, as at the capture's end (its trace is a prefix of
 * what it ran); its later markers and bytes continue nothing.
 */
static int on_cut(struct sr *r, const struct schedlog_ev *ev)
{
	struct task *t = find_task(r, ev->tid);

	if (add_cut(r, ev->tid))
		return -1;
	if (!t || t->failed)
		return 0;
	fprintf(stderr, "aetrace: warning: task %d/%d: its bytes on cpu %u end at sub-buffer seq %llu offset %u, in a capture cut short, before it left that cpu: regenerated up to there, the rest of it skipped\n",
		t->info.pid, t->info.tid, ev->cpu, (unsigned long long)ev->seq, ev->offset);
	if (!t->s.final)
		t->s.final = 2;
	t->closed = 1;
	t->sw_begun = t->sw_count;	/* (no slice after a switch point) */
	t->at_end = 1;
	resume(r, t);
	forget_task(r, t);
	resume_ready(r);
	reap(r);
	return 0;
}

static int on_data(struct sr *r, const struct schedlog_ev *ev)
{
	struct task *t = find_task(r, ev->tid);

	if (!t)
		return 0;	/* reported with its marker */
	if (t->failed)
		return 0;
	if (ae_tstream_append(&t->s, ev->data, ev->len))
		return -1;
	t->slice_bytes += ev->len;
	resume(r, t);
	resume_ready(r);
	return 0;
}

/*
 * The tasks no START or FORK announced. In a complete capture that is
 * corrupt; in one cut short (aetrace salvage), a parent's FORK can lie
 * past the cut (aerun writes a task's markers with its sub-buffer, a
 * child's often before its parent's): the child cannot start without it,
 * and is skipped with a warning.
 */
static void orphans(struct sr *r, int complete)
{
	for (struct task *t = r->tasks; t; t = t->next) {
		if (!t->orphan)
			continue;
		if (complete)
			tfail(t, "marker %llu (%s) of a task that has no START marker and no parent's FORK (unknown task)",
			      (unsigned long long)t->orphan_index, schedlog_type_name(t->orphan_type));
		else
			fprintf(stderr, "aetrace: warning: task %d/%d: no START marker or parent's FORK before the cut (its first marker: %llu, %s): skipped\n",
				t->info.pid, t->info.tid, (unsigned long long)t->orphan_index,
				schedlog_type_name(t->orphan_type));
	}
}

/* A raw AE_CAPTURE file: one task, its bytes, its exit after _Exit's
 * system call. */
static int raw_capture(struct sr *r, const char *path, FILE *f)
{
	struct ae_capture_hdr h;
	struct task *t;
	struct trbuf_marker m = { .type = TRBUF_MK_EXIT, .flags = AE_MK_EXIT_AT_SYSCALL };
	char buf[1 << 16];
	uint64_t left;

	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != AE_CAPTURE_MAGIC) {
		fprintf(stderr, "aetrace: %s: bad capture header\n", path);
		return -1;
	}
	t = new_task(r, 0, 0);
	if (!t)
		return -1;
	slice_begin(r, t, 0, 0, NULL, 0);
	for (left = h.len; left;) {
		size_t n = fread(buf, 1, left < sizeof(buf) ? left : sizeof(buf), f);

		if (!n) {
			fprintf(stderr, "aetrace: %s: capture file truncated at offset %llu\n", path,
				(unsigned long long)(sizeof(h) + h.len - left));
			return -1;
		}
		if (ae_tstream_append(&t->s, buf, n))
			return -1;
		left -= n;
		resume(r, t);
	}
	m.ip = h.exit_entry;
	if (ae_tstream_marker(&t->s, &m, 0))
		return -1;
	t->s.final = 1;
	resume(r, t);
	return 0;
}

int ae_sysregen(const struct ae_sysregen_opts *o)
{
	struct sr r = { .o = o };
	struct schedlog_demux *d = NULL;
	struct schedlog_ev ev;
	int ret = 0, complete;
	FILE *f;

	for (int i = 0; i < o->nprogs; i++)
		if (add_prog(&r, o->progs[i])) {
			ret = -1;
			goto out;
		}
	f = fopen(o->trace, "rb");
	if (f) {
		uint64_t magic = 0;

		if (fread(&magic, 8, 1, f) == 1 && magic == AE_CAPTURE_MAGIC) {
			r.ncpu = 1;
			r.cpu_owner = calloc(1, sizeof(*r.cpu_owner));
			rewind(f);
			ret = raw_capture(&r, o->trace, f);
			fclose(f);
			goto finish;
		}
		fclose(f);
	}
	if (schedlog_demux_open(&d, o->trace, o->sched)) {
		ret = -1;
		goto out;
	}
	r.ncpu = schedlog_demux_geom(d)->nr_cpus;
	r.cpu_owner = calloc(r.ncpu, sizeof(*r.cpu_owner));
	if (!r.cpu_owner) {
		ret = -1;
		goto out;
	}
	while (!r.stopped && (ret = schedlog_demux_next(d, &ev)) == 1) {
		if (ev.kind == SCHEDLOG_EV_MARKER)
			ret = on_marker(&r, &ev);
		else if (ev.kind == SCHEDLOG_EV_CUT)
			ret = on_cut(&r, &ev);
		else
			ret = on_data(&r, &ev);
		if (ret < 0)
			break;
	}
	if (ret < 0 || r.stopped)
		goto out;	/* the rest cannot be read, or is not wanted */
	complete = schedlog_demux_complete(d);
	if (!complete)
		fprintf(stderr, "aetrace: warning: %s: no END chunk: the capture was cut short (its producer stopped before its end) or is still being written; regenerating what is there\n",
			o->trace);
	orphans(&r, complete);
	if (schedlog_demux_drops(d))
		fprintf(stderr, "aetrace: warning: %s: its producer lost %llu sub-buffers, markers or task ends (the END chunk's drops; its stderr said which): some tasks end early or are missing\n",
			o->trace, (unsigned long long)schedlog_demux_drops(d));
finish:
	/*
	 * The capture ended: tasks still running end here, parents before the
	 * children that wait for their fork (a parent whose trace ends at the
	 * fork, aerun's thread killed without an exit stop, reaches it only
	 * now), until no task is left to end.
	 */
	for (int more = 1; more;) {
		more = 0;
		for (struct task *t = r.tasks; t; t = t->next) {
			if (t->state == T_DONE || t->state == T_FAILED || t->failed || !t->ran ||
			    t->state == T_WAIT_FORK || t->at_end)
				continue;	/* (a fork child that never ran: nothing to do) */
			if (!t->s.final)
				t->s.final = 2;
			t->sw_begun = t->sw_count;	/* (no slice after a switch point) */
			t->at_end = 1;
			more = 1;
			resume(&r, t);
		}
		resume_ready(&r);
		/* no task is left to end: a vfork child never will */
		for (struct task *t = r.tasks; !more && t; t = t->next) {
			if (t->waits && !t->stuck) {
				t->stuck = 1;
				more = 1;
				resume(&r, t);
			}
		}
	}
	for (struct task *t = r.tasks; t; t = t->next)
		if (t->state == T_WAIT_FORK && !t->failed && t->ran)
			tfail(t, "its parent's regeneration never reached the fork that created it");
	for (uint32_t c = 0; c < r.ncpu; c++)
		slice_end(&r, c, r.now, NULL, 0, 0);
	for (struct task *t = r.tasks; t; t = t->next)
		if (t->state != T_DONE && t->state != T_FAILED && !t->failed && t->ran)
			tfail(t, "regeneration did not finish");
	if (ret >= 0 && o->vcprof && write_vcprof(&r))
		ret = -1;
out:
	schedlog_demux_close(d);
	while (r.tasks) {
		struct task *t = r.tasks;

		r.tasks = t->next;
		if (t->stack)
			munmap(t->stack, CO_STACK);
		ae_regen_free(t->g);
		ae_tstream_free(&t->s);
		free(t);
	}
	for (int i = 0; i < r.nprogs; i++) {
		ae_program_free(r.progs[i]->p);
		free(r.progs[i]->path);
		free(r.progs[i]);
	}
	free(r.progs);
	free(r.cpu_owner);
	free(r.pt);
	free(r.sw);
	free(r.cut);
	if (ret < 0)
		return -1;
	return r.failed ? 1 : 0;
}
