// SPDX-License-Identifier: MIT
/*
 * aetrace - analysis of aetrace captures.
 *
 *   aetrace regen [--format=lackey|bin] [-o FILE] TRACE PROG
 *   aetrace stats TRACE PROG
 *
 * PROG is the instrumented program; its twin PROG.orig must be beside it.
 * Addresses in the output are those of PROG.orig (the uninstrumented
 * program), so they compare directly with valgrind lackey or a
 * single-stepper run of PROG.orig.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "regen.h"
#include "timeline.h"

struct out {
	FILE *f;
	struct ae_program *p;	/* with --original-only */
	char buf[1 << 16];
	size_t n;
	int bin;
	int err;
};

static void out_flush(struct out *o)
{
	if (o->n && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->err = errno ? errno : EIO;
	o->n = 0;
}

static int sink_insn(void *ctx, uint64_t addr, unsigned int size)
{
	struct out *o = ctx;
	static const char hex[] = "0123456789abcdef";
	char *p;
	int digits = 8;

	if (o->p && !ae_is_original(o->p, addr))
		return 0;
	if (o->n > sizeof(o->buf) - 64) {
		out_flush(o);
		if (o->err)
			return -1;
	}
	p = o->buf + o->n;
	if (o->bin) {
		memcpy(p, &addr, 8);
		p[8] = (char)size;
		o->n += 9;
		return 0;
	}
	while (digits < 16 && (addr >> (4 * digits)))
		digits++;
	*p++ = 'I';
	*p++ = ' ';
	*p++ = ' ';
	for (int i = digits - 1; i >= 0; i--)
		*p++ = hex[(addr >> (4 * i)) & 15];
	*p++ = ',';
	if (size >= 10)
		*p++ = '0' + size / 10;
	*p++ = '0' + size % 10;
	*p++ = '\n';
	o->n = p - o->buf;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: aetrace regen [--format=lackey|bin] [--original-only] [-o FILE] TRACE PROG\n"
		"       aetrace stats TRACE PROG\n"
		"       aetrace map-lackey PROG < LACKEY   (lackey of PROG in PROG.orig addresses)\n"
		"       aetrace timeline --sched SCHED [--bpf ALL] -o OUT.json|OUT.svg\n"
		"  TRACE  a capture (aerun -o TRACE; or AE_CAPTURE=TRACE in PROG's environment)\n"
		"  PROG   the instrumented program (PROG.orig beside it)\n"
		"  lackey: valgrind lackey's 'I  addr,size' lines; bin: per instruction\n"
		"  an 8-byte little-endian address and a 1-byte size (docs/FORMAT.md).\n"
		"  --original-only leaves out alignment padding the assembler added\n"
		"  (executed nops that are not in the program's source).\n");
}

static int load(const char *trace, const char *prog, struct ae_program **p,
		struct ae_stream *s)
{
	if (ae_program_load(p, prog))
		return -1;
	if (ae_stream_load(s, trace))
		return -1;
	return 0;
}

static int cmd_regen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "original-only", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct out o;
	const char *outp = NULL;
	struct ae_program *p = NULL;
	struct ae_stream s;
	struct ae_regen_stats st;
	struct ae_regen_sink sink = { sink_insn, &o };
	int c, ret, original_only = 0;

	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "bin")) {
				o.bin = 1;
			} else if (strcmp(optarg, "lackey")) {
				fprintf(stderr, "aetrace: unknown format '%s' (lackey, bin)\n", optarg);
				return 2;
			}
			break;
		case 'o':
			outp = optarg;
			break;
		case 'O':
			original_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	o.f = outp ? fopen(outp, "wb") : stdout;
	if (!o.f) {
		fprintf(stderr, "aetrace: %s: %s\n", outp, strerror(errno));
		return 1;
	}
	if (load(argv[optind], argv[optind + 1], &p, &s)) {
		ae_program_free(p);
		return 1;
	}
	if (original_only)
		o.p = p;
	ret = ae_regen(p, &s, &sink, &st);
	out_flush(&o);
	if (o.err || fflush(o.f)) {
		fprintf(stderr, "aetrace: writing %s: %s\n", outp ? outp : "output",
			strerror(o.err ? o.err : errno));
		ret = -1;
	}
	if (outp)
		fclose(o.f);
	ae_stream_free(&s);
	ae_program_free(p);
	return ret ? 1 : 0;
}

static int cmd_stats(int argc, char **argv)
{
	struct ae_program *p = NULL;
	struct ae_stream s;
	struct ae_regen_stats st;
	struct ae_regen_sink sink = { NULL, NULL };
	int ret;

	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	if (load(argv[1], argv[2], &p, &s)) {
		ae_program_free(p);
		return 1;
	}
	ret = ae_regen(p, &s, &sink, &st);
	printf("instructions     %llu\n", (unsigned long long)st.insns);
	printf("basic blocks     %llu\n", (unsigned long long)st.blocks);
	printf("witness bytes    %llu\n", (unsigned long long)st.witness_bytes);
	printf("value bytes      %llu\n", (unsigned long long)st.value_bytes);
	printf("trace bytes      %llu\n", (unsigned long long)s.len);
	printf("bytes/instr      %.4f\n", st.insns ? (double)s.len / st.insns : 0.0);
	printf("signals          %llu\n", (unsigned long long)st.signals);
	ae_stream_free(&s);
	ae_program_free(p);
	return ret ? 1 : 0;
}

/*
 * map-lackey: valgrind lackey's trace of the instrumented PROG (run with
 * AE_CAPTURE=FILE) in twin addresses: instructions of PROG.orig are
 * renamed, instrumentation and runtime instructions dropped; the result
 * compares with `aetrace regen FILE PROG` of the same run.
 */
static int cmd_map_lackey(int argc, char **argv)
{
	struct ae_program *p = NULL;
	char line[256];
	unsigned long long addr, lines = 0;
	unsigned int size;

	if (argc != 2) {
		fprintf(stderr, "usage: aetrace map-lackey PROG < lackey-I-lines\n");
		return 2;
	}
	if (ae_program_load(&p, argv[1])) {
		ae_program_free(p);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t o;

		lines++;
		if (line[0] != 'I')
			continue;
		if (sscanf(line + 1, " %llx,%u", &addr, &size) != 2) {
			fprintf(stderr, "aetrace: standard input, line %llu: not a lackey I line\n", lines);
			ae_program_free(p);
			return 1;
		}
		o = ae_map_exact(p, addr);
		if (o) {
			/* a branch to a witness stub may be longer in PROG */
			struct ae_dinsn *d = ae_decode(p, o);

			printf("I  %08llx,%u\n", (unsigned long long)o, d ? d->len : size);
		}
	}
	ae_program_free(p);
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "regen"))
		return cmd_regen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "timeline"))
		return ae_timeline_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "map-lackey"))
		return cmd_map_lackey(argc - 1, argv + 1);
	fprintf(stderr, "aetrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
