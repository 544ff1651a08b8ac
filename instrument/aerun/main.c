// SPDX-License-Identifier: MIT
/*
 * main.c - aerun: run an instrumented program, its threads and the traced
 * programs it starts, and capture their witnesses without the kernel parts
 * (docs/INTERNALS.md, "Runtime entry", mode 2).
 *
 * usage: aerun [-o trace.zst | --discard] [--subbuf-size N] [--subbufs N]
 *              [-l level] [--fixed-level] [-T threads] [-q] [-v] [--] prog args...
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <aetrace/outfile.h>

#include "aerun.h"

extern char **environ;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: aerun [-o trace.zst | --discard] [--subbuf-size N] [--subbufs N]\n"
		"             [-l level] [--fixed-level] [-T threads] [-q] [-v] [--] prog [args...]\n"
		"  -o FILE          write the trace container to FILE (default trace.zst)\n"
		"  --discard        recycle sub-buffers without writing them (dummy run)\n"
		"  --subbuf-size N  sub-buffer size in bytes, K/M suffix (default 4M)\n"
		"  --subbufs N      number of sub-buffers (default 8; each live traced thread\n"
		"                   holds one, so more than the threads alive at once)\n"
		"  -l LEVEL         zstd level, -64 (fastest) .. 22 (default 1); while the\n"
		"                   program waits for the writer, it goes lower (pacing)\n"
		"  --fixed-level    no pacing: every sub-buffer at LEVEL, the program waits\n"
		"  -T THREADS       zstd worker threads (default 0: compress in aerun's\n"
		"                   thread; more overlap compression with the program)\n"
		"  -q               no summary line;  -v  more detail (-vv: every rollback)\n");
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	if (*end)
		return -EINVAL;
	*v = n;
	return 0;
}

/* PATH lookup like execvp, done before fork so errors are clear. */
static int resolve(const char *prog, char **out)
{
	const char *path = getenv("PATH");
	int saw_noexec = 0;

	if (strchr(prog, '/')) {
		if (access(prog, F_OK))
			return -ENOENT;
		if (access(prog, X_OK))
			return -EACCES;
		*out = strdup(prog);
		return *out ? 0 : -ENOMEM;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char buf[PATH_MAX];
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", prog);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK)) {
				*out = strdup(buf);
				return *out ? 0 : -ENOMEM;
			}
			saw_noexec = 1;
		}
		path += n + (path[n] == ':');
	}
	return saw_noexec ? -EACCES : -ENOENT;
}

