// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of /dev/trbuf (trbuf.ko + kernel-patches/), run inside the VM
 * by run-in-vm.sh.  Hand-written producers (trbuf_prod.S) register with
 * TRACE_ME and write (tag << 32 | counter) records through r15; the test
 * process is the consumer and proves every record of every stream arrived
 * exactly once, in order within each sub-buffer, and nothing else did.
 *
 * Code that runs while traced must not call libc (libc may use r15, which
 * the kernel rewrites at every switch-in): it uses raw system calls only.
 *
 * Knobs (environment): AE_TRBUF_SCALE multiplies record counts (default 1,
 * sized for QEMU TCG); AE_TRBUF_ROLLBACK=1 enables the rollback tests,
 * meant for `vm/run --singlestep` (plain TCG never cuts a sequence);
 * AE_TRBUF_ONLY=WORD[,WORD...] runs only the tests whose name contains one.
 *
 * The harness is the kernel's own (tools/testing/selftests/
 * kselftest_harness.h of linux-source-6.1, see build.mk).
 */

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/trbuf.h>
#include "sys.h"
#include "trbuf_prod.h"
#include "kselftest_harness.h"

#define DEV "/dev/trbuf"
#define PARAM "/sys/module/trbuf/parameters/"
#define MAX_THREADS 8
#define MAX_STREAMS 128
#define SIG_SLOT 0xff
#define TRAILER_SLOT 0xfe
#define MIN_SIGNALS 20

/* ---- producer side ---- */


struct prod_spec {
	int nthreads;
	unsigned long n;	/* records per thread */
	unsigned long chunk;	/* records between CPU changes (0: never) */
	int ncpus;
	int bad;		/* unrecognised commit (rollback test) */
	int sig;		/* SIGUSR1 handler writes records */
	long sleep_ns;		/* nap after every chunk */
	int pin_cpu;		/* > 0: every producer on CPU pin_cpu - 1 */
};

struct thr_arg {
	uint64_t base;
	const struct prod_spec *sp;
	int tid_word;
};

static uint32_t tag_of(int proc, int slot)
{
	return (uint32_t)(proc + 1) << 8 | slot;
}

static char thread_stacks[MAX_THREADS][64 << 10];
static volatile uint64_t sig_base, sig_count;
static volatile int sig_traced;	/* r15 is the kernel's: handler may write */
static char self_exe[PATH_MAX];
static int rollback_only;	/* AE_TRBUF_ONLY=rollback: skip the rest */

#define NOT_ROLLBACK_ONLY() do { \
	if (rollback_only) \
		SKIP(return, "AE_TRBUF_ONLY=rollback"); \
} while (0)

/* Traced: write this thread's records, hopping CPUs every chunk. */
static void prod_run(long a)
{
	struct thr_arg *t = (struct thr_arg *)a;
	const struct prod_spec *sp = t->sp;
	unsigned long done = 0, k, mask;
	int cpu = 0;

	while (done < sp->n) {
		k = sp->n - done;
		if (sp->chunk && k > sp->chunk)
			k = sp->chunk;
		if (sp->bad)
			trbuf_prod_loop_bad(t->base + done, k);
		else
			trbuf_prod_loop(t->base + done, k);
		done += k;
		if (sp->sleep_ns) {
			struct timespec ts = { 0, sp->sleep_ns };

			ae_sys2(__NR_nanosleep, &ts, 0);
		}
		if (sp->chunk && sp->ncpus > 1) {
			cpu = (cpu + 1) % sp->ncpus;
			mask = 1UL << cpu;
			ae_sys3(__NR_sched_setaffinity, 0, sizeof(mask), &mask);
		}
	}
}

/* Traced signal handler: one record of the process's signal stream. */
static void on_usr1(int sig)
{
	if (!sig_traced)
		return;
	trbuf_prod_loop(sig_base + sig_count, 1);
	sig_count++;
}

/* Traced: wait for a raw thread's CLONE_CHILD_CLEARTID. */
static void join_raw(int *word)
{
	int v;

	while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) != 0)
		ae_sys4(__NR_futex, word, FUTEX_WAIT, v, 0);
}

static void __attribute__((noreturn)) producer_main(int proc,
						    const struct prod_spec *sp)
{
	struct thr_arg args[MAX_THREADS];
	unsigned long block = 1UL << SIGUSR1 >> 1;
	int t;

	if (sp->pin_cpu > 0) {
		cpu_set_t cs;

		CPU_ZERO(&cs);
		CPU_SET(sp->pin_cpu - 1, &cs);
		sched_setaffinity(0, sizeof(cs), &cs);
	}
	if (sp->sig) {
		struct sigaction sa = { .sa_handler = on_usr1 };

		sigaction(SIGUSR1, &sa, NULL);
		sig_base = (uint64_t)tag_of(proc, SIG_SLOT) << 32;
		/* SIGUSR1 stays blocked (start_producers) until the threads exist */
	}
	for (t = 0; t < sp->nthreads; t++) {
		args[t].base = (uint64_t)tag_of(proc, t) << 32;
		args[t].sp = sp;
		args[t].tid_word = 0;
	}
	if (ae_trbuf_register_table(__start___ae_seqtab,
				    __stop___ae_seqtab - __start___ae_seqtab))
		_exit(3);
	/* ---- traced from here: no libc ---- */
	sig_traced = 1;
	for (t = 1; t < sp->nthreads; t++)
		if (trbuf_clone_thread(prod_run, (long)&args[t],
				       thread_stacks[t] + sizeof(thread_stacks[t]),
				       &args[t].tid_word) < 0)
			ae_sys1(__NR_exit_group, 4);
	/*
	 * Only this thread takes SIGUSR1: the handler's counter is not
	 * atomic, and two threads in it at once would write one record twice.
	 */
	if (sp->sig)
		ae_sys4(__NR_rt_sigprocmask, SIG_UNBLOCK, &block, 0, 8);
	prod_run((long)&args[0]);
	for (t = 1; t < sp->nthreads; t++)
		join_raw(&args[t].tid_word);
	if (sp->sig) {
		/* the storm must reach us: keep running until it did */
		while (sig_count < MIN_SIGNALS)
			ae_sys0(__NR_sched_yield);
		ae_sys4(__NR_rt_sigprocmask, SIG_BLOCK, &block, 0, 8);
		trbuf_prod_loop((uint64_t)tag_of(proc, TRAILER_SLOT) << 32 |
				sig_count, 1);
	}
	for (;;)
		ae_sys1(__NR_exit_group, 0);
}

/*
 * Fork/exec chain, step @d: register, write stream (d, 0), raw fork; the
 * child (still traced) writes stream (d, 1) and execs step d + 1 (exec
 * stops tracing; the new image registers again); the parent waits.
 */
static void __attribute__((noreturn)) chain_step(int d, int depth,
						 unsigned long n)
{
	static char arg_d[16], arg_depth[16], arg_n[24];
	static char *argv[6];
	long pid;
	int status = 0;

	snprintf(arg_d, sizeof(arg_d), "%d", d + 1);
	snprintf(arg_depth, sizeof(arg_depth), "%d", depth);
	snprintf(arg_n, sizeof(arg_n), "%lu", n);
	argv[0] = self_exe;
	argv[1] = "--chain";
	argv[2] = arg_d;
	argv[3] = arg_depth;
	argv[4] = arg_n;
	argv[5] = NULL;
	if (ae_trbuf_register_table(__start___ae_seqtab,
				    __stop___ae_seqtab - __start___ae_seqtab))
		_exit(3);
	/* ---- traced from here: no libc ---- */
	trbuf_prod_loop((uint64_t)tag_of(d, 0) << 32, n);
	pid = ae_sys1(__NR_fork, 0);
	if (pid < 0)
		ae_sys1(__NR_exit_group, 5);
	if (pid == 0) {
		trbuf_prod_loop((uint64_t)tag_of(d, 1) << 32, n);
		if (d + 1 < depth)
			ae_sys3(__NR_execve, self_exe, argv, environ);
		ae_sys1(__NR_exit_group, d + 1 < depth ? 6 : 0);
	}
	if (ae_sys4(__NR_wait4, pid, &status, 0, 0) != pid || status)
		ae_sys1(__NR_exit_group, 7);
	for (;;)
		ae_sys1(__NR_exit_group, 0);
}

/* ---- consumer side ---- */

struct stream {
	uint32_t tag;
	uint64_t expect;	/* records expected (signals: from trailer) */
	uint64_t cap;		/* size of seen[] */
	uint8_t *seen;
	uint64_t got, dup, out_of_range, disorder;
	int64_t last;		/* last counter in the current sub-buffer */
	uint64_t cpus;		/* CPUs whose sub-buffers held its records */
};

#define MAX_CPUS 64
#define MAX_MK 65536
#define MAX_FORKED 1024

/* A SIGRETURN's change as an index: %r11 1, a status flag 2, DF 4, the
 * vector state 8 */
static int ctx_kind(int r11, int status, int df, int vec)
{
	return (r11 ? 1 : 0) | (status ? 2 : 0) | (df ? 4 : 0) | (vec ? 8 : 0);
}

struct consumer {
	int fd;
	struct trbuf_info info;
	const uint8_t *map;
	struct stream s[MAX_STREAMS];
	int ns;
	uint64_t unknown, subbufs, bad_len, bytes;
	uint64_t mk[16];
	/* SIGRETURN markers whose registers were compared (with the flags,
	 * with the vector state too), and of those how many changed each
	 * combination of %r11, a status flag, the direction flag and the
	 * vector state (ctx_kind(): 0 nothing), or anything else */
	uint64_t ctx_checked, ctx_flags, ctx_full;
	uint64_t ctx_kinds[16], ctx_other;
	int sig_streams;
	int crashed[16];	/* proc_pid[] index: failed (consume()) */
	/*
	 * Marker checks: every marker lies inside the sub-buffer it came
	 * with, in offset order; SUBBUF markers open theirs and name a
	 * producer or nobody; ROLLBACK markers rewound a sequence to its
	 * start; and the bytes between two markers belong to the process
	 * the last START/SWITCH_IN named (proc_pid[], when known).
	 */
	pid_t proc_pid[16];
	pid_t owner[MAX_CPUS];	/* tgid the bytes of each CPU belong to */
	uint64_t next_seq[MAX_CPUS];
	uint64_t mk_bad_pos, mk_bad_subbuf, mk_bad_rollback, misattributed;
	uint64_t seq_gaps, empty_subbufs;
	uint64_t sw_in_of[16];	/* SWITCH_IN markers per proc_pid[] index */
	/* children named by FORK markers; SUBBUF markers naming others */
	pid_t forked[MAX_FORKED], subbuf_other[MAX_FORKED];
	int nforked, nsubbuf_other;
	struct trbuf_marker *mkbuf;
};

