// SPDX-License-Identifier: MIT
/*
 * bdump.c - the aetrace consumer: take full sub-buffers and schedule
 * markers from /dev/trbuf (or the synthetic source), write them as
 * container chunks into a zstd stream going to a file, to `|command`, or
 * to bdump-recv over TCP, and the markers also to the SCHED file.
 *
 *   bdump [options] TRACE SCHED
 *   bdump --check TRACE [SCHED]     verify a capture (see usage())
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bdump.h"
#include <aetrace/container_sink.h>
#include <aetrace/fullio.h>
#include <aetrace/outfile.h>
#include "net_client.h"
#include "source.h"
#include "spawn.h"
#include "wire.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t abort_net;

static void on_signal(int sig)
{
	if (stop_signal)
		abort_net = 1;	/* second signal: stop waiting for the receiver */
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: bdump [options] TRACE SCHED\n"
"  TRACE   file path, '|command' (stream piped to sh -c command), or\n"
"          tcp://host:port (stream to bdump-recv)\n"
"  SCHED   file receiving the raw array of struct trbuf_marker\n"
"options:\n"
"  -l LEVEL        zstd level, -64 (fastest) .. 22 (default 1); while traced\n"
"                  tasks wait for bdump, it goes lower (pacing)\n"
"  --fixed-level   no pacing: every sub-buffer at LEVEL\n"
"  -T THREADS      zstd worker threads (default 0: compress in this thread)\n"
"  -f MS           flush interval: close sub-buffers and flush the stream (default 1000)\n"
"  -d SECONDS      stop after this long (default: until SIGINT/SIGTERM)\n"
"  -q              quiet: no progress, no summary\n"
"  --secret FILE   shared secret for tcp:// (HMAC-SHA256 challenge-response)\n"
"  --net-buffer MB unacknowledged bytes kept for resending (default 256)\n"
"  --device PATH   trace device (default /dev/trbuf)\n"
"  --ready FILE    create FILE once bdump is the consumer (and the\n"
"                  --bpf-sched recorder runs): start the workload after it\n"
"  --from CAPTURE  send an existing capture (e.g. aerun -o) instead of the device\n"
"  --bpf-sched FILE  record every context switch of the machine with\n"
"                  schedlog-record into FILE, from before the capture to after END\n"
"  --synthetic-source SPEC  self-checking generator instead of the device,\n"
"                  SPEC = bytes=64M,cpus=2,subbuf=1M,rate=0,seed=1\n"
"  bdump --check TRACE [SCHED]  verify a capture: chunk order, END counters,\n"
"                  SCHED equal to the MARKERS chunks, synthetic payloads\n");
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct out {
	const char *name;
	int fd;
	pid_t child;
	struct net_client *net;
	struct ae_writer *w;
	int sched_fd;
};

static int out_open(struct out *o, const char *trace, const char *sched,
		    const struct bdump_opts *opt, char *err, size_t errlen)
{
	/* --from forwards chunks as they are: nothing to pace */
	struct ae_writer_opts wo = { .level = opt->level, .threads = opt->threads,
				     .adapt = opt->adapt && !opt->from };
	int ret;

	memset(o, 0, sizeof(*o));
	o->name = trace;
	o->fd = -1;
	o->sched_fd = schedlog_open_output(sched);
	if (o->sched_fd < 0) {
		snprintf(err, errlen, "%s: %s", sched, strerror(-o->sched_fd));
		return o->sched_fd;
	}
	if (trace[0] == '|') {
		int p[2];

		if (pipe2(p, O_CLOEXEC)) {
			ret = -errno;
			snprintf(err, errlen, "pipe: %s", strerror(errno));
			goto err_close_sched;
		}
		o->child = fork();
		if (o->child == 0) {
			dup2(p[0], STDIN_FILENO);
			execl("/bin/sh", "sh", "-c", trace + 1, (char *)NULL);
			_exit(127);
		}
		close(p[0]);
		if (o->child < 0) {
			ret = -errno;
			close(p[1]);
			snprintf(err, errlen, "fork: %s", strerror(errno));
			goto err_close_sched;
		}
		o->fd = p[1];
	} else if (!strncmp(trace, "tcp://", 6)) {
		ret = net_client_open(&o->net, trace, opt->secret, opt->net_buffer,
				      opt->quiet, &abort_net, err, errlen);
		if (ret)
			goto err_close_sched;
		ret = ae_writer_open_sink(&o->w, net_client_sink, o->net, &wo);
		if (ret)
			snprintf(err, errlen, "%s: zstd setup failed", trace);
		return ret;
	} else {
		o->fd = schedlog_open_output(trace);
		if (o->fd < 0) {
			ret = o->fd;
			snprintf(err, errlen, "%s: %s", trace, strerror(-ret));
			goto err_close_sched;
		}
	}
	ret = ae_writer_open(&o->w, o->fd, &wo);
	if (ret)
		snprintf(err, errlen, "%s: zstd setup failed (level %d, threads %d)",
			 trace, opt->level, opt->threads);
	return ret;

err_close_sched:
	close(o->sched_fd);
	return ret;
}

