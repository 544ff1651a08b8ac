// SPDX-License-Identifier: MIT
/*
 * schedlog - read a capture's schedule (docs/FORMAT.md "Schedule file").
 *
 *   schedlog print SCHED [TRACE]   one line per marker
 *   schedlog check SCHED [TRACE]   ordering, pairing, positions vs the data
 *   schedlog stats SCHED [TRACE]   per task: switches, migrations, CPU time
 *   schedlog record ...            the BPF scheduler recorder (schedlog-record)
 *
 * SCHED is a sched.bin or a trace whose MARKERS chunks are read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aetrace/schedlog.h>

struct task {
	int32_t pid, tid;
	int started, exited;
	int sig_depth;
	int cpu;			/* last cpu, -1 none */
	uint64_t switches, migrations, bytes, slices;
	uint64_t cpu_ns, slice_start;
	int running;
	uint64_t first_index;
};

static struct task *tasks;
static size_t ntasks, captasks;

static struct task *task_find(int32_t tid, int create)
{
	for (size_t i = ntasks; i-- > 0;)
		if (tasks[i].tid == tid)
			return &tasks[i];
	if (!create)
		return NULL;
	if (ntasks == captasks) {
		captasks = captasks ? captasks * 2 : 64;
		tasks = realloc(tasks, captasks * sizeof(*tasks));
		if (!tasks) {
			fprintf(stderr, "schedlog: out of memory\n");
			exit(1);
		}
	}
	memset(&tasks[ntasks], 0, sizeof(*tasks));
	tasks[ntasks].tid = tid;
	tasks[ntasks].cpu = -1;
	return &tasks[ntasks++];
}

static void usage(FILE *f)
{
	fprintf(f, "usage: schedlog print|check|stats SCHED [TRACE]\n"
		   "       schedlog record ...   (the BPF scheduler recorder, if built)\n"
		   "  SCHED  sched.bin (bdump's SCHED file) or a trace with MARKERS chunks\n"
		   "  TRACE  the capture: check also verifies marker positions against its data\n");
}

static int cmd_print(const char *sched)
{
	struct schedlog_markers *ms;
	struct trbuf_marker m;
	uint64_t index;
	char line[256];
	int ret;

	if (schedlog_markers_open(&ms, sched, -1)) {
		fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
		schedlog_markers_close(ms);
		return 1;
	}
	while ((ret = schedlog_markers_next(ms, &m, &index)) == 1) {
		schedlog_format(line, sizeof(line), index, &m);
		puts(line);
	}
	if (ret < 0)
		fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
	schedlog_markers_close(ms);
	return ret < 0 || fflush(stdout) ? 1 : 0;
}

/* A violation: the marker index and what is wrong. */
static int bad(const char *file, uint64_t index, const struct trbuf_marker *m, const char *what)
{
	char line[256];

	schedlog_format(line, sizeof(line), index, m);
	fprintf(stderr, "schedlog: %s: marker %llu: %s\n  %s\n", file,
		(unsigned long long)index, what, line);
	return 1;
}

struct imk {
	struct trbuf_marker m;
	uint64_t index;
};

