// SPDX-License-Identifier: MIT
/*
 * aetrace - analysis of aetrace captures.
 *
 *   aetrace regen [OPTIONS] TRACE PROG...
 *   aetrace stats [--sched SCHED] [--vc-profile FILE] TRACE PROG...
 *   aetrace map-lackey PROG < LACKEY
 *
 * PROG is an instrumented program; its twin PROG.orig must be beside it.
 * Addresses in the output are those of PROG.orig (the uninstrumented
 * program), so they compare directly with valgrind lackey or a
 * single-stepper run of PROG.orig.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "out.h"
#include "program.h"
#include "salvage.h"
#include "sysregen.h"
#include "timeline.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: aetrace regen [--format=lackey|bin|din] [--original-only] [--lackey-compat] [-o FILE]\n"
		"                     [--sched SCHED] [--split DIR] [--per-cpu DIR] [--thread TID]\n"
		"                     TRACE [PROG...]\n"
		"       aetrace stats [--sched SCHED] [--vc-profile FILE] TRACE [PROG...]   (per task, per slice)\n"
		"       aetrace map-lackey PROG < LACKEY   (lackey of PROG in PROG.orig addresses)\n"
		"       aetrace timeline [--sched SCHED] [--bpf ALL] [--trace TRACE PROG...] -o OUT.json|OUT.svg\n"
		"       aetrace salvage CUT OUT   (the sound chunks of a capture cut short: aerun or\n"
		"                                  bdump killed, a full disk; regen OUT then says so)\n"
		"  TRACE  a capture: aerun -o TRACE, AE_CAPTURE=TRACE, or bdump TRACE SCHED\n"
		"  SCHED  the schedule (bdump's sched.bin); default: the trace's MARKERS chunks\n"
		"  PROG   the instrumented programs (PROG.orig beside each); a task's program\n"
		"         is the one whose image id its registration record names; without\n"
		"         PROG, the path each task recorded (if it is the same image)\n"
		"  -o FILE       every instruction of every task (default: standard output)\n"
		"  --split DIR   one file per task and program image: DIR/PID.TID.PROG.FMT\n"
		"                (PROG.K.FMT: the K-th image of PROG under that pid and tid, after an exec\n"
		"                of itself; named when the regeneration ends: DIR/PID.TID.SERIAL.part before)\n"
		"  --per-cpu DIR each CPU's instructions in execution order, DIR/cpuN.FMT,\n"
		"                lackey: a '# switch' line at every switch names the task\n"
		"  --thread TID  only that thread's instructions\n"
		"  --vc-profile FILE  by value-cache place, the bytes its records took and\n"
		"                what its tests would find, for aecc -fae-vc-profile=FILE (faster code)\n"
		"  lackey: valgrind lackey's 'I  addr,size' lines; bin: per instruction\n"
		"  an 8-byte little-endian address and a 1-byte size (docs/FORMAT.md);\n"
		"  din: Dinero IV's extended din (0 read, 1 write, 2 fetch; hex address, size).\n"
		"  Programs built with aecc -fae-data also get their data accesses: lackey's\n"
		"  ' L|S|M addr,size' lines, din records, bin records of 11 bytes.\n"
		"  --original-only leaves out alignment padding the assembler added\n"
		"  (executed nops that are not in the program's source).\n"
		"  --lackey-compat adds the records valgrind invents (the CPU makes none),\n"
		"  to compare with lackey: a register-operand bt/bts/btr/btc's stack\n"
		"  records, a gather's loads of its masked-off elements from %%rsp.\n");
}

static int cmd_regen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "original-only", no_argument, NULL, 'O' },
		{ "lackey-compat", no_argument, NULL, 'L' },
		{ "sched", required_argument, NULL, 's' },
		{ "split", required_argument, NULL, 'S' },
		{ "per-cpu", required_argument, NULL, 'C' },
		{ "thread", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ae_out_opts oo = { 0 };
	struct ae_sysregen_opts so = { 0 };
	struct ae_out *out;
	int c, ret;

	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "bin")) {
				oo.bin = 1;
			} else if (!strcmp(optarg, "din")) {
				oo.din = 1;
			} else if (strcmp(optarg, "lackey")) {
				fprintf(stderr, "aetrace: unknown format '%s' (lackey, bin, din)\n", optarg);
				return 2;
			}
			break;
		case 'o':
			oo.path = optarg;
			break;
		case 'O':
			oo.original_only = 1;
			break;
		case 'L':
			oo.lackey_compat = 1;
			break;
		case 's':
			so.sched = optarg;
			break;
		case 'S':
			oo.split_dir = optarg;
			break;
		case 'C':
			oo.cpu_dir = optarg;
			break;
		case 't': {
			char *e;
			long v;

			errno = 0;
			v = strtol(optarg, &e, 10);
			oo.thread = v;
			if (*e || e == optarg || errno || v <= 0 || v != oo.thread) {
				fprintf(stderr, "aetrace: --thread %s: not a thread id\n", optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind < 1) {
		usage(stderr);
		return 2;
	}
	if (ae_out_open(&out, &oo))
		return 1;
	so.trace = argv[optind];
	so.progs = argv + optind + 1;
	so.nprogs = argc - optind - 1;
	ae_out_hooks(out, &so);
	ret = ae_sysregen(&so);
	if (ae_out_close(out))
		ret = 1;
	return ret ? 1 : 0;
}

struct stats_task {
	struct ae_task_info t;
	char prog[64];
	int end;
	struct ae_regen_stats st;
	uint64_t slices, slice_insns, migrations;
	int last_cpu, ended;
};

struct stats_ctx {
	struct stats_task *v;
	size_t n;
	uint64_t bytes;
	uint64_t slice_ends[AE_SLICE_END_LATE + 1];	/* by enum ae_slice_end */
};

