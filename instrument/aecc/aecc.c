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
#include <unistd.h>

#include "cc.h"
#include "instrument.h"
#include "link.h"
#include "paths.h"
#include "run.h"
#include "strv.h"
#include "vcprof.h"

static int verbose;
static int data_mode;	/* -fae-data */
static int no_memfn;	/* -fno-ae-memfn: library routines instrumented as usual */
static int memfn_lib;	/* -fae-memfn-lib: this is the C library (musl-data) */
static int no_vcache;	/* -fno-ae-vcache: no value cache */
static const char *vcprof_path;	/* -fae-vc-profile=FILE */
static struct ae_vcprof *vcprof;

static char tmpdir[PATH_MAX];

static void cleanup(void)
{
	char *rm[] = { "rm", "-rf", tmpdir, NULL };

	if (tmpdir[0] && !getenv("AECC_KEEP") && ae_run(rm, 0))
		fprintf(stderr, "aecc: cannot remove %s\n", tmpdir);
	ae_vcprof_free(vcprof);
}

static const char *ext(const char *p)
{
	const char *d = strrchr(p, '.');

	return d && !strchr(d, '/') ? d : "";
}

static int counter;

/* buf = a fresh name in the scratch directory. Returns 0, or -1 after one
 * line when it does not fit. */
static int tmpname(char *buf, size_t n, const char *base, const char *suffix)
{
	char b[PATH_MAX];

	if ((size_t)snprintf(b, sizeof(b), "%s", base) >= sizeof(b) ||
	    (size_t)snprintf(buf, n, "%s/%d-%s%s", tmpdir, counter++, basename(b),
			     suffix) >= n) {
		fprintf(stderr, "aecc: %s: name too long\n", base);
		return -1;
	}
	return 0;
}

/* Compile one source (.c .s .S .i) to an instrumented object. */
static int compile_one(const char *src, const char *out, struct strv *cflags,
		       int nostdinc)
{
	char s_file[PATH_MAX], work[PATH_MAX];
	const char *e = ext(src);
	struct ae_instr_opts io = { .verbose = verbose, .data = data_mode, .no_memfn = no_memfn,
				    .memfn_lib = memfn_lib, .no_vcache = no_vcache,
				    .vcprof = vcprof };
	struct strv cmd = { 0 };
	int ret;

	if (tmpname(s_file, sizeof(s_file), src, ".s") ||
	    tmpname(work, sizeof(work), src, ".d"))
		return -1;
	if (mkdir(work, 0700)) {
		fprintf(stderr, "aecc: cannot create %s: %s\n", work, strerror(errno));
		return -1;
	}
	/* the value cache picks its scratch register trusting the calling
	 * convention, which only compiled code (without IPA-RA) keeps */
	if (!strcmp(e, ".s") || !strcmp(e, ".S"))
		io.no_vcache = 1;
	if (!strcmp(e, ".s")) {
		if ((size_t)snprintf(s_file, sizeof(s_file), "%s", src) >= sizeof(s_file)) {
			fprintf(stderr, "aecc: %s: name too long\n", src);
			return -1;
		}
	} else {
		ae_cc_cmd(&cmd, cflags, nostdinc, ae_musl_dir(), AE_CC_TRACED);
		strv_add(&cmd, "-S");
		strv_add(&cmd, "-o");
		strv_add(&cmd, s_file);
		strv_add(&cmd, src);
		ret = ae_run(cmd.v, verbose);
		strv_free(&cmd);
		if (ret)
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
		"  -c builds objects that embed their twin. -fae-data: data addresses too\n"
		"  (-fno-ae-memfn: memcpy, strlen... instrumented like other code, to\n"
		"  measure what expanding them saves; -fae-memfn-lib: the objects are\n"
		"  the C library, whose global memcpy, strlen... are expanded;\n"
		"  -fno-ae-vcache: register records written whole, not coded\n"
		"  against the thread's value cache; -fae-vc-profile=FILE: from\n"
		"  `aetrace stats --vc-profile FILE` of a run, the order of the cache's\n"
		"  tests, and plain records where it saved little: faster code).\n"
		"  AECC_KEEP=1 keeps temporaries,\n"
		"  -### or AECC_VERBOSE=1 shows the commands.\n");
}

