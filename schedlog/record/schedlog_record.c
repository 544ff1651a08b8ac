// SPDX-License-Identifier: MIT
/*
 * schedlog_record.c - schedlog-record: load the scheduler BPF programs
 * (schedlog_record.bpf.c), attach them, poll the ring buffer and append
 * every event to a file (format: sched_event.h, docs/FORMAT.md) until
 * SIGINT/SIGTERM or -d SECONDS. Lost events are counted, logged in the
 * file (SCHED_EV_LOST records, header) and reported on stderr.
 *
 *   schedlog-record -o all.bin [-d SECONDS] [-b MB] [--ready-fd FD] [-q] [-v]
 *
 * Exit status: 0 clean stop without loss, 1 error or events lost, 2 usage,
 * SCHED_RECORD_EXIT_NOBPF (3) BPF unusable here (reason on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sched_event.h"
#include "schedlog_record.skel.h"

#define PROG "schedlog-record"

static volatile sig_atomic_t exiting;
static int verbose;

static void on_signal(int sig)
{
	exiting = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* our own one-line reason is enough unless -v */
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " -o FILE [options]\n"
"  Record every context switch, migration, fork, exec, exit and wakeup of\n"
"  the machine with BPF until SIGINT/SIGTERM (format: docs/FORMAT.md).\n"
"  -o FILE        output file (required)\n"
"  -d SECONDS     stop after this long\n"
"  -b MB          BPF ring buffer size, a power of 2 (default 8)\n"
"  --ready-fd FD  write one byte to FD once the programs are attached, then close it\n"
"  -q             no summary\n"
"  -v             libbpf messages\n"
"exit status: 0 ok, 1 error or events lost, 2 usage, %d BPF unavailable\n",
		SCHED_RECORD_EXIT_NOBPF);
}

static __u64 mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

struct rec {
	const char *path;
	FILE *out;
	struct sched_log_header hdr;
	__u64 lost_seen;	/* lost counter already logged */
	int werr;		/* first write errno */
};

static int put(struct rec *r, const void *p, size_t len)
{
	if (r->werr)
		return -r->werr;
	if (fwrite(p, 1, len, r->out) != len) {
		r->werr = errno ? errno : EIO;
		return -r->werr;
	}
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct rec *r = ctx;

	if (size < sizeof(struct sched_event))
		return 0;
	r->hdr.events++;
	/* a negative return stops ring_buffer__poll: stop on a full disk */
	return put(r, data, sizeof(struct sched_event));
}

/* Log lost events as a record when the BPF counter moved; returns its delta. */
static __u64 log_lost(struct rec *r, __u64 lost_now)
{
	struct sched_event e = { .type = SCHED_EV_LOST };
	__u64 d = lost_now - r->lost_seen;

	if (!d)
		return 0;
	e.time_ns = mono_ns();
	e.arg = d;
	r->lost_seen = lost_now;
	r->hdr.events++;
	put(r, &e, sizeof(e));
	return d;
}

/*
 * Program runs the kernel skipped because one of our programs was already
 * running on that CPU (bpf_prog_info.recursion_misses): events lost too.
 */
