/* SPDX-License-Identifier: MIT */
/*
 * regen.h - regenerate instruction traces by abstract execution, one task
 * at a time, from a byte stream that grows while the task runs (the
 * regenerator waits for bytes and markers it has not been given yet).
 */
#ifndef AE_REGEN_H
#define AE_REGEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/trbuf.h>

#include "tstream.h"

struct ae_program;

/* Load `prog` (schema, instrumented code) and `prog.orig` (the twin whose
 * addresses the trace is expressed in). 0 or -1 with a message. */
int ae_program_load(struct ae_program **pp, const char *prog);
void ae_program_free(struct ae_program *p);
/* Count what program p's address-cache places code from now on. Returns
 * 0 or -1 (out of memory). */
int ae_program_vcprof_start(struct ae_program *p);
/* Write p's counts as value-cache profile lines (include/aetrace/vcprof.h,
 * without the header). Returns 0 or -1 (a failed write, errno set). */
int ae_program_vcprof_write(const struct ae_program *p, FILE *f);

/* One record of the regenerated stream: an instruction (acc 0), or a
 * data access of the instruction before it (acc: enum ae_df_acc, lackey's
 * L, S, M). */
struct ae_rec {
	uint64_t addr;
	uint32_t size;
	uint32_t acc;
};

/* Records go to the sink in batches of at most this many. */
#define AE_REC_BATCH 256

struct ae_regen_sink {
	/*
	 * The task's records, in execution order, n at a time. A task's
	 * batch is handed over before it waits (when other tasks run),
	 * before it reaches a switch point and when its regeneration ends,
	 * so nothing another task writes comes between a record and the
	 * ones before it. Return
	 * non-zero to stop: the task stops at its next record.
	 * NULL: none wanted (instructions are still counted).
	 */
	int (*recs)(void *ctx, const struct ae_rec *r, size_t n);
	/* data accesses wanted too (programs built with -fae-data) */
	int mem;
	/* also the records valgrind (VEX) invents, which the CPU never
	 * makes (--lackey-compat): a register-operand bt/bts/btr/btc's,
	 * a gather's loads of its masked-off elements (from %rsp) */
	int vex;
	void *ctx;
};

struct ae_regen_stats {
	uint64_t insns;
	uint64_t blocks;	/* control transfers taken + 1 */
	uint64_t decided;	/* conditional branches computed, not read */
	uint64_t kills_unplaced;	/* kills after a branch whose side no
					 * byte says: the trace ends at it */
	uint64_t kills_in_stub;	/* ... whose side the stub the kill's own
				 * ip lies in says */
	uint64_t witness_bytes;
	uint64_t value_bytes;
	uint64_t value_recs[9];	/* plain value records, by width in bytes */
	uint64_t vc_recs[5];	/* value-cache records of 1, 2, 3, 5 and 9 bytes */
	uint64_t lc_hits;	/* of the 1-byte ones: address-cache hits */
	uint64_t vc_groups;	/* groups whose first records hit (1 byte) */
	uint64_t vc_group_hits;	/* the records those bytes stand for */
	uint64_t signals;
	uint64_t vc_signals;	/* came between a value-cache record and its store */
	uint64_t lc_signals;	/* of those: the address cache's store to follow */
	uint64_t lcw_signals;	/* of those: between the two stores */
	uint64_t sigreturns_unchecked;	/* handlers whose changes to their
					 * frame no producer compared */
	uint64_t sigreturns_gprs_only;	/* only their general registers */
	uint64_t sigreturns_no_vector;	/* their general registers and flags */
	uint64_t expanded;	/* library routines expanded (AE_EV_EXPAND) */
	uint64_t expanded_insns;	/* instructions they executed */
	uint64_t expanded_signals;	/* signals and kills taken amid them */
	uint64_t expanded_late;	/* signals inside one taken at its entry
				 * or after it: not at their instruction */
	uint64_t switches;	/* switch points reached (ae_regen_ops.switched) */
	uint64_t switches_unplaced;	/* of those: taken at the next byte, not at their ip */
	uint64_t switches_ambiguous;	/* of those: taken at their ip, found
					 * ambiguous later (their slice's end
					 * was reported at a switch point) */
	uint64_t switches_no_ip;	/* of the unplaced: their ip is in code
					 * the twin lacks (the runtime's, the
					 * vDSO), taken at the next instruction
					 * that needs their offset's markers */
};

struct ae_regen;

