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
 * meant for `vm/run --singlestep` (plain TCG never cuts a sequence).
 */

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
#include <sys/stat.h>
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

	if (sp->sig) {
		struct sigaction sa = { .sa_handler = on_usr1 };

		sigset_t set;

		sigaction(SIGUSR1, &sa, NULL);
		sig_base = (uint64_t)tag_of(proc, SIG_SLOT) << 32;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
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
};

struct consumer {
	int fd;
	struct trbuf_info info;
	const uint8_t *map;
	struct stream s[MAX_STREAMS];
	int ns;
	uint64_t unknown, subbufs, bad_len, bytes;
	uint64_t mk[16];
	int sig_streams;
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

static void check_subbuf(struct consumer *c, const struct trbuf_subbuf *sb)
{
	const uint64_t *rec = (const uint64_t *)(c->map + sb->offset);
	uint64_t i, n = sb->len / 8;
	int k;

	c->subbufs++;
	c->bytes += sb->len;
	if (sb->len % 8 || sb->len > c->info.subbuf_size)
		c->bad_len++;
	for (k = 0; k < c->ns; k++)
		c->s[k].last = -1;
	for (i = 0; i < n; i++) {
		struct stream *s = stream_find(c, rec[i] >> 32);
		uint64_t v = rec[i] & 0xffffffff;

		if (!s) {
			c->unknown++;
			continue;
		}
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
}

static int drain_one(struct consumer *c)
{
	struct trbuf_subbuf sb;

	if (ioctl(c->fd, TRBUF_IOC_GET_SUBBUF, &sb))
		return 0;
	check_subbuf(c, &sb);
	ioctl(c->fd, TRBUF_IOC_PUT_SUBBUF, &sb);
	return 1;
}

static void read_markers(struct consumer *c)
{
	struct trbuf_marker m[64];
	ssize_t n;
	int i;

	while ((n = read(c->fd, m, sizeof(m))) > 0)
		for (i = 0; i < n / (ssize_t)sizeof(m[0]); i++)
			if (m[i].type < 16)
				c->mk[m[i].type]++;
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
	int pause_ms;		/* consumer sleeps this long first */
	int flush;		/* FLUSH every round, producers running */
};

/* Consume until every pid exited; returns how many exited non-zero. */
static int consume(struct consumer *c, pid_t *pids, int npids,
		   const struct run_opts *o)
{
	int live = npids, bad = 0, i, st;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

	if (o && o->pause_ms)
		usleep(o->pause_ms * 1000);
	while (live) {
		if (o && o->flush)
			ioctl(c->fd, TRBUF_IOC_FLUSH);
		while (drain_one(c))
			;
		read_markers(c);
		for (i = 0; i < npids; i++) {
			if (!pids[i])
				continue;
			if (o && o->sig_storm)
				kill(pids[i], SIGUSR1);
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					bad++;
				pids[i] = 0;
				live--;
			}
		}
		poll(&pfd, 1, o && (o->sig_storm || o->flush) ? 1 : 20);
	}
	ioctl(c->fd, TRBUF_IOC_FLUSH);
	while (drain_one(c))
		;
	read_markers(c);
	return bad;
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
	if (c->unknown || c->bad_len) {
		TH_LOG("%llu foreign records, %llu bad sub-buffer lengths",
		       (unsigned long long)c->unknown,
		       (unsigned long long)c->bad_len);
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
	int tries;

	self->c.fd = -1;
	if (access(DEV, F_OK))
		return;
	self->have_dev = 1;
	ASSERT_EQ(0, write_param("total_size", variant->total));
	ASSERT_EQ(0, write_param("subbuf_size", variant->subbuf));
	/* A previous test's buffer is freed asynchronously: wait for it. */
	for (tries = 0; tries < 50; tries++) {
		self->c.fd = open(DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		ASSERT_LE(0, self->c.fd);
		ASSERT_EQ(0, ioctl(self->c.fd, TRBUF_IOC_CONSUMER,
				   &self->c.info));
		if (self->c.info.subbuf_size == variant->subbuf)
			break;
		close(self->c.fd);
		usleep(100000);
	}
	ASSERT_EQ(variant->subbuf, self->c.info.subbuf_size);
}

FIXTURE_TEARDOWN(trbuf)
{
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
	if (!st.markers_lost) {
		EXPECT_EQ(nproc, c->mk[TRBUF_MK_START]);
		EXPECT_EQ(nproc * (sp->nthreads - 1), c->mk[TRBUF_MK_FORK]);
		EXPECT_EQ(nproc * sp->nthreads, c->mk[TRBUF_MK_EXIT]);
	}
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

TEST_F_TIMEOUT(trbuf, migration_storm, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(20000),
				.chunk = 97, .ncpus = online_cpus() };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, NULL);
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

/* The consumer sleeps first: producers must wait (lossless), not lose. */
TEST_F_TIMEOUT(trbuf, consumer_paused, 900)
{
	struct prod_spec sp = { .nthreads = 2, .n = scale(20000) };
	struct run_opts o = { .pause_ms = 1500 };

	NEED_DEV();
	run_case(_metadata, &self->c, 2, &sp, &o);
	if (self->c.bytes > self->c.info.map_size)
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
 * A signal storm adds cuts at signal delivery (rolled back there too):
 * producers that block on a full buffer are rarely preempted mid-loop.
 */
static int rollback_enabled(void)
{
	const char *s = getenv("AE_TRBUF_ROLLBACK");

	return s && *s == '1';
}

TEST_F_TIMEOUT(trbuf, rollback_exact, 1800)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(3000000), .sig = 1 };
	struct run_opts o = { .sig_storm = 1 };

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	run_case(_metadata, &self->c, 3, &sp, &o);
	/* exact, but no cut happened: the run proved nothing (retried) */
	if (_metadata->passed && !get_status(self->c.fd).rollbacks)
		TH_LOG("VACUOUS: no sequence was cut");
	EXPECT_LT(0, get_status(self->c.fd).rollbacks);
}

TEST_F_TIMEOUT(trbuf, rollback_unrecognised_commit_is_caught, 1800)
{
	struct prod_spec sp = { .nthreads = 1, .n = scale(3000000), .bad = 1,
				.sig = 1 };
	struct run_opts o = { .sig_storm = 1 };
	pid_t pids[3];
	int bad;

	if (!self->have_dev)
		SKIP(return, DEV " absent (trbuf.ko not loaded)");
	if (!rollback_enabled())
		SKIP(return, "set AE_TRBUF_ROLLBACK=1 under vm/run --singlestep");
	if (variant->subbuf < (64 << 10))
		SKIP(return, "tiny sub-buffers: producers block on the consumer, never preempted mid-sequence");
	start_producers(&self->c, pids, 3, &sp);
	ASSERT_EQ(0, consumer_map(&self->c));
	consume(&self->c, pids, 3, &o);
	bad = verify(_metadata, &self->c);
	TH_LOG("corrupt streams detected: %d (rollbacks %llu)", bad,
	       (unsigned long long)get_status(self->c.fd).rollbacks);
	if (!bad)
		TH_LOG("VACUOUS: no sequence was cut");
	EXPECT_LT(0, bad);
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
	struct trbuf_trace_me tm;
	struct trbuf_subbuf sb;
	struct trbuf_info info;
	char small[8];
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
	tm.flags = 1;
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
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, ioctl(fd, TRBUF_IOC_CONSUMER, &info));
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
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
	close(fd2);
	close(fd);
}

/* A traced thread may not register twice; untrace then works again. */
TEST(double_registration)
{
	struct trbuf_trace_me tm;
	int fd, st;
	pid_t pid;

	NOT_ROLLBACK_ONLY();

	if (!have_dev())
		SKIP(return, DEV " absent");
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
 * The runtime's kernel mode (instrument/runtime/trbuf_mode.c): without the
 * device it returns -ENOENT so the caller falls back; with it, r15 points
 * into the buffer mapped at TRBUF_MAP_ADDR and a record can be written.
 */
int ae_trbuf_register(void);

TEST(runtime_register)
{
	int st;
	pid_t pid;

	NOT_ROLLBACK_ONLY();
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
	return test_harness_run(argc, argv);
}
