// SPDX-License-Identifier: MIT
/*
 * capmix - hand-build a whole-system capture from standalone ones (no
 * tracer needed, in the spirit of DynamoRIO's raw2trace tests): every task
 * of every input (its bytes and its SIGNAL/SIGRETURN/FORK/EXEC/EXIT
 * markers, read with the schedlog demultiplexer) is replayed by a seeded
 * random scheduler onto NCPU CPUs with SUBBUF-byte sub-buffers: random
 * slice lengths, migrations, ROLLBACK markers, SUBBUF markers at every
 * sub-buffer, each sub-buffer's MARKERS chunk before its DATA chunk, the
 * CPUs' chunks interleaved. `aetrace regen --split` of the result must equal
 * that of the inputs, task for task.
 *
 *   capmix [--sched FILE] [--break KIND] [--foreign BYTES] [--switch-at-signals]
 *          [--switch-again] [--switch-after-sigreturn CX] [--blocked-in-syscall]
 *          [--blocked-at IP] [--in-sigreturn IP] [--reuse-tid]
 *          OUT NCPU SUBBUF SEED IN...
 *   KIND: drop-subbuf | bad-offset | unknown-task | bad-type | order
 *   (malformed pairs)
 *   --switch-at-signals: slices end only where a task took a signal,
 *   exec'd or ended, and the SWITCH_IN that resumes it carries that
 *   SIGNAL's, EXEC's or EXIT's ip, sp and cx, as the kernel's does for a
 *   task preempted there and signalled or killed at its switch-in, or one
 *   switched out in its execve or exit (its ip and registers are the ones
 *   the task stopped with); and
 *   after each SIGNAL and before each SIGRETURN, with their ip and sp, as
 *   the kernel's hooks do when they wait for room; and twice before each
 *   FORK, as for a task switched out twice in clone() before its hook.
 *   Elsewhere a SWITCH_IN's ip is 0: no position.
 *   --switch-again: with --switch-at-signals, a slice that begins right
 *   after a SIGNAL is cut again before the task's next marker at that
 *   offset, as for a task switched out in the delivery and then where its
 *   handler stopped before writing a byte (a nested fault's ip and sp).
 *   --switch-after-sigreturn CX: with --switch-at-signals, a slice is cut
 *   again after each SIGRETURN, the SWITCH_IN carrying the last SIGNAL's ip
 *   and sp and its cx plus CX, as for a task preempted once its handler
 *   returned, CX on in a loop that counts in %rcx.
 *   --blocked-in-syscall: with --switch-at-signals, the SWITCH_IN before
 *   a SIGNAL at a restarted system call (its cx, the return address the
 *   syscall instruction left, is its ip + 2) carries the ip after the
 *   call, as the kernel's does for a task that blocked in the call: the
 *   signal woke it, and only its delivery moves %rip back onto the call.
 *   --blocked-at IP: the same for a SIGNAL at IP, a 2-byte int $0x80
 *   (which leaves %rcx alone).
 *   --in-sigreturn IP: with --switch-at-signals, the SWITCH_IN before each
 *   SIGRETURN carries IP (and %rcx; %rsp unknown: 0), as the kernel's
 *   does for a task switched out in rt_sigreturn before the registers
 *   were restored: IP is the return address of the program's restorer's
 *   syscall instruction.
 *   --foreign: one more task (tid 4242) writing BYTES bytes of a counting
 *   pattern and no registration record, as a hand-written /dev/trbuf
 *   producer (not built by aecc) does.
 *   --reuse-tid: every input's first task takes the first input's pid and
 *   tid (the others' tids shift with it), and starts only once the task
 *   before it on that tid has exited, as a reused pid does (inputs of one
 *   task each: the shifted tids of more could collide).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aetrace/container.h>
#include <aetrace/schedlog.h>

struct tmk {
	struct trbuf_marker m;
	uint64_t pos;
};

struct task {
	int32_t pid, tid;
	uint8_t *data;
	uint64_t len, cap, done;
	struct tmk *mk;
	size_t nmk, capmk, mdone;
	int ready, finished, started, cpu;
	int first;		/* START (1) or FORK child (0) */
	uint64_t cut, cut_after;	/* --switch-at-signals: cut before, after
					 * marker cut - 1 already */
	int cuts;			/* ... before marker cut - 1, so often */
	struct trbuf_marker resume;	/* ip, sp, cx for the next SWITCH_IN */
	struct trbuf_marker last_sig;	/* --switch-after-sigreturn: the last
					 * SIGNAL, and the SIGRETURN cut after */
	uint64_t sigret_cut;
};