static struct stats_task *stats_of(struct stats_ctx *s, const struct ae_task_info *t)
{
	struct stats_task *x;

	for (size_t i = s->n; i-- > 0;)
		if (s->v[i].t.serial == t->serial)
			return &s->v[i];
	if (s->n % 64 == 0) {
		x = realloc(s->v, (s->n + 64) * sizeof(*x));
		if (!x)
			return NULL;
		s->v = x;
	}
	x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->t = *t;
	x->last_cpu = -1;
	return x;
}

static void stats_task_end(void *ctx, const struct ae_task_info *t, int end,
			   const struct ae_regen_stats *st)
{
	struct stats_task *x = stats_of(ctx, t);

	if (!x)
		return;
	snprintf(x->prog, sizeof(x->prog), "%s", t->prog ? t->prog : "?");
	x->end = end;
	x->st = *st;
	x->ended = 1;
}

static void stats_slice(void *ctx, const struct ae_slice_info *si)
{
	struct stats_ctx *s = ctx;
	struct stats_task *x;

	s->bytes += si->bytes;
	s->slice_ends[si->end]++;
	/* a slice may end after its task (the exit is in it) */
	for (size_t i = s->n; i-- > 0;) {
		x = &s->v[i];
		if (x->t.serial == si->task.serial)
			goto found;
	}
	x = stats_of(s, &si->task);
	if (!x)
		return;
found:
	x->slices++;
	x->slice_insns += si->insns;
	if (x->last_cpu >= 0 && x->last_cpu != si->task.cpu)
		x->migrations++;
	x->last_cpu = si->task.cpu;
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sched", required_argument, NULL, 's' },
		{ "vc-profile", required_argument, NULL, 'p' },
		{ 0 },
	};
	struct ae_sysregen_opts so = { 0 };
	struct stats_ctx s = { 0 };
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's') {
			so.sched = optarg;
		} else if (c == 'p') {
			so.vcprof = optarg;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind < 1) {
		usage(stderr);
		return 2;
	}
	so.trace = argv[optind];
	so.progs = argv + optind + 1;
	so.nprogs = argc - optind - 1;
	so.task_end = stats_task_end;
	so.slice = stats_slice;
	so.ctx = &s;
	static const char *const ends[] = { "?", "exit", "exec", "stopped", "capture end" };
	struct ae_regen_stats sum = { 0 };

	ret = ae_sysregen(&so);
	printf("%8s %8s %-12s %13s %7s %5s %11s %10s %7s %s\n", "pid", "tid", "program",
	       "instructions", "slices", "migr", "insns/slice", "witness B", "signals", "end");
	for (size_t i = 0; i < s.n; i++) {
		struct stats_task *x = &s.v[i];

		printf("%8d %8d %-12s %13llu %7llu %5llu %11llu %10llu %7llu %s\n", x->t.pid,
		       x->t.tid, x->prog[0] ? x->prog : "?", (unsigned long long)x->st.insns,
		       (unsigned long long)x->slices, (unsigned long long)x->migrations,
		       (unsigned long long)(x->slices ? x->slice_insns / x->slices : 0),
		       (unsigned long long)x->st.witness_bytes, (unsigned long long)x->st.signals,
		       !x->ended ? "?" : x->end < 0 ? "FAILED" : ends[x->end < 5 ? x->end : 0]);
		sum.insns += x->st.insns;
		sum.blocks += x->st.blocks;
		sum.decided += x->st.decided;
		sum.kills_unplaced += x->st.kills_unplaced;
		sum.kills_in_stub += x->st.kills_in_stub;
		sum.witness_bytes += x->st.witness_bytes;
		sum.value_bytes += x->st.value_bytes;
		for (int k = 0; k < 9; k++)
			sum.value_recs[k] += x->st.value_recs[k];
		for (int k = 0; k < 5; k++)
			sum.vc_recs[k] += x->st.vc_recs[k];
		sum.lc_hits += x->st.lc_hits;
		sum.vc_groups += x->st.vc_groups;
		sum.vc_group_hits += x->st.vc_group_hits;
		sum.signals += x->st.signals;
		sum.vc_signals += x->st.vc_signals;
		sum.lc_signals += x->st.lc_signals;
		sum.sigreturns_unchecked += x->st.sigreturns_unchecked;
		sum.sigreturns_gprs_only += x->st.sigreturns_gprs_only;
		sum.sigreturns_no_vector += x->st.sigreturns_no_vector;
		sum.lcw_signals += x->st.lcw_signals;
		sum.expanded += x->st.expanded;
		sum.expanded_insns += x->st.expanded_insns;
		sum.expanded_signals += x->st.expanded_signals;
		sum.expanded_late += x->st.expanded_late;
		sum.switches += x->st.switches;
		sum.switches_unplaced += x->st.switches_unplaced;
		sum.switches_ambiguous += x->st.switches_ambiguous;
		sum.switches_no_ip += x->st.switches_no_ip;
	}
	/* a slice whose end was taken at its switch point's ip, which later
	 * bytes showed ambiguous, ended near it after all */
	if (sum.switches_ambiguous > s.slice_ends[AE_SLICE_END_SWITCH])
		sum.switches_ambiguous = s.slice_ends[AE_SLICE_END_SWITCH];
	s.slice_ends[AE_SLICE_END_SWITCH] -= sum.switches_ambiguous;
	s.slice_ends[AE_SLICE_END_NEAR] += sum.switches_ambiguous;
	printf("tasks            %zu\n", s.n);
	printf("instructions     %llu\n", (unsigned long long)sum.insns);
	printf("basic blocks     %llu\n", (unsigned long long)sum.blocks);
	printf("witness bytes    %llu\n", (unsigned long long)sum.witness_bytes);
	/* branches on flags of known registers (aecc -fae-data) */
	printf("decided branches %llu (computed from known registers, no witness read)\n",
	       (unsigned long long)sum.decided);
	printf("value bytes      %llu\n", (unsigned long long)sum.value_bytes);
	/* where the value bytes go: which records to make smaller */
	printf("value records    %llu of 1 byte, %llu of 2, %llu of 4, %llu of 8\n",
	       (unsigned long long)sum.value_recs[1], (unsigned long long)sum.value_recs[2],
	       (unsigned long long)sum.value_recs[4], (unsigned long long)sum.value_recs[8]);
	printf("value cache      %llu records of 1 byte, %llu of 2, %llu of 3, %llu of 5, %llu of 9\n",
	       (unsigned long long)sum.vc_recs[0], (unsigned long long)sum.vc_recs[1],
	       (unsigned long long)sum.vc_recs[2], (unsigned long long)sum.vc_recs[3],
	       (unsigned long long)sum.vc_recs[4]);
	printf("address cache    %llu hits (value-cache records of 1 byte)\n",
	       (unsigned long long)sum.lc_hits);
	printf("groups           %llu bytes for %llu records that hit (value cache)\n",
	       (unsigned long long)sum.vc_groups, (unsigned long long)sum.vc_group_hits);
	printf("trace bytes      %llu\n", (unsigned long long)s.bytes);
	printf("bytes/instr      %.4f\n", sum.insns ? (double)s.bytes / sum.insns : 0.0);
	printf("signals          %llu (%llu at a value-cache store: %llu with the address cache's to follow, %llu at that one)\n",
	       (unsigned long long)sum.signals, (unsigned long long)sum.vc_signals,
	       (unsigned long long)sum.lc_signals, (unsigned long long)sum.lcw_signals);
	/* a thread killed (its process's exit) after a branch, before
	 * either side wrote a byte: its last instructions are unknown */
	printf("unplaced kills   %llu (traces that end at the branch before them; %llu more placed by the witness stub they hit)\n",
	       (unsigned long long)sum.kills_unplaced, (unsigned long long)sum.kills_in_stub);
	/* what producers did not compare of the handlers' frames: an
	 * older tracing kernel compared the general registers and the
	 * flags, or the general registers only */
	printf("unchecked        %llu handlers' returns (what they changed in their frame is unknown), %llu with only the general registers compared, %llu without the vector state\n",
	       (unsigned long long)sum.sigreturns_unchecked,
	       (unsigned long long)sum.sigreturns_gprs_only,
	       (unsigned long long)sum.sigreturns_no_vector);
	/* library routines traced by their arguments (aecc -fae-data) */
	printf("expanded calls   %llu (%llu instructions, no witness bytes)\n",
	       (unsigned long long)sum.expanded, (unsigned long long)sum.expanded_insns);
	/* signals inside them; not at their instruction: a loop the
	 * markers' registers do not tell apart, or a routine whose result
	 * record follows the handler's bytes */
	printf("expanded signals %llu at their instruction, %llu at the call's entry or end\n",
	       (unsigned long long)sum.expanded_signals, (unsigned long long)sum.expanded_late);
	/* where slices end: at the point the task resumed at (exact), or
	 * not (its instructions up to it count in its next slice) */
	printf("slice ends       %llu at a switch point, %llu near one, %llu not reached in time, %llu at a task's end\n",
	       (unsigned long long)s.slice_ends[AE_SLICE_END_SWITCH],
	       (unsigned long long)s.slice_ends[AE_SLICE_END_NEAR],
	       (unsigned long long)s.slice_ends[AE_SLICE_END_LATE],
	       (unsigned long long)s.slice_ends[AE_SLICE_END_TASK]);
	printf("switch points    %llu reached, %llu of them not at their ip (%llu in code the twin lacks)\n",
	       (unsigned long long)sum.switches, (unsigned long long)sum.switches_unplaced,
	       (unsigned long long)sum.switches_no_ip);
	free(s.v);
	return ret ? 1 : 0;
}