static int imk_cmp(const void *a, const void *b)
{
	const struct imk *x = a, *y = b;

	if (x->m.time_ns != y->m.time_ns)
		return x->m.time_ns < y->m.time_ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Per task pairing, in time order (across CPUs the file has no order). */
static int check_pairing(const char *sched, struct imk *v, size_t n)
{
	char what[160];

	qsort(v, n, sizeof(*v), imk_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct trbuf_marker m = v[i].m;
		uint64_t index = v[i].index;
		struct task *t;

		if (m.type == TRBUF_MK_SUBBUF || m.type == TRBUF_MK_STOP ||
		    m.type == TRBUF_MK_ROLLBACK)
			continue;	/* may name an untraced task (flush, detach) */
		t = task_find(m.tid, 0);
		if (m.type == TRBUF_MK_START) {
			if (t && t->started && !t->exited) {
				snprintf(what, sizeof(what), "START of task %d that is traced already", m.tid);
				return bad(sched, index, &m, what);
			}
			t = task_find(m.tid, 1);
			memset(t, 0, sizeof(*t));
			t->tid = m.tid;
			t->pid = m.pid;
			t->started = 1;
			t->cpu = -1;
			t->first_index = index;
			continue;
		}
		if (!t || !t->started) {
			snprintf(what, sizeof(what), "task %d/%d has no START marker and no parent's FORK before", m.pid, m.tid);
			return bad(sched, index, &m, what);
		}
		if (t->exited) {
			snprintf(what, sizeof(what), "task %d has a marker after its %s", m.tid,
				 t->exited == 2 ? "EXEC" : "EXIT");
			return bad(sched, index, &m, what);
		}
		switch (m.type) {
		case TRBUF_MK_SWITCH_IN:
			t->switches++;
			t->cpu = m.cpu;
			break;
		case TRBUF_MK_SIGNAL:
			t->sig_depth++;
			break;
		case TRBUF_MK_SIGRETURN:
			if (!t->sig_depth)
				return bad(sched, index, &m, "SIGRETURN without a SIGNAL");
			t->sig_depth--;
			break;
		case TRBUF_MK_FORK: {
			struct task *c = task_find((int32_t)m.arg, 0);

			if (c && c->started && !c->exited) {
				snprintf(what, sizeof(what), "FORK of child %llu that is traced already",
					 (unsigned long long)m.arg);
				return bad(sched, index, &m, what);
			}
			c = task_find((int32_t)m.arg, 1);
			memset(c, 0, sizeof(*c));
			c->tid = (int32_t)m.arg;
			c->pid = (m.arg2 & 0x10000) ? m.pid : (int32_t)m.arg;	/* CLONE_THREAD */
			c->started = 1;
			c->first_index = index;
			c->cpu = -2;	/* must switch in */
			/* forked inside handlers, it returns from them too,
			 * unless it shares its parent's memory (CLONE_VM: a
			 * thread on a stack of its own, a vfork child that
			 * must not return: the regenerator starts those
			 * outside them too) */
			if (!(m.arg2 & 0x100))
				c->sig_depth = t->sig_depth;
			break;
		}
		case TRBUF_MK_EXIT:
		case TRBUF_MK_EXEC:
			/* a signal taken at the end needs no sigreturn */
			t->exited = m.type == TRBUF_MK_EXIT ? 1 : 2;
			t->sig_depth = 0;
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < ntasks; i++) {
		if (tasks[i].cpu == -2) {
			fprintf(stderr, "schedlog: %s: marker %llu: the child %d of this FORK never starts\n",
				sched, (unsigned long long)tasks[i].first_index, tasks[i].tid);
			return 1;
		}
	}
	return 0;
}

/* Marker-level rules: per cpu time and position order, per task pairing. */
static int check_markers(const char *sched)
{
	struct schedlog_markers *ms;
	struct imk *v = NULL;
	size_t n = 0, cap = 0;
	struct { uint64_t t, seq; uint32_t off; int seen; } *cpus = NULL;
	size_t ncpus = 0;
	struct trbuf_marker m;
	uint64_t index;
	int ret, fail = 0;

	if (schedlog_markers_open(&ms, sched, -1)) {
		fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
		schedlog_markers_close(ms);
		return 1;
	}
	while ((ret = schedlog_markers_next(ms, &m, &index)) == 1) {
		if (m.type < TRBUF_MK_START || m.type > TRBUF_MK_ROLLBACK) {
			fail = bad(sched, index, &m, "unknown marker type");
			break;
		}
		if (m.cpu >= ncpus) {
			size_t nc = m.cpu + 1;

			cpus = realloc(cpus, nc * sizeof(*cpus));
			if (!cpus)
				break;
			memset(cpus + ncpus, 0, (nc - ncpus) * sizeof(*cpus));
			ncpus = nc;
		}
		if (cpus[m.cpu].seen && m.time_ns < cpus[m.cpu].t) {
			fail = bad(sched, index, &m, "time goes back on this cpu");
			break;
		}
		if (cpus[m.cpu].seen && (m.seq < cpus[m.cpu].seq ||
					 (m.seq == cpus[m.cpu].seq && m.offset < cpus[m.cpu].off))) {
			fail = bad(sched, index, &m, "position lies before the previous marker of this cpu");
			break;
		}
		cpus[m.cpu].seen = 1;
		cpus[m.cpu].t = m.time_ns;
		cpus[m.cpu].seq = m.seq;
		cpus[m.cpu].off = m.offset;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v) {
				fprintf(stderr, "schedlog: out of memory\n");
				fail = 1;
				break;
			}
		}
		v[n].m = m;
		v[n++].index = index;
	}
	if (!fail && ret < 0) {
		fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
		fail = 1;
	}
	if (!fail)
		fail = check_pairing(sched, v, n);
	if (!fail)
		printf("%s: %zu markers, %zu tasks: order and pairing ok\n", sched, n, ntasks);
	free(v);
	free(cpus);
	schedlog_markers_close(ms);
	return fail;
}

/* Positions against the data: the demultiplexer fails on any mismatch. */
static int check_data(const char *sched, const char *trace)
{
	struct schedlog_demux *d;
	struct schedlog_ev ev;
	uint64_t bytes = 0, markers = 0, cuts = 0;
	int ret;

	if (schedlog_demux_open(&d, trace, sched)) {
		schedlog_demux_close(d);
		return 1;
	}
	while ((ret = schedlog_demux_next(d, &ev)) == 1) {
		if (ev.kind == SCHEDLOG_EV_DATA)
			bytes += ev.len;
		else if (ev.kind == SCHEDLOG_EV_CUT)
			cuts++;
		else
			markers++;
	}
	schedlog_demux_close(d);
	if (ret < 0)
		return 1;
	printf("%s: %llu markers place all %llu data bytes in traced tasks", trace,
	       (unsigned long long)markers, (unsigned long long)bytes);
	if (cuts)
		printf(" (%llu task slices cut short: the file has no END)", (unsigned long long)cuts);
	putchar('\n');
	return 0;
}

