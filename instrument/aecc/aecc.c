// SPDX-License-Identifier: MIT
/*
 * aecc - gcc-compatible driver that builds programs for abstract-execution
 * tracing. `aecc [gcc flags] -o prog a.c b.o liba.a` produces `prog`
 * (instrumented, static, non-PIE, tracing musl) and `prog.orig` (the
 * uninstrumented twin: same code, same data layout); `-c` produces objects
 * that embed their twin, so `make CC=aecc` works on multi-file programs
 * and static libraries.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instrument.h"
#include "link.h"

struct strv {
	char **v;
	int n, cap;
};

static void sv_add(struct strv *s, const char *x)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = realloc(s->v, s->cap * sizeof(char *));
		if (!s->v)
			abort();
	}
	s->v[s->n++] = strdup(x);
	s->v[s->n] = NULL;
}

static int verbose;

int ae_run(char *const argv[])
{
	pid_t pid;
	int st;

	if (verbose) {
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, "%s%s", i ? " " : "+ ", argv[i]);
		fputc('\n', stderr);
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "aecc: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static char tmpdir[PATH_MAX];

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (tmpdir[0] && !getenv("AECC_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "aecc: cannot remove %s\n", tmpdir);
	}
}

static const char *ext(const char *p)
{
	const char *d = strrchr(p, '.');

	return d && !strchr(d, '/') ? d : "";
}

/* Where the project's parts live: <top>/bin/aecc -> <top>. */
static char top[PATH_MAX];

static void find_top(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		strcpy(top, ".");
		return;
	}
	exe[n] = 0;
	snprintf(top, sizeof(top), "%s", dirname(dirname(exe)));
}

/* A part of the tree: $ENV when set, else <top>/REL (in buf). */
static const char *tree_path(char *buf, size_t len, const char *env, const char *rel)
{
	const char *e = env ? getenv(env) : NULL;

	if (e)
		return e;
	snprintf(buf, len, "%s/%s", top, rel);
	return buf;
}

const char *ae_musl_dir(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), "AECC_MUSL", "build/musl");
}

const char *ae_libae(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), "AECC_LIBAE", "build/instrument/libae.a");
}

const char *ae_libaert(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), NULL, "build/instrument/libaert.a");
}

const char *ae_tmpdir(void)
{
	return tmpdir;
}

int ae_verbose(void)
{
	return verbose;
}

static int counter;

static void tmpname(char *buf, size_t n, const char *base, const char *suffix)
{
	char b[PATH_MAX];

	snprintf(b, sizeof(b), "%s", base);
	snprintf(buf, n, "%s/%d-%s%s", tmpdir, counter++, basename(b), suffix);
}

/* Compile one source (.c .s .S .i) to an instrumented object. */
static int compile_one(const char *src, const char *out, struct strv *cflags,
		       int nostdinc)
{
	char s_file[PATH_MAX], work[PATH_MAX];
	const char *e = ext(src);
	struct ae_instr_opts io = { .verbose = verbose };
	struct strv cmd = { 0 };

	tmpname(s_file, sizeof(s_file), src, ".s");
	tmpname(work, sizeof(work), src, ".d");
	if (mkdir(work, 0700))
		return -1;
	if (!strcmp(e, ".s")) {
		snprintf(s_file, sizeof(s_file), "%s", src);
	} else {
		sv_add(&cmd, "gcc");
		for (int i = 0; i < cflags->n; i++)
			sv_add(&cmd, cflags->v[i]);
		if (!nostdinc) {
			char inc[PATH_MAX + 16];

			sv_add(&cmd, "-nostdinc");
			snprintf(inc, sizeof(inc), "%s/include", ae_musl_dir());
			sv_add(&cmd, "-isystem");
			sv_add(&cmd, inc);
			sv_add(&cmd, "-isystem");
			sv_add(&cmd, GCC_INCLUDE_DIR);
		}
		sv_add(&cmd, "-ffixed-r15");
		sv_add(&cmd, "-fno-asynchronous-unwind-tables");
		sv_add(&cmd, "-fno-unwind-tables");
		sv_add(&cmd, "-fno-pie");
		sv_add(&cmd, "-fcf-protection=none");
		sv_add(&cmd, "-S");
		sv_add(&cmd, "-o");
		sv_add(&cmd, s_file);
		sv_add(&cmd, src);
		if (ae_run(cmd.v))
			return -1;
	}
	io.tmpdir = work;
	return ae_instrument_file(s_file, out, &io);
}

static int is_musl_lib(const char *l)
{
	static const char *const libs[] = {
		"c", "m", "pthread", "rt", "dl", "util", "crypt", "xnet",
		"resolv", NULL,
	};

	for (int i = 0; libs[i]; i++)
		if (!strcmp(l, libs[i]))
			return 1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: aecc [gcc options] [-c] [-o out] files...\n"
		"  builds OUT (instrumented for tracing) and OUT.orig (its twin);\n"
		"  -c builds objects that embed their twin. AECC_KEEP=1 keeps temporaries,\n"
		"  -### or AECC_VERBOSE=1 shows the commands.\n");
}