static struct stream *stream_add(struct consumer *c, uint32_t tag,
				 uint64_t expect, uint64_t cap)
{
	struct stream *s = &c->s[c->ns++];

	s->tag = tag;
	s->expect = expect;
	s->cap = cap;
	s->seen = calloc(cap, 1);
	s->last = -1;
	return s;
}

static struct stream *stream_find(struct consumer *c, uint32_t tag)
{
	int i;

	for (i = 0; i < c->ns; i++)
		if (c->s[i].tag == tag)
			return &c->s[i];
	return NULL;
}

/* Index of the process a pid belongs to, -1 if not a known producer. */
static int proc_of_pid(struct consumer *c, pid_t pid)
{
	int i;

	for (i = 0; i < 16; i++)
		if (pid && c->proc_pid[i] == pid)
			return i;
	return -1;
}

static int in_seqtab(uint64_t ip, int want_start)
{
	const struct trbuf_seq_range *r;

	for (r = __start___ae_seqtab; r < __stop___ae_seqtab; r++)
		if (ip >= r->start && ip < r->end)
			return want_start ? ip == r->start : ip != r->start;
	return 0;
}

/* Check one record against the owner of its position (see consumer). */
static void check_owner(struct consumer *c, unsigned int cpu, uint64_t rec)
{
	int proc = (int)(rec >> 40) - 1;	/* tag_of(): (proc + 1) << 8 */

	if (proc < 0 || proc >= 16 || !c->proc_pid[proc])
		return;
	if (c->owner[cpu] != c->proc_pid[proc])
		c->misattributed++;
}

static void check_subbuf(struct consumer *c, const struct trbuf_subbuf *sb,
			 const struct trbuf_marker *mk, uint32_t nmk)
{
	const uint64_t *rec = (const uint64_t *)(c->map + sb->offset);
	uint64_t i, n = sb->len / 8, prev_off = 0;
	unsigned int cpu = sb->cpu < MAX_CPUS ? sb->cpu : 0;
	uint32_t k, m = 0;

	c->subbufs++;
	c->bytes += sb->len;
	if (!sb->len)
		c->empty_subbufs++;
	if (sb->len % 8 || sb->len > c->info.subbuf_size)
		c->bad_len++;
	if (sb->seq != c->next_seq[cpu])
		c->seq_gaps++;
	c->next_seq[cpu] = sb->seq + 1;
	for (k = 0; k < (uint32_t)c->ns; k++)
		c->s[k].last = -1;
	for (i = 0; i <= n; i++) {
		struct stream *s;
		uint64_t v;

		/* markers at this offset come before the record there */
		while (m < nmk && mk[m].offset <= i * 8) {
			const struct trbuf_marker *x = &mk[m++];

			if (x->cpu != sb->cpu || x->seq != sb->seq ||
			    x->offset > sb->len || x->offset < prev_off ||
			    x->offset % 8)
				c->mk_bad_pos++;
			prev_off = x->offset;
			if (x->type < 16)
				c->mk[x->type]++;
			switch (x->type) {
			case TRBUF_MK_START:
			case TRBUF_MK_SWITCH_IN:
				c->owner[cpu] = x->pid;
				if (x->type == TRBUF_MK_SWITCH_IN &&
				    proc_of_pid(c, x->pid) >= 0)
					c->sw_in_of[proc_of_pid(c, x->pid)]++;
				break;
			case TRBUF_MK_EXIT:
			case TRBUF_MK_EXEC:
			case TRBUF_MK_STOP:
				c->owner[cpu] = 0;
				break;
			case TRBUF_MK_SIGRETURN:
				if (!(x->flags & TRBUF_MKF_CTX_CHECKED))
					break;
				c->ctx_checked++;
				c->ctx_flags += !!(x->flags & TRBUF_MKF_CTX_FLAGS);
				c->ctx_full += !!(x->flags & TRBUF_MKF_CTX_FULL);
				if (x->arg & ~(1ULL << 11 | TRBUF_CTX_STATUS |
					       TRBUF_CTX_DF | TRBUF_CTX_VECTOR))
					c->ctx_other++;
				else
					c->ctx_kinds[ctx_kind(x->arg & 1ULL << 11,
							      x->arg & TRBUF_CTX_STATUS,
							      x->arg & TRBUF_CTX_DF,
							      x->arg & TRBUF_CTX_VECTOR)]++;
				break;
			case TRBUF_MK_FORK:
				if (c->nforked < MAX_FORKED)
					c->forked[c->nforked++] = x->arg;
				break;
			case TRBUF_MK_SUBBUF:
				if (x->offset || x->arg != sb->seq)
					c->mk_bad_subbuf++;
				/* a producer's child: checked in verify() */
				else if (x->pid && proc_of_pid(c, x->pid) < 0 &&
					 c->proc_pid[0]) {
					if (c->nsubbuf_other == MAX_FORKED)
						c->mk_bad_subbuf++;
					else
						c->subbuf_other[c->nsubbuf_other++] =
							x->pid;
				}
				break;
			case TRBUF_MK_ROLLBACK:
				if (!in_seqtab(x->arg, 0) || !in_seqtab(x->ip, 1))
					c->mk_bad_rollback++;
				break;
			}
		}
		if (i == n)
			break;
		check_owner(c, cpu, rec[i]);
		s = stream_find(c, rec[i] >> 32);
		v = rec[i] & 0xffffffff;
		if (!s) {
			c->unknown++;
			continue;
		}
		s->cpus |= 1ULL << cpu;
		if (v >= s->cap) {
			s->out_of_range++;
			continue;
		}
		if ((int64_t)v <= s->last)
			s->disorder++;
		s->last = v;
		if (s->seen[v])
			s->dup++;
		s->seen[v] = 1;
		s->got++;
	}
	if (m < nmk)
		c->mk_bad_pos += nmk - m;
}

/* The markers that came with sub-buffer @sb; returns how many, or -1. */
static int get_markers(struct consumer *c, const struct trbuf_subbuf *sb)
{
	struct trbuf_sb_markers req = {
		.cpu = sb->cpu, .index = sb->index, .seq = sb->seq,
		.markers = (uintptr_t)c->mkbuf, .max = MAX_MK,
	};

	if (!c->mkbuf)
		c->mkbuf = calloc(MAX_MK, sizeof(*c->mkbuf));
	req.markers = (uintptr_t)c->mkbuf;
	if (ioctl(c->fd, TRBUF_IOC_GET_MARKERS, &req) || req.count != req.total)
		return -1;
	return req.count;
}

static int drain_one(struct consumer *c)
{
	struct trbuf_subbuf sb;
	int n;

	if (ioctl(c->fd, TRBUF_IOC_GET_SUBBUF, &sb))
		return 0;
	n = get_markers(c, &sb);
	if (n < 0) {
		c->mk_bad_pos++;
		n = 0;
	}
	check_subbuf(c, &sb, c->mkbuf, n);
	ioctl(c->fd, TRBUF_IOC_PUT_SUBBUF, &sb);
	return 1;
}

/* Close every CPU's sub-buffer and take them all, until none is left. */
static void drain_all(struct consumer *c)
{
	int round, got;

	for (round = 0; round < 10; round++) {
		int kept = ioctl(c->fd, TRBUF_IOC_FLUSH);

		got = 0;
		while (drain_one(c))
			got++;
		if (!got && kept <= 0)
			break;
	}
}

static int consumer_map(struct consumer *c)
{
	void *p = mmap((void *)TRBUF_MAP_ADDR, c->info.map_size, PROT_READ,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, c->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	c->map = p;
	return 0;
}

struct run_opts {
	int sig_storm;		/* SIGUSR1 to producers each round */
	int storm_ms;		/* ... but at most one every storm_ms */
	int pause_ms;		/* consumer sleeps this long first */
	int flush;		/* FLUSH every round, producers running */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Consume until every pid exited; returns how many exited non-zero. */
static int consume(struct consumer *c, pid_t *pids, int npids,
		   const struct run_opts *o)
{
	int live = npids, bad = 0, i, st, storm;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	double next_storm = 0;

	if (o && o->pause_ms)
		usleep(o->pause_ms * 1000);
	while (live) {
		if (o && o->flush)
			ioctl(c->fd, TRBUF_IOC_FLUSH);
		while (drain_one(c))
			;
		storm = o && o->sig_storm && now_ms() >= next_storm;
		if (storm)
			next_storm = now_ms() + o->storm_ms;
		for (i = 0; i < npids; i++) {
			if (!pids[i])
				continue;
			if (storm)
				kill(pids[i], SIGUSR1);
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					if (proc_of_pid(c, pids[i]) >= 0)
						c->crashed[proc_of_pid(c, pids[i])] = 1;
					ksft_print_msg("producer %d: %s %d\n",
						       pids[i],
						       WIFEXITED(st) ? "exit status" : "signal",
						       WIFEXITED(st) ? WEXITSTATUS(st) :
						       WTERMSIG(st));
					bad++;
				}
				pids[i] = 0;
				live--;
			}
		}
		poll(&pfd, 1, o && (o->sig_storm || o->flush) ? 1 : 20);
	}
	drain_all(c);
	return bad;
}

/*
 * After verify(): evidence of corruption that a crashed producer cannot
 * explain (a crash only cuts its own streams short): records of any
 * stream twice, out of range or out of order, foreign records, and
 * incomplete streams of producers that exited cleanly.
 */
static int corruption_beyond_crashes(const struct consumer *c)
{
	int i, n = c->unknown ? 1 : 0;

	for (i = 0; i < c->ns; i++) {
		const struct stream *s = &c->s[i];
		int proc = (int)(s->tag >> 8) - 1;

		if ((s->tag & 0xff) == TRAILER_SLOT)
			continue;
		if (s->dup || s->out_of_range || s->disorder)
			n++;
		else if (s->got != s->expect && proc >= 0 && proc < 16 &&
			 !c->crashed[proc])
			n++;
	}
	return n;
}

