/* SPDX-License-Identifier: MIT */
/*
 * sysregen.h - regenerate every traced task of a capture (a bdump capture
 * of the whole system, or an aerun / AE_CAPTURE trace of one program).
 * The API other tools call (aetrace regen, stats, timeline).
 */
#ifndef AE_SYSREGEN_H
#define AE_SYSREGEN_H

#include <stdint.h>

#include "regen.h"

/* A task's current program image (a task that execs has several). */
struct ae_task_info {
	int32_t pid, tid;
	const char *prog;	/* basename of the image's program */
	uint64_t serial;	/* 0, 1, ...: the tasks (images) in creation order */
	int nth;		/* earlier tasks of this pid and tid (an exec, a
				 * reused tid) */
	int cpu;		/* of the current slice */
	struct ae_program *program;	/* NULL until known */
};

/* Where a slice's instructions end. */
enum ae_slice_end {
	AE_SLICE_END_TASK,	/* the task's or the capture's end */
	AE_SLICE_END_SWITCH,	/* the point its next SWITCH_IN resumed at */
	AE_SLICE_END_NEAR,	/* that switch point, not found at its ip: taken
				 * where the next byte was read, or after the
				 * expanded library routine it lies in */
	AE_SLICE_END_LATE,	/* not that point: the task had not reached it
				 * when its next slice began (or the marker has
				 * no ip), so the instructions up to it count in
				 * the next slice */
};

/* One slice: a task's run on one CPU between two switches. */
struct ae_slice_info {
	struct ae_task_info task;
	uint64_t t_begin, t_end;	/* CLOCK_MONOTONIC ns of its markers */
	uint64_t insns;			/* instructions regenerated in it */
	uint64_t bytes;			/* witness bytes it wrote */
	int end;			/* enum ae_slice_end */
};

struct ae_sysregen_opts {
	const char *trace;
	const char *sched;		/* NULL: the trace's MARKERS chunks */
	char **progs;			/* instrumented programs (PROG.orig beside) */
	int nprogs;
	/* every task's records, in order, in batches (struct
	 * ae_regen_sink's recs); non-zero (a failed write) stops the
	 * regeneration. NULL: none. */
	int (*recs)(void *ctx, const struct ae_task_info *t, const struct ae_rec *r, size_t n);
	int mem;		/* struct ae_regen_sink's mem: data accesses too */
	int vex;		/* struct ae_regen_sink's vex */
	/* a switch-in of a task on a CPU (before its instructions) */
	void (*switch_in)(void *ctx, const struct ae_task_info *t, uint64_t time_ns);
	/* a slice ended (optional) */
	void (*slice)(void *ctx, const struct ae_slice_info *s);
	/* a task image ended: end is an enum ae_regen_end or -1 (failed) */
	void (*task_end)(void *ctx, const struct ae_task_info *t, int end,
			 const struct ae_regen_stats *st);
	void *ctx;
	/* write the value-cache profile of every program here (NULL: none) */
	const char *vcprof;
};

/* Returns 0 when every task regenerated, 1 when some failed (each with a
 * message on stderr; the others are complete), -1 when the capture could
 * not be read. */
int ae_sysregen(const struct ae_sysregen_opts *o);

#endif