static struct task *tasks;
static size_t ntasks;

struct cpu {
	uint64_t seq;
	uint8_t *buf;
	uint32_t len;
	struct trbuf_marker *mk;
	size_t nmk, capmk;
	int owner;		/* task index or -1 */
};

static struct cpu *cpus;
static int ncpu;
static uint32_t subbuf;
static uint64_t now = 1000;
static struct ae_writer *w;
static FILE *schedf;
static const char *breakage;
static int at_signals, switch_again, after_sigret, blocked_in_syscall, reuse_tid;
static uint64_t blocked_at, in_sigreturn;
static long long sigret_cx;
static uint64_t nsub, bad_done;

static uint64_t rnd_state;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elt)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * elt);
	if (!p) {
		fprintf(stderr, "capmix: out of memory\n");
		exit(1);
	}
	return p;
}

static struct task *task_of(int32_t tid, int create)
{
	for (size_t i = 0; i < ntasks; i++)
		if (tasks[i].tid == tid && !tasks[i].finished)
			return &tasks[i];
	if (!create)
		return NULL;
	tasks = realloc(tasks, (ntasks + 1) * sizeof(*tasks));
	memset(&tasks[ntasks], 0, sizeof(*tasks));
	tasks[ntasks].tid = tid;
	tasks[ntasks].cpu = -1;
	return &tasks[ntasks++];
}

/* Read one input: per task bytes and markers (tids offset by `shift`). */
static int load(const char *path, int32_t shift)
{
	struct schedlog_demux *d;
	struct schedlog_ev ev;
	int ret;
	size_t first = ntasks;

	if (schedlog_demux_open(&d, path, NULL))
		return -1;
	/* (the tasks of earlier inputs are not this one's) */
	for (size_t i = 0; i < first; i++)
		tasks[i].finished = 1;
	while ((ret = schedlog_demux_next(d, &ev)) == 1) {
		struct task *t;

		if (ev.kind == SCHEDLOG_EV_CUT) {
			fprintf(stderr, "capmix: %s: cut short (no END): only whole captures are mixed\n", path);
			ret = -1;
			break;
		}
		if (ev.kind == SCHEDLOG_EV_DATA) {
			t = task_of(ev.tid + shift, 0);
			if (!t)
				continue;
			t->data = grow(t->data, (size_t *)&t->cap, t->len + ev.len, 1);
			memcpy(t->data + t->len, ev.data, ev.len);
			t->len += ev.len;
			continue;
		}
		switch (ev.m->type) {
		case TRBUF_MK_START: {
			int prior = 0;

			for (size_t i = reuse_tid ? 0 : first; i < ntasks; i++)
				prior |= tasks[i].tid == ev.tid + shift;
			t = task_of(ev.tid + shift, 1);
			t->pid = ev.pid + shift;
			t->first = 1;
			t->ready = !prior;	/* after an exec: once the EXEC is placed */
			/* (its registers: the regenerator knows %rsp from the
			 * start, as with the driver's START) */
			t->resume.ip = ev.m->ip;
			t->resume.sp = ev.m->sp;
			t->resume.cx = ev.m->cx;
			break;
		}
		case TRBUF_MK_FORK:
		case TRBUF_MK_SIGNAL:
		case TRBUF_MK_SIGRETURN:
		case TRBUF_MK_EXIT:
		case TRBUF_MK_EXEC:
			t = task_of(ev.tid + shift, 0);
			if (!t)
				break;
			t->mk = grow(t->mk, &t->capmk, t->nmk + 1, sizeof(*t->mk));
			t->mk[t->nmk].m = *ev.m;
			t->mk[t->nmk].m.pid += shift;
			t->mk[t->nmk].m.tid += shift;
			t->mk[t->nmk].pos = t->len;
			t->nmk++;
			if (ev.m->type == TRBUF_MK_FORK) {
				size_t ti = t - tasks;
				struct task *c;

				t->mk[t->nmk - 1].m.arg += shift;
				c = task_of((int32_t)ev.m->arg + shift, 1);	/* moves tasks */
				t = &tasks[ti];
				c->pid = (ev.m->arg2 & 0x10000) ? t->pid : (int32_t)ev.m->arg + shift;
			}
			if (ev.m->type == TRBUF_MK_EXIT || ev.m->type == TRBUF_MK_EXEC)
				t->finished = 1;	/* a later START of the tid is a new task */
			break;
		default:
			break;
		}
	}
	schedlog_demux_close(d);
	for (size_t i = 0; i < ntasks; i++)
		tasks[i].finished = 0;
	return ret < 0 ? -1 : 0;
}