/* Every expected stream complete, nothing foreign, nothing twice. */
static int verify(struct __test_metadata *_metadata, struct consumer *c)
{
	uint64_t sig_total = 0;
	int i, bad = 0;

	for (i = 0; i < c->ns; i++) {
		struct stream *s = &c->s[i];
		uint32_t slot = s->tag & 0xff;

		if (slot == TRAILER_SLOT) {
			struct stream *sig = stream_find(c, (s->tag & ~0xffU) |
							 SIG_SLOT);
			uint64_t v;

			for (v = 0; v < s->cap && !s->seen[v]; v++)
				;
			if (s->got != 1 || !sig) {
				bad++;
				continue;
			}
			sig->expect = v;
			sig_total += v;
		}
	}
	for (i = 0; i < c->ns; i++) {
		struct stream *s = &c->s[i];

		if ((s->tag & 0xff) == TRAILER_SLOT)
			continue;
		if (s->got != s->expect || s->dup || s->out_of_range ||
		    s->disorder) {
			TH_LOG("stream %#x: got %llu of %llu, dup %llu, range %llu, disorder %llu",
			       s->tag, (unsigned long long)s->got,
			       (unsigned long long)s->expect,
			       (unsigned long long)s->dup,
			       (unsigned long long)s->out_of_range,
			       (unsigned long long)s->disorder);
			bad++;
		}
	}
	if (c->unknown || c->bad_len || c->seq_gaps) {
		TH_LOG("%llu foreign records, %llu bad sub-buffer lengths, %llu seq gaps",
		       (unsigned long long)c->unknown,
		       (unsigned long long)c->bad_len,
		       (unsigned long long)c->seq_gaps);
		bad++;
	}
	/* SUBBUF markers name a producer, a producer's child, or nobody */
	for (i = 0; i < c->nsubbuf_other; i++) {
		int k;

		for (k = 0; k < c->nforked; k++)
			if (c->forked[k] == c->subbuf_other[i])
				break;
		if (k == c->nforked)
			c->mk_bad_subbuf++;
	}
	c->nsubbuf_other = 0;
	if (c->mk_bad_pos || c->mk_bad_subbuf || c->mk_bad_rollback ||
	    c->misattributed) {
		TH_LOG("markers: %llu misplaced, %llu bad SUBBUF, %llu bad ROLLBACK; %llu records outside their process's segments",
		       (unsigned long long)c->mk_bad_pos,
		       (unsigned long long)c->mk_bad_subbuf,
		       (unsigned long long)c->mk_bad_rollback,
		       (unsigned long long)c->misattributed);
		bad++;
	}
	if (c->sig_streams)
		TH_LOG("%llu signal records", (unsigned long long)sig_total);
	return bad;
}

static void consumer_free(struct consumer *c)
{
	int i;

	for (i = 0; i < c->ns; i++)
		free(c->s[i].seen);
	c->ns = 0;
	free(c->mkbuf);
	c->mkbuf = NULL;
	if (c->map)
		munmap((void *)c->map, c->info.map_size);
	c->map = NULL;
}

static unsigned long scale(unsigned long n)
{
	const char *s = getenv("AE_TRBUF_SCALE");
	unsigned long k = s ? strtoul(s, NULL, 0) : 1;

	return n * (k ? k : 1);
}

static int write_param(const char *name, unsigned long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAM "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%lu\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

static struct trbuf_status get_status(int fd)
{
	struct trbuf_status st;

	memset(&st, 0, sizeof(st));
	ioctl(fd, TRBUF_IOC_STATUS, &st);
	return st;
}

FIXTURE(trbuf) {
	struct consumer c;
	int have_dev;
};

FIXTURE_VARIANT(trbuf) {
	unsigned long total;
	unsigned int subbuf;
};

/* 4 KiB sub-buffers: producers overflow constantly. */
FIXTURE_VARIANT_ADD(trbuf, tiny) {
	.total = 64 << 10,
	.subbuf = 4 << 10,
};

FIXTURE_VARIANT_ADD(trbuf, medium) {
	.total = 2 << 20,
	.subbuf = 64 << 10,
};

FIXTURE_SETUP(trbuf)
{
	/* the marker-area test wants areas of 32 (they fill before the data) */
	unsigned int mk = strstr(_metadata->name, "small_area") ? 32 : 1024;
	unsigned int mk_eff = mk;
	int tries;

	self->c.fd = -1;
	if (access(DEV, F_OK))
		return;
	self->have_dev = 1;
	ASSERT_EQ(0, write_param("total_size", variant->total));
	ASSERT_EQ(0, write_param("subbuf_size", variant->subbuf));
	ASSERT_EQ(0, write_param("subbuf_markers", mk));
	/* A previous test's buffer is freed asynchronously: wait for it. */
	for (tries = 0; tries < 50; tries++) {
		self->c.fd = open(DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		ASSERT_LE(0, self->c.fd);
		ASSERT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_CONSUMER,
				   &self->c.info));
		if (self->c.info.subbuf_size == variant->subbuf &&
		    self->c.info.subbuf_markers == mk_eff)
			break;
		close(self->c.fd);
		usleep(100000);
	}
	ASSERT_EQ(variant->subbuf, self->c.info.subbuf_size);
	ASSERT_EQ(mk_eff, self->c.info.subbuf_markers);
}

FIXTURE_TEARDOWN(trbuf)
{
	if (self->have_dev)
		write_param("test_cut_us", 0);
	consumer_free(&self->c);
	if (self->c.fd >= 0)
		close(self->c.fd);
}

#define NEED_DEV() do { \
	if (!self->have_dev) \
		SKIP(return, DEV " absent (trbuf.ko not loaded)"); \
	NOT_ROLLBACK_ONLY(); \
} while (0)

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 && n < 64 ? n : 1;
}

/* Fork @nproc producers with @sp, each expecting its streams. */
static void start_producers(struct consumer *c, pid_t *pids, int nproc,
			    const struct prod_spec *sp)
{
	sigset_t set;
	int p, t;

	/* Producers unblock SIGUSR1 once their handler is installed. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (p = 0; p < nproc; p++) {
		for (t = 0; t < sp->nthreads; t++)
			stream_add(c, tag_of(p, t), sp->n, sp->n);
		if (sp->sig) {
			stream_add(c, tag_of(p, SIG_SLOT), 0, 1 << 20);
			stream_add(c, tag_of(p, TRAILER_SLOT), 1, 1 << 20);
			c->sig_streams++;
		}
		pids[p] = fork();
		if (pids[p] == 0)
			producer_main(p, sp);
		if (p < 16)
			c->proc_pid[p] = pids[p];
	}
}

static void run_case(struct __test_metadata *_metadata, struct consumer *c,
		     int nproc, const struct prod_spec *sp,
		     const struct run_opts *o)
{
	pid_t pids[16];
	struct trbuf_status st;

	start_producers(c, pids, nproc, sp);
	ASSERT_EQ(0, consumer_map(c));
	EXPECT_EQ(0, consume(c, pids, nproc, o));
	EXPECT_EQ(0, verify(_metadata, c));
	st = get_status(c->fd);
	TH_LOG("%llu sub-buffers, %llu bytes, %llu switch-ins, %llu rollbacks, %llu overflow waits, %llu markers (%llu lost)",
	       (unsigned long long)c->subbufs, (unsigned long long)c->bytes,
	       (unsigned long long)st.switches_in,
	       (unsigned long long)st.rollbacks,
	       (unsigned long long)st.overflow_waits,
	       (unsigned long long)st.markers,
	       (unsigned long long)st.markers_lost);
	EXPECT_EQ(0, st.traced);
	/* lossless markers: every one written reached the consumer */
	EXPECT_EQ(0, st.markers_lost);
	EXPECT_EQ(st.switches_in, c->mk[TRBUF_MK_SWITCH_IN]);
	EXPECT_EQ(st.rollbacks, c->mk[TRBUF_MK_ROLLBACK]);
	EXPECT_EQ(nproc, c->mk[TRBUF_MK_START]);
	EXPECT_EQ(nproc * (sp->nthreads - 1), c->mk[TRBUF_MK_FORK]);
	EXPECT_EQ(nproc * sp->nthreads, c->mk[TRBUF_MK_EXIT]);
}

TEST_F_TIMEOUT(trbuf, multi_process_threads, 900)
{
	struct prod_spec sp = { .nthreads = 3, .n = scale(20000) };

	NEED_DEV();
	run_case(_metadata, &self->c, 3, &sp, NULL);
}

/* FLUSH by IPI while producers run: partial sub-buffers, nothing lost. */
TEST_F_TIMEOUT(trbuf, flush_while_running, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(20000),
				.chunk = 200, .sleep_ns = 2000000 };
	struct run_opts o = { .flush = 1 };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, &o);
	EXPECT_LT(0, get_status(self->c.fd).flushes);
	/* more sub-buffers than the bytes alone would fill */
	EXPECT_LT(self->c.bytes / self->c.info.subbuf_size + 1,
		  self->c.subbufs);
}

/* Threads hop CPUs every 97 records; each must have written on several. */
TEST_F_TIMEOUT(trbuf, migration_storm, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(20000),
				.chunk = 97, .ncpus = online_cpus() };
	int i, migrated = 0;

	NEED_DEV();
	if (sp.ncpus < 2)
		SKIP(return, "one CPU: nothing to migrate to");
	run_case(_metadata, &self->c, 2, &sp, NULL);
	for (i = 0; i < self->c.ns; i++)
		migrated += __builtin_popcountll(self->c.s[i].cpus) > 1;
	/* every producer thread's stream crossed CPUs */
	EXPECT_EQ(self->c.ns, migrated);
}

TEST_F_TIMEOUT(trbuf, signal_storm, 900)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(40000), .sig = 1 };
	struct run_opts o = { .sig_storm = 1 };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, &o);
	EXPECT_LE(2 * MIN_SIGNALS, self->c.mk[TRBUF_MK_SIGNAL]);
	EXPECT_EQ(self->c.mk[TRBUF_MK_SIGNAL], self->c.mk[TRBUF_MK_SIGRETURN]);
}

/*
 * The consumer sleeps first while the producers write twice the buffer:
 * they must wait (lossless), not lose.
 */
TEST_F_TIMEOUT(trbuf, consumer_paused, 900)
{
	unsigned long n = variant->total * 2 / 8 / 4;
	struct prod_spec sp = { .nthreads = 2,
				.n = scale(n > 20000 ? n : 20000) };
	struct run_opts o = { .pause_ms = 1500 };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, &o);
	EXPECT_LT(self->c.info.map_size, self->c.bytes);
	EXPECT_LT(0, get_status(self->c.fd).overflow_waits);
}

TEST_F_TIMEOUT(trbuf, fork_exec_chain, 900)
{
	unsigned long n = scale(5000);
	int depth = 3, d, st;
	pid_t pid;

	NEED_DEV();
	for (d = 0; d < depth; d++) {
		stream_add(&self->c, tag_of(d, 0), n, n);
		stream_add(&self->c, tag_of(d, 1), n, n);
	}
	pid = fork();
	if (pid == 0)
		chain_step(0, depth, n);
	ASSERT_EQ(0, consumer_map(&self->c));
	EXPECT_EQ(0, consume(&self->c, &pid, 1, NULL));
	EXPECT_EQ(0, verify(_metadata, &self->c));
	EXPECT_EQ(depth, self->c.mk[TRBUF_MK_START]);
	EXPECT_EQ(depth - 1, self->c.mk[TRBUF_MK_EXEC]);
	EXPECT_LE(depth, self->c.mk[TRBUF_MK_FORK]);
	(void)st;
}

/*
 * Rollback (invariant 3): only meaningful under `vm/run --singlestep`,
 * where interrupts land between any two instructions.  The real sequence
 * must stay exact with rollbacks taken; the same loop with an
 * unrecognised commit must be caught corrupt, proving the check can fail.
 * A signal storm adds cuts at signal delivery (rolled back there too).
 * Cuts are made by construction, not left to the timer tick: the
 * module's test_cut_us knob closes the sub-buffer under the traced task it
 * interrupts in user mode every CUT_US (its cursor moves) and forces a
 * reschedule, so one boot suffices and each test asserts that sequences
 * were cut (STATUS rollbacks > 0, or corrupt streams) instead of hoping.
 */