/*
 * map-lackey: valgrind lackey's trace of the instrumented PROG (run with
 * AE_CAPTURE=FILE) in twin addresses: instructions of PROG.orig are
 * renamed, instrumentation and runtime instructions dropped; the result
 * compares with `aetrace regen FILE PROG` of the same run. Data lines
 * (--trace-mem=yes) follow the instruction they belong to: kept with it
 * (the twin has the same data layout and stack frames), dropped with it.
 */
static int cmd_map_lackey(int argc, char **argv)
{
	struct ae_program *p = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned long long addr, lines = 0;
	unsigned long size;
	int keep = 0, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: aetrace map-lackey PROG < lackey-I-lines\n");
		return 2;
	}
	if (ae_program_load(&p, argv[1])) {
		ae_program_free(p);
		return 1;
	}
	/* whole lines, however long (a long banner line must not be read
	 * as two, the second taken for a record) */
	while (getline(&line, &cap, stdin) >= 0) {
		char *end;
		uint64_t o;

		lines++;
		if (line[0] == ' ' && (line[1] == 'L' || line[1] == 'S' || line[1] == 'M') &&
		    line[2] == ' ') {
			if (keep)
				fputs(line, stdout);
			continue;
		}
		if (line[0] != 'I')
			continue;
		/* "I  ADDR,SIZE": hex that fits 64 bits, a decimal size */
		errno = 0;
		end = line;
		size = 0;
		if (line[1] == ' ' && line[2] == ' ' && isxdigit((unsigned char)line[3])) {
			addr = strtoull(line + 3, &end, 16);
			if (*end == ',' && isdigit((unsigned char)end[1]))
				size = strtoul(end + 1, &end, 10);
		}
		/* (valgrind's amd64 instructions go to 16 bytes, its client
		 * request sequences are 19) */
		if (errno || !size || size > 19 || (*end && *end != '\n')) {
			fprintf(stderr, "aetrace: standard input, line %llu: not a lackey I line\n", lines);
			ret = 1;
			break;
		}
		o = ae_map_exact(p, addr);
		keep = o != 0;
		if (o) {
			/* a branch to a witness stub may be longer in PROG */
			struct ae_dinsn *d = ae_decode(p, o);

			printf("I  %08llx,%u\n", (unsigned long long)o, d ? d->len : (unsigned int)size);
		}
	}
	free(line);
	ae_program_free(p);
	return fflush(stdout) || ret ? 1 : 0;
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
	if (!strcmp(argv[1], "salvage"))
		return ae_salvage_main(argc - 1, argv + 1);
	fprintf(stderr, "aetrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