/* The tid of the first START in path (0: none). */
static int32_t first_tid(const char *path)
{
	struct schedlog_demux *d;
	struct schedlog_ev ev;
	int32_t tid = 0;

	if (schedlog_demux_open(&d, path, NULL))
		return 0;
	while (!tid && schedlog_demux_next(d, &ev) == 1)
		if (ev.kind != SCHEDLOG_EV_DATA && ev.kind != SCHEDLOG_EV_CUT &&
		    ev.m->type == TRBUF_MK_START)
			tid = ev.tid;
	schedlog_demux_close(d);
	return tid;
}

/* A task not built by aecc: a counting byte pattern, no registration
 * record, then its exit. */
static int add_foreign(uint64_t len)
{
	struct task *t = task_of(4242, 1);

	t->pid = 4242;
	t->first = 1;
	t->ready = 1;
	t->data = grow(t->data, (size_t *)&t->cap, len, 1);
	for (uint64_t i = 0; i < len; i++)
		t->data[i] = (uint8_t)(i * 7 + 1);
	t->len = len;
	t->mk = grow(t->mk, &t->capmk, 1, sizeof(*t->mk));
	memset(&t->mk[0], 0, sizeof(t->mk[0]));
	t->mk[0].m.type = TRBUF_MK_EXIT;
	t->mk[0].m.pid = 4242;
	t->mk[0].m.tid = 4242;
	t->mk[0].pos = len;
	t->nmk = 1;
	return 0;
}

/*
 * The driver closes a sub-buffer early once its marker area is half full
 * (a signal storm at one offset); capmix does at MK_CAP markers, which
 * keeps a MARKERS chunk far below AE_CHUNK_MAX_LEN. werr: that flush
 * failed.
 */
#define MK_CAP	16384
static int werr;

static int flush_cpu(struct cpu *c, int ci);
static void put_marker(struct cpu *c, int ci, uint32_t type, const struct task *t,
		       const struct trbuf_marker *src);

/* Write CPU ci's sub-buffer and open the next: returns 0 or -1. */
static int close_subbuf(struct cpu *c, int ci, const struct task *t)
{
	if (flush_cpu(c, ci))
		return -1;
	put_marker(c, ci, TRBUF_MK_SUBBUF, t, NULL);
	return 0;
}