#define CUT_US 1000

static int rollback_enabled(void)
{
	const char *s = getenv("AE_TRBUF_ROLLBACK");

	return s && *s == '1';
}

TEST_F_TIMEOUT(trbuf, rollback_exact, 1800)
{
	/* all on CPU 0: forced reschedules find another producer to run */
	struct prod_spec sp = { .nthreads = 1, .n = scale(1000000), .sig = 1,
				.pin_cpu = 1 };
	struct run_opts o = { .sig_storm = 1 };

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	ASSERT_EQ(0, write_param("test_cut_us", CUT_US));
	run_case(_metadata, &self->c, 3, &sp, &o);
	/* exact, and sequences were cut: else the run proved nothing */
	EXPECT_LT(0, get_status(self->c.fd).rollbacks);
}

TEST_F_TIMEOUT(trbuf, rollback_unrecognised_commit_is_caught, 1800)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(1000000), .bad = 1,
				.sig = 1, .pin_cpu = 1 };
	struct run_opts o = { .sig_storm = 1 };
	pid_t pids[3];
	int bad, crashed;

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	ASSERT_EQ(0, write_param("test_cut_us", CUT_US));
	start_producers(&self->c, pids, 3, &sp);
	ASSERT_EQ(0, consumer_map(&self->c));
	/*
	 * The consumer must run cleanly (every sub-buffer in order, sane
	 * lengths); a producer may die of its broken commit (the slot it
	 * skipped was the last of its sub-buffer, so its next store lands
	 * past the guard page's start: SIGBUS), but such a crash is not a
	 * "caught" cut: each crash spoils at most its thread and trailer
	 * streams, so more corrupt streams than that are needed.
	 */
	crashed = consume(&self->c, pids, 3, &o);
	ASSERT_EQ(0, self->c.bad_len + self->c.seq_gaps);
	verify(_metadata, &self->c);
	bad = corruption_beyond_crashes(&self->c);
	TH_LOG("%d producers crashed; corruption no crash explains: %d (rollbacks %llu)",
	       crashed, bad,
	       (unsigned long long)get_status(self->c.fd).rollbacks);
	/*
	 * Cuts were forced; the kernel cannot recognise those just before
	 * the commit (the table holds only the stores): corruption that no
	 * crash explains is the proof.  When there is none but a producer
	 * crashed, the run proves nothing either way: inconclusive, not a
	 * pass.  With no crash, no corruption at all is a failure.
	 */
	if (crashed && !bad)
		SKIP(return, "inconclusive: %d producers crashed, no other corruption",
		     crashed);
	EXPECT_LT(0, bad);
}

/*
 * Rollback combined with threads and FLUSH, and with migrations: a cut
 * sequence must be rewound whichever of them moved the cursor.
 */
TEST_F_TIMEOUT(trbuf, rollback_threads_flush, 1800)
{
	struct prod_spec sp = { .nthreads = 3, .n = scale(300000), .sig = 1,
				.chunk = 5000, .sleep_ns = 1000000 };
	struct run_opts o = { .sig_storm = 1, .flush = 1 };

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	ASSERT_EQ(0, write_param("test_cut_us", CUT_US));
	run_case(_metadata, &self->c, 2, &sp, &o);
	EXPECT_LT(0, get_status(self->c.fd).rollbacks);
	EXPECT_LT(0, get_status(self->c.fd).flushes);
}

TEST_F_TIMEOUT(trbuf, rollback_migration, 1800)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(300000), .sig = 1,
				.chunk = 3001, .ncpus = online_cpus() };
	struct run_opts o = { .sig_storm = 1 };

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	if (sp.ncpus < 2)
		SKIP(return, "one CPU: nothing to migrate to");
	ASSERT_EQ(0, write_param("test_cut_us", CUT_US));
	run_case(_metadata, &self->c, 2, &sp, &o);
	EXPECT_LT(0, get_status(self->c.fd).rollbacks);
}

/* ---- hardening (issue 8): each test names what it would catch ---- */

/*
 * Item 1: rt_sigreturn must never write a stale r15 back.  The module
 * spins preemptibly at the end of its sigreturn hook (test_sigreturn_spin_us)
 * while two signal-storm producers share one CPU, so the other one writes
 * during the spin.  Catches a kernel that stores a cursor computed before
 * such a preemption (the old `regs->r15 = trbuf_sigreturn(...)`): the
 * task then overwrites the other producer's records (lost/duplicate
 * records, misattributed bytes).
 */
TEST_F_TIMEOUT(trbuf, sigreturn_preempted_keeps_cursor, 900)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(30000), .sig = 1,
				.pin_cpu = 1 };
	/*
	 * A signal sent more often than a sigreturn spins would be pending
	 * at every sigreturn: the producers would run handlers only, and
	 * finish when the timing lets them (minutes under TCG).
	 */
	struct run_opts o = { .sig_storm = 1, .storm_ms = 8 };

	NEED_DEV();
	ASSERT_EQ(0, write_param("test_sigreturn_spin_us", 5000));
	run_case(_metadata, &self->c, 2, &sp, &o);
	write_param("test_sigreturn_spin_us", 0);
	EXPECT_LE(2 * MIN_SIGNALS, self->c.mk[TRBUF_MK_SIGRETURN]);
	EXPECT_EQ(0, get_status(self->c.fd).bad_cursor);
}

/* A raw write(2) of one byte, usable while traced. */
static void raw_note(int fd, char c)
{
	ae_sys3(__NR_write, fd, &c, 1);
}

/* Wait up to @ms for byte @want on @fd; returns 1 if it came. */
static int await_byte(int fd, char want, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	while (poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 1)
		if (c == want)
			return 1;
	return 0;
}

static int note_fd = -1;

static void on_usr2(int sig)
{
	raw_note(note_fd, 's');
}

struct blocked_writer {
	uint64_t base;
	unsigned long n;
	int tid_word;
};

static void writer_run(long a)
{
	struct blocked_writer *w = (struct blocked_writer *)a;

	trbuf_prod_loop(w->base, w->n);
}

/*
 * Item 4: a producer sleeping for a free sub-buffer must not hold
 * mmap_lock (the process's other threads keep mapping memory) and must
 * take signals (the wait is interruptible; the fault is retried after the
 * handler).  The consumer does not drain until both were observed.
 * Catches the old sleep under mmap_lock in TASK_KILLABLE: mmap() and the
 * handler then only run once the consumer drains, after the deadline.
 */
TEST_F_TIMEOUT(trbuf, overflow_wait_drops_mmap_lock, 900)
{
	static char stack[64 << 10];
	static struct blocked_writer w;
	int pfd[2], mmap_ok, sig_ok;
	pid_t pid;

	NEED_DEV();
	ASSERT_EQ(0, pipe(pfd));
	w.n = self->c.info.map_size / 8 * 2;
	w.base = (uint64_t)tag_of(0, 0) << 32;
	stream_add(&self->c, tag_of(0, 0), w.n, w.n);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_usr2 };
		struct timespec ts = { 0, 300000000 };
		long i, tid, p;

		note_fd = pfd[1];
		sigaction(SIGUSR2, &sa, NULL);
		if (ae_trbuf_register_table(__start___ae_seqtab,
					    __stop___ae_seqtab - __start___ae_seqtab))
			_exit(3);
		/* ---- traced: no libc ---- */
		tid = trbuf_clone_thread(writer_run, (long)&w,
					 stack + sizeof(stack), &w.tid_word);
		if (tid < 0)
			ae_sys1(__NR_exit_group, 4);
		ae_sys2(__NR_nanosleep, &ts, 0);
		for (i = 0; i < 20; i++) {
			p = ae_sys6(__NR_mmap, 0, 4096, AE_PROT_RW,
				    AE_MAP_PRIVATE | AE_MAP_ANONYMOUS, -1, 0);
			if (p < 0 && p > -4096)
				ae_sys1(__NR_exit_group, 5);
			ae_sys2(__NR_munmap, p, 4096);
		}
		raw_note(pfd[1], 'm');
		ae_sys3(__NR_tgkill, ae_sys0(__NR_getpid), tid, SIGUSR2);
		join_raw(&w.tid_word);
		ae_sys1(__NR_exit_group, 0);
	}
	self->c.proc_pid[0] = pid;
	ASSERT_EQ(0, consumer_map(&self->c));
	mmap_ok = await_byte(pfd[0], 'm', 5000);
	sig_ok = mmap_ok && await_byte(pfd[0], 's', 5000);
	TH_LOG("overflow waits %llu; mmap while blocked %s, signal while blocked %s",
	       (unsigned long long)get_status(self->c.fd).overflow_waits,
	       mmap_ok ? "ok" : "stuck", sig_ok ? "ok" : "stuck");
	EXPECT_LT(0, get_status(self->c.fd).overflow_waits);
	EXPECT_TRUE(mmap_ok);
	EXPECT_TRUE(sig_ok);
	EXPECT_EQ(0, consume(&self->c, &pid, 1, NULL));
	EXPECT_EQ(0, verify(_metadata, &self->c));
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * Item 6: MADV_DONTNEED on the buffer by a traced program, then more
 * records: the data pages come back (same memory), nothing is lost.
 * Catches the stale-fault retry loop on data pages (the producer spins in
 * the fault forever; the test times out).
 */
TEST_F_TIMEOUT(trbuf, madvise_dontneed_data_pages, 300)
{
	unsigned long n = scale(20000), map_size = self->c.info.map_size;
	pid_t pid;

	NEED_DEV();
	stream_add(&self->c, tag_of(0, 0), 2 * n, 2 * n);
	pid = fork();
	if (pid == 0) {
		uint64_t base = (uint64_t)tag_of(0, 0) << 32;

		if (ae_trbuf_register_table(__start___ae_seqtab,
					    __stop___ae_seqtab - __start___ae_seqtab))
			_exit(3);
		trbuf_prod_loop(base, n);
		if (ae_sys3(__NR_madvise, TRBUF_MAP_ADDR, map_size,
			    MADV_DONTNEED))
			ae_sys1(__NR_exit_group, 4);
		trbuf_prod_loop(base + n, n);
		ae_sys1(__NR_exit_group, 0);
	}
	self->c.proc_pid[0] = pid;
	ASSERT_EQ(0, consumer_map(&self->c));
	EXPECT_EQ(0, consume(&self->c, &pid, 1, NULL));
	EXPECT_EQ(0, verify(_metadata, &self->c));
}

/*
 * Wait (30 s at most) for a producer that writes less than its ring holds
 * while nobody consumes; its wait status, SIGKILL's if it hung.
 */
static int wait_unconsumed(pid_t pid)
{
	int st = -1, i;

	for (i = 0; i < 300 && waitpid(pid, &st, WNOHANG) != pid; i++)
		usleep(100000);
	if (i == 300) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	return st;
}