static int parse_args(struct aerun_opts *o, int argc, char **argv)
{
	enum { OPT_DISCARD = 256, OPT_SUBBUF_SIZE, OPT_SUBBUFS, OPT_FIXED_LEVEL };
	static const struct option lopts[] = {
		{ "discard", no_argument, NULL, OPT_DISCARD },
		{ "subbuf-size", required_argument, NULL, OPT_SUBBUF_SIZE },
		{ "subbufs", required_argument, NULL, OPT_SUBBUFS },
		{ "fixed-level", no_argument, NULL, OPT_FIXED_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, discard = 0;
	uint64_t v;

	o->out = "trace.zst";
	o->subbuf_size = 4u << 20;
	o->nr_subbufs = 8;
	o->level = 1;
	o->adapt = 1;
	while ((c = getopt_long(argc, argv, "+o:l:T:qvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case OPT_DISCARD:
			discard = 1;
			break;
		case OPT_SUBBUF_SIZE:
			if (parse_size(optarg, &v) || v < 4096 || v % 4096 ||
			    v > AE_CHUNK_MAX_LEN) {
				fprintf(stderr, "aerun: --subbuf-size '%s': need a multiple of 4096 between 4K and 64M\n",
					optarg);
				return -EINVAL;
			}
			o->subbuf_size = v;
			break;
		case OPT_SUBBUFS:
			if (parse_size(optarg, &v) || v < 2 || v > 65536) {
				fprintf(stderr, "aerun: --subbufs '%s': need a number between 2 and 65536\n",
					optarg);
				return -EINVAL;
			}
			o->nr_subbufs = v;
			break;
		case OPT_FIXED_LEVEL:
			o->adapt = 0;
			break;
		case 'l':
		{
			char *end;
			long l = strtol(optarg, &end, 10);

			/* negative levels are zstd's fast modes */
			if (*end || end == optarg || l < AE_WRITER_LEVEL_MIN ||
			    l > AE_WRITER_LEVEL_MAX || !l) {
				fprintf(stderr, "aerun: -l '%s': need a zstd level from %d (fastest) to %d, other than 0\n",
					optarg, AE_WRITER_LEVEL_MIN, AE_WRITER_LEVEL_MAX);
				return -EINVAL;
			}
			o->level = (int)l;
		}
			break;
		case 'T':
		{
			char *end;
			long t = strtol(optarg, &end, 10);

			if (*end || end == optarg || t < 0 || t > 64) {
				fprintf(stderr, "aerun: -T '%s': need a number of zstd worker threads from 0 to 64\n",
					optarg);
				return -EINVAL;
			}
			o->threads = (int)t;
		}
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (discard)
		o->out = NULL;
	if (optind >= argc) {
		fprintf(stderr, "aerun: no program given\n");
		usage(stderr);
		return -EINVAL;
	}
	if ((uint64_t)o->subbuf_size * o->nr_subbufs > (64ull << 30)) {
		fprintf(stderr, "aerun: %u sub-buffers of %u bytes: more than 64 GiB\n",
			o->nr_subbufs, o->subbuf_size);
		return -EINVAL;
	}
	o->prog = argv[optind];
	o->argv = argv + optind;
	return 0;
}

/* The memfd: control page, then the sub-buffers, pre-faulted. */
static int setup_memfd(struct aerun *a)
{
	struct ae_standalone_ctl *c = &a->ctl;

	c->magic = AE_STANDALONE_MAGIC;
	c->version = AE_STANDALONE_VERSION;
	c->nr_subbufs = a->o.nr_subbufs;
	c->subbuf_size = a->o.subbuf_size;
	c->guard_size = 4096;
	c->data_offset = 4096;
	c->map_addr = TRBUF_MAP_ADDR;
	a->map_len = c->data_offset + (size_t)c->nr_subbufs * c->subbuf_size;

	a->memfd = memfd_create("aerun-trbuf", MFD_CLOEXEC);
	if (a->memfd < 0) {
		fprintf(stderr, "aerun: memfd_create: %s\n", strerror(errno));
		return -errno;
	}
	if (ftruncate(a->memfd, a->map_len) ||
	    fallocate(a->memfd, 0, 0, a->map_len)) {
		fprintf(stderr, "aerun: allocating %zu bytes of trace buffer: %s\n",
			a->map_len, strerror(errno));
		return -errno;
	}
	a->map = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, a->memfd, 0);
	if (a->map == MAP_FAILED) {
		fprintf(stderr, "aerun: mapping the trace buffer: %s\n", strerror(errno));
		return -errno;
	}
	memcpy(a->map, c, sizeof(*c));
	return 0;
}

static int write_session(struct aerun *a)
{
	struct ae_session s = {
		.version = AE_FORMAT_VERSION,
		.mode = AE_MODE_STANDALONE,
		.nr_cpus = a->ctl.nr_subbufs,	/* regions: aerun.h */
		.subbuf_size = a->ctl.subbuf_size,
		.nr_subbufs = a->ctl.nr_subbufs,
	};
	char host[256] = "";
	struct timespec ts;
	size_t len, cap = sizeof(s) + 4096;
	char *buf, *p;
	int ret;

	for (char **v = a->o.argv; *v; v++)
		cap += strlen(*v) + 8;
	cap += strlen(a->o.path);
	buf = calloc(1, cap);
	if (!buf)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &ts);
	s.start_ns = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	gethostname(host, sizeof(host) - 1);
	p = buf + sizeof(s);
	p += sprintf(p, "tool=aerun") + 1;
	p += sprintf(p, "host=%s", host) + 1;
	p += sprintf(p, "prog=%s", a->o.path) + 1;
	/* cpus are regions, one per live traced thread (aerun.h) */
	p += sprintf(p, "cpus=per-thread") + 1;
	for (char **v = a->o.argv; *v; v++)
		p += sprintf(p, "argv=%s", *v) + 1;
	len = p - buf;
	s.strings_len = len - sizeof(s);
	memcpy(buf, &s, sizeof(s));
	ret = ae_writer_chunk(a->w, AE_CHUNK_SESSION, 0, 0, buf, len, 1);
	free(buf);
	return ret;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child(struct aerun *a)
{
	/*
	 * Trapped: rt_sigreturn, execve and execveat of every entry a 64-bit
	 * process has (x86-64, x32, and i386 through int 0x80: an exec aerun
	 * did not see coming would put the new image's START on the old
	 * image's bytes), ioctl on fd 1023 (the runtime asking aerun,
	 * standalone.h), and rt_sigaction of SIGSEGV that may change it (a
	 * non-NULL act: segv.c) but aerun's own (AERUN_SEGV_TAG in the
	 * signal number's upper half, which the kernel ignores).
	 * Jump offsets count from the next instruction.
	 */
	struct sock_filter filter[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 4, 0),	/* 6 */
		/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 22),	/* 25 */
		/* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AERUN_I386_EXECVE, 19, 0),	/* 24 */
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AERUN_I386_EXECVEAT, 18, 19),	/* 24, 25 */
		/* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 16, 0),	/* 24 */
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 15, 0),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 14, 0),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AERUN_X32_EXECVE, 13, 0),
		/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AERUN_X32_EXECVEAT, 12, 0),
		/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 2),		/* 15 */
		/* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AE_STANDALONE_FD, 9, 10),	/* 24, 25 */
		/* 15 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, 0, 9),	/* 25 */
		/* 16 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		/* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGSEGV, 0, 7),		/* 25 */
		/* 18 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
		/* 19 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AERUN_SEGV_TAG, 5, 0),	/* 25 */
		/* 20 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		/* 21 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),			/* 24 */
		/* 22 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
		/* 23 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),			/* 25, 24 */
		/* 24 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		/* 25 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};
	int pers = personality(0xffffffff);
	const char *what;

	what = "personality(ADDR_NO_RANDOMIZE)";
	if (pers < 0 || personality(pers | ADDR_NO_RANDOMIZE) < 0)
		goto err;
	what = "dup2 of the trace buffer to fd 1023";
	if (dup2(a->memfd, AE_STANDALONE_FD) != AE_STANDALONE_FD)
		goto err;
	what = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto err;
	what = "seccomp filter";
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		goto err;
	what = "PTRACE_TRACEME";
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		goto err;
	raise(SIGSTOP);
	execve(a->o.path, a->o.argv, environ);
	what = "execve";
err:
	dprintf(2, "aerun: %s: %s: %s\n", a->o.prog, what, strerror(errno));
	_exit(AERUN_EXIT_FAIL);
}

/* The first program, for forward_signal(). */
static volatile sig_atomic_t aerun_fwd_pid;	/* a pid_t */
_Static_assert(sizeof(sig_atomic_t) >= sizeof(pid_t), "a pid fits a sig_atomic_t");