int main(int argc, char **argv)
{
	struct strv cflags = { 0 }, inputs = { 0 }, ldflags = { 0 }, libdirs = { 0 };
	const char *out = NULL;
	int mode_c = 0, mode_S = 0, mode_E = 0, nostdinc = 0, ret = 1;
	struct strv objs = { 0 };

	find_top();
	verbose = getenv("AECC_VERBOSE") != NULL;
	if (argc < 2) {
		usage();
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-c")) {
			mode_c = 1;
		} else if (!strcmp(a, "-S")) {
			mode_S = 1;
		} else if (!strcmp(a, "-E") || !strcmp(a, "-M") || !strcmp(a, "-MM")) {
			mode_E = 1;
			sv_add(&cflags, a);
		} else if (!strcmp(a, "-o")) {
			if (++i >= argc) {
				fprintf(stderr, "aecc: -o needs an argument\n");
				return 2;
			}
			out = argv[i];
		} else if (!strncmp(a, "-o", 2)) {
			out = a + 2;
		} else if (!strcmp(a, "--help")) {
			usage();
			return 0;
		} else if (!strcmp(a, "-###")) {
			verbose = 1;
		} else if (!strcmp(a, "-shared") || !strncmp(a, "-flto", 5)) {
			fprintf(stderr, "aecc: %s is not supported: traced programs are static, non-PIE and not LTO-compiled\n", a);
			return 2;
		} else if (!strcmp(a, "-fPIC") || !strcmp(a, "-fpic") ||
			   !strcmp(a, "-fPIE") || !strcmp(a, "-fpie") ||
			   !strcmp(a, "-pie") || !strcmp(a, "-static") ||
			   !strcmp(a, "-no-pie") || !strcmp(a, "-rdynamic") ||
			   !strcmp(a, "-pthread")) {
			/* traced programs are always static, non-PIE */
		} else if (!strcmp(a, "-nostdinc")) {
			nostdinc = 1;
			sv_add(&cflags, a);
		} else if (!strncmp(a, "-l", 2)) {
			const char *l = a[2] ? a + 2 : (++i < argc ? argv[i] : "");

			if (!is_musl_lib(l)) {
				char lib[PATH_MAX + 8];

				snprintf(lib, sizeof(lib), "-l%s", l);
				sv_add(&inputs, lib);
			}
		} else if (!strncmp(a, "-L", 2)) {
			sv_add(&libdirs, a[2] ? a + 2 : (++i < argc ? argv[i] : "."));
		} else if (!strncmp(a, "-Wl,", 4) || !strcmp(a, "-s")) {
			sv_add(&ldflags, a);
		} else if (!strcmp(a, "-x") || !strcmp(a, "-include") ||
			   !strcmp(a, "-I") || !strcmp(a, "-D") || !strcmp(a, "-U") ||
			   !strcmp(a, "-isystem") || !strcmp(a, "-MF") ||
			   !strcmp(a, "-MT") || !strcmp(a, "-MQ")) {
			sv_add(&cflags, a);
			if (++i < argc)
				sv_add(&cflags, argv[i]);
		} else if (a[0] == '-') {
			sv_add(&cflags, a);
		} else {
			sv_add(&inputs, a);
		}
	}
	if (mode_E || mode_S) {
		struct strv cmd = { 0 };
		char inc[PATH_MAX + 16];

		sv_add(&cmd, "gcc");
		for (int i = 0; i < cflags.n; i++)
			sv_add(&cmd, cflags.v[i]);
		if (!nostdinc) {
			sv_add(&cmd, "-nostdinc");
			snprintf(inc, sizeof(inc), "%s/include", ae_musl_dir());
			sv_add(&cmd, "-isystem");
			sv_add(&cmd, inc);
			sv_add(&cmd, "-isystem");
			sv_add(&cmd, GCC_INCLUDE_DIR);
		}
		sv_add(&cmd, "-ffixed-r15");
		if (mode_S)
			sv_add(&cmd, "-S");
		if (out) {
			sv_add(&cmd, "-o");
			sv_add(&cmd, out);
		}
		for (int i = 0; i < inputs.n; i++)
			sv_add(&cmd, inputs.v[i]);
		return ae_run(cmd.v) ? 1 : 0;
	}
	if (!inputs.n) {
		fprintf(stderr, "aecc: no input files\n");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/aecc.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "aecc: cannot create a temporary directory: %s\n",
			strerror(errno));
		return 1;
	}
	atexit(cleanup);

	if (mode_c) {
		int nsrc = 0;

		for (int i = 0; i < inputs.n; i++)
			nsrc += inputs.v[i][0] != '-';
		if (out && nsrc > 1) {
			fprintf(stderr, "aecc: -o with -c needs exactly one source file\n");
			return 2;
		}
		for (int i = 0; i < inputs.n; i++) {
			const char *src = inputs.v[i];
			char o[PATH_MAX], b[PATH_MAX];
			const char *e = ext(src);

			if (!strcmp(e, ".o") || !strcmp(e, ".a") || src[0] == '-')
				continue;
			if (out) {
				snprintf(o, sizeof(o), "%s", out);
			} else {
				snprintf(b, sizeof(b), "%s", src);
				snprintf(o, sizeof(o), "%s", basename(b));
				strcpy(strrchr(o, '.') ? strrchr(o, '.') : o + strlen(o), ".o");
			}
			if (compile_one(src, o, &cflags, nostdinc))
				return 1;
		}
		return 0;
	}

	/* compile sources, then link */
	for (int i = 0; i < inputs.n; i++) {
		const char *in = inputs.v[i];
		const char *e = ext(in);

		if (!strcmp(e, ".c") || !strcmp(e, ".s") || !strcmp(e, ".S") ||
		    !strcmp(e, ".i")) {
			char o[PATH_MAX];

			tmpname(o, sizeof(o), in, ".o");
			if (compile_one(in, o, &cflags, nostdinc))
				return 1;
			sv_add(&objs, o);
		} else {
			sv_add(&objs, in);
		}
	}
	{
		struct ae_link_opts lo = {
			.out = out ? out : "a.out",
			.inputs = objs.v, .ninputs = objs.n,
			.ldflags = ldflags.v, .nldflags = ldflags.n,
			.libdirs = libdirs.v, .nlibdirs = libdirs.n,
		};

		ret = ae_link(&lo) ? 1 : 0;
	}
	return ret;
}