/*
 * Close everything; 0 only when every byte reached its destination.
 * failed: the capture is broken, so a receiver keeps it as an incomplete
 * session (no FIN) rather than a complete one.
 */
static int out_close(struct out *o, int failed, uint64_t *out_bytes, char *err, size_t errlen)
{
	int ret = ae_writer_close(o->w, out_bytes);

	if (ret)
		snprintf(err, errlen, "%s: write failed: %s", o->name, strerror(-ret));
	if (close(o->sched_fd) && !ret) {
		ret = -errno;
		snprintf(err, errlen, "SCHED: close failed: %s", strerror(errno));
	}
	if (o->net) {
		int r = net_client_finish(o->net, failed || ret, &abort_net, err, errlen);

		ret = ret ? ret : r;
	}
	if (o->fd >= 0 && close(o->fd) && !ret) {
		ret = -errno;
		snprintf(err, errlen, "%s: close failed: %s", o->name, strerror(errno));
	}
	if (o->child > 0) {
		int st;

		while (waitpid(o->child, &st, 0) < 0 && errno == EINTR)
			;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			if (ret)	/* keep the first error, report this one too */
				fprintf(stderr, "bdump: %s: command failed (wait status 0x%x)\n",
					o->name, st);
			else
				snprintf(err, errlen, "%s: command failed (wait status 0x%x)",
					 o->name, st);
			ret = ret ? ret : -EPIPE;
		}
	}
	return ret;
}

static int flush_out(struct out *o)
{
	int ret = ae_writer_flush(o->w);

	if (!ret && o->net)
		ret = net_client_seal(o->net);
	return ret;
}

static void human(char *b, size_t n, double v)
{
	const char *u = "BKMGT";

	while (v >= 1024 && u[1]) {
		v /= 1024;
		u++;
	}
	snprintf(b, n, "%.1f%c", v, *u);
}

struct stats {
	uint64_t raw, subbufs, markers, chunks;
	uint64_t unclosed;	/* CPUs whose last sub-buffer stayed open at the end */
	struct ae_writer_pacing pacing;	/* at the end */
};

/* What the capture lost: the source's drops and the sub-buffers left open. */
static uint64_t drops_of(struct bdump_source *src, const struct stats *st)
{
	return src->drops(src) + st->unclosed;
}

static void progress(const struct out *o, const struct stats *st, double t0,
		     struct bdump_source *src, int final)
{
	char r[16], c[16];
	uint64_t out = ae_writer_out_bytes(o->w);
	double el = now_s() - t0;
	struct ae_writer_pacing p;

	ae_writer_pacing(o->w, &p);
	human(r, sizeof(r), st->raw);
	human(c, sizeof(c), out);
	fprintf(stderr, "%sbdump: raw %s compressed %s %.1f MB/s ratio %.1f sub-buffers %llu markers %llu drops %llu level %d%s",
		final ? "" : "\r", r, c, el > 0 ? st->raw / el / 1e6 : 0.0,
		out ? (double)st->raw / out : 0.0, (unsigned long long)st->subbufs,
		(unsigned long long)st->markers, (unsigned long long)drops_of(src, st),
		p.level, final ? "\n" : "   ");
}

static int drain_markers(struct bdump_source *src, struct out *o, struct stats *st)
{
	static struct trbuf_marker mk[4096];
	ssize_t n;
	int ret;

	while ((n = src->markers(src, mk, 4096)) > 0) {
		size_t len = n * sizeof(mk[0]);

		ret = ae_writer_chunk(o->w, AE_CHUNK_MARKERS, 0, st->chunks++, mk, len, 0);
		if (!ret)
			ret = schedlog_write_full(o->sched_fd, mk, len);
		if (!ret && o->net)
			ret = net_client_sched(o->net, mk, len);
		if (ret)
			return ret;
		st->markers += n;
	}
	return n < 0 ? n : 0;
}