/*
 * Item 6: a GET_SUBBUF whose copy to user fails must not lose the
 * sub-buffer: the next GET_SUBBUF returns it.  Catches the old error path
 * that freed it (data lost, a seq gap on that CPU).
 */
TEST_F_TIMEOUT(trbuf, get_subbuf_efault_keeps_data, 300)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(200) };
	struct trbuf_subbuf a, b;
	pid_t pid;

	NEED_DEV();
	start_producers(&self->c, &pid, 1, &sp);
	ASSERT_EQ(0, consumer_map(&self->c));
	/* 1600 bytes fit in any ring: the producer never waits */
	ASSERT_EQ(0, wait_unconsumed(pid));
	ASSERT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_FLUSH));
	EXPECT_EQ(-1, ioctl(self->c.fd, TRBUF_IOC_GET_SUBBUF, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_GET_SUBBUF, &a));
	/* the handed-out sub-buffer is the oldest of its CPU: seq 0 */
	EXPECT_EQ(0, a.seq);
	/* give it back unread by the checker, then drain everything */
	b = a;
	ASSERT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_PUT_SUBBUF, &b));
	drain_all(&self->c);
	/* what went back unchecked is gone; everything else is complete */
	EXPECT_EQ(0, self->c.unknown + self->c.bad_len + self->c.mk_bad_pos);
}

/*
 * A consumer's last FLUSH must not lose a CPU's active sub-buffer: a
 * producer pinned to CPU 0 fills every sub-buffer of its ring but the
 * active one, half of which it fills too, and exits.  FLUSH cannot close
 * that one (the next is still full) and must say so (returns 1); once the
 * consumer put one back, FLUSH closes it (returns 0) and every record and
 * the EXIT marker arrive.  Catches a FLUSH that reports nothing, after
 * which a consumer ends without the CPU's last bytes and markers.
 */
TEST_F_TIMEOUT(trbuf, flush_full_ring_reports_kept, 300)
{
	struct prod_spec sp = { .nthreads = 1, .pin_cpu = 1 };
	pid_t pid;

	NEED_DEV();
	sp.n = ((self->c.info.nr_subbufs - 1) * (unsigned long)self->c.info.subbuf_size +
		self->c.info.subbuf_size / 2) / 8;
	start_producers(&self->c, &pid, 1, &sp);
	ASSERT_EQ(0, consumer_map(&self->c));
	/* less than its ring: the producer never waits */
	ASSERT_EQ(0, wait_unconsumed(pid));
	EXPECT_EQ(1, ioctl(self->c.fd, TRBUF_IOC_FLUSH));
	ASSERT_EQ(1, drain_one(&self->c));
	EXPECT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_FLUSH));
	while (drain_one(&self->c))
		;
	EXPECT_EQ(0, verify(_metadata, &self->c));
	EXPECT_EQ(1, self->c.mk[TRBUF_MK_EXIT]);
	ksft_print_msg("%llu sub-buffers of %u, %llu bytes\n",
		       (unsigned long long)self->c.subbufs, self->c.info.nr_subbufs,
		       (unsigned long long)self->c.bytes);
}

/*
 * Item 5: markers are lossless and travel with their sub-buffer.  With a
 * 32-entry marker area, a signal storm and migrations fill areas long
 * before the sub-buffers: each then closes early (SUBBUF markers, reason
 * MARKERS); with tiny sub-buffers the rings also fill, and the CPUs'
 * writers wait on the guard page.  Every marker written must arrive
 * (STATUS markers_lost 0, SWITCH_IN markers = switch-ins), inside the
 * sub-buffer it points into, with the bytes attributed to the right
 * process.  Catches a bounded global queue that drops markers
 * (markers_lost > 0, missing SWITCH_INs) or markers delivered apart from
 * their data (misplaced).  Stalled consumers: the two tests below.
 */
TEST_F_TIMEOUT(trbuf, markers_lossless_small_area, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(20000), .sig = 1,
				.chunk = 500, .ncpus = online_cpus() };
	struct run_opts o = { .sig_storm = 1 };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, &o);
	TH_LOG("%llu sub-buffers, %llu empty, %llu markers",
	       (unsigned long long)self->c.subbufs,
	       (unsigned long long)self->c.empty_subbufs,
	       (unsigned long long)get_status(self->c.fd).markers);
	/* 64 KiB sub-buffers: the areas, not the bytes, closed most of them */
	if (variant->subbuf >= (64 << 10))
		EXPECT_LT(self->c.bytes / self->c.info.subbuf_size + 2,
			  self->c.subbufs);
}

/* Stall the consumer 3 s; then how many of the n tasks still run? */
static int held_after_stall(const pid_t *pids, int n)
{
	int p, held = 0;

	usleep(3000000);
	for (p = 0; p < n; p++) {
		siginfo_t si = { 0 };

		if (!waitid(P_PID, pids[p], &si, WEXITED | WNOHANG | WNOWAIT) &&
		    !si.si_pid)
			held++;
	}
	return held;
}

/*
 * Invariant 5, the case the area reserve alone cannot cover: the consumer
 * is stalled while traced tasks only sleep in a loop, so every switch-in
 * wants a marker and no store ever faults on a guard page to hold them.
 * Catches switch-in markers dropped once the marker areas are exhausted
 * (STATUS markers_lost > 0, far fewer SWITCH_INs than the tasks' own sleeps):
 * the marker must be owed and the task held before it returns to user
 * mode until the consumer frees a sub-buffer.  The tasks must be found
 * still running after the stall, else nothing was exhausted.
 */
TEST_F_TIMEOUT(trbuf, markers_small_area_stalled_sleepers, 900)
{
	enum { NPROC = 3, NAPS = 400 };
	pid_t pids[NPROC];
	struct trbuf_status st;
	int p, held = 0;

	NEED_DEV();
	for (p = 0; p < NPROC; p++) {
		stream_add(&self->c, tag_of(p, 0), 1, 1);
		pids[p] = fork();
		if (pids[p] == 0) {
			/* long enough that each nap really sleeps */
			struct timespec ts = { 0, 1000000 };
			int i;

			if (ae_trbuf_register_table(__start___ae_seqtab,
						    __stop___ae_seqtab -
						    __start___ae_seqtab))
				_exit(3);
			/* traced: no libc */
			for (i = 0; i < NAPS; i++)
				ae_sys2(__NR_nanosleep, &ts, 0);
			trbuf_prod_loop((uint64_t)tag_of(p, 0) << 32, 1);
			for (;;)
				ae_sys1(__NR_exit_group, 0);
		}
		self->c.proc_pid[p] = pids[p];
	}
	ASSERT_EQ(0, consumer_map(&self->c));
	/* stalled: NAPS naps take far less than this when nothing holds */
	held = held_after_stall(pids, NPROC);
	EXPECT_EQ(0, consume(&self->c, pids, NPROC, NULL));
	EXPECT_EQ(0, verify(_metadata, &self->c));
	st = get_status(self->c.fd);
	TH_LOG("%d of %d sleepers held by the stall; switch-ins %llu, markers %llu (%llu lost), waits %llu",
	       held, NPROC, (unsigned long long)st.switches_in,
	       (unsigned long long)st.markers,
	       (unsigned long long)st.markers_lost,
	       (unsigned long long)st.overflow_waits);
	EXPECT_EQ(0, st.markers_lost);
	EXPECT_EQ(st.switches_in, self->c.mk[TRBUF_MK_SWITCH_IN]);
	/*
	 * A nap whose timer fires before its task has left the CPU (a vCPU
	 * the host stalls under TCG) does not switch: a few may be missing.
	 * Dropped markers miss by the hundred once the areas are exhausted.
	 */
	for (p = 0; p < NPROC; p++) {
		TH_LOG("sleeper %d: %llu switch-ins for %d naps", p,
		       (unsigned long long)self->c.sw_in_of[p], NAPS);
		EXPECT_LE(NAPS * 9 / 10, self->c.sw_in_of[p]);
	}
	EXPECT_LT(0, held);
}

static void on_signal_nop(int sig)
{
}

/*
 * Traced, writing no byte: signal itself @nraise times (0: for ever),
 * forking a child that exits at once every @fork_every times (0: never),
 * then write record (proc, 0) and exit.
 */
static void __attribute__((noreturn)) raise_loop(int proc, long nraise,
						 int fork_every)
{
	struct sigaction sa = { .sa_handler = on_signal_nop };
	long me, child, i;
	int status;

	sigaction(SIGUSR2, &sa, NULL);
	if (ae_trbuf_register_table(__start___ae_seqtab,
				    __stop___ae_seqtab - __start___ae_seqtab))
		_exit(3);
	/* ---- traced: no libc ---- */
	me = ae_sys0(__NR_getpid);
	for (i = 0; !nraise || i < nraise; i++) {
		ae_sys2(__NR_kill, me, SIGUSR2);
		if (!fork_every || i % fork_every)
			continue;
		child = ae_sys1(__NR_fork, 0);
		if (child == 0)
			for (;;)
				ae_sys1(__NR_exit_group, 0);
		if (child < 0 ||
		    ae_sys4(__NR_wait4, child, &status, 0, 0) != child ||
		    status)
			ae_sys1(__NR_exit_group, 5);
	}
	trbuf_prod_loop((uint64_t)tag_of(proc, 0) << 32, 1);
	for (;;)
		ae_sys1(__NR_exit_group, 0);
}

/*
 * Invariant 5 for every other marker: the consumer is stalled while
 * traced tasks signal themselves (SIGNAL and SIGRETURN markers) and fork
 * children that exit at once (FORK, EXIT), writing no byte, so no store
 * faults on a guard page to hold them.  Catches such markers dropped once
 * the marker areas are exhausted (STATUS markers_lost > 0, fewer markers
 * than the tasks' own signals, forks and exits): the hooks must wait for
 * the consumer to free room instead.  The tasks must be found still
 * running after the stall, else nothing was exhausted.
 */