/* What the regenerator asks of whoever feeds it. */
struct ae_regen_ops {
	/* Block until the stream has grown or become final (a coroutine
	 * yield); NULL: the stream is complete already. */
	void (*wait)(void *ctx);
	/* The task forked at a FORK marker: `child` continues at twin `pc`
	 * with a copy of state `g` (ae_regen_clone(), or inside a signal
	 * handler ae_regen_clone_replay()). Returns 0, or non-zero to stop
	 * the task with an error. Also makes g keep checkpoints. */
	int (*fork)(void *ctx, struct ae_regen *g, const struct trbuf_marker *m, uint64_t pc);
	/*
	 * The task reached the point where it was switched out: a SWITCH_IN
	 * marker (schedule index `index`) its feeder placed in the stream
	 * ahead of time, where the task's bytes ended. placed: at its ip
	 * (and %rsp, and a rep's %rcx); 0: no instruction matched it, so it
	 * was taken before the next byte was read, or at the end of an
	 * expanded routine it fell in. Instructions before the call ran
	 * before the switch. NULL: none wanted.
	 */
	void (*switched)(void *ctx, uint64_t index, int placed);
	/*
	 * The stream is final, but a vfork child that shares the task's
	 * value cache has not ended: block while the other tasks run.
	 * Returns 0 after some task ended, or -1 when none can run any
	 * more (the child's trace will never end). NULL: -1 at once.
	 */
	int (*wait_others)(void *ctx);
	void *ctx;
};

/* End states of ae_regen_run(). */
enum ae_regen_end {
	AE_END_EXIT = 1,	/* reached the EXIT marker */
	AE_END_EXEC,		/* reached the EXEC marker: the image is done */
	AE_END_STOPPED,		/* the sink asked to stop */
	AE_END_CAPTURE,		/* the capture ended while the task ran */
};

/* New regeneration state of program p over stream s. NULL: no memory. */
struct ae_regen *ae_regen_new(struct ae_program *p, struct ae_tstream *s,
			      const struct ae_regen_sink *sink,
			      const struct ae_regen_ops *ops);
/*
 * A copy of g's call stack and setjmp records (fork), over stream s. The
 * clone flags say what becomes of g's value cache: copied (no CLONE_VM),
 * new (CLONE_SETTLS), or shared (a vfork child's changes are its
 * parent's; tasks that share it while both run leave it unknown).
 * NULL: no memory.
 */
struct ae_regen *ae_regen_clone(struct ae_regen *g, struct ae_tstream *s,
				const struct ae_regen_sink *sink,
				const struct ae_regen_ops *ops, uint64_t clone_flags);
/*
 * The same for a child g forked inside a signal handler (in ops.fork,
 * at the FORK marker g has just taken): the handlers it is in are part of
 * its state, so the child first replays g's trace from g's last
 * checkpoint to that fork, writing no records, and checks that it
 * reached the fork as g did. Its ae_regen_run() must start at *pc, the
 * checkpoint's twin address. Not for a child with CLONE_VM, which never
 * returns from the handlers (ae_regen_clone() serves it). NULL with *why
 * set: no checkpoint (ops had
 * no fork callback, or no instruction ran at level 0 before the
 * handler), no memory.
 */
struct ae_regen *ae_regen_clone_replay(struct ae_regen *g, struct ae_tstream *s,
				       const struct ae_regen_sink *sink,
				       const struct ae_regen_ops *ops, uint64_t clone_flags,
				       uint64_t *pc, const char **why);
void ae_regen_free(struct ae_regen *g);
/* Regenerate from twin address pc to the task's end. Returns an
 * enum ae_regen_end, or -1 after a message naming the trace offset. */
int ae_regen_run(struct ae_regen *g, uint64_t pc);
const struct ae_regen_stats *ae_regen_stats(const struct ae_regen *g);
uint64_t ae_regen_pos(const struct ae_regen *g);
/* Signal-handler nesting depth (a fork inside a handler is refused). */
int ae_regen_level(const struct ae_regen *g);
/* Prefix for messages ("aetrace: task 12/13 (lua): "). */
void ae_regen_set_name(struct ae_regen *g, const char *name);
/* The task's %rsp at the pc ae_regen_run() starts from (a START marker at
 * the program's entry says it): an instruction trace follows %rsp from
 * there to place signals by it, as a data trace does from its records. */
void ae_regen_set_sp(struct ae_regen *g, uint64_t sp);

#endif
