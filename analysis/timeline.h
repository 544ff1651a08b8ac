/* SPDX-License-Identifier: MIT */
/*
 * timeline.h - `aetrace timeline`: the schedule of a capture as a
 * Chrome/Perfetto trace-event JSON file or an SVG picture, one lane per
 * CPU, from the kernel's markers (sched.bin) and, when given, the BPF
 * schedule log of the whole machine (schedlog-record's all.bin).
 * timeline.c builds the slices, timeline_render.c writes them.
 */
#ifndef AETRACE_TIMELINE_H
#define AETRACE_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

/* One stretch of time a task ran on a CPU. */
struct ae_slice {
	uint64_t start, end;	/* CLOCK_MONOTONIC ns */
	uint64_t insns;		/* instructions executed, 0: unknown */
	int32_t pid, tid;
	uint16_t cpu;
	uint8_t traced;		/* the kernel's markers show it (else BPF only) */
	char comm[16];		/* "" when unknown (no BPF log) */
};

struct ae_timeline {
	struct ae_slice *s;	/* sorted by cpu, then start */
	size_t n;
	unsigned int nr_cpus;
	uint64_t t0, t1;	/* span drawn */
	int have_bpf;		/* untraced slices are known */
	const char *title;
};

/*
 * aetrace timeline [--sched SCHED] [--bpf ALL] [--trace TRACE PROG...] -o OUT.json|OUT.svg
 * (argv[0] is "timeline"). Returns the process exit status: 0 written,
 * 1 bad input or write error (one line on stderr), 2 usage.
 */
int ae_timeline_main(int argc, char **argv);

/* Write tl as trace-event JSON / as SVG. Return 0, or -errno of a write. */
int ae_timeline_json(const struct ae_timeline *tl, FILE *f);
int ae_timeline_svg(const struct ae_timeline *tl, FILE *f);

#endif /* AETRACE_TIMELINE_H */