TEST_F_TIMEOUT(trbuf, markers_small_area_stalled_signals_forks, 900)
{
	enum { NPROC = 2, NRAISE = 400, FORK_EVERY = 10 };
	const uint64_t nforks = NPROC * ((NRAISE + FORK_EVERY - 1) / FORK_EVERY);
	pid_t pids[NPROC];
	struct trbuf_status st;
	int p, held = 0;

	NEED_DEV();
	for (p = 0; p < NPROC; p++) {
		stream_add(&self->c, tag_of(p, 0), 1, 1);
		pids[p] = fork();
		if (pids[p] == 0)
			raise_loop(p, NRAISE, FORK_EVERY);
		self->c.proc_pid[p] = pids[p];
	}
	ASSERT_EQ(0, consumer_map(&self->c));
	/* stalled: the loops take far less than this when nothing holds */
	held = held_after_stall(pids, NPROC);
	EXPECT_EQ(0, consume(&self->c, pids, NPROC, NULL));
	EXPECT_EQ(0, verify(_metadata, &self->c));
	st = get_status(self->c.fd);
	TH_LOG("%d of %d tasks held by the stall; markers %llu (%llu lost): signal %llu, sigreturn %llu, fork %llu, exit %llu; waits %llu",
	       held, NPROC, (unsigned long long)st.markers,
	       (unsigned long long)st.markers_lost,
	       (unsigned long long)self->c.mk[TRBUF_MK_SIGNAL],
	       (unsigned long long)self->c.mk[TRBUF_MK_SIGRETURN],
	       (unsigned long long)self->c.mk[TRBUF_MK_FORK],
	       (unsigned long long)self->c.mk[TRBUF_MK_EXIT],
	       (unsigned long long)st.overflow_waits);
	EXPECT_EQ(0, st.markers_lost);
	EXPECT_EQ(st.switches_in, self->c.mk[TRBUF_MK_SWITCH_IN]);
	EXPECT_EQ(NPROC * NRAISE, self->c.mk[TRBUF_MK_SIGNAL]);
	EXPECT_EQ(NPROC * NRAISE, self->c.mk[TRBUF_MK_SIGRETURN]);
	EXPECT_EQ(nforks, self->c.mk[TRBUF_MK_FORK]);
	EXPECT_EQ(NPROC + nforks, self->c.mk[TRBUF_MK_EXIT]);
	EXPECT_EQ(NPROC, self->c.mk[TRBUF_MK_START]);
	EXPECT_LT(0, held);
	EXPECT_LT(0, st.overflow_waits);
}

static volatile long ctx_signals, ctx_forked;

/*
 * A traced child whose SIGUSR2 handler is @handler signals itself @nraise
 * times (a child forked in the handler, ctx_forked set, exits after its
 * return), reaps @nchildren children, writes record (0, 0) and exits; the
 * consumer takes all of it and checks the streams.  Returns when done.
 */
static void ctx_run(struct __test_metadata *_metadata, struct consumer *c,
		    void (*handler)(int, siginfo_t *, void *), long nraise,
		    long nchildren)
{
	char kinds[16 * 32], *p = kinds;
	pid_t pid;
	int k;

	stream_add(c, tag_of(0, 0), 1, 1);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = handler,
					.sa_flags = SA_SIGINFO };
		long me, i;
		int status;

		sigaction(SIGUSR2, &sa, NULL);
		if (ae_trbuf_register_table(__start___ae_seqtab,
					    __stop___ae_seqtab - __start___ae_seqtab))
			_exit(3);
		/* ---- traced: no libc ---- */
		me = ae_sys0(__NR_getpid);
		for (i = 0; i < nraise; i++) {
			ae_sys2(__NR_kill, me, SIGUSR2);
			if (ctx_forked)
				for (;;)
					ae_sys1(__NR_exit_group, 0);
		}
		for (i = 0; i < nchildren; i++)
			if (ae_sys4(__NR_wait4, -1, &status, 0, 0) <= 0 || status)
				ae_sys1(__NR_exit_group, 5);
		trbuf_prod_loop((uint64_t)tag_of(0, 0) << 32, 1);
		for (;;)
			ae_sys1(__NR_exit_group, 0);
	}
	c->proc_pid[0] = pid;
	ASSERT_EQ(0, consumer_map(c));
	EXPECT_EQ(0, consume(c, &pid, 1, NULL));
	EXPECT_EQ(0, verify(_metadata, c));
	for (k = 0; k < 16; k++)
		p += sprintf(p, " %s%s%s%s%s:%llu", k & 1 ? "r" : "", k & 2 ? "s" : "",
			     k & 4 ? "d" : "", k & 8 ? "v" : "", k ? "" : "-",
			     (unsigned long long)c->ctx_kinds[k]);
	TH_LOG("sigreturns %llu: %llu compared (%llu with the flags, %llu with the vector state too); changed (%%r11, status, DF, vector):%s, %llu other; forks %llu",
	       (unsigned long long)c->mk[TRBUF_MK_SIGRETURN],
	       (unsigned long long)c->ctx_checked,
	       (unsigned long long)c->ctx_flags,
	       (unsigned long long)c->ctx_full, kinds,
	       (unsigned long long)c->ctx_other,
	       (unsigned long long)c->mk[TRBUF_MK_FORK]);
}

/* What call i of on_signal_ctx() changes: %r11 when i is odd, ZF when
 * i is a multiple of 3, DF when i % 7 is 0 (set) or 1 (cleared again:
 * the code between runs no string instruction). */
static int ctx_change_r11(long i)
{
	return i & 1;
}

static int ctx_change_zf(long i)
{
	return i % 3 == 0;
}

static int ctx_change_df(long i)
{
	return i % 7 < 2;
}

/* ... the vector state when i % 5 is 1 (a bit of %xmm15 in the frame) or
 * 2 (%xmm14 in a copy of the frame's FPU area that fpregs then points
 * at); when i % 5 is 3, fpregs points at an unchanged copy: no change */
static int ctx_change_vec(long i)
{
	return i % 5 == 1 || i % 5 == 2;
}

static char ctx_fpcopy[65536] __attribute__((aligned(64)));

/* The kernel saves with XSAVE (else the module compares no FPU state). */
static int ctx_have_xsave(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE);
}

/* The XSAVE area's size in @fp, from its software bytes (struct
 * _fpx_sw_bytes at byte 464: magic1, then extended_size), or 0. */
static unsigned int ctx_xsave_size(const struct _libc_fpstate *fp)
{
	const unsigned int *sw = &fp->__glibc_reserved1[12];

	return sw[0] == 0x46505853 ? sw[1] : 0;	/* FP_XSTATE_MAGIC1 */
}

/* Makes the SSE registers of @fp count (XSTATE_BV bit 1), so that a
 * change to them is loaded even if they were in their initial state. */
static void ctx_sse_in_use(struct _libc_fpstate *fp)
{
	if (ctx_xsave_size(fp))
		*(uint64_t *)((char *)fp + 512) |= 2;
}

/* Points @uc's fpregs at a copy of its FPU area; NULL if it does not fit.
 * Copied byte by byte (the handler runs traced code: no libc memcpy). */
static struct _libc_fpstate *ctx_fpregs_copy(ucontext_t *uc)
{
	volatile const char *from = (const char *)uc->uc_mcontext.fpregs;
	unsigned int size = ctx_xsave_size(uc->uc_mcontext.fpregs), k;

	if (!size)
		size = 512;
	if (size > sizeof(ctx_fpcopy))
		return NULL;
	for (k = 0; k < size; k++)
		ctx_fpcopy[k] = from[k];
	uc->uc_mcontext.fpregs = (struct _libc_fpstate *)ctx_fpcopy;
	return uc->uc_mcontext.fpregs;
}

/* Call i changes its frame as above, and AF, which no one compares, when
 * i is a multiple of 5: the kill(2) it interrupted clobbers %r11, and
 * the code after its asm reads no status flag, no vector register, and
 * does no floating point. */
static void on_signal_ctx(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	long i = ctx_signals++;

	if (ctx_change_r11(i))
		uc->uc_mcontext.gregs[REG_R11] ^= 0x5a5a;
	if (ctx_change_zf(i))
		uc->uc_mcontext.gregs[REG_EFL] ^= 0x40;
	if (ctx_change_df(i))
		uc->uc_mcontext.gregs[REG_EFL] ^= 0x400;
	if (i % 5 == 0)
		uc->uc_mcontext.gregs[REG_EFL] ^= 0x10;
	if (i % 5 == 1) {
		uc->uc_mcontext.fpregs->_xmm[15].element[2] ^= 0x10000;
		ctx_sse_in_use(uc->uc_mcontext.fpregs);
	}
	if (i % 5 == 2 && ctx_fpregs_copy(uc)) {
		uc->uc_mcontext.fpregs->_xmm[14].element[1] ^= 0x20;
		ctx_sse_in_use(uc->uc_mcontext.fpregs);
	}
	if (i % 5 == 3)
		ctx_fpregs_copy(uc);
}

/*
 * A handler's changes to its frame (docs/ARCHITECTURE.md item 30): a
 * traced task signals itself NRAISE times, and its handlers change %r11,
 * ZF, DF and the vector state in every combination in their ucontext,
 * and sometimes AF, which is not compared (on_signal_ctx()).  Every
 * SIGRETURN must say its general registers, flags and FPU state were
 * compared, and exactly what changed.  Catches a sigreturn hook that
 * compares nothing, one that runs before the kernel restores the flags
 * (it sees the restorer's), a flag mask that takes in AF or leaves out
 * DF, an FPU state compared before the kernel restores it or by the
 * frame's bytes (a copy of the area, changed or not, that fpregs points
 * at), a frame matched to the wrong delivery (the loop counter is in a
 * register), and a restored register taken as changed.
 */
TEST_F_TIMEOUT(trbuf, sigreturn_context, 300)
{
	enum { NRAISE = 200 };
	uint64_t want[16] = { 0 };
	long i;
	int k;

	for (i = 0; i < NRAISE; i++)
		want[ctx_kind(ctx_change_r11(i), ctx_change_zf(i), ctx_change_df(i),
			      ctx_change_vec(i))]++;
	NEED_DEV();
	if (!ctx_have_xsave())
		SKIP(return, "no XSAVE: the module compares no vector state");
	ctx_run(_metadata, &self->c, on_signal_ctx, NRAISE, 0);
	EXPECT_EQ(NRAISE, self->c.mk[TRBUF_MK_SIGRETURN]);
	EXPECT_EQ(NRAISE, self->c.ctx_checked);
	EXPECT_EQ(NRAISE, self->c.ctx_full);
	for (k = 0; k < 16; k++) {
		EXPECT_LT(0, want[k]);	/* every combination comes */
		EXPECT_EQ(want[k], self->c.ctx_kinds[k]);
	}
	EXPECT_EQ(0, self->c.ctx_other);
	EXPECT_EQ(0, self->c.ctx_flags);
}

/* Every fourth call forks; the child changes %r11 in its frame (the
 * kill(2) it interrupted clobbers it anyway) and returns too. */
static void on_signal_fork(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if (ctx_signals++ % 4 == 0 && ae_sys1(__NR_fork, 0) == 0) {
		ctx_forked = 1;
		uc->uc_mcontext.gregs[REG_R11] ^= 0x5a5a;
	}
}

/*
 * A fork in a handler returns from it in the child too, from the copy of
 * the frame on its stack: the child's SIGRETURN must be compared with
 * what the parent's delivery kept, and say that %r11 changed.  The
 * parent's handlers change nothing.  Catches a child that inherits no
 * frames (its returns unchecked) and one that inherits them after the
 * parent's own return (none left to match).
 */