static int take_subbuf(struct bdump_source *src, struct out *o, struct stats *st,
		       const struct bdump_subbuf *sb)
{
	int ret = drain_markers(src, o, st);

	ae_writer_pace(o->w, sb->pace);
	if (!ret)
		ret = ae_writer_chunk(o->w, AE_CHUNK_DATA, sb->cpu, sb->seq, sb->data, sb->len, 0);
	if (!ret)
		ret = src->put(src, sb);
	st->raw += sb->len;
	st->subbufs++;
	st->chunks++;
	return ret;
}

/* Take every full sub-buffer; how many, or -errno (err filled). */
static int take_full(struct bdump_source *src, struct out *o, struct stats *st,
		     char *err, size_t errlen)
{
	struct bdump_subbuf sb;
	int n = 0, r, ret;

	while ((r = src->next(src, &sb, 0)) == 1) {
		ret = take_subbuf(src, o, st, &sb);
		if (ret)
			return ret;
		n++;
	}
	if (r < 0 && r != -ENODATA) {
		snprintf(err, errlen, "source at the end: %s", strerror(-r));
		return r;
	}
	return n;
}

/*
 * The end of a capture: every sub-buffer closed and taken.  A CPU whose
 * ring is full keeps its active sub-buffer at a flush (its next one is
 * not free): take the full ones and flush again until none is kept.
 * Traced tasks still running may fill a ring again meanwhile, so the
 * rounds are bounded; the CPUs still keeping one after them are counted
 * in drops and reported, never lost without a word.
 */
#define BDUMP_END_ROUNDS 16

static int drain_all(struct bdump_source *src, struct out *o, struct stats *st,
		     char *err, size_t errlen)
{
	int kept = 0, got;

	for (int round = 0; round <= BDUMP_END_ROUNDS; round++) {
		kept = src->flush(src);
		if (kept < 0) {
			snprintf(err, errlen, "flush at the end: %s", strerror(-kept));
			return kept;
		}
		got = take_full(src, o, st, err, errlen);
		if (got < 0)
			return got;
		if (!kept)
			return 0;
		if (!got)	/* nothing freed: give the CPUs a moment */
			poll(NULL, 0, 10);
	}
	st->unclosed = kept;
	fprintf(stderr, "bdump: %d CPU(s) kept a non-empty sub-buffer open after %d flushes (a ring kept full by running tasks, an offline CPU, or a task without a valid cursor): its bytes and markers are not in the capture (counted in drops)\n",
		kept, BDUMP_END_ROUNDS + 1);
	return 0;
}

/* --from: every chunk of the capture unchanged (lossless forwarding). */
static int forward_chunks(struct bdump_source *src, struct out *o, struct stats *st,
			  int flush_ms, int show, char *err, size_t errlen)
{
	struct ae_chunk_hdr h;
	const void *pl;
	double t0 = now_s(), last = t0, last_prog = t0;
	int r = 0, ret = 0;

	while (!ret && !stop_signal && (r = src->chunk(src, &h, &pl)) == 1) {
		ret = ae_writer_chunk(o->w, h.type, h.cpu, h.seq, pl, h.len, h.type == AE_CHUNK_END);
		if (!ret && h.type == AE_CHUNK_MARKERS) {
			ret = schedlog_write_full(o->sched_fd, pl, h.len);
			if (!ret && o->net)
				ret = net_client_sched(o->net, pl, h.len);
			st->markers += h.len / sizeof(struct trbuf_marker);
		}
		if (h.type == AE_CHUNK_DATA) {
			st->raw += h.len;
			st->subbufs++;
		}
		st->chunks++;
		if (!ret && (now_s() - last) * 1000 >= flush_ms) {
			ret = flush_out(o);
			last = now_s();
		}
		if (show && now_s() - last_prog >= 0.5) {
			progress(o, st, t0, src, 0);
			last_prog = now_s();
		}
	}
	if (!ret && stop_signal) {
		snprintf(err, errlen, "interrupted: the forwarded capture is incomplete");
		return -EINTR;
	}
	if (!ret && r < 0) {
		snprintf(err, errlen, "--from: forwarding failed (see above)");
		return r;
	}
	return ret;
}

/* --ready: the consumer is attached and the stream begun; a script may
 * start what it traces. Returns 0 or -errno (err says which file). */