static __u64 recursion_misses(struct schedlog_record_bpf *skel)
{
	struct bpf_program *prog;
	__u64 sum = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

/* Why BPF cannot work here, before trying; NULL when it might. */
static const char *bpf_precheck(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "kernel BTF /sys/kernel/btf/vmlinux is missing (kernel built without CONFIG_DEBUG_INFO_BTF, or older than 5.5)";
	return NULL;
}

static const char *load_reason(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return "permission denied: needs root, or CAP_BPF and CAP_PERFMON";
	case ENOSYS:
		return "the kernel has no bpf() system call (CONFIG_BPF_SYSCALL off)";
	case EINVAL:
	case EOPNOTSUPP:
	case ENOENT:
	case ESRCH:
		return "the kernel rejected the programs (too old for BTF tracepoints or ring buffers, or a tracepoint is missing)";
	default:
		return strerror(-err);
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct schedlog_record_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct rec r = { 0 };
	const char *why;
	double duration = 0;
	long rb_mb = 8;
	int c, quiet = 0, ready_fd = -1, err, status = 0, ncpu;
	__u64 t_end = 0, lost, misses;
	char *end;

	while ((c = getopt_long(argc, argv, "o:d:b:qvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			r.path = optarg;
			break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*end || duration <= 0)
				goto bad_arg;
			break;
		case 'b':
			rb_mb = strtol(optarg, &end, 10);
			if (*end || rb_mb < 1 || rb_mb > 1024 || (rb_mb & (rb_mb - 1)))
				goto bad_arg;
			break;
		case 'R':
			ready_fd = strtol(optarg, &end, 10);
			if (*end || ready_fd < 0 || fcntl(ready_fd, F_GETFD) < 0)
				goto bad_arg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!r.path || optind != argc) {
		usage(stderr);
		return 2;
	}

	why = bpf_precheck();
	if (why) {
		fprintf(stderr, PROG ": BPF unavailable: %s\n", why);
		return SCHED_RECORD_EXIT_NOBPF;
	}
	libbpf_set_print(libbpf_print);
	ncpu = libbpf_num_possible_cpus();

	/* open, load, attach, poll; one cleanup path */
	skel = schedlog_record_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, PROG ": BPF unavailable: opening the BPF object: %s\n", load_reason(err));
		status = SCHED_RECORD_EXIT_NOBPF;
		goto cleanup;
	}
	err = bpf_map__set_max_entries(skel->maps.rb, rb_mb << 20);
	if (!err)
		err = schedlog_record_bpf__load(skel);
	if (err) {
		fprintf(stderr, PROG ": BPF unavailable: loading the programs: %s%s\n", load_reason(err),
			verbose ? "" : " (-v shows libbpf's messages)");
		status = SCHED_RECORD_EXIT_NOBPF;
		goto cleanup;
	}
	r.out = fopen(r.path, "w");
	if (!r.out) {
		fprintf(stderr, PROG ": %s: %s\n", r.path, strerror(errno));
		status = 1;
		goto cleanup;
	}
	setvbuf(r.out, NULL, _IOFBF, 1 << 20);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.rb), handle_event, &r, NULL);
	if (!rb) {
		fprintf(stderr, PROG ": BPF ring buffer: %s\n", strerror(errno));
		status = 1;
		goto cleanup;
	}

	r.hdr.magic = SCHED_LOG_MAGIC;
	r.hdr.version = SCHED_LOG_VERSION;
	r.hdr.record_size = sizeof(struct sched_event);
	r.hdr.nr_cpus = ncpu > 0 ? ncpu : 0;
	r.hdr.start_ns = mono_ns();
	if (put(&r, &r.hdr, sizeof(r.hdr)) || fflush(r.out)) {
		fprintf(stderr, PROG ": %s: %s\n", r.path, strerror(errno));
		status = 1;
		goto cleanup;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = schedlog_record_bpf__attach(skel);
	if (err) {
		fprintf(stderr, PROG ": BPF unavailable: attaching to the sched tracepoints: %s\n",
			load_reason(err));
		unlink(r.path);		/* nothing recorded */
		status = SCHED_RECORD_EXIT_NOBPF;
		goto cleanup;
	}
	if (ready_fd >= 0) {
		if (write(ready_fd, "R", 1) != 1)
			fprintf(stderr, PROG ": --ready-fd %d: %s\n", ready_fd, strerror(errno));
		close(ready_fd);
	}
	if (duration > 0)
		t_end = r.hdr.start_ns + (__u64)(duration * 1e9);

	while (!exiting && !r.werr) {
		/* -EINTR: a stop signal (SIGSTOP/SIGCONT) or ours; the loop test decides */
		err = ring_buffer__poll(rb, 100);
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR && !r.werr) {
			fprintf(stderr, PROG ": ring buffer poll: %s\n", strerror(-err));
			status = 1;
			break;
		}
		log_lost(&r, __atomic_load_n(&skel->bss->lost, __ATOMIC_RELAXED));
		if (t_end && mono_ns() >= t_end)
			break;
	}

	/* Stop the producers first, then take what is left. */
	schedlog_record_bpf__detach(skel);
	ring_buffer__consume(rb);
	lost = __atomic_load_n(&skel->bss->lost, __ATOMIC_RELAXED);
	log_lost(&r, lost);
	misses = recursion_misses(skel);
	if (misses) {
		fprintf(stderr, PROG ": the kernel skipped %llu program runs (nested in another of ours on the same CPU)\n",
			(unsigned long long)misses);
		lost += misses;
		log_lost(&r, lost);
	}
	r.hdr.lost = lost;
	r.hdr.end_ns = mono_ns();
	{
		struct sched_event e = { .time_ns = r.hdr.end_ns, .type = SCHED_EV_END,
					 .arg = r.hdr.events, .arg2 = lost };

		put(&r, &e, sizeof(e));
	}
	if (!r.werr && fflush(r.out))
		r.werr = errno;
	if (!r.werr) {
		/* final counters into the header (a pipe keeps the first one) */
		r.hdr.flags |= SCHED_LOG_COMPLETE;
		if (fseek(r.out, 0, SEEK_SET) == 0) {
			put(&r, &r.hdr, sizeof(r.hdr));
			if (!r.werr && fflush(r.out))
				r.werr = errno;
		}
	}
	if (r.werr) {
		fprintf(stderr, PROG ": %s: write failed: %s\n", r.path, strerror(r.werr));
		status = 1;
	}
	if (lost) {
		fprintf(stderr, PROG ": LOST %llu events (ring buffer full; try -b with a larger size)\n",
			(unsigned long long)lost);
		status = status ? status : 1;
	}
	if (!quiet)
		fprintf(stderr, PROG ": %s: %llu events, %llu lost, %.2f s\n", r.path,
			(unsigned long long)r.hdr.events, (unsigned long long)lost,
			(r.hdr.end_ns - r.hdr.start_ns) / 1e9);

cleanup:
	ring_buffer__free(rb);
	schedlog_record_bpf__destroy(skel);
	if (r.out && fclose(r.out) && !status) {
		fprintf(stderr, PROG ": %s: close failed: %s\n", r.path, strerror(errno));
		status = 1;
	}
	return status;

bad_arg:
	if (c == 'R')
		fprintf(stderr, PROG ": bad value '%s' for --ready-fd\n", optarg);
	else
		fprintf(stderr, PROG ": bad value '%s' for -%c\n", optarg, c);
	return 2;
}