TEST_F_TIMEOUT(trbuf, sigreturn_context_fork, 300)
{
	enum { NRAISE = 200, NFORK = NRAISE / 4 };

	NEED_DEV();
	if (!ctx_have_xsave())
		SKIP(return, "no XSAVE: the module compares no vector state");
	ctx_run(_metadata, &self->c, on_signal_fork, NRAISE, NFORK);
	EXPECT_EQ(NFORK, self->c.mk[TRBUF_MK_FORK]);
	EXPECT_EQ(NRAISE + NFORK, self->c.mk[TRBUF_MK_SIGRETURN]);
	EXPECT_EQ(NRAISE + NFORK, self->c.ctx_checked);
	EXPECT_EQ(NRAISE + NFORK, self->c.ctx_full);
	EXPECT_EQ(NRAISE, self->c.ctx_kinds[0]);
	EXPECT_EQ(NFORK, self->c.ctx_kinds[ctx_kind(1, 0, 0, 0)]);
	EXPECT_EQ(0, self->c.ctx_other);
}

/*
 * A traced task held by a stalled consumer stays killable: SIGKILL ends
 * the wait, and the dying task's markers (its EXIT) go into the area's
 * reserve instead of waiting.  Catches an uninterruptible wait (the task
 * outlives the kill until the consumer reads) and a dying task's marker
 * dropped (no EXIT, markers_lost > 0).
 */
TEST_F_TIMEOUT(trbuf, markers_small_area_killed_while_held, 300)
{
	struct trbuf_status st;
	struct timespec t0, t1;
	pid_t pid;
	int status = 0, gone = 0;

	NEED_DEV();
	pid = fork();
	if (pid == 0)
		raise_loop(0, 0, 0);
	self->c.proc_pid[0] = pid;
	ASSERT_EQ(0, consumer_map(&self->c));
	usleep(2000000);
	st = get_status(self->c.fd);
	/* held: it waited for room and never got it */
	ASSERT_LT(0, st.overflow_waits);
	ASSERT_EQ(0, waitpid(pid, &status, WNOHANG));
	kill(pid, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(10000);
		gone = waitpid(pid, &status, WNOHANG) == pid;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (!gone && t1.tv_sec - t0.tv_sec < 10);
	TH_LOG("killed while held: %s after %ld s", gone ? "gone" : "still there",
	       (long)(t1.tv_sec - t0.tv_sec));
	EXPECT_TRUE(gone);
	EXPECT_EQ(0, consume(&self->c, &pid, gone ? 0 : 1, NULL));
	if (gone)
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	st = get_status(self->c.fd);
	EXPECT_EQ(0, st.markers_lost);
	EXPECT_EQ(0, st.traced);
	EXPECT_EQ(1, self->c.mk[TRBUF_MK_EXIT]);
	/* the signal it was held delivering never ran its handler */
	EXPECT_LE(self->c.mk[TRBUF_MK_SIGRETURN], self->c.mk[TRBUF_MK_SIGNAL]);
	EXPECT_GE(self->c.mk[TRBUF_MK_SIGRETURN] + 1, self->c.mk[TRBUF_MK_SIGNAL]);
}

/*
 * Item 6: a debugger single-steps a traced producer through its
 * sequences (every step stops the task and switches it out).  The records
 * must all arrive, within a bounded number of steps.  Catches the rollback
 * at every switch-out: each step inside a sequence was rewound to its
 * start, so the task never got through one (the step budget runs out).
 */
TEST_F_TIMEOUT(trbuf, single_stepped_producer, 900)
{
	unsigned long n = 200, steps = 0, max_steps = 30000;
	int st = 0;
	pid_t pid;

	NEED_DEV();
	stream_add(&self->c, tag_of(0, 0), n, n);
	pid = fork();
	if (pid == 0) {
		uint64_t base = (uint64_t)tag_of(0, 0) << 32;

		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(2);
		if (ae_trbuf_register_table(__start___ae_seqtab,
					    __stop___ae_seqtab - __start___ae_seqtab))
			_exit(3);
		/* traced: no libc */
		ae_sys2(__NR_kill, ae_sys0(__NR_getpid), SIGSTOP);
		trbuf_prod_loop(base, n);
		ae_sys1(__NR_exit_group, 0);
	}
	self->c.proc_pid[0] = pid;
	ASSERT_EQ(0, consumer_map(&self->c));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st));
	while (steps < max_steps) {
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0))
			break;
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
		steps++;
		if ((steps & 1023) == 0)
			while (drain_one(&self->c))
				;
	}
	TH_LOG("%lu single steps", steps);
	if (steps == max_steps) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	EXPECT_LT(steps, max_steps);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	drain_all(&self->c);
	EXPECT_EQ(0, verify(_metadata, &self->c));
}

/* ---- error paths: clean errors, never an oops ---- */

static int have_dev(void)
{
	return access(DEV, F_OK) == 0;
}

