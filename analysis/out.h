/* SPDX-License-Identifier: MIT */
/* out.h - where aetrace regen writes instructions (all, per task, per CPU) */
#ifndef AE_OUT_H
#define AE_OUT_H

#include "sysregen.h"

struct ae_out_opts {
	const char *path;	/* every instruction (NULL: standard output) */
	int bin;		/* 9-byte records instead of lackey lines */
	int din;		/* Dinero IV extended din lines instead */
	int original_only;	/* leave out assembler padding */
	int lackey_compat;	/* valgrind's phantom bt records too */
	const char *split_dir;	/* DIR/PID.TID.PROG[.K].FMT */
	const char *cpu_dir;	/* DIR/cpuN.FMT */
	int thread;		/* only this tid (0: all) */
};

struct ae_out;
/* 0, or -1 with a message naming the file. */
int ae_out_open(struct ae_out **op, const struct ae_out_opts *o);
/* Point the regenerator's hooks at this output. */
void ae_out_hooks(struct ae_out *o, struct ae_sysregen_opts *so);
/* Flush and close everything; 0, or -1 after a write error message. */
int ae_out_close(struct ae_out *o);

#endif