/* Is @pid traced by this aerun (one of the program's tasks)? Async-signal
 * safe: reads TracerPid in /proc/@pid/status by hand. */
static int traced_by_us(pid_t pid)
{
	char path[40] = "/proc/", dig[12], buf[512], *p, *end;
	int fd, k = 0, i = 6;
	ssize_t n;

	do
		dig[k++] = '0' + pid % 10;
	while ((pid /= 10) > 0 && k < (int)sizeof(dig));
	while (k)
		path[i++] = dig[--k];
	memcpy(path + i, "/status", 8);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "TracerPid:");
	if (!p)
		return 0;
	return strtol(p + 10, &end, 10) == getpid();
}

/*
 * aerun is in the program's process group: a signal sent to the whole
 * group (the terminal's ^C, a program's kill(0, sig)) reaches the program
 * too, and must not end aerun; one sent by any other process is passed on
 * to the program, as if aerun were not there (kill of aerun from a script,
 * timeout). Once the program is gone, the signal ends aerun as it would
 * without this handler.
 */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if ((si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL) &&
	    si->si_pid > 0 && si->si_pid != getpid() && !traced_by_us(si->si_pid) &&
	    aerun_fwd_pid > 0 && kill(aerun_fwd_pid, sig) < 0) {
		signal(sig, SIG_DFL);
		raise(sig);	/* delivered once this handler returns */
	}
	errno = saved;
}