static int say_ready(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char line[32];
	int n, ret = 0;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "--ready %s: %s", path, strerror(errno));
		return ret;
	}
	n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	if (write(fd, line, n) != n) {
		ret = -EIO;
		snprintf(err, errlen, "--ready %s: cannot write", path);
	}
	close(fd);
	return ret;
}

static int run(const char *trace, const char *sched, const struct bdump_opts *opt)
{
	struct bdump_source *src;
	struct bdump_subbuf sb;
	struct stats st = { 0 };
	struct out o;
	struct timespec rt;
	char err[640] = "";
	double t0 = now_s(), last_flush = t0, last_prog = t0;
	int show = !opt->quiet && isatty(STDERR_FILENO);
	uint64_t out_bytes = 0;
	int ret, r, failed = 0;

	if (opt->synthetic)
		ret = bdump_source_synth_open(&src, opt->synthetic);
	else if (opt->from)
		ret = bdump_source_file_open(&src, opt->from);
	else
		ret = bdump_source_trbuf_open(&src, opt->device);
	if (ret) {
		const char *what = opt->synthetic ? opt->synthetic :
				   opt->from ? opt->from : opt->device;

		fprintf(stderr, "bdump: %s: %s\n", what,
			opt->synthetic && ret == -EINVAL ? "bad synthetic spec" : strerror(-ret));
		return 1;
	}
	ret = out_open(&o, trace, sched, opt, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bdump: %s\n", err);
		src->close(src);
		return 1;
	}
	if (src->chunk) {
		ret = opt->ready ? say_ready(opt->ready, err, sizeof(err)) : 0;
		if (!ret)
			ret = forward_chunks(src, &o, &st, opt->flush_ms, show, err, sizeof(err));
		goto written;
	}
	{
		struct {
			struct ae_session s;
			char strings[sizeof(src->strings) + 128];
		} sess;
		char hostname[64] = "";
		size_t n;

		clock_gettime(CLOCK_REALTIME, &rt);
		gethostname(hostname, sizeof(hostname) - 1);
		sess.s = src->session;
		sess.s.start_ns = rt.tv_sec * 1000000000ull + rt.tv_nsec;
		n = snprintf(sess.strings, sizeof(sess.strings), "host=%s", hostname) + 1;
		n += snprintf(sess.strings + n, sizeof(sess.strings) - n, "%s", src->strings) + 1;
		sess.s.strings_len = n;
		ret = ae_writer_chunk(o.w, AE_CHUNK_SESSION, 0, st.chunks++, &sess,
				      sizeof(sess.s) + n, 1);
	}
	if (!ret && opt->ready)
		ret = say_ready(opt->ready, err, sizeof(err));

	while (!ret && !stop_signal) {
		double now;

		r = src->next(src, &sb, opt->flush_ms < 100 ? opt->flush_ms : 100);
		if (r == -ENODATA)
			break;
		if (r < 0) {
			snprintf(err, sizeof(err), "source: %s", strerror(-r));
			ret = r;
			break;
		}
		ret = r ? take_subbuf(src, &o, &st, &sb) : drain_markers(src, &o, &st);
		now = now_s();
		if (!ret && (now - last_flush) * 1000 >= opt->flush_ms) {
			src->flush(src);
			ret = flush_out(&o);
			last_flush = now;
		}
		if (opt->duration && now - t0 >= opt->duration)
			break;
		if (show && now - last_prog >= 0.5) {
			progress(&o, &st, t0, src, 0);
			last_prog = now;
		}
	}
	if (ret && !err[0])
		snprintf(err, sizeof(err), "%s: %s", trace, strerror(-ret));
	/* End: close every sub-buffer, take what is left, write the trailer. */
	if (!ret && src->drain_on_stop)
		ret = drain_all(src, &o, &st, err, sizeof(err));
	if (!ret)
		ret = drain_markers(src, &o, &st);
	if (!ret) {
		struct ae_end end = { .raw_bytes = st.raw, .data_chunks = st.subbufs,
				      .markers = st.markers, .drops = drops_of(src, &st) };

		ret = ae_writer_chunk(o.w, AE_CHUNK_END, 0, st.chunks++, &end, sizeof(end), 1);
	}
written:
	if (ret) {
		failed = 1;
		if (!err[0])
			snprintf(err, sizeof(err), "%s: %s", trace, strerror(-ret));
		fprintf(stderr, "%sbdump: %s\n", show ? "\n" : "", err);
		err[0] = 0;
	}
	/* the last state on its own line, even when the run was shorter
	 * than one progress interval */
	if (show && !failed)
		progress(&o, &st, t0, src, 1);
	else if (show)
		fputc('\n', stderr);
	ae_writer_pacing(o.w, &st.pacing);
	ret = out_close(&o, failed, &out_bytes, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bdump: %s\n", err);
		failed = 1;
	}
	if (!opt->quiet) {
		struct ae_writer_pacing *p = &st.pacing;
		struct rusage ru;
		double el = now_s() - t0;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "bdump: %s%s: %llu sub-buffers, %llu raw bytes -> %llu compressed (ratio %.1f), %llu markers, %llu drops, %.2f s, %.1f MB/s, cpu %.2f s",
			failed ? "FAILED " : "", trace, (unsigned long long)st.subbufs,
			(unsigned long long)st.raw, (unsigned long long)out_bytes,
			out_bytes ? (double)st.raw / out_bytes : 0.0, (unsigned long long)st.markers,
			(unsigned long long)drops_of(src, &st), el, el > 0 ? st.raw / el / 1e6 : 0,
			ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
		if (p->down || p->up)
			fprintf(stderr, ", zstd level %d paced down to %d (steps: %u down, %u up; level %d at the end)",
				opt->level, p->low, p->down, p->up, p->level);
		fputc('\n', stderr);
	}
	src->close(src);
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "secret", required_argument, NULL, 'S' },
		{ "synthetic-source", required_argument, NULL, 'Y' },
		{ "from", required_argument, NULL, 'F' },
		{ "device", required_argument, NULL, 'D' },
		{ "net-buffer", required_argument, NULL, 'N' },
		{ "check", no_argument, NULL, 'C' },
		{ "bpf-sched", required_argument, NULL, 'B' },
		{ "ready", required_argument, NULL, 'R' },
		{ "fixed-level", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct bdump_opts opt = { .level = 1, .adapt = 1, .flush_ms = 1000, .device = "/dev/trbuf",
				  .net_buffer = 256u << 20 };
	struct sigaction sa = { .sa_handler = on_signal };
	int c, check = 0, ret;
	const char *bpf_sched = NULL;
	char *end, err[256];
	pid_t rec = 0;

	while ((c = getopt_long(argc, argv, "l:T:f:d:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			opt.level = strtol(optarg, &end, 10);
			if (*end || end == optarg || !opt.level ||
			    opt.level < AE_WRITER_LEVEL_MIN || opt.level > AE_WRITER_LEVEL_MAX)
				goto bad_arg;
			break;
		case 'L':
			opt.adapt = 0;
			break;
		case 'T':
			opt.threads = strtol(optarg, &end, 10);
			if (*end || opt.threads < 0 || opt.threads > 64)
				goto bad_arg;
			break;
		case 'f':
			opt.flush_ms = strtol(optarg, &end, 10);
			if (*end || opt.flush_ms < 1)
				goto bad_arg;
			break;
		case 'd':
			opt.duration = strtod(optarg, &end);
			if (*end || opt.duration < 0)
				goto bad_arg;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'S':
			opt.secret = optarg;
			break;
		case 'Y':
			opt.synthetic = optarg;
			break;
		case 'F':
			opt.from = optarg;
			break;
		case 'D':
			opt.device = optarg;
			break;
		case 'N':
			opt.net_buffer = strtoull(optarg, &end, 10) << 20;
			if (*end || !opt.net_buffer)
				goto bad_arg;
			break;
		case 'C':
			check = 1;
			break;
		case 'B':
			bpf_sched = optarg;
			break;
		case 'R':
			opt.ready = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (check) {
		if (argc - optind < 1 || argc - optind > 2) {
			usage(stderr);
			return 2;
		}
		return bdump_check(argv[optind], argv[optind + 1]);
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (bpf_sched) {
		rec = schedlog_record_spawn(bpf_sched, err, sizeof(err));
		if (rec < 0) {
			fprintf(stderr, "bdump: --bpf-sched %s: %s\n", bpf_sched, err);
			return 1;
		}
	}
	ret = run(argv[optind], argv[optind + 1], &opt);
	if (rec > 0 && schedlog_record_stop(rec, err, sizeof(err))) {
		fprintf(stderr, "bdump: --bpf-sched %s: %s\n", bpf_sched, err);
		ret = 1;
	}
	return ret;

bad_arg:
	fprintf(stderr, "bdump: bad value '%s' for -%c\n", optarg, c);
	return 2;
}