int main(int argc, char **argv)
{
	struct strv cflags = { 0 }, inputs = { 0 }, ldflags = { 0 }, libdirs = { 0 };
	const char *out = NULL;
	int mode_c = 0, mode_S = 0, mode_E = 0, nostdinc = 0, query = 0, ret = 1;
	struct strv objs = { 0 };

	verbose = getenv("AECC_VERBOSE") != NULL;
	if (argc < 2) {
		usage();
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-c")) {
			mode_c = 1;
		} else if (!strcmp(a, "-fae-data")) {
			data_mode = 1;
		} else if (!strcmp(a, "-fno-ae-memfn")) {
			no_memfn = 1;
		} else if (!strcmp(a, "-fae-memfn-lib")) {
			memfn_lib = 1;
		} else if (!strcmp(a, "-fno-ae-vcache")) {
			no_vcache = 1;
		} else if (!strncmp(a, "-fae-vc-profile=", 16)) {
			vcprof_path = a + 16;
		} else if (!strcmp(a, "-S")) {
			mode_S = 1;
		} else if (!strcmp(a, "-E") || !strcmp(a, "-M") || !strcmp(a, "-MM")) {
			mode_E = 1;
			strv_add(&cflags, a);
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
			   !strcmp(a, "-no-pie") || !strcmp(a, "-rdynamic")) {
			/* traced programs are always static, non-PIE */
		} else if (!strcmp(a, "-pthread")) {
			/* musl links threads in libc; the macro gcc defines for
			 * -pthread stays (configure scripts test it) */
			strv_add(&cflags, "-D_REENTRANT");
		} else if (!strcmp(a, "--version") || !strcmp(a, "-v") ||
			   !strncmp(a, "-dump", 5) || !strncmp(a, "-print-", 7)) {
			/* the compiler's own answers (configure, libtool and
			 * build systems ask them with no input file) */
			query = 1;
			strv_add(&cflags, a);
		} else if (!strcmp(a, "-nostdinc")) {
			nostdinc = 1;
			strv_add(&cflags, a);
		} else if (!strncmp(a, "-l", 2)) {
			const char *l = a[2] ? a + 2 : (++i < argc ? argv[i] : "");

			if (!is_musl_lib(l)) {
				char lib[PATH_MAX + 8];

				if ((size_t)snprintf(lib, sizeof(lib), "-l%s", l) >= sizeof(lib)) {
					fprintf(stderr, "aecc: -l%s: name too long\n", l);
					return 2;
				}
				strv_add(&inputs, lib);
			}
		} else if (!strncmp(a, "-L", 2)) {
			strv_add(&libdirs, a[2] ? a + 2 : (++i < argc ? argv[i] : "."));
		} else if (!strncmp(a, "-Wl,", 4) || !strcmp(a, "-s")) {
			strv_add(&ldflags, a);
		} else if (!strcmp(a, "-x") || !strcmp(a, "-include") ||
			   !strcmp(a, "-I") || !strcmp(a, "-D") || !strcmp(a, "-U") ||
			   !strcmp(a, "-isystem") || !strcmp(a, "-MF") ||
			   !strcmp(a, "-MT") || !strcmp(a, "-MQ")) {
			strv_add(&cflags, a);
			if (++i < argc)
				strv_add(&cflags, argv[i]);
		} else if (a[0] == '-') {
			strv_add(&cflags, a);
		} else {
			strv_add(&inputs, a);
		}
	}
	if (mode_E || mode_S) {
		struct strv cmd = { 0 };

		ae_cc_cmd(&cmd, &cflags, nostdinc, ae_musl_dir(), AE_CC_PREPROCESS);
		if (mode_S)
			strv_add(&cmd, "-S");
		if (out) {
			strv_add(&cmd, "-o");
			strv_add(&cmd, out);
		}
		for (int i = 0; i < inputs.n; i++)
			strv_add(&cmd, inputs.v[i]);
		return ae_run(cmd.v, verbose) ? 1 : 0;
	}
	if (!inputs.n && query) {
		struct strv cmd = { 0 };

		ae_cc_cmd(&cmd, &cflags, nostdinc, ae_musl_dir(), AE_CC_PREPROCESS);
		return ae_run(cmd.v, verbose) ? 1 : 0;
	}
	if (!inputs.n) {
		fprintf(stderr, "aecc: no input files\n");
		return 2;
	}
	if (vcprof_path) {
		/* it orders the value cache's tests: without the cache, a
		 * mistake to report, not a flag to ignore */
		if (!data_mode || no_vcache) {
			fprintf(stderr, "aecc: -fae-vc-profile needs the value cache (-fae-data, without -fno-ae-vcache)\n");
			return 2;
		}
		if (ae_vcprof_load(vcprof_path, &vcprof))
			return 1;
	}
	if ((size_t)snprintf(tmpdir, sizeof(tmpdir), "%s/aecc.XXXXXX",
			     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") >= sizeof(tmpdir)) {
		fprintf(stderr, "aecc: TMPDIR too long\n");
		return 1;
	}
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
				if ((size_t)snprintf(o, sizeof(o), "%s", out) >= sizeof(o)) {
					fprintf(stderr, "aecc: %s: name too long\n", out);
					return 2;
				}
			} else {
				/* src's basename, its extension replaced by .o */
				if ((size_t)snprintf(b, sizeof(b), "%s", src) >= sizeof(b) - 2) {
					fprintf(stderr, "aecc: %s: name too long\n", src);
					return 2;
				}
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

			if (tmpname(o, sizeof(o), in, ".o") ||
			    compile_one(in, o, &cflags, nostdinc))
				return 1;
			strv_add(&objs, o);
		} else {
			strv_add(&objs, in);
		}
	}
	{
		struct ae_link_opts lo = {
			.out = out ? out : "a.out",
			.inputs = objs.v, .ninputs = objs.n,
			.ldflags = ldflags.v, .nldflags = ldflags.n,
			.libdirs = libdirs.v, .nlibdirs = libdirs.n,
			.musl_dir = data_mode ? ae_musl_data_dir() : ae_musl_dir(),
			.data = data_mode,
			.libae = ae_libae(),
			.libaert = data_mode ? ae_libaert_data() : ae_libaert(),
			.tmpdir = tmpdir,
			.verbose = verbose,
		};

		ret = ae_link(&lo) ? 1 : 0;
	}
	return ret;
}