/* The signals aerun passes on or leaves to the program: those a process
 * group gets; not aerun's own faults, SIGPIPE or job control stops. */
static void install_forwarding(pid_t pid)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				    SIGTERM, SIGSTKFLT, SIGVTALRM, SIGPROF, SIGIO, SIGPWR };
	struct sigaction sa = { .sa_sigaction = forward_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART };

	aerun_fwd_pid = pid;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
}

static int start(struct aerun *a)
{
	int status;

	a->pid = fork();
	if (a->pid < 0) {
		fprintf(stderr, "aerun: fork: %s\n", strerror(errno));
		return -errno;
	}
	if (!a->pid)
		child(a);
	if (waitpid(a->pid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP) {
		a->status = status;
		return -ECHILD;	/* the child reported why */
	}
	/* fd 1023 is for this process alone (standalone.h) */
	__atomic_store_n(&((struct ae_standalone_ctl *)a->map)->first_pid, a->pid,
			 __ATOMIC_RELEASE);
	if (ptrace(PTRACE_SETOPTIONS, a->pid, 0,
		   PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |
		   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |
		   PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD) < 0) {
		fprintf(stderr, "aerun: PTRACE_SETOPTIONS: %s\n", strerror(errno));
		kill(a->pid, SIGKILL);
		return -errno;
	}
	install_forwarding(a->pid);
	ptrace(PTRACE_CONT, a->pid, 0, 0);
	return 0;
}

/* Write the trailer, end the stream, close the file: 0 or -errno. */
static int finish_output(struct aerun *a)
{
	struct ae_exit ex = { .pid = a->pid, .status = a->status, .final_ip = a->final_ip };
	struct ae_end end = {
		.raw_bytes = a->raw_bytes,
		.data_chunks = a->commits,
		.markers = a->markers,
		.drops = a->lost_ends,
	};
	int ret, r;

	ret = aerun_ring_finish(a);
	if (!a->w)
		goto out;
	if (!ret)
		ret = aerun_write_markers(a, a->mk, a->nr_mk);
	if (!ret)
		ret = ae_writer_chunk(a->w, AE_CHUNK_EXIT, 0, 0, &ex, sizeof(ex), 0);
	if (!ret)
		ret = ae_writer_chunk(a->w, AE_CHUNK_END, 0, 0, &end, sizeof(end), 1);
	ae_writer_pacing(a->w, &a->pacing);
	r = ae_writer_close(a->w, &a->out_bytes);
	a->w = NULL;
	ret = ret ? ret : r;
	if (close(a->out_fd) && !ret)
		ret = -errno;
	a->out_fd = -1;
out:
	if (ret)
		fprintf(stderr, "aerun: writing %s: %s\n", a->o.out ? a->o.out : "the trace",
			strerror(-ret));
	return ret;
}

static void summary(struct aerun *a)
{
	char st[32];
	uint64_t out = a->out_bytes;

	if (WIFSIGNALED(a->status))
		snprintf(st, sizeof(st), "killed by signal %d", WTERMSIG(a->status));
	else
		snprintf(st, sizeof(st), "exit %d", WEXITSTATUS(a->status));
	fprintf(stderr, "aerun: %s: %s, %llu witness bytes in %llu sub-buffers",
		a->o.prog, st, (unsigned long long)a->raw_bytes,
		(unsigned long long)a->commits);
	if (!a->o.out)
		fprintf(stderr, " (discarded)");
	else
		fprintf(stderr, " -> %s %llu bytes (%.1f:1)", a->o.out,
			(unsigned long long)out, out ? (double)a->raw_bytes / out : 0.0);
	if (a->o.out && (a->pacing.down || a->pacing.up))
		fprintf(stderr, ", zstd level %d paced down to %d (steps: %u down, %u up; level %d at the end)",
			a->o.level, a->pacing.low, a->pacing.down, a->pacing.up,
			a->pacing.level);
	fprintf(stderr, ", %llu signals, %llu rollbacks",
		(unsigned long long)a->signals, (unsigned long long)a->rollbacks);
	if (a->nr_tasks > 1)
		fprintf(stderr, ", %llu threads, %llu traced and %llu untraced images, %llu forks, %llu execs",
			(unsigned long long)a->nr_tasks, (unsigned long long)a->nr_traced,
			(unsigned long long)a->nr_untraced, (unsigned long long)a->forks,
			(unsigned long long)a->execs);
	if (a->segv_restores)
		fprintf(stderr, ", %llu SIGSEGV actions set again after an overflow reset them",
			(unsigned long long)a->segv_restores);
	if (a->o.verbose)
		fprintf(stderr, ", %llu sigreturns, %llu markers, %u x %u-byte sub-buffers, %zu sequences",
			(unsigned long long)a->sigreturns, (unsigned long long)a->markers,
			a->ctl.nr_subbufs, a->ctl.subbuf_size, a->seqtab.n);
	fprintf(stderr, "\n");
}

/* Do paths @x and @y name one existing file? */
static int same_file(const char *x, const char *y)
{
	struct stat sx, sy;

	return !stat(x, &sx) && !stat(y, &sy) && sx.st_dev == sy.st_dev &&
	       sx.st_ino == sy.st_ino;
}

/* Does @x name @prog's twin, @prog.orig (which regeneration needs)? */
static int same_twin(const char *x, const char *prog)
{
	char twin[PATH_MAX];

	return (size_t)snprintf(twin, sizeof(twin), "%s.orig", prog) < sizeof(twin) &&
	       same_file(x, twin);
}

int main(int argc, char **argv)
{
	struct aerun a = { .memfd = -1, .out_fd = -1 };
	struct ae_writer_opts wo = { 0 };
	char err[512] = "";
	int ret;

	if (parse_args(&a.o, argc, argv))
		return AERUN_EXIT_USAGE;
	ret = resolve(a.o.prog, &a.o.path);
	if (ret == -ENOENT) {
		fprintf(stderr, "aerun: %s: no such program\n", a.o.prog);
		return AERUN_EXIT_NOENT;
	} else if (ret) {
		fprintf(stderr, "aerun: %s: %s\n", a.o.prog, strerror(-ret));
		return AERUN_EXIT_NOEXEC;
	}
	ret = aerun_seqtab_load(&a.seqtab, a.o.path, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "aerun: %s\n", err);
		return AERUN_EXIT_NOEXEC;
	}
	if (!a.seqtab.n && a.o.verbose)
		fprintf(stderr, "aerun: %s has no __ae_seqtab: no rollback possible\n", a.o.path);
	if (setup_memfd(&a))
		return AERUN_EXIT_FAIL;
	if (a.o.out && (same_file(a.o.out, a.o.path) || same_twin(a.o.out, a.o.path))) {
		fprintf(stderr, "aerun: -o %s is the program %s or its twin: the capture would overwrite it\n",
			a.o.out, a.o.path);
		return AERUN_EXIT_FAIL;
	}
	if (a.o.out) {
		a.out_fd = schedlog_open_output(a.o.out);
		if (a.out_fd < 0) {
			fprintf(stderr, "aerun: %s: %s\n", a.o.out, strerror(-a.out_fd));
			return AERUN_EXIT_FAIL;
		}
		wo.level = a.o.level;
		wo.adapt = a.o.adapt;
		wo.threads = a.o.threads;
		ret = ae_writer_open(&a.w, a.out_fd, &wo);
		if (!ret)
			ret = write_session(&a);
		if (ret) {
			fprintf(stderr, "aerun: %s: %s\n", a.o.out, strerror(-ret));
			return AERUN_EXIT_FAIL;
		}
	}
	ret = start(&a);
	if (ret == -ECHILD) {
		/* exec setup failed in the child, which said why */
		return AERUN_EXIT_FAIL;
	}
	if (ret)
		return AERUN_EXIT_FAIL;
	if (aerun_ring_init(&a)) {
		fprintf(stderr, "aerun: cannot start the writer thread\n");
		kill(a.pid, SIGKILL);
		return AERUN_EXIT_FAIL;
	}
	ret = aerun_trace(&a);
	if (finish_output(&a))
		ret = ret ? ret : -EIO;
	if (!a.o.quiet)
		summary(&a);
	if (ret || a.failed)
		return AERUN_EXIT_FAIL;
	if (WIFSIGNALED(a.status))
		return 128 + WTERMSIG(a.status);
	return WEXITSTATUS(a.status);
}