static int cmd_stats(const char *sched, const char *trace)
{
	struct schedlog_demux *d = NULL;
	struct schedlog_markers *ms = NULL;
	struct schedlog_ev ev;
	struct trbuf_marker m;
	struct { int has; int32_t tid; uint64_t t; } *cur;
	uint32_t ncpu = 4096;
	int ret;

	if (trace || schedlog_is_container(sched)) {
		if (schedlog_demux_open(&d, trace ? trace : sched, trace ? sched : NULL)) {
			schedlog_demux_close(d);
			return 1;
		}
		ncpu = schedlog_demux_geom(d)->nr_cpus;
	} else if (schedlog_markers_open(&ms, sched, -1)) {
		fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
		schedlog_markers_close(ms);
		return 1;
	}
	cur = calloc(ncpu, sizeof(*cur));
	for (;;) {
		struct task *t;

		if (d) {
			ret = schedlog_demux_next(d, &ev);
		} else {
			memset(&ev, 0, sizeof(ev));
			ret = schedlog_markers_next(ms, &m, &ev.index);
			if (ret < 0)
				fprintf(stderr, "schedlog: %s\n", schedlog_markers_error(ms));
			if (ret == 1 && m.cpu >= ncpu) {
				fprintf(stderr, "schedlog: %s: marker %llu: cpu %u out of range\n",
					sched, (unsigned long long)ev.index, m.cpu);
				ret = -1;
			}
			ev.kind = SCHEDLOG_EV_MARKER;
			ev.m = &m;
			ev.cpu = m.cpu;
			ev.pid = m.pid;
			ev.tid = m.tid;
		}
		if (ret != 1)
			break;
		t = task_find(ev.tid, 1);

		t->pid = ev.pid;
		if (ev.kind == SCHEDLOG_EV_DATA) {
			t->bytes += ev.len;
			continue;
		}
		if (ev.kind == SCHEDLOG_EV_CUT)
			continue;
		if (cur[ev.cpu].has && ev.m->type != TRBUF_MK_SUBBUF && ev.m->type != TRBUF_MK_STOP) {
			struct task *o = task_find(cur[ev.cpu].tid, 0);

			if (o)
				o->cpu_ns += ev.m->time_ns - cur[ev.cpu].t;
			cur[ev.cpu].t = ev.m->time_ns;
		}
		switch (ev.m->type) {
		case TRBUF_MK_START:
		case TRBUF_MK_SWITCH_IN:
			for (uint32_t c = 0; c < ncpu; c++)
				if (cur[c].has && cur[c].tid == ev.tid)
					cur[c].has = 0;
			if (t->cpu >= 0 && t->cpu != ev.cpu)
				t->migrations++;
			t->cpu = ev.cpu;
			t->switches += ev.m->type == TRBUF_MK_SWITCH_IN;
			t->slices++;
			cur[ev.cpu].has = 1;
			cur[ev.cpu].tid = ev.tid;
			cur[ev.cpu].t = ev.m->time_ns;
			break;
		case TRBUF_MK_EXIT:
		case TRBUF_MK_EXEC:
		case TRBUF_MK_STOP:
			if (cur[ev.cpu].has && cur[ev.cpu].tid == ev.tid)
				cur[ev.cpu].has = 0;
			break;
		default:
			break;
		}
	}
	free(cur);
	schedlog_demux_close(d);
	schedlog_markers_close(ms);
	if (ret < 0)
		return 1;
	printf("%8s %8s %9s %10s %12s %14s %12s\n", "pid", "tid", "switches", "migrations",
	       "cpu_ms", "bytes", "bytes/slice");
	for (size_t i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];

		printf("%8d %8d %9llu %10llu %12.3f %14llu %12llu\n", t->pid, t->tid,
		       (unsigned long long)t->switches, (unsigned long long)t->migrations,
		       t->cpu_ns / 1e6, (unsigned long long)t->bytes,
		       (unsigned long long)(t->slices ? t->bytes / t->slices : 0));
	}
	printf("(instructions per slice: aetrace stats --sched SCHED TRACE PROG...)\n");
	return 0;
}

/* `schedlog record`: the BPF recorder lives in its own binary. */
static int cmd_record(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0) {
		fprintf(stderr, "schedlog: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		slash[1] = 0;
	snprintf(path, sizeof(path), "%sschedlog-record", self);
	argv[0] = path;
	execv(path, argv);
	fprintf(stderr, "schedlog: record: %s: %s (the BPF recorder is not built here)\n",
		path, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || argc > 4) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "print"))
		return cmd_print(argv[2]);
	if (!strcmp(argv[1], "check")) {
		if (check_markers(argv[2]))
			return 1;
		return argc == 4 ? check_data(argv[2], argv[3]) : 0;
	}
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argv[2], argc == 4 ? argv[3] : NULL);
	fprintf(stderr, "schedlog: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