TEST(bad_ioctl_args)
{
	struct trbuf_seq_range unsorted[2] = { { 0x500, 0x510 }, { 0x400, 0x410 } };
	struct trbuf_seq_range overlap[2] = { { 0x400, 0x410 }, { 0x408, 0x420 } };
	struct trbuf_seq_range empty[1] = { { 0x400, 0x400 } };
	struct trbuf_sb_markers mk;
	struct trbuf_trace_me tm;
	struct trbuf_subbuf sb;
	struct trbuf_info info;
	char small[8];
	void *map;
	int fd, fd2;

	NOT_ROLLBACK_ONLY();

	if (!have_dev())
		SKIP(return, DEV " absent");
	fd = open(DEV, O_RDWR);
	ASSERT_LE(0, fd);
	memset(&tm, 0, sizeof(tm));
	tm.ranges = (uintptr_t)unsorted;
	tm.count = 2;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(EINVAL, errno);
	tm.ranges = (uintptr_t)overlap;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(EINVAL, errno);
	tm.ranges = (uintptr_t)empty;
	tm.count = 1;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(EINVAL, errno);
	tm.ranges = 8;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(EFAULT, errno);
	tm.count = TRBUF_MAX_RANGES + 1;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(E2BIG, errno);
	tm.count = 0;
	tm.flags = 2;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, &tm));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_TRACE_ME, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_UNTRACE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, _IO(TRBUF_IOC_MAGIC, 99)));
	EXPECT_EQ(ENOTTY, errno);
	/* consumer-only operations */
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_GET_SUBBUF, &sb));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_FLUSH));
	EXPECT_EQ(EPERM, errno);
	memset(&mk, 0, sizeof(mk));
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_GET_MARKERS, &mk));
	EXPECT_EQ(EPERM, errno);
	/* markers come with their sub-buffer (GET_MARKERS), never by read() */
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	/* neither consumer nor traced: no mapping at all */
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, 1 << 20, PROT_READ,
				   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0));
	ASSERT_EQ(0, ioctl(fd, TRBUF_IOC_CONSUMER, &info));
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	/* not handed out by GET_SUBBUF */
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_GET_MARKERS, &mk));
	EXPECT_EQ(EINVAL, errno);
	mk.cpu = 1000;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_GET_MARKERS, &mk));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_GET_MARKERS, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* the 64-byte markers' number: a consumer built for those */
	EXPECT_EQ(-1, ioctl(fd, _IOWR(TRBUF_IOC_MAGIC, 8, struct trbuf_sb_markers), &mk));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_CONSUMER, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	fd2 = open(DEV, O_RDWR);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-1, ioctl(fd2, TRBUF_IOC_CONSUMER, &info));
	EXPECT_EQ(EBUSY, errno);
	memset(&sb, 0, sizeof(sb));
	sb.cpu = 1000;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_PUT_SUBBUF, &sb));
	EXPECT_EQ(EINVAL, errno);
	sb.cpu = 0;
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_PUT_SUBBUF, &sb));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, TRBUF_IOC_PUT_SUBBUF, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* wrong mmap address, size, offset, private */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, info.map_size - 4096,
				   PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0));
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, info.map_size, PROT_READ,
				   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0));
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, info.map_size, PROT_READ,
				   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 4096));
	/* an existing mapping there is never replaced, even with MAP_FIXED */
	ASSERT_NE(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, 4096, PROT_READ,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, info.map_size, PROT_READ,
				   MAP_SHARED | MAP_FIXED, fd, 0));
	munmap((void *)TRBUF_MAP_ADDR, 4096);
	/* the consumer maps read-only, never writable, and cannot move it */
	EXPECT_EQ(MAP_FAILED, mmap((void *)TRBUF_MAP_ADDR, info.map_size,
				   PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0));
	map = mmap((void *)TRBUF_MAP_ADDR, info.map_size, PROT_READ,
		   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_NE(0, mprotect(map, info.map_size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(MAP_FAILED, mremap(map, info.map_size, info.map_size,
				     MREMAP_MAYMOVE | MREMAP_FIXED,
				     (void *)(TRBUF_MAP_ADDR + (1UL << 40))));
	/* still there: the first sub-buffer's page reads */
	EXPECT_EQ(0, ((volatile char *)map)[4096] * 0);
	munmap(map, info.map_size);
	close(fd2);
	close(fd);
}

/* A traced thread may not register twice; untrace then works again. */
TEST(double_registration)
{
	struct trbuf_trace_me tm;
	struct trbuf_info info;
	int fd, st, cfd;
	pid_t pid;

	NOT_ROLLBACK_ONLY();

	if (!have_dev())
		SKIP(return, DEV " absent");
	cfd = open(DEV, O_RDWR);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, ioctl(cfd, TRBUF_IOC_CONSUMER, &info));
	pid = fork();
	if (pid == 0) {
		fd = open(DEV, O_RDWR);
		memset(&tm, 0, sizeof(tm));
		if (fd < 0 || ioctl(fd, TRBUF_IOC_TRACE_ME, &tm))
			_exit(1);
		/* traced: raw syscalls only */
		if (ae_sys3(__NR_ioctl, fd, TRBUF_IOC_TRACE_ME, &tm) != -EBUSY)
			ae_sys1(__NR_exit_group, 2);
		if (ae_sys3(__NR_ioctl, fd, TRBUF_IOC_UNTRACE, 0))
			ae_sys1(__NR_exit_group, 3);
		if (ioctl(fd, TRBUF_IOC_TRACE_ME, &tm))
			_exit(4);
		ae_sys1(__NR_exit_group, 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(cfd);
}

/* Neither root nor the device's group: EACCES/EPERM, never a buffer. */
TEST(unprivileged_open)
{
	struct stat sbuf;
	int st;
	pid_t pid;

	NOT_ROLLBACK_ONLY();

	if (!have_dev())
		SKIP(return, DEV " absent");
	ASSERT_EQ(0, stat(DEV, &sbuf));
	/* world-accessible node: the driver's own check must refuse */
	ASSERT_EQ(0, chmod(DEV, 0666));
	pid = fork();
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		fd = open(DEV, O_RDWR);
		_exit(fd >= 0 ? 1 : errno == EPERM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	chmod(DEV, sbuf.st_mode & 07777);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/*
 * The consumer is killed while producers run and block on a full buffer:
 * they must finish (tracing stops, buffers recycle), never hang.
 */
FIXTURE(solo) {
	int unused;
};

FIXTURE_SETUP(solo)
{
}

FIXTURE_TEARDOWN(solo)
{
}

TEST_F_TIMEOUT(solo, consumer_killed, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(30000) };
	struct trbuf_status st;
	pid_t cons, pids[2];
	int p, status, fd;
	struct timespec t0, t1;

	if (!have_dev())
		SKIP(return, DEV " absent");
	NOT_ROLLBACK_ONLY();
	ASSERT_EQ(0, write_param("total_size", 64 << 10));
	ASSERT_EQ(0, write_param("subbuf_size", 4 << 10));
	cons = fork();
	if (cons == 0) {
		struct trbuf_info info;

		fd = open(DEV, O_RDWR);
		if (fd < 0 || ioctl(fd, TRBUF_IOC_CONSUMER, &info))
			_exit(1);
		pause();	/* never drains */
		_exit(0);
	}
	usleep(300000);
	for (p = 0; p < 2; p++) {
		pids[p] = fork();
		if (pids[p] == 0)
			producer_main(p, &sp);
	}
	usleep(1000000);
	fd = open(DEV, O_RDWR);
	ASSERT_LE(0, fd);
	st = get_status(fd);
	TH_LOG("before kill: %llu overflow waits, %llu traced",
	       (unsigned long long)st.overflow_waits,
	       (unsigned long long)st.traced);
	/* the producers were blocked on the full buffer, not finished */
	EXPECT_LT(0, st.overflow_waits);
	EXPECT_EQ(2 * sp.nthreads, st.traced);
	for (p = 0; p < 2; p++)
		EXPECT_EQ(0, waitpid(pids[p], &status, WNOHANG));
	kill(cons, SIGKILL);
	waitpid(cons, &status, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (p = 0; p < 2; p++) {
		ASSERT_EQ(pids[p], waitpid(pids[p], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st = get_status(fd);
	TH_LOG("producers finished %lds after the kill; %llu discarded",
	       (long)(t1.tv_sec - t0.tv_sec),
	       (unsigned long long)st.discarded);
	EXPECT_EQ(0, st.traced);
	close(fd);
}

/*
 * The consumer's process exits without reading while traced children it
 * forked, which hold its descriptor of /dev/trbuf, are held waiting for
 * room: they must go on (the consumer is gone once its process holds no
 * descriptor), not wait for good for a release that their own descriptor
 * prevents.  Catches detaching only at the file's release.
 */
TEST_F_TIMEOUT(solo, consumer_exit_releases_forked_producers, 300)
{
	struct pollfd pfd;
	pid_t cons, prod = 0;
	int pipefd[2], status, ret;
	char c;

	if (!have_dev())
		SKIP(return, DEV " absent");
	NOT_ROLLBACK_ONLY();
	ASSERT_EQ(0, write_param("total_size", 64 << 10));
	ASSERT_EQ(0, write_param("subbuf_size", 4 << 10));
	ASSERT_EQ(0, write_param("subbuf_markers", 32));
	ASSERT_EQ(0, pipe(pipefd));
	cons = fork();
	if (cons == 0) {
		struct trbuf_info info;
		int fd = open(DEV, O_RDWR);
		pid_t p;

		if (fd < 0 || ioctl(fd, TRBUF_IOC_CONSUMER, &info))
			_exit(1);
		p = fork();
		if (p == 0) {
			close(pipefd[0]);
			raise_loop(0, 100000, 0);	/* holds pipefd[1] */
		}
		if (write(pipefd[1], &p, sizeof(p)) != sizeof(p))
			_exit(2);
		usleep(2000000);	/* never drains; p gets held */
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(prod), read(pipefd[0], &prod, sizeof(prod)));
	ASSERT_EQ(cons, waitpid(cons, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	/* the producer ends (EOF on the pipe) once nothing holds it */
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 60000);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(0, ret == 1 ? read(pipefd[0], &c, 1) : -1);
	if (ret != 1)
		kill(prod, SIGKILL);
	close(pipefd[0]);
	write_param("subbuf_markers", 1024);
}

/*
 * The runtime's kernel mode (instrument/runtime/trbuf_mode.c): without the
 * device it returns -ENOENT so the caller falls back; with it, r15 points
 * into the buffer mapped at TRBUF_MAP_ADDR and a record can be written.
 */
int ae_trbuf_register(void);

TEST(runtime_register)
{
	struct trbuf_info info;
	int st, cfd = -1;
	pid_t pid;

	NOT_ROLLBACK_ONLY();
	if (have_dev()) {
		cfd = open(DEV, O_RDWR);
		ASSERT_LE(0, cfd);
		ASSERT_EQ(0, ioctl(cfd, TRBUF_IOC_CONSUMER, &info));
	}
	pid = fork();
	if (pid == 0) {
		unsigned long r15;
		int ret = ae_trbuf_register();

		if (!have_dev())
			_exit(ret == -ENOENT ? 0 : 1);
		if (ret)
			_exit(2);
		/* traced: no libc */
		__asm__ volatile("mov %%r15, %0" : "=r"(r15));
		if (r15 < TRBUF_MAP_ADDR || r15 >= TRBUF_MAP_ADDR + (1UL << 40))
			ae_sys1(__NR_exit_group, 3);
		trbuf_prod_loop(0, 1);
		ae_sys1(__NR_exit_group, 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	if (cfd >= 0)
		close(cfd);
}

/* Open /dev/trbuf in a child and report the errno (0: opened). */
static int open_errno_in_child(int timeout_s, int *hung)
{
	int st = 0, i;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(DEV, O_RDWR);

		_exit(fd >= 0 ? 0 : errno);
	}
	*hung = 1;
	for (i = 0; i < timeout_s * 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			*hung = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(100000);
	}
	kill(pid, SIGKILL);
	return -1;
}

/*
 * Item 2: a failed buffer allocation (module parameter test_fail_alloc)
 * returns ENOMEM and leaves the device usable.  Catches the old error path
 * that freed through a function taking the mutex it already held: open()
 * hung for good (and every open after it).
 */
TEST_F_TIMEOUT(solo, alloc_failure_no_deadlock, 120)
{
	int err = 0, hung = 0, tries;

	NOT_ROLLBACK_ONLY();
	if (!have_dev())
		SKIP(return, DEV " absent");
	ASSERT_EQ(0, write_param("test_fail_alloc", 1));
	/* the previous test's buffer may live on briefly: wait for a fresh one */
	for (tries = 0; tries < 50; tries++) {
		err = open_errno_in_child(20, &hung);
		if (err || hung)
			break;
		usleep(100000);
	}
	write_param("test_fail_alloc", 0);
	ASSERT_FALSE(hung);
	EXPECT_EQ(ENOMEM, err);
	err = open_errno_in_child(20, &hung);
	EXPECT_FALSE(hung);
	EXPECT_EQ(0, err);
}

/* Child: TRACE_ME with @flags and the buffer mapped; returns -errno or 0. */
static long trace_me_raw(unsigned int flags)
{
	struct trbuf_trace_me tm = { .flags = flags };
	long fd = ae_sys3(__NR_open, DEV, O_RDWR, 0), ret, addr;

	if (fd < 0)
		return fd;
	tm.ranges = (uintptr_t)__start___ae_seqtab;
	tm.count = __stop___ae_seqtab - __start___ae_seqtab;
	ret = ae_sys3(__NR_ioctl, fd, TRBUF_IOC_TRACE_ME, &tm);
	if (ret)
		return ret;
	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, tm.map_size, AE_PROT_RW,
		       AE_MAP_SHARED | AE_MAP_FIXED_NOREPLACE, fd, 0);
	return addr == (long)TRBUF_MAP_ADDR ? 0 : -EEXIST;
}

/*
 * Item 3, the no-consumer contract (README): without a consumer TRACE_ME
 * fails with ENOTCONN and the runtime says so on stderr; a tracee that
 * asked for TRBUF_TRACE_DISCARD writes 8 times the buffer and finishes.
 * Catches the old behaviour: tracing was accepted and the tracee blocked
 * for good once its ring filled (the child times out here).
 */
TEST_F_TIMEOUT(solo, no_consumer_contract, 300)
{
	int st, pfd[2], hung = 1, i;
	char msg[256] = "";
	ssize_t n;
	pid_t pid;

	NOT_ROLLBACK_ONLY();
	if (!have_dev())
		SKIP(return, DEV " absent");
	ASSERT_EQ(0, write_param("total_size", 64 << 10));
	ASSERT_EQ(0, write_param("subbuf_size", 4 << 10));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		_exit(ae_trbuf_register() == -ENOTCONN ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st);
	close(pfd[1]);
	n = read(pfd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	EXPECT_NE(NULL, strstr(msg, "no consumer"));
	pid = fork();
	if (pid == 0) {
		if (trace_me_raw(0) != -ENOTCONN)
			_exit(1);
		if (trace_me_raw(TRBUF_TRACE_DISCARD))
			_exit(2);
		/* traced, no libc */
		trbuf_prod_loop(0, 8 * (64 << 10) / 8);
		ae_sys1(__NR_exit_group, 0);
	}
	for (i = 0; i < 600; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			hung = 0;
			break;
		}
		usleep(100000);
	}
	if (hung) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	EXPECT_FALSE(hung);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/*
 * AE_TRBUF_ONLY=WORD[,WORD...]: run only the tests whose name contains
 * one of the WORDs (the
 * kernel's harness of 6.1 has no filter option).  Unlinks the others from
 * the harness's lists (prev of the head points to the tail).
 */
/* Does @name contain one of the comma-separated words of @only? */
static int name_matches(const char *name, const char *only)
{
	char words[256], *w, *save = NULL;

	snprintf(words, sizeof(words), "%s", only);
	for (w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (strstr(name, w))
			return 1;
	return 0;
}

static void filter_tests(const char *only)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *next, *keep;

	for (f = __fixture_list; f; f = f->next) {
		keep = NULL;
		for (t = f->tests; t; t = next) {
			next = t->next;
			if (!name_matches(t->name, only))
				continue;
			t->next = NULL;
			if (!keep) {
				keep = t;
				t->prev = t;
			} else {
				t->prev = keep->prev;
				keep->prev->next = t;
				keep->prev = t;
			}
		}
		f->tests = keep;
	}
}

int main(int argc, char **argv)
{
	if (!realpath("/proc/self/exe", self_exe))
		snprintf(self_exe, sizeof(self_exe), "%s", argv[0]);
	rollback_only = getenv("AE_TRBUF_ONLY") &&
			!strcmp(getenv("AE_TRBUF_ONLY"), "rollback");
	if (argc == 5 && !strcmp(argv[1], "--chain"))
		chain_step(atoi(argv[2]), atoi(argv[3]),
			   strtoul(argv[4], NULL, 0));
	if (getenv("AE_TRBUF_ONLY"))
		filter_tests(getenv("AE_TRBUF_ONLY"));
	return test_harness_run(argc, argv);
}
