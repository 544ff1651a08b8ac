/* SPDX-License-Identifier: MIT */
/* program.h - internals shared by the regenerator's files */
#ifndef AE_PROGRAM_H
#define AE_PROGRAM_H

#include <capstone/capstone.h>
#include <stdint.h>

#include <aetrace/dataflow.h>

#include "image.h"
#include "regen.h"

enum ae_dkind {
	AE_K_PLAIN, AE_K_JCC, AE_K_JMP, AE_K_JMP_IND, AE_K_CALL, AE_K_CALL_IND,
	AE_K_RET, AE_K_SYSCALL, AE_K_STOP,
};

/* A schema event placed at its twin address. */
struct ae_rev {
	uint64_t addr;
	uint32_t order;
	uint16_t kind;
	uint8_t width, flag;
	uint32_t a, b;
	uint32_t objid, insn;	/* the place: object and instruction index */
	uint8_t vcobj;		/* its object has the value cache (AE_SCHEMA_F_VCACHE) */
	const uint32_t *pool;	/* AE_EV_PRED: witness values of side `flag` */
};

/* What a value-cache record's coding took and what its tests would find,
 * counted for `aetrace stats --vc-profile` (include/aetrace/vcprof.h) */
struct ae_vcprof_count {
	uint64_t recs;		/* records */
	uint64_t lc_hits;	/* the address cache held the value (AE_VC_BY_ADDR) */
	uint64_t one_byte;	/* within the one-byte difference of the slot */
	uint64_t bytes;		/* trace bytes the records took */
};

struct ae_dinsn {
	uint8_t len;
	uint8_t kind;
	uint8_t scale;
	uint8_t enters_kernel;	/* syscall, or int $0x80 (the i386 entry) */
	uint16_t nev;
	uint8_t no_sp;		/* writes neither %rsp nor %rbp (known once
				 * the regenerator decoded its data flow) */
	uint64_t target;
	int64_t disp;
	const struct ae_rev *ev;
	struct ae_df_op *df;	/* data tracing: decoded on first use */
	/* the instructions at the fall-through and at target, once the
	 * regenerator went there (straight-line code skips the table) */
	struct ae_dinsn *fall, *jump;
};

struct ae_amap {
	uint64_t prog, orig;
};

struct ae_program {
	struct ae_image prog, orig;
	char *orig_path;
	struct ae_rev *ev;
	size_t nev;
	struct ae_amap *amap;
	size_t namap;
	struct ae_amap *byorig;	/* amap sorted by twin address, made on first use */
	const uint32_t *seq;	/* prog's sorted (start, end) pairs */
	size_t nseq;
	uint64_t restorer;	/* twin's __restore_rt */
	uint32_t own_memfn;	/* bit k: the program defines routine k itself
				 * (.ae_check; aecc put its label at the entry) */
	int data_objs;		/* objects built with -fae-data */
	uint32_t *vcupd;	/* sorted (address, slot) pairs: .ae_vcupd */
	size_t nvcupd;
	csh cs;
	cs_insn *ci;
	struct ae_dinsn **tab;	/* by twin address - text_lo */
	size_t ntab;
	struct ae_dinsn **dpool;
	size_t npool, dused;
	struct ae_memfn_emu *memfn;	/* expander (memfn.h), made on first use */
	int memfn_failed;
	/* the expanded routines' code, [start, end) by their function
	 * symbols (ae_program_in_memfn()), read on first use (mfr_done);
	 * mfr_unknown: a routine's symbol has no size */
	struct ae_range { uint64_t start, end; } *mfr;
	size_t nmfr;
	int mfr_done, mfr_unknown;
	/* by event (ev[]): counted while not NULL (ae_program_vcprof_start()) */
	struct ae_vcprof_count *vcprof;
};

uint64_t ae_map_exact(const struct ae_program *p, uint64_t prog_addr);
uint64_t ae_map_resume(struct ae_program *p, uint64_t prog_addr);
/* Where a task stopped at an instrumented address goes on in the twin. */
struct ae_resume {
	uint64_t ip;		/* twin address, 0 if none */
	int via_seq;		/* the way there runs through a trace-writing
				 * sequence: a task stopped there has bytes still
				 * to write before it gets there (a taken edge's
				 * witness) */
	int sp_known;		/* sp_adj is what the way there adds to %rsp */
	int64_t sp_adj;		/* (the %fs-base sequence's red-zone skip) */
};

/* ae_map_resume() with what the way there does (r). Returns r->ip. */
uint64_t ae_map_resume_seq(struct ae_program *p, uint64_t prog_addr, struct ae_resume *r);
/*
 * Does side `taken` of the conditional branch at twin address orig run
 * instrumented-code address ip in the instrumentation it passes before
 * its next original instruction (the edge's witness stub), and is that
 * instruction the twin's `want`? Returns 1, or 0 (also when the branch's
 * instrumented code is not a conditional jump to an immediate target).
 * A kill's raw ip in such a stub names the side its twin address cannot.
 */
int ae_edge_stub_holds(struct ae_program *p, uint64_t orig, int taken, uint64_t ip,
		       uint64_t want);
/* The value-cache slot whose store is the instruction at prog_addr (a
 * .ae_vcupd entry), AE_VC_SLOTS for a store into the address cache, or
 * -1. */
int ae_vc_update_at(const struct ae_program *p, uint64_t prog_addr);
/* The twin's instruction at addr, decoded once and cached; NULL when addr
 * is outside its code or no instruction decodes there. */
struct ae_dinsn *ae_decode_new(struct ae_program *p, uint64_t addr);
static inline struct ae_dinsn *ae_decode(struct ae_program *p, uint64_t addr)
{
	/* (the regenerator asks once per instruction it runs: inline) */
	if (addr >= p->orig.text_lo && addr < p->orig.text_hi && p->tab[addr - p->orig.text_lo])
		return p->tab[addr - p->orig.text_lo];
	return ae_decode_new(p, addr);
}
int ae_is_original(struct ae_program *p, uint64_t addr);
/* The data-flow view of decoded instruction d at addr (cached), or NULL
 * when data tracing cannot follow it or memory ran out. */
const struct ae_df_op *ae_decode_df_new(struct ae_program *p, struct ae_dinsn *d, uint64_t addr);
static inline const struct ae_df_op *ae_decode_df(struct ae_program *p, struct ae_dinsn *d,
						 uint64_t addr)
{
	return d->df ? d->df : ae_decode_df_new(p, d, addr);
}

/* The program's library-routine expander (memfn.h), made on first use;
 * NULL after a message. */
struct ae_memfn_emu *ae_program_memfn(struct ae_program *p);
/* Can ip be an instruction of an expanded routine (1), or not (0)? */
int ae_program_in_memfn(struct ae_program *p, uint64_t ip);

#endif