static void put_marker(struct cpu *c, int ci, uint32_t type, const struct task *t,
		       const struct trbuf_marker *src)
{
	struct trbuf_marker m;

	if (c->nmk >= MK_CAP && type != TRBUF_MK_SUBBUF && close_subbuf(c, ci, t))
		werr = 1;

	if (src)
		m = *src;
	else
		memset(&m, 0, sizeof(m));
	m.type = type;
	m.time_ns = now++;
	m.cpu = ci;
	if (t) {
		m.pid = t->pid;
		m.tid = t->tid;
	}
	m.seq = c->seq;
	m.offset = c->len;
	if (breakage && !strcmp(breakage, "bad-offset") && !bad_done && type == TRBUF_MK_SWITCH_IN && c->len) {
		m.offset = subbuf + 100;	/* outside the sub-buffer */
		bad_done = 1;
	}
	if (breakage && !strcmp(breakage, "unknown-task") && !bad_done && type == TRBUF_MK_SWITCH_IN) {
		m.tid = 999999;
		bad_done = 1;
	}
	if (breakage && !strcmp(breakage, "bad-type") && !bad_done && type == TRBUF_MK_EXIT) {
		m.type = 0;	/* an EXIT no reader knows: never a silent extra slice */
		bad_done = 1;
	}
	c->mk = grow(c->mk, &c->capmk, c->nmk + 1, sizeof(*c->mk));
	c->mk[c->nmk++] = m;
}

/* What the file holds, for its END chunk (as a producer counts it). */
static struct ae_end end;

static int flush_cpu(struct cpu *c, int ci)
{
	int drop = breakage && !strcmp(breakage, "drop-subbuf") && nsub++ == 3;

	if (c->nmk) {
		if (ae_writer_chunk(w, AE_CHUNK_MARKERS, 0, 0, c->mk, c->nmk * sizeof(*c->mk), 0))
			return -1;
		end.markers += c->nmk;
		if (schedf && fwrite(c->mk, sizeof(*c->mk), c->nmk, schedf) != c->nmk)
			return -1;
	}
	if (!drop && ae_writer_chunk(w, AE_CHUNK_DATA, ci, c->seq, c->buf, c->len, 0))
		return -1;
	if (!drop) {
		end.raw_bytes += c->len;
		end.data_chunks++;
	}
	c->nmk = 0;
	c->len = 0;
	c->seq++;
	return 0;
}

/* Markers of t due at its current position (one: only the first). */
static void due_markers(struct cpu *c, int ci, struct task *t, int one)
{
	for (int n = 0; (!one || !n) && t->mdone < t->nmk && t->mk[t->mdone].pos == t->done; n++) {
		struct tmk *k = &t->mk[t->mdone++];

		put_marker(c, ci, k->m.type, t, &k->m);
		if (k->m.type == TRBUF_MK_FORK) {
			struct task *ch = task_of((int32_t)k->m.arg, 0);

			if (ch)
				ch->ready = 1;
		}
		if (k->m.type == TRBUF_MK_EXIT || k->m.type == TRBUF_MK_EXEC) {
			t->finished = 1;
			c->owner = -1;
			t->cpu = -1;
			/* the same tid may START again (exec) */
			for (size_t i = 0; i < ntasks; i++)
				if (&tasks[i] != t && tasks[i].tid == t->tid && !tasks[i].started)
					tasks[i].ready = 1;
			return;
		}
	}
}

