/* SPDX-License-Identifier: MIT */
/*
 * ir.h - the instrumenter's picture of one assembly file: its statements,
 * the instructions the twin object places and decodes, the control-flow
 * edges between them, and the schema events derived from the witnesses.
 * Every stage (scan.c, decode.c, cfg.c, place.c, events.c, emit.c) reads
 * and fills in a struct ae_ctx; instrument.c runs them in order.
 */
#ifndef AE_IR_H
#define AE_IR_H

#include <stdint.h>

#include <aetrace/dataflow.h>
#include <aetrace/schema.h>

#include "asmfile.h"
#include "instrument.h"

enum insn_kind {
	IK_PLAIN, IK_JCC, IK_JMP, IK_JMP_IND, IK_CALL, IK_CALL_IND, IK_RET,
	IK_STOP,
};

enum ind_kind { IND_NONE, IND_REG, IND_MEM, IND_TABLE };

struct insn {
	int stmt;
	int sec;
	uint64_t off;
	int len;
	enum insn_kind kind;
	int target;		/* internal direct target, -1 if none */
	int ext;		/* direct target outside the object (EXT_*) */
	int next;		/* physical successor, -1 if none */
	int func_start;
	int abi_entry;		/* a function's start that is called or tail-
				 * called: the callee-saved registers hold the
				 * caller's values */
	int exported;		/* a global or weak symbol names it */
	int rep;		/* 1 rep movs/stos, 2 repe/repne cmps/scas */
	enum ind_kind ind;
	int ind_reg;		/* capstone register (REG, TABLE index) */
	int jt_width;
	int jt_len;		/* its table's entries as written, -1 unknown
				 * (ae_asm_table_len) */
	int tload_reg;		/* mov TABLE(,%i,8),%r: r (gpr index), else -1 */
	int tload;		/* this load feeds a later jmp *%r */
	int from_tload;		/* this jmp *%r takes its target from a load */
	int jt_known;		/* -fae-data: the table index is known (data.c) */
	int decided;		/* -fae-data: a jcc whose flags the regenerator
				 * computes (data.c): no witness decides it */
	uint32_t writes;	/* bitmask of gprs written */
	uint32_t rd64;		/* gprs it may read all 64 bits of */
	uint32_t wr_full;	/* gprs it writes whole (64 or zero-extended 32 bits) */
	uint32_t mem_regs;	/* bitmask of regs used by a memory operand */
	uint32_t rd_any;	/* gprs it may read (any width) */
	int fl_rd;		/* may read a status flag */
	int fl_kill;		/* writes all six status flags, reads none */
	int keeps_dst;		/* may leave its 32-bit destination whole
				 * (bsf/bsr of 0, a failed cmpxchg) */
	int setjmp_entry;
	int in_longjmp;
	int in_sigsetjmp;
	int exit_entry;		/* first instruction of _Exit */
	int stack_mem;		/* 1 pop to memory, 2 push from memory */
	int depth;
	/* data tracing (-fae-data, data.c) */
	int start_entry;	/* process entry (_start): %rsp unknown */
	int drec;		/* writes data records: ends witness paths */
	int vc_first;		/* its first trace byte is a value-cache
				 * record's: 1 before it, 2 after it (data.c) */
	uint32_t rec_before;	/* registers recorded before it (bit 16: %fs base) */
	uint32_t rec_after;	/* registers recorded after it */
	uint32_t rec_low;	/* of rec_before: only the low 32 bits recorded */
	uint32_t rec_after_low;	/* of rec_after: the same */
	uint32_t vc_before;	/* of rec_before: coded against the value cache */
	uint32_t vc_after;	/* of rec_after: the same */
	int vc_scr_before;	/* a gpr dead there, for the cache's code */
	int vc_scr_after;
	int lc_scr;		/* a second one after a load whose record also
				 * has the address cache (AE_VC_BY_ADDR), or -1 */
	uint8_t grp[16];	/* with ngrp >= 2: the records before it, in
				 * the order of one group (AE_VC_GROUP) */
	int ngrp;
	struct ae_df_op df;
	/* routines traced by their arguments (-fae-data, memfn.c) */
	int memfn;		/* entry of routine enum ae_memfn, else 0 */
	int memfn_body;		/* 1 + the entry of the routine it belongs to */
	int memfn_call;		/* a direct call entering routine memfn_call
				 * past its argument records */
	int nout;
	int out[2];		/* edge indices */
};

/* insn.ext: a direct target not in the object, at a symbol another
 * object defines (undefined here, or a weak definition the link may
 * replace) or elsewhere */
enum { EXT_NONE, EXT_ELSEWHERE, EXT_SYMBOL };

enum edge_kind { E_FALL, E_TAKEN, E_EXIT };
enum edge_state { S_FREE, S_TREE, S_FORCED, S_WIT };

struct edge {
	int from, to;		/* to == n means EXIT */
	enum edge_kind kind;
	enum edge_state state;
	double w;
	int id;
};

struct ae_ctx {
	const char *src;
	struct ae_asm a;
	struct insn *in;
	int n;
	int *by_place;		/* instruction indexes sorted by (sec, off) */
	struct edge *e;
	int ne, cape;
	int *comp;		/* component of each insn */
	int *compw;		/* witness width per component */
	int *compn;		/* witnesses per component */
	uint32_t objid;
	int data;		/* -fae-data: record what data addresses need */
	int no_memfn;		/* -fno-ae-memfn: memfn.c does nothing */
	int memfn_lib;		/* -fae-memfn-lib: global memcpy... are bodies */
	int vcache;		/* -fae-data outside the C library: the value
				 * cache codes 64-bit register records */
	const struct ae_vcprof *vcprof;	/* -fae-vc-profile (vcprof.h) or NULL */
	/* events */
	struct ae_event *ev;
	int nev, capev;
	uint32_t *pool;
	int npool, cappool;
};

/*
 * Print "aecc: SRC[:LINE]: message" on stderr (LINE <= 0: no line).
 * Returns -1, so failures read `return ae_err(c, line, ...)`.
 */
int ae_err(const struct ae_ctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Steps 1-2 of instrumenting `src_s` and its events: parse, assemble the
 * twin in o->tmpdir (orig.o), scan and decode it, build the graph, place
 * the witnesses, derive the sorted events. Returns 0 with c filled in,
 * or -1 after one line on stderr; free c with ae_ctx_free() either way.
 */
int ae_analyze(struct ae_ctx *c, const char *src_s, const struct ae_instr_opts *o);
/* Free what ae_analyze() allocated in c. Returns nothing. */
void ae_ctx_free(struct ae_ctx *c);

#endif