/* Run task t on cpu ci for up to n bytes. */
static int run_slice(int ci, struct task *t, uint64_t n)
{
	struct cpu *c = &cpus[ci];

	if (t->cpu >= 0 && t->cpu != ci)
		cpus[t->cpu].owner = -1;
	c->owner = t - tasks;
	t->cpu = ci;
	t->resume.arg = t->resume.arg2 = 0;
	t->resume.flags = 0;
	put_marker(c, ci, t->started || !t->first ? TRBUF_MK_SWITCH_IN : TRBUF_MK_START, t,
		   t->resume.ip ? &t->resume : NULL);
	memset(&t->resume, 0, sizeof(t->resume));
	t->started = 1;
	if (rnd() % 5 == 0)
		put_marker(c, ci, TRBUF_MK_ROLLBACK, t, NULL);
	for (int first = 1;; first = 0) {
		uint64_t k;

		if (at_signals && t->mdone < t->nmk && t->mk[t->mdone].pos == t->done) {
			const struct trbuf_marker *k = &t->mk[t->mdone].m;
			uint64_t i = t->mdone + 1;

			/* switched out where it took a signal, or ended, or (the
			 * kernel's sigreturn hook waiting for room) after its
			 * registers were restored, before the SIGRETURN */
			int again = k->type == TRBUF_MK_FORK && t->cut == i && t->cuts < 2;
			/* (--switch-again: this slice began after a SIGNAL) */
			int more = switch_again && t->cut_after && t->cut_after == t->mdone;

			if ((!first || again || more) && (t->cut != i || again) &&
			    (k->type == TRBUF_MK_SIGNAL || k->type == TRBUF_MK_EXIT ||
			     k->type == TRBUF_MK_SIGRETURN || k->type == TRBUF_MK_FORK ||
			     k->type == TRBUF_MK_EXEC)) {
				t->cuts = t->cut == i ? t->cuts + 1 : 1;
				t->cut = i;
				t->resume = *k;
				if (k->type == TRBUF_MK_SIGNAL &&
				    ((blocked_in_syscall && k->cx == k->ip + 2) ||
				     (blocked_at && k->ip == blocked_at)))
					t->resume.ip = k->ip + 2;
				if (k->type == TRBUF_MK_SIGRETURN && in_sigreturn) {
					t->resume.ip = t->resume.cx = in_sigreturn;
					t->resume.sp = 0;
				}
				break;
			}
			due_markers(c, ci, t, 1);
			if (t->mk[i - 1].m.type == TRBUF_MK_SIGNAL)
				t->last_sig = t->mk[i - 1].m;
			/* (--switch-after-sigreturn: preempted once the
			 * handler returned, sigret_cx on in the loop it
			 * interrupted) */
			if (after_sigret && t->mk[i - 1].m.type == TRBUF_MK_SIGRETURN &&
			    t->last_sig.ip && t->sigret_cut != i) {
				t->sigret_cut = i;
				t->resume = t->last_sig;
				t->resume.cx += sigret_cx;
				break;
			}
			/* while the kernel delivered the signal (its hook
			 * waiting for room): the ip is still the interrupted one */
			if (t->mk[i - 1].m.type == TRBUF_MK_SIGNAL && t->cut_after != i) {
				t->cut_after = i;
				t->resume = t->mk[i - 1].m;
				break;
			}
			if (t->finished)
				break;
			continue;
		}
		due_markers(c, ci, t, 0);
		if (t->finished || !n || t->done == t->len)
			break;
		k = t->len - t->done;
		if (k > n)
			k = n;
		if (t->mdone < t->nmk && t->mk[t->mdone].pos - t->done < k)
			k = t->mk[t->mdone].pos - t->done;
		if (k > subbuf - c->len)
			k = subbuf - c->len;
		memcpy(c->buf + c->len, t->data + t->done, k);
		c->len += k;
		t->done += k;
		n -= k;
		if (c->len == subbuf && close_subbuf(c, ci, t))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ae_writer_opts o = { .level = 1 };
	struct ae_session s = { .version = AE_FORMAT_VERSION, .mode = AE_MODE_KERNEL };
	int fd, ai = 1;
	const char *schedp = NULL;
	uint64_t foreign = 0;

	while (ai < argc && argv[ai][0] == '-') {
		if (!strcmp(argv[ai], "--sched") && ai + 1 < argc)
			schedp = argv[ai + 1];
		else if (!strcmp(argv[ai], "--break") && ai + 1 < argc)
			breakage = argv[ai + 1];
		else if (!strcmp(argv[ai], "--foreign") && ai + 1 < argc)
			foreign = strtoull(argv[ai + 1], NULL, 0);
		else if (!strcmp(argv[ai], "--switch-at-signals") && (at_signals = 1))
			ai--;
		else if (!strcmp(argv[ai], "--switch-after-sigreturn") && ai + 1 < argc &&
			 (after_sigret = 1))
			sigret_cx = strtoll(argv[ai + 1], NULL, 0);
		else if (!strcmp(argv[ai], "--switch-again") && (switch_again = 1))
			ai--;
		else if (!strcmp(argv[ai], "--reuse-tid") && (reuse_tid = 1))
			ai--;
		else if (!strcmp(argv[ai], "--blocked-in-syscall") && (blocked_in_syscall = 1))
			ai--;
		else if (!strcmp(argv[ai], "--blocked-at") && ai + 1 < argc)
			blocked_at = strtoull(argv[ai + 1], NULL, 0);
		else if (!strcmp(argv[ai], "--in-sigreturn") && ai + 1 < argc)
			in_sigreturn = strtoull(argv[ai + 1], NULL, 0);
		else
			break;
		ai += 2;
	}
	if (argc - ai < 5) {
		fprintf(stderr, "usage: capmix [--sched FILE] [--break KIND] [--foreign BYTES] [--switch-at-signals] [--switch-again] [--switch-after-sigreturn CX] [--blocked-in-syscall] [--blocked-at IP] [--in-sigreturn IP] [--reuse-tid] OUT NCPU SUBBUF SEED IN...\n");
		return 2;
	}
	ncpu = atoi(argv[ai + 1]);
	subbuf = strtoul(argv[ai + 2], NULL, 0);
	rnd_state = strtoull(argv[ai + 3], NULL, 0) * 2654435761u + 1;
	if (ncpu < 1 || ncpu > 64 || subbuf < 16)
		return 2;
	for (int i = ai + 4; i < argc; i++) {
		int32_t shift = (i - ai - 3) * 1000000;

		if (reuse_tid) {
			int32_t t0 = first_tid(argv[ai + 4]), ti = first_tid(argv[i]);

			if (!t0 || !ti) {
				fprintf(stderr, "capmix: %s: no START to reuse a tid from\n", argv[i]);
				return 1;
			}
			shift = t0 - ti;
		}
		if (load(argv[i], shift))
			return 1;
	}
	if (foreign && add_foreign(foreign))
		return 1;
	cpus = calloc(ncpu, sizeof(*cpus));
	for (int c = 0; c < ncpu; c++) {
		cpus[c].buf = malloc(subbuf);
		cpus[c].owner = -1;
	}
	fd = open(argv[ai], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ae_writer_open(&w, fd, &o))
		return 1;
	if (schedp && !(schedf = fopen(schedp, "wb")))
		return 1;
	s.nr_cpus = ncpu;
	s.subbuf_size = subbuf;
	s.nr_subbufs = 4;
	if (ae_writer_chunk(w, AE_CHUNK_SESSION, 0, 0, &s, sizeof(s), 1))
		return 1;
	for (;;) {
		size_t live = 0, pick;
		int ci;

		for (size_t i = 0; i < ntasks; i++)
			live += tasks[i].ready && !tasks[i].finished;
		if (!live)
			break;
		pick = rnd() % live;
		for (size_t i = 0; i < ntasks; i++) {
			if (!tasks[i].ready || tasks[i].finished)
				continue;
			if (pick--)
				continue;
			ci = rnd() % ncpu;
			if (run_slice(ci, &tasks[i], at_signals ? UINT64_MAX : 1 + rnd() % (3 * subbuf))) {
				fprintf(stderr, "capmix: %s: writing a sub-buffer failed\n", argv[ai]);
				return 1;
			}
			break;
		}
	}
	for (int c = 0; c < ncpu; c++)
		if ((cpus[c].len || cpus[c].nmk) && flush_cpu(&cpus[c], c)) {
			fprintf(stderr, "capmix: %s: writing cpu %d's last sub-buffer failed\n", argv[ai], c);
			return 1;
		}
	if (werr) {
		fprintf(stderr, "capmix: %s: writing a sub-buffer its markers filled failed\n", argv[ai]);
		return 1;
	}
	if (ae_writer_chunk(w, AE_CHUNK_END, 0, 0, &end, sizeof(end), 1) ||
	    ae_writer_close(w, NULL) || close(fd)) {
		fprintf(stderr, "capmix: %s: closing failed\n", argv[ai]);
		return 1;
	}
	if (schedf && fclose(schedf))
		return 1;
	for (size_t i = 0; i < ntasks; i++)
		if (tasks[i].done != tasks[i].len)
			fprintf(stderr, "capmix: task %d: %llu of %llu bytes placed\n", tasks[i].tid,
				(unsigned long long)tasks[i].done, (unsigned long long)tasks[i].len);
	return 0;
}
