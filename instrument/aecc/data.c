// SPDX-License-Identifier: MIT
/*
 * data.c - where a data-traced object records registers (issue 12, item
 * 1). Per object, a forward analysis finds the registers the regenerator
 * will know before each instruction (the transfer functions of
 * dataflow/dataflow.c on known bits: %rsp from the process entry on,
 * constants, pointers moved by constants, values of recorded registers);
 * every register an address needs but the regenerator will not know is
 * recorded once per value: right after the instructions that define it
 * (a load, a call's return value, a system call), or at the procedure
 * entry when it arrives as an argument. Repeated to a fixpoint, since a
 * record makes later values known. A record of a register whose upper
 * half nothing reads before it is written whole (a 32-bit argument, an
 * int result) takes 4 bytes.
 *
 * Across a call the ABI is trusted: rbx, rbp, r12-r15, %rsp and the %fs
 * base keep their values (the regenerator restores them at the return);
 * the caller-saved registers are defined by the call. %fs base is
 * recorded before the instruction that uses it. A function only this
 * object's direct calls enter knows on entry what all its call sites
 * know of the argument registers (find_call_entries).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "cfg.h"
#include "data.h"
#include "memfn.h"
#include "vcprof.h"
#include "xalloc.h"

#define FS_BIT	(1u << 16)
#define FLAGS_KNOWN	(AE_DF_K_FLAGS | AE_DF_K_CARRY)
#define ALL	(0xffffu | FS_BIT | FLAGS_KNOWN)

struct plan {
	struct ae_ctx *c;
	int *pstart, *preds;	/* predecessors, compressed rows */
	char *entry;
	uint32_t *kin;
	uint32_t *req;		/* registers already needed at each insn */
	uint32_t *narrow;	/* records narrow_here placed after each insn */
	int *cstart, *calls;	/* by_calls entries: their call sites, rows */
	char *by_calls;		/* entered only by this object's direct calls */
	uint32_t *written;	/* callee-saved registers some path from the
				 * function's entry writes before each insn */
};

/* The callee-saved registers other than %rsp. */
#define KEPT		(AE_DF_CALLEE_SAVED & ~(1u << AE_DF_RSP))

/*
 * What the regenerator still knows on entering a function from a call
 * of it, beyond %rsp: the argument registers and the %fs base. Only
 * those: the upper-half analysis (upper_live_in) treats the argument
 * registers as read whole at a call, so a record of one reaching the
 * call is never cut to its low half.
 */
#define CALL_PASSES	((1u << 0) | (1u << 1) | (1u << 2) | (1u << 6) | (1u << 7) | \
			 (1u << 8) | (1u << 9) | (1u << AE_DF_RSP) | FS_BIT)

/* Known bits on entering instruction k's own execution (records included). */
static uint32_t with_records(const struct plan *pl, int k, uint32_t in)
{
	const struct insn *x = &pl->c->in[k];

	in |= x->rec_before;
	if (x->rep)
		in |= 1u << 1;	/* AE_VAL_REPCNT: %rcx */
	return in;
}

/* Known bits on the edge k -> its successor. */
static uint32_t out_of(const struct plan *pl, int k)
{
	const struct insn *x = &pl->c->in[k];
	uint32_t in = with_records(pl, k, pl->kin[k]), out;

	if (x->kind == IK_CALL || x->kind == IK_CALL_IND) {
		out = in & (AE_DF_CALLEE_SAVED | FS_BIT);
	} else {
		struct ae_df_state s;

		memset(&s, 0, sizeof(s));
		s.known = in & (0xffff | FLAGS_KNOWN);
		s.fs_known = !!(in & FS_BIT);
		s.df_known = 1;
		ae_df_step(&x->df, 0, &s);
		out = s.known | (s.fs_known ? FS_BIT : 0);
		if (x->rep)
			out |= 1u << 1;	/* 0, or AE_VAL_REPCNT_AFTER */
	}
	return out | x->rec_after;
}

static uint32_t entry_known(const struct insn *x)
{
	return x->start_entry ? 0 : 1u << AE_DF_RSP;
}

/* What k's known set starts from before its predecessors (and call
 * sites) are met: an entry's, or everything. */
static uint32_t start_known(const struct plan *pl, int k)
{
	return pl->entry[k] && !pl->by_calls[k] ? entry_known(&pl->c->in[k]) : ALL;
}

static void forward(struct plan *pl)
{
	struct ae_ctx *c = pl->c;
	int n = c->n, changed;

	for (int k = 0; k < n; k++)
		pl->kin[k] = start_known(pl, k);
	do {
		changed = 0;
		for (int k = 0; k < n; k++) {
			uint32_t v = start_known(pl, k);

			for (int i = pl->pstart[k]; i < pl->pstart[k + 1]; i++)
				v &= out_of(pl, pl->preds[i]);
			for (int i = pl->cstart[k]; i < pl->cstart[k + 1]; i++) {
				int p = pl->calls[i];

				v &= with_records(pl, p, pl->kin[p]) & CALL_PASSES;
			}
			if (v != pl->kin[k]) {
				pl->kin[k] = v;
				changed = 1;
			}
		}
	} while (changed);
}

/* Does p define register r (so a value of r reaching k starts at p)? */
static int defines(const struct insn *x, int r)
{
	if (x->kind == IK_CALL || x->kind == IK_CALL_IND)
		return !((AE_DF_CALLEE_SAVED >> r) & 1);
	return (x->df.writes >> r) & 1;
}

static int def_width(const struct insn *x, int r, int *sext);

/*
 * Does an unknown input in `need` of instruction p's definition come, in
 * the straight run of instructions that alone lead to p, from a load (a
 * definition the transfer functions cannot follow) of more than w bytes,
 * directly or through definitions they can? Following the inputs would
 * then record that load's value each time p runs, wider than p's
 * w-byte result (bzip2's CRC update: `(crc >> 24) ^ c` zero-extended
 * from a byte indexes the table; 1 byte of index, not the 4 of the
 * loaded crc).
 */
static int local_load(const struct plan *pl, int p, uint32_t need, int w, int depth)
{
	const struct ae_ctx *c = pl->c;

	for (int q = 0; q < 16; q++) {
		int j = p;

		if (!((need >> q) & 1))
			continue;
		for (int steps = 0; steps < 32; steps++) {
			const struct insn *y;
			uint32_t in2;

			if (pl->entry[j] || pl->pstart[j + 1] - pl->pstart[j] != 1)
				break;
			j = pl->preds[pl->pstart[j]];
			y = &c->in[j];
			if (y->kind != IK_PLAIN || y->memfn || y->memfn_body || y->memfn_call)
				break;
			if (!defines(y, q))
				continue;
			if ((out_of(pl, j) >> q) & 1)
				break;
			in2 = ae_df_inputs(&y->df, q);
			if (in2 == AE_DF_NOT_AFFINE) {
				int sext, w2 = def_width(y, q, &sext);

				if (w2 > w)
					return 1;
				break;
			}
			in2 &= ~with_records(pl, j, pl->kin[j]) & 0xffffu;
			if (in2 && depth < 4 && local_load(pl, j, in2, w, depth + 1))
				return 1;
			break;
		}
	}
	return 0;
}

/*
 * Record r after p, which narrows it (above), rather than its inputs?
 * With the value cache, to 1 byte only: the cache codes a 4-byte load's
 * record, often in 1 byte, and never a 2-byte one.
 */
static int narrow_here(const struct plan *pl, int p, int r, uint32_t need)
{
	const struct insn *x = &pl->c->in[p];
	int sext, w = def_width(x, r, &sext);

	return x->kind == IK_PLAIN && (w == 1 || (w == 2 && !pl->c->vcache)) && !sext &&
	       local_load(pl, p, need, w, 0);
}

/*
 * A narrowed record whose register the regenerator knows without it (the
 * load it spared was recorded after all, for another use) is dropped.
 * The known sets stay as they are, so each drop is checked against sets
 * that are still exact: dropping leaves that instruction's out set as it
 * was, so the old sets remain a fixpoint of the new equations, and the
 * greatest one (forward() computes the greatest; fewer records cannot
 * raise it). Two records can thus never each be dropped through the other.
 */
static void drop_needless_narrow(struct plan *pl)
{
	struct ae_ctx *c = pl->c;

	for (int k = 0; k < c->n; k++)
		for (int r = 0; r < 16; r++) {
			struct insn *x = &c->in[k];

			if (!((pl->narrow[k] >> r) & 1))
				continue;
			x->rec_after &= ~(1u << r);
			if (!((out_of(pl, k) >> r) & 1))
				x->rec_after |= 1u << r;
		}
}

/* (instruction, register) pairs still to make known */
struct needs {
	int *v;
	int n, cap;
};

static void need_push(struct needs *s, int k, int r)
{
	if (s->n + 2 > s->cap) {
		s->cap *= 2;
		s->v = ae_xrealloc(s->v, s->cap * sizeof(int));
	}
	s->v[s->n++] = k;
	s->v[s->n++] = r;
}

/*
 * pl->written: forward, to a fixpoint, from nothing written at a
 * function's start (also when a tail call jumps there) and everything at
 * another entry (its origin is unknown); a cold part or a label that is
 * no function's start has what its predecessors wrote.
 */
static void find_written(struct plan *pl)
{
	struct ae_ctx *c = pl->c;
	int n = c->n, changed;

	for (int k = 0; k < n; k++)
		pl->written[k] = pl->pstart[k] == pl->pstart[k + 1] && !c->in[k].abi_entry ?
				 KEPT : 0;
	do {
		changed = 0;
		for (int k = 0; k < n; k++) {
			uint32_t v = pl->written[k];

			if (c->in[k].abi_entry)
				continue;
			for (int i = pl->pstart[k]; i < pl->pstart[k + 1]; i++) {
				const struct insn *x = &c->in[pl->preds[i]];

				v |= pl->written[pl->preds[i]] | (x->df.writes & KEPT);
			}
			if (v != pl->written[k]) {
				pl->written[k] = v;
				changed = 1;
			}
		}
	} while (changed);
}

/*
 * Make r known on entering k: walk back to where its values are defined;
 * record after a definition the transfer functions cannot follow, or
 * need the inputs of one they can (a pointer stepped by a constant in a
 * loop is then recorded once, before the loop), or record at the entry
 * (of a function only this object's calls enter: at its call sites).
 * A callee-saved register that no path from the function's entry has
 * written still holds the caller's value after a call, which compiled
 * code never reads as an address; yet the graph has such a path where a
 * call never returns (luaG_runerror, then the next block). It is
 * recorded after that call, where no run gets, rather than at every
 * entry of the function (a record after a call is right either way).
 * `direct`: record after every definition (the fallback when following
 * inputs did not make r known). Returns 0 or -1.
 */
static int place_record(struct plan *pl, int k0, int r0, int direct)
{
	struct ae_ctx *c = pl->c;
	struct needs st = { .v = ae_xmalloc(512 * sizeof(int)), .cap = 512 };
	int ret = 0;

	need_push(&st, k0, r0);
	while (st.n && !ret) {
		int r = st.v[--st.n], k = st.v[--st.n];

		if ((pl->req[k] >> r) & 1)
			continue;
		pl->req[k] |= 1u << r;
		if (pl->entry[k] && pl->by_calls[k] && !direct && ((CALL_PASSES >> r) & 1)) {
			/* an argument of a function only this object's calls
			 * enter: needed at every call, where a value the
			 * caller holds across its own loop costs nothing
			 * per call (jumps into the entry are walked too; no
			 * call is in a body expanded offline, which calls
			 * only expanded routines: memfn.c, expandable()) */
			for (int i = pl->cstart[k]; i < pl->cstart[k + 1]; i++)
				need_push(&st, pl->calls[i], r);
		} else if (pl->entry[k]) {
			c->in[k].rec_before |= 1u << r;
			continue;
		}
		for (int i = pl->pstart[k]; i < pl->pstart[k + 1] && !ret; i++) {
			int p = pl->preds[i];
			struct insn *x = &c->in[p];
			uint32_t in, need;

			if (!defines(x, r)) {
				if ((x->kind == IK_CALL || x->kind == IK_CALL_IND) &&
				    ((KEPT & ~pl->written[p]) >> r) & 1)
					x->rec_after |= 1u << r;
				else
					need_push(&st, p, r);
				continue;
			}
			if ((out_of(pl, p) >> r) & 1)
				continue;
			in = with_records(pl, p, pl->kin[p]);
			need = x->kind == IK_CALL || x->kind == IK_CALL_IND || direct ?
			       AE_DF_NOT_AFFINE : ae_df_inputs(&x->df, r);
			if (need != AE_DF_NOT_AFFINE) {
				need &= ~in & 0xffffu;
				if (need && !direct && narrow_here(pl, p, r, need)) {
					x->rec_after |= 1u << r;
					pl->narrow[p] |= 1u << r;
					continue;
				}
				for (int q = 0; q < 16; q++)
					if ((need >> q) & 1)
						need_push(&st, p, q);
				continue;
			}
			if (x->kind == IK_JCC) {
				ret = ae_err(c, c->a.st[x->stmt].line,
					     "data tracing: '%s' defines an address register on a branch",
					     c->a.st[x->stmt].text);
				break;
			}
			x->rec_after |= 1u << r;
		}
	}
	free(st.v);
	return ret;
}

/*
 * Registers whose upper 32 bits may be read from entering k on, before
 * they are written whole (backward, to a fixpoint): a 64-bit read (an
 * address, push, a 64-bit operand), the argument registers at a call
 * (the callee may read them whole), the result and callee-saved
 * registers at a return (the caller may), everything at a system call,
 * a rep instruction or a jump out of the object. The ABI is trusted
 * as elsewhere in data tracing: a call keeps the callee-saved registers
 * and kills the others, which are dead at a return. A register recorded
 * before k that is not among them needs only its low 32 bits (a 32-bit
 * argument): the regenerator zero-extends them, and no instruction it
 * follows can tell.
 */
#define ARG_REGS	((1u << 0) | (1u << 1) | (1u << 2) | (1u << 6) | (1u << 7) | \
			 (1u << 8) | (1u << 9))
#define RET_REGS	((1u << 0) | (1u << 2) | AE_DF_CALLEE_SAVED)

static uint32_t upper_live_in(const struct insn *x, uint32_t out, int nsucc)
{
	(void)nsucc;
	if (x->rep || x->df.kind == AE_DF_SYSCALL)
		return 0xffffu;
	switch (x->kind) {
	case IK_PLAIN:
		return x->rd64 | (out & ~x->wr_full);
	case IK_JCC:
	case IK_JMP:
		if (x->ext || x->target < 0)
			return 0xffffu;
		return x->rd64 | (out & ~x->wr_full);
	case IK_CALL:
	case IK_CALL_IND:
		return x->rd64 | ARG_REGS | (1u << AE_DF_RSP) | (out & AE_DF_CALLEE_SAVED);
	case IK_RET:
		return RET_REGS;
	default:
		return 0xffffu;
	}
}

/*
 * A backward analysis to a fixpoint: lin[k] = in(insn k, lout[k], number
 * of its successors), lout[k] = the union of its successors' lin.
 */
static void backward(const struct plan *pl, uint32_t *lin, uint32_t *lout,
		     uint32_t (*in)(const struct insn *x, uint32_t out, int nsucc))
{
	const struct ae_ctx *c = pl->c;
	int n = c->n, changed;
	int *nsucc = ae_xcalloc(n + 1, sizeof(int));

	for (int k = 0; k < n; k++)
		for (int i = pl->pstart[k]; i < pl->pstart[k + 1]; i++)
			nsucc[pl->preds[i]]++;
	memset(lin, 0, (n + 1) * sizeof(uint32_t));
	memset(lout, 0, (n + 1) * sizeof(uint32_t));
	do {
		changed = 0;
		for (int k = n - 1; k >= 0; k--) {
			uint32_t v = in(&c->in[k], lout[k], nsucc[k]);

			if (v != lin[k]) {
				lin[k] = v;
				changed = 1;
			}
		}
		memset(lout, 0, (n + 1) * sizeof(uint32_t));
		for (int k = 0; k < n; k++)
			for (int i = pl->pstart[k]; i < pl->pstart[k + 1]; i++)
				lout[pl->preds[i]] |= lin[k];
	} while (changed);
	free(nsucc);
}

/*
 * Registers and status flags (bit 16) live on entering k, backward to a
 * fixpoint, for the value cache's code (which needs a dead register and
 * dead flags). The ABI is trusted at calls and returns as above, and at
 * a tail call (a jump to an undefined symbol); any other jump out of
 * the object, an indirect jump that is not a table's, a system call, or
 * falling off the known code keeps everything live.
 */
#define FL_BIT		(1u << 16)
#define LIVE_ALL	(0xffffu | FL_BIT)

static uint32_t live_in(const struct insn *x, uint32_t out, int nsucc)
{
	const uint32_t at_call = ARG_REGS | (1u << 0) | (1u << 10) | (1u << AE_DF_RSP);

	if (x->df.kind == AE_DF_SYSCALL)
		return LIVE_ALL;
	switch (x->kind) {
	case IK_STOP:
		return x->rd_any;
	case IK_RET:
		return RET_REGS | (1u << AE_DF_RSP);
	case IK_CALL:
	case IK_CALL_IND:
		return x->rd_any | at_call | (nsucc ? out & AE_DF_CALLEE_SAVED : AE_DF_CALLEE_SAVED);
	case IK_JMP:
	case IK_JCC:
		/* a jump to another object's function is a tail call (only
		 * compiled C has the cache): the callee's arguments and what
		 * the caller keeps are live, as at a call and a return */
		if (x->ext == EXT_SYMBOL && (x->kind == IK_JMP || nsucc))
			return x->rd_any | (x->fl_rd ? FL_BIT : 0) | at_call | AE_DF_CALLEE_SAVED |
			       (x->kind == IK_JCC ? out : 0);
		if (x->ext || x->target < 0 || !nsucc)
			return LIVE_ALL;
		return x->rd_any | (x->fl_rd ? FL_BIT : 0) | out;
	case IK_JMP_IND:
		if ((x->ind != IND_TABLE && !x->from_tload) || !nsucc)
			return LIVE_ALL;
		return x->rd_any | out;
	case IK_PLAIN:
		if (!nsucc)
			return LIVE_ALL;
		return x->rd_any | (x->fl_rd ? FL_BIT : 0) |
		       (out & ~(x->wr_full | (x->fl_kill ? FL_BIT : 0)));
	default:
		return LIVE_ALL;
	}
}

/* A register in `dead` for the cache's code, or -1. */
static int pick_scratch(uint32_t dead)
{
	static const int order[] = { 11, 10, 9, 8, 1, 2, 6, 7, 0, 3, 5, 12, 13, 14 };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if ((dead >> order[i]) & 1)
			return order[i];
	return -1;
}

/*
 * Registers that a load in the straight run of plain instructions ending
 * at `last` wrote and nothing read since: not for the cache's scratch.
 * Natively harmless, but valgrind's VEX drops a load whose register is
 * overwritten unread in the same superblock, so lackey, the same-run
 * oracle, would miss an access that happened (Lua's `pop %rsi` freeing
 * a call's stack arguments, then the scratch %rsi).
 */
static uint32_t loaded_unread(const struct ae_ctx *c, int last)
{
	uint32_t m = 0, rd = 0;

	for (int j = last; j >= 0 && j > last - 64; j--) {
		const struct insn *x = &c->in[j];

		if (x->kind != IK_PLAIN)
			break;
		if ((x->df.has_mem && (x->df.mem.acc & AE_ACC_L)) || x->df.str ||
		    x->df.kind == AE_DF_POP || x->df.kind == AE_DF_LEAVE)
			m |= x->writes & ~rd;
		rd |= x->rd_any;
	}
	return m;
}

/*
 * The registers free for the cache's code at a point where `live` is
 * live and `recs` are recorded: not %rsp, not %r15 (the trace cursor),
 * and not one that a load just before it (ending at `last`) left unread.
 */
static uint32_t scratch_free(const struct ae_ctx *c, uint32_t live, uint32_t recs, int last)
{
	return ~live & ~recs & ~(1u << AE_DF_RSP) & ~(1u << 15) & ~loaded_unread(c, last) &
	       0xffffu;
}

/* The registers x's memory operand's address is made of. */
static uint32_t addr_regs(const struct insn *x)
{
	return (x->df.mem.base >= 0 ? 1u << x->df.mem.base : 0) |
	       (x->df.mem.index >= 0 ? 1u << x->df.mem.index : 0);
}

/*
 * A load whose record the address cache may code: a mov of 4 or 8 bytes
 * or a movslq (narrower loads keep plain 1- or 2-byte records) from an
 * address computed from registers (a static address is one place's: the
 * value cache does that) other than the destination, whose whole value
 * (not the low half of 8 bytes) is recorded.
 */
static int lc_load(const struct ae_ctx *c, const struct insn *x)
{
	const struct ae_df_op *op = &x->df;
	char buf[AE_LOAD_OPERAND_MAX];
	int sext, w;

	if (x->kind != IK_PLAIN || !op->has_mem || op->mem.acc != AE_ACC_L || op->str ||
	    op->rep || op->mem.rip || op->mem.fs || op->dst < 0 || op->dst > 15 ||
	    (op->mem.base < 0 && op->mem.index < 0) || (addr_regs(x) >> op->dst) & 1 ||
	    (op->kind != AE_DF_MOV && op->kind != AE_DF_MOVZX && op->kind != AE_DF_MOVSX))
		return 0;
	w = def_width(x, op->dst, &sext);
	return (w == 4 || (w == 8 && !((x->rec_after_low >> op->dst) & 1))) &&
	       ae_load_operand(c->a.st[x->stmt].text, buf, sizeof(buf));
}

/* Registers of bits (records before k if before, else after it) whose
 * place the value-cache profile says codes worse than plain records do
 * (vcprof.h); never a group's (group_before). */
static uint32_t vc_plain_by_profile(const struct ae_ctx *c, int k, uint32_t bits, int before)
{
	const struct insn *x = &c->in[k];
	uint32_t out = 0;

	for (int r = 0; r < 16 && c->vcprof; r++) {
		int sext, w = before ? 8 : def_width(x, r, &sext), g = 0;

		if (!((bits >> r) & 1))
			continue;
		for (int i = 0; before && i < x->ngrp; i++)
			g |= x->grp[i] == r;
		if (((before ? x->rec_low : x->rec_after_low) >> r) & 1)
			w = 4;
		if (!g && ae_vcprof_plain_at(c->vcprof, c->objid, k, before, r, w))
			out |= 1u << r;
	}
	return out;
}

/*
 * Which register records the value cache codes: those of a whole 64-bit
 * register, of 4 bytes that the register holds extended (a 32-bit write,
 * movslq), or of a low half that is all what follows reads (a 32-bit
 * argument: AE_VAL_REG_VC_LOW), where the flags are dead and a register
 * is free for computing the difference.
 */
static void vc_choose(struct plan *pl)
{
	struct ae_ctx *c = pl->c;
	int n = c->n;
	uint32_t *lin = ae_xcalloc(n + 1, sizeof(uint32_t));
	uint32_t *lout = ae_xcalloc(n + 1, sizeof(uint32_t));

	backward(pl, lin, lout, live_in);
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		uint32_t recs = (x->rec_before | x->rec_after) & 0xffffu;
		uint32_t b = x->rec_before & 0xffffu, a = 0;

		x->lc_scr = -1;
		x->vc_scr_after = -1;
		if (x->memfn || x->memfn_body || x->memfn_call || x->exit_entry)
			continue;
		for (int r = 0; r < 16; r++) {
			int sext, w = def_width(x, r, &sext);

			if ((x->rec_after >> r) & 1 && (w == 8 || w == 4))
				a |= 1u << r;
		}
		if (x->df.kind == AE_DF_SYSCALL)
			a = 0;	/* a clone child's first record: its cache is new */
		b &= ~vc_plain_by_profile(c, k, b, 1);
		a &= ~vc_plain_by_profile(c, k, a, 0);
		if (b && !(lin[k] & FL_BIT)) {
			x->vc_scr_before = pick_scratch(scratch_free(c, lin[k], recs, k - 1));
			if (x->vc_scr_before >= 0)
				x->vc_before = b;
		}
		if (a && !(lout[k] & FL_BIT)) {
			uint32_t dead = scratch_free(c, lout[k], recs, k);

			/* the address cache's code recomputes the load's address
			 * after it: both scratch registers outside that address */
			if (lc_load(c, x) && (a >> x->df.dst) & 1) {
				x->vc_scr_after = pick_scratch(dead & ~addr_regs(x));
				if (x->vc_scr_after >= 0)
					x->lc_scr = pick_scratch(dead & ~addr_regs(x) &
								 ~(1u << x->vc_scr_after));
				if (x->lc_scr < 0)
					x->vc_scr_after = -1;
			}
			if (x->vc_scr_after < 0)
				x->vc_scr_after = pick_scratch(dead);
			if (x->vc_scr_after >= 0)
				x->vc_after = a;
		}
	}
	free(lin);
	free(lout);
}

/* Each instruction's successor count (nsucc[k]) and its first two
 * (succ[2k], succ[2k + 1]), from the predecessor lists. */
static void successors(const struct plan *pl, int *nsucc, int *succ)
{
	for (int k = 0; k < pl->c->n; k++)
		for (int i = pl->pstart[k]; i < pl->pstart[k + 1]; i++) {
			int p = pl->preds[i];

			if (nsucc[p] < 2)
				succ[2 * p + nsucc[p]] = k;
			nsucc[p]++;
		}
}

/*
 * A register recorded after k where the flags are live (a load between a
 * compare and its branch: `cmpb; mov (%rdx),%rsi; jne`) cannot have the
 * value cache, whose code needs them dead. Where k's only successor is
 * that branch and each side of it either does not read the register or
 * is entered from the branch alone, with the flags dead and a register
 * free: record it before each such side instead (the same value; nothing
 * between reads it), and the cache codes it there. Only 64-bit values:
 * a before-record is 8 bytes or a low half.
 */
static void sink_past_flags(struct plan *pl)
{
	struct ae_ctx *c = pl->c;
	int n = c->n, *nsucc = ae_xcalloc(n + 1, sizeof(int)), *succ = ae_xcalloc(2 * n + 2, sizeof(int));
	uint32_t *lin = ae_xcalloc(n + 1, sizeof(uint32_t));
	uint32_t *lout = ae_xcalloc(n + 1, sizeof(uint32_t));

	backward(pl, lin, lout, live_in);
	successors(pl, nsucc, succ);
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		uint32_t a = x->rec_after & 0xffffu & ~(1u << AE_DF_RSP);
		int j = succ[2 * k], ok = 1;

		if (!a || !(lout[k] & FL_BIT) || nsucc[k] != 1 || x->kind != IK_PLAIN ||
		    x->memfn || x->memfn_body || x->df.kind == AE_DF_SYSCALL)
			continue;
		if (c->in[j].kind != IK_JCC || nsucc[j] != 2 || pl->entry[j] ||
		    pl->pstart[j + 1] - pl->pstart[j] != 1 || (c->in[j].writes & a))
			continue;
		/* only whole 64-bit values: a narrower one's record after k
		 * (a byte's, zero-extended) is smaller than a coded one */
		for (int r = 0; r < 16 && ok; r++) {
			int sext;

			ok = !((a >> r) & 1) || (def_width(x, r, &sext) == 8 && !sext);
		}
		for (int i = 0; i < 2 && ok; i++) {
			int t = succ[2 * j + i];
			const struct insn *y = &c->in[t];
			if (!(lin[t] & a))
				continue;
			/* and a scratch register for the cache's code there */
			ok = !pl->entry[t] && pl->pstart[t + 1] - pl->pstart[t] == 1 &&
			     !(lin[t] & FL_BIT) && !y->memfn && !y->memfn_body && !y->memfn_call &&
			     !y->exit_entry &&
			     pick_scratch(scratch_free(c, lin[t], y->rec_before | y->rec_after | a,
						       t - 1)) >= 0;
		}
		if (!ok)
			continue;
		x->rec_after &= ~a;
		for (int i = 0; i < 2; i++) {
			int t = succ[2 * j + i];

			c->in[t].rec_before |= a & lin[t];
		}
	}
	free(nsucc);
	free(succ);
	free(lin);
	free(lout);
}

/*
 * Records that can wait, for groups (AE_VC_GROUP). A register that a
 * straight run loads and does not read until a later instruction t of
 * the run (spill slots reloaded for a call: bzip2's mainGtU takes four of
 * its six arguments so) is recorded before t instead, the same value
 * (nothing between reads or writes it), where two or more such records
 * meet, the flags are dead and a register is free for the coding of the
 * records one by one. There one compare each, and a byte when all hit,
 * replace the cache's code and byte per record. Only whole registers: a
 * byte's or a word's record is plain and smaller. The order of the group
 * is the loads' (grp[]; records already before t first).
 */
static void group_before(struct plan *pl)
{
	struct ae_ctx *c = pl->c;
	int n = c->n, *nsucc = ae_xcalloc(n + 1, sizeof(int)), *succ = ae_xcalloc(2 * n + 2, sizeof(int));
	int *dest = ae_xmalloc((n + 1) * 16 * sizeof(int)), *cnt = ae_xcalloc(n + 1, sizeof(int));
	uint32_t *lin = ae_xcalloc(n + 1, sizeof(uint32_t));
	uint32_t *lout = ae_xcalloc(n + 1, sizeof(uint32_t));
	uint32_t *add = ae_xcalloc(n + 1, sizeof(uint32_t));

	backward(pl, lin, lout, live_in);
	successors(pl, nsucc, succ);
	for (int k = 0; k < n; k++) {
		const struct insn *x = &c->in[k];
		uint32_t a = x->rec_after & 0xffffu & ~(1u << AE_DF_RSP);

		for (int r = 0; r < 16; r++)
			dest[16 * k + r] = -1;
		if (!a || x->kind != IK_PLAIN || x->memfn || x->memfn_body ||
		    x->df.kind == AE_DF_SYSCALL)
			continue;
		for (int r = 0; r < 16; r++) {
			int sext, w = def_width(x, r, &sext), j = k, t = -1;

			if (!((a >> r) & 1) || sext || (w != 8 && w != 4))
				continue;
			for (int steps = 0; steps < 64 && nsucc[j] == 1; steps++) {
				const struct insn *y;

				t = succ[2 * j];
				y = &c->in[t];
				if (pl->entry[t] || pl->pstart[t + 1] - pl->pstart[t] != 1) {
					t = -1;
					break;
				}
				/* (a call reads every argument register) */
				if ((y->rd_any | y->writes |
				     (y->kind == IK_CALL ? ARG_REGS : 0)) & (1u << r))
					break;
				if (y->kind != IK_PLAIN || y->memfn || y->memfn_body ||
				    y->df.kind == AE_DF_SYSCALL) {
					t = -1;
					break;
				}
				j = t;
				t = -1;
			}
			if (t < 0)
				continue;
			{
				const struct insn *y = &c->in[t];

				if ((y->kind != IK_PLAIN && y->kind != IK_CALL) || y->memfn ||
				    y->memfn_body || y->memfn_call || y->exit_entry || y->rep ||
				    y->start_entry || y->setjmp_entry || y->tload ||
				    ae_moves_retaddr(y) || ((y->rec_before >> r) & 1) ||
				    (y->rec_before & FS_BIT) || ae_df_vsib_bytes(&y->df) ||
				    y->df.kind == AE_DF_SYSCALL || (lin[t] & FL_BIT))
					continue;
			}
			dest[16 * k + r] = t;
			cnt[t]++;
			add[t] |= 1u << r;
		}
	}
	for (int t = 0; t < n; t++) {
		struct insn *y = &c->in[t];
		uint32_t b = y->rec_before & 0xffffu;

		y->ngrp = 0;
		if (!cnt[t] || cnt[t] + __builtin_popcount(b) < 2 ||
		    pick_scratch(scratch_free(c, lin[t], y->rec_before | y->rec_after | add[t],
					      t - 1)) < 0) {
			cnt[t] = 0;
			continue;
		}
		for (int r = 0; r < 16; r++)
			if ((b >> r) & 1)
				y->grp[y->ngrp++] = (uint8_t)r;
	}
	for (int k = 0; k < n; k++)
		for (int r = 0; r < 16; r++) {
			int t = dest[16 * k + r];

			if (t < 0 || !cnt[t])
				continue;
			c->in[k].rec_after &= ~(1u << r);
			c->in[t].rec_before |= 1u << r;
			c->in[t].grp[c->in[t].ngrp++] = (uint8_t)r;
		}
	free(nsucc);
	free(succ);
	free(dest);
	free(cnt);
	free(lin);
	free(lout);
	free(add);
}

/* The instruction whose bytes hold (sec, off), or -1. */
static int insn_covering(const struct ae_ctx *c, int sec, uint64_t off)
{
	int lo = 0, hi = c->n - 1, best = -1;

	while (lo <= hi) {
		int m = (lo + hi) / 2;
		const struct insn *x = &c->in[c->by_place[m]];

		if (x->sec < sec || (x->sec == sec && x->off <= off)) {
			best = c->by_place[m];
			lo = m + 1;
		} else {
			hi = m - 1;
		}
	}
	if (best < 0 || c->in[best].sec != sec || off >= c->in[best].off + c->in[best].len)
		return -1;
	return best;
}

/* Does a relocation patch instruction x's bytes? */
static int relocated(const struct ae_scan *s, const struct insn *x)
{
	for (uint64_t o = x->off; o < x->off + x->len; o++)
		if (ae_find_reloc(s, x->sec, o))
			return 1;
	return 0;
}

static int ident_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.';
}

/* A direct call or jump (its operand a name, or name@PLT)? */
static int direct_branch(const struct ae_ctx *c, const struct ae_stmt *st)
{
	int kind = st->insn >= 0 ? c->in[st->insn].kind : -1;
	const char *t = st->text;

	if (kind != IK_CALL && kind != IK_JMP && kind != IK_JCC)
		return 0;
	t += strcspn(t, " \t");
	t += strspn(t, " \t");
	while (ident_char(*t))
		t++;
	return !*t || !strcmp(t, "@PLT");
}

/* A statement that names a function without taking its address: a
 * symbol directive, `.set ALIAS, f` (mark_functions sees ALIAS in the
 * symbol table), a direct call or jump. */
static int names_only(const struct ae_ctx *c, const struct ae_stmt *st)
{
	static const char *const dirs[] = {
		".type", ".size", ".globl", ".global", ".local", ".hidden", ".internal",
		".protected", ".weak",
	};
	const char *t = st->text, *comma;

	if (st->kind == AE_ST_LABEL || direct_branch(c, st))
		return 1;
	if (st->kind != AE_ST_DIRECTIVE)
		return 0;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
		if (!strncmp(t, dirs[d], strlen(dirs[d])) && !ident_char(t[strlen(dirs[d])]))
			return 1;
	if (strncmp(t, ".set", 4) && strncmp(t, ".equ", 4))
		return 0;
	comma = strrchr(t, ',');
	if (!comma)
		return 0;
	comma += strspn(comma + 1, " \t") + 1;
	while (ident_char(*comma))
		comma++;
	return !*comma;
}

struct fname {
	const char *name;
	int k;
};

static int fname_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fname *)a)->name, ((const struct fname *)b)->name);
}

/*
 * Functions the assembly names anywhere but in their labels, symbol
 * directives, strings (debugging information's) and direct calls and
 * jumps go into taken[]: their address may be taken in a way no
 * relocation shows (a difference the assembler resolves within a
 * section, `.long f - base`; a GOT load, `f@GOTPCREL`; a reference
 * against a section symbol whose addend lands elsewhere). So are
 * functions without a label of their own. One pass over the assembly.
 */
static void mark_named(const struct ae_ctx *c, char *taken)
{
	struct fname *fn = ae_xmalloc((c->a.n + 1) * sizeof(*fn));
	size_t nf = 0;

	for (int k = 0; k < c->n; k++) {
		int si = c->in[k].stmt, found = 0;

		if (!c->in[k].func_start)
			continue;
		while (si > 0 && c->a.st[si - 1].insn < 0) {
			const struct ae_stmt *lab = &c->a.st[--si];

			if (lab->kind == AE_ST_LABEL && lab->text[0] && lab->text[0] != '.') {
				fn[nf].name = lab->text;
				fn[nf++].k = k;
				found = 1;
			}
		}
		if (!found)
			taken[k] = 1;
	}
	qsort(fn, nf, sizeof(*fn), fname_cmp);
	for (size_t j = 0; j < c->a.n && nf; j++) {
		const struct ae_stmt *st = &c->a.st[j];
		const char *t = st->text;
		int quoted = 0;

		if (names_only(c, st))
			continue;
		for (const char *p = t; *p;) {
			struct fname key, *hit;
			char tok[256];
			size_t l;

			if (*p == '"' && (p == t || p[-1] != '\\'))
				quoted = !quoted;
			if (quoted || !ident_char(*p) || (p > t && ident_char(p[-1]))) {
				p++;
				continue;
			}
			l = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
			if (l < sizeof(tok)) {
				memcpy(tok, p, l);
				tok[l] = 0;
				key.name = tok;
				hit = bsearch(&key, fn, nf, sizeof(*fn), fname_cmp);
				/* every label of that name (duplicates: equal keys) */
				while (hit && hit > fn && !strcmp(hit[-1].name, tok))
					hit--;
				for (; hit && hit < fn + nf && !strcmp(hit->name, tok); hit++)
					taken[hit->k] = 1;
			}
			p += l;
		}
	}
	free(fn);
}

/*
 * Functions whose address the object takes (not as a call or jump
 * target: a relocation in a section the program holds at run time, or a
 * lea within their own section) may be signal handlers, entered on a
 * stack the kernel chose: they record %rsp at their entry, and taken[]
 * marks them. Debugging information and the unwinder's tables (.eh_frame)
 * name every function without entering any.
 */
static void mark_address_taken(struct ae_ctx *c, const struct ae_scan *s, char *taken)
{
	size_t shstrndx;
	int named = !elf_getshdrstrndx(s->elf, &shstrndx);

	mark_named(c, taken);
	/* no section names: which relocations count is unknown */
	for (int k = 0; k < c->n && !named; k++)
		taken[k] |= c->in[k].func_start;
	for (int i = 0; i < s->nr && named; i++) {
		const struct reloc *r = &s->r[i];
		Elf_Scn *scn = elf_getscn(s->elf, r->sec);
		GElf_Shdr sh;
		const char *name;
		int site, k;

		if (!r->symsec || !scn || !gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(s->elf, shstrndx, sh.sh_name);
		if (!(sh.sh_flags & SHF_ALLOC) || (name && !strcmp(name, ".eh_frame")))
			continue;
		site = insn_covering(c, r->sec, r->off);
		if (site >= 0 && (c->in[site].kind == IK_CALL || c->in[site].kind == IK_JMP ||
				  c->in[site].kind == IK_JCC))
			continue;
		k = ae_insn_at(c, r->symsec, r->symval + r->addend);
		if (k < 0 && (r->type == R_X86_64_PC32 || r->type == R_X86_64_PLT32))
			k = ae_insn_at(c, r->symsec, r->symval + r->addend + 4);
		if (k >= 0)
			taken[k] |= c->in[k].func_start;
	}
	/* lea f(%rip) of a function in the lea's own section: the assembler
	 * resolved it, no relocation tells */
	for (int i = 0; i < c->n; i++) {
		const struct insn *x = &c->in[i];
		int k;

		if (x->df.kind != AE_DF_LEA || !x->df.mem.rip || relocated(s, x))
			continue;
		k = ae_insn_at(c, x->sec, x->off + x->len + x->df.mem.disp);
		if (k >= 0)
			taken[k] |= c->in[k].func_start;
	}
	for (int k = 0; k < c->n; k++)
		if (taken[k])
			c->in[k].rec_before |= 1u << AE_DF_RSP;
}

/* The instruction a direct call of this object's code enters (not one
 * entering a library routine past its argument records), or -1. */
static int direct_call_target(const struct insn *x)
{
	return x->kind == IK_CALL && !x->memfn_call ? x->target : -1;
}

/*
 * Functions entered only by this object's direct calls (and jumps): a
 * local name, the address never taken, none of the entries the runtime
 * or the C library enter otherwise. Their known set on entry is what
 * every call site knows of the registers a call passes (CALL_PASSES);
 * the regenerator carries them across the call as it runs it.
 */
static void find_call_entries(struct plan *pl, const char *taken)
{
	struct ae_ctx *c = pl->c;
	int n = c->n;

	for (int k = 0; k < n; k++) {
		int t = direct_call_target(&c->in[k]);

		if (t >= 0)
			pl->cstart[t + 1]++;
	}
	for (int k = 0; k < n; k++) {
		const struct insn *x = &c->in[k];

		pl->by_calls[k] = x->func_start && !x->exported && !taken[k] &&
				  pl->cstart[k + 1] > 0 && !x->start_entry && !x->setjmp_entry &&
				  !x->in_longjmp && !x->in_sigsetjmp && !x->exit_entry &&
				  !x->memfn && !x->memfn_body;
		if (!pl->by_calls[k])
			pl->cstart[k + 1] = 0;
	}
	for (int k = 0; k < n; k++)
		pl->cstart[k + 1] += pl->cstart[k];
	pl->calls = ae_xmalloc((pl->cstart[n] + 1) * sizeof(int));
	{
		int *fill = ae_xcalloc(n + 1, sizeof(int));

		for (int k = 0; k < n; k++) {
			int t = direct_call_target(&c->in[k]);

			if (t >= 0 && pl->by_calls[t])
				pl->calls[pl->cstart[t] + fill[t]++] = k;
		}
		free(fill);
	}
}

/*
 * An entry record of a register every call site already knows (it
 * learnt it after the record was placed) is dropped. As in
 * drop_needless_narrow, the known sets stay exact: the entry's known set
 * with its records is unchanged.
 */
static void drop_needless_entry(struct plan *pl)
{
	for (int k = 0; k < pl->c->n; k++)
		if (pl->by_calls[k])
			pl->c->in[k].rec_before &= ~(pl->kin[k] & CALL_PASSES);
}

/*
 * A table's index register is an address register of the table access
 * itself (jmp *TABLE(,%i,8), mov TABLE(,%i,8),%r), so wherever the plan
 * holds the regenerator knows it there, whole (the access reads it as
 * 64 bits): the index's own record (AE_VAL_JTIDX, AE_VAL_JTLOAD) says
 * nothing new. Known sets are taken afresh, after records moved past
 * branches; a table whose index is not known keeps its record.
 */
static void find_known_tables(struct plan *pl)
{
	struct ae_ctx *c = pl->c;

	forward(pl);
	for (int k = 0; k < c->n; k++) {
		struct insn *x = &c->in[k];
		uint32_t known = with_records(pl, k, pl->kin[k]) & ~x->rec_low;
		int r = x->ind_reg;

		x->jt_known = (x->ind == IND_TABLE || x->tload) && !x->memfn_body &&
			      r >= 0 && r < 16 && ((x->df.uses & known) >> r) & 1;
	}
}

/*
 * A conditional branch on flags that arithmetic on known registers set
 * (a loop counter against its bound, a bit of Lua's instruction word)
 * is decided by the regenerator, which computes the same flags: it needs
 * no witness (place.c). The known sets are find_known_tables' fresh ones.
 */
static void find_decided(struct plan *pl)
{
	struct ae_ctx *c = pl->c;

	for (int k = 0; k < c->n; k++) {
		struct insn *x = &c->in[k];
		uint32_t need = ae_df_cond_needs(&x->df);

		x->decided = x->kind == IK_JCC && !x->memfn_body && need &&
			     (with_records(pl, k, pl->kin[k]) & need) == need;
	}
}

/* The table a relocation inside instruction x's bytes points at: its
 * entries' instructions into t[] (room for c->n), each once (a table has
 * more entries than the object has instructions when most are the
 * default); returns how many. */
static int table_targets(const struct ae_ctx *c, const struct ae_scan *s,
			 const struct insn *x, int *t)
{
	int m = 0;

	for (uint64_t o = x->off; o < x->off + x->len; o++) {
		const struct reloc *r = ae_find_reloc(s, x->sec, o);
		int ne;

		if (!r || !r->symsec)
			continue;
		ne = ae_table_entries(s, r->symsec, r->symval + r->addend, x->jt_len);
		for (int i = 0; i < ne && m < c->n; i++) {
			const struct reloc *e = ae_find_reloc(s, r->symsec, r->symval + r->addend + 8 * i);
			int k = e ? ae_insn_at(c, e->symsec, e->symval + e->addend) : -1, j = 0;

			while (j < m && t[j] != k)
				j++;
			if (k >= 0 && j == m)
				t[m++] = k;
		}
		break;
	}
	return m;
}

/*
 * An instruction whose first trace byte is a value-cache record's: its
 * first record before it or, with none, its first after it (nothing else
 * is written there; a witness on its way out would come first, and
 * place.c keeps that edge free). No such byte is a witness byte
 * (schema.h ae_is_wit_byte), so a branch side that reaches it needs no
 * witness of its own (place.c).
 */
static void find_vc_first(struct ae_ctx *c)
{
	for (int k = 0; k < c->n; k++) {
		struct insn *x = &c->in[k];
		uint32_t b = x->rec_before, a = x->rec_after & 0xffffu;

		x->vc_first = 0;
		if (!c->vcache || x->kind != IK_PLAIN || x->memfn || x->memfn_body ||
		    x->memfn_call || x->exit_entry || x->start_entry || x->rep || x->tload ||
		    x->setjmp_entry || ae_moves_retaddr(x) || x->df.kind == AE_DF_SYSCALL ||
		    (b & FS_BIT))
			continue;
		if (x->ngrp)
			continue;	/* a group's tag is a witness byte */
		if (b & 0xffffu)
			x->vc_first = (x->vc_before >> __builtin_ctz(b & 0xffffu)) & 1;
		else if (a)
			x->vc_first = (x->vc_after >> __builtin_ctz(a)) & 1 ? 2 : 0;
	}
}

int ae_data_plan(struct ae_ctx *c, const struct ae_scan *s)
{
	struct plan pl = { .c = c };
	int n = c->n, added, ret = 0, rounds = 0, direct = 0;

	int *from, *to, *tt = ae_xmalloc((n + 1) * sizeof(int));
	int np = 0, cap = c->ne + n + 1, ntl = 0;

	/* jump tables: their jumps are predecessors of every entry; a
	 * computed goto (a table load feeding jmp *%r) of every entry of
	 * every table load of the object */
	for (int k = 0; k < n; k++) {
		if (c->in[k].ind == IND_TABLE)
			cap += table_targets(c, s, &c->in[k], tt);
		if (c->in[k].tload)
			ntl += table_targets(c, s, &c->in[k], tt);
	}
	for (int k = 0; k < n; k++)
		if (c->in[k].kind == IK_JMP_IND && c->in[k].from_tload)
			cap += ntl;
	from = ae_xmalloc(cap * sizeof(int));
	to = ae_xmalloc(cap * sizeof(int));
	for (int k = 0; k < n; k++) {
		int m;

		if (c->in[k].ind == IND_TABLE) {
			m = table_targets(c, s, &c->in[k], tt);
			for (int i = 0; i < m; i++) {
				from[np] = k;
				to[np++] = tt[i];
			}
		}
	}
	for (int j = 0; j < n; j++) {
		if (!(c->in[j].kind == IK_JMP_IND && c->in[j].from_tload))
			continue;
		for (int k = 0; k < n; k++) {
			int m;

			if (!c->in[k].tload)
				continue;
			m = table_targets(c, s, &c->in[k], tt);
			for (int i = 0; i < m; i++) {
				from[np] = j;
				to[np++] = tt[i];
			}
		}
	}
	free(tt);

	pl.pstart = ae_xcalloc(n + 2, sizeof(int));
	pl.preds = ae_xmalloc(cap * sizeof(int));
	pl.entry = ae_xcalloc(n + 1, 1);
	pl.kin = ae_xcalloc(n + 1, sizeof(uint32_t));
	pl.req = ae_xcalloc(n + 1, sizeof(uint32_t));
	pl.narrow = ae_xcalloc(n + 1, sizeof(uint32_t));
	pl.cstart = ae_xcalloc(n + 2, sizeof(int));
	pl.by_calls = ae_xcalloc(n + 1, 1);
	pl.written = ae_xcalloc(n + 1, sizeof(uint32_t));
	for (int i = 0; i < c->ne; i++)
		if (c->e[i].to < n) {
			from[np] = c->e[i].from;
			to[np++] = c->e[i].to;
		}
	/*
	 * The graph has no edge where execution falls through assembler
	 * padding (the next instruction is not at off + len) or returns from
	 * a call into it: the next placed instruction of the section is
	 * where it goes (for a call that never returns, a needless merge).
	 */
	for (int i = 0; i + 1 < n; i++) {
		int k = c->by_place[i], nx = c->by_place[i + 1];
		const struct insn *x = &c->in[k];

		if (x->next >= 0 || c->in[nx].sec != x->sec)
			continue;
		if (x->kind == IK_PLAIN || x->kind == IK_JCC || x->kind == IK_CALL ||
		    x->kind == IK_CALL_IND) {
			from[np] = k;
			to[np++] = nx;
		}
	}
	for (int i = 0; i < np; i++)
		pl.pstart[to[i] + 1]++;
	for (int k = 0; k < n; k++)
		pl.pstart[k + 1] += pl.pstart[k];
	{
		int *fill = ae_xcalloc(n + 1, sizeof(int));

		for (int i = 0; i < np; i++)
			pl.preds[pl.pstart[to[i]] + fill[to[i]]++] = from[i];
		free(fill);
	}
	free(from);
	free(to);
	for (int k = 0; k < n; k++)
		pl.entry[k] = c->in[k].func_start || pl.pstart[k] == pl.pstart[k + 1];
	{
		char *taken = ae_xcalloc(n + 1, 1);

		mark_address_taken(c, s, taken);
		find_call_entries(&pl, taken);
		free(taken);
	}
	find_written(&pl);
	/* after a system call that may be clone: the child's new stack */
	for (int k = 0; k < n; k++)
		if (c->in[k].df.kind == AE_DF_SYSCALL)
			c->in[k].rec_after |= 1u << AE_DF_RSP;

	do {
		uint64_t sum = 0;

		added = 0;
		forward(&pl);
		memset(pl.req, 0, (n + 1) * sizeof(uint32_t));
		for (int k = 0; k < n; k++)
			sum += c->in[k].rec_before * 3 + c->in[k].rec_after * 5 + k;
		for (int k = 0; k < n && !ret; k++) {
			struct insn *x = &c->in[k];
			uint32_t need = x->df.uses & ~with_records(&pl, k, pl.kin[k]);

			/* a routine expanded offline needs its arguments only,
			 * and a call past its argument records makes them known */
			if (x->memfn_body)
				need = 0;
			if (x->memfn_call)
				need |= ae_memfn_args(x->memfn_call) & ~with_records(&pl, k, pl.kin[k]);

			if (need & FS_BIT) {
				x->rec_before |= FS_BIT;
				need &= ~FS_BIT;
				added = 1;
			}
			for (int r = 0; r < 16 && !ret; r++)
				if ((need >> r) & 1) {
					ret = place_record(&pl, k, r, direct);
					added = 1;
				}
		}
		/* nothing new placed, yet a register is still missing */
		if (added) {
			uint64_t now = 0;

			for (int k = 0; k < n; k++)
				now += c->in[k].rec_before * 3 + c->in[k].rec_after * 5 + k;
			if (now == sum && direct++)
				ret = ae_err(c, 0, "data tracing: record placement does not converge");
		}
		if (++rounds > 64 && added && !ret)
			ret = ae_err(c, 0, "data tracing: record placement does not converge");
	} while (added && !ret);
	if (!ret) {
		drop_needless_narrow(&pl);
		drop_needless_entry(&pl);
	}
	if (!ret && c->vcache)
		sink_past_flags(&pl);
	if (!ret && c->vcache)
		group_before(&pl);
	if (!ret) {
		uint32_t *lout = ae_xcalloc(n + 1, sizeof(uint32_t));

		backward(&pl, pl.req, lout, upper_live_in);
		for (int k = 0; k < n; k++) {
			struct insn *x = &c->in[k];

			if (x->memfn_body)
				continue;
			x->rec_low = x->rec_before & ~pl.req[k] & ~(1u << AE_DF_RSP) & 0xffffu;
			x->rec_after_low = x->rec_after & ~lout[k] & ~(1u << AE_DF_RSP) & 0xffffu;
		}
		free(lout);
	}
	if (!ret && c->vcache)
		vc_choose(&pl);
	/* a group needs them all coded, and at most AE_VC_GROUP_MAX */
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];

		if (x->ngrp < 2 || x->vc_before != (x->rec_before & 0xffffu) ||
		    x->ngrp != __builtin_popcount(x->vc_before) || x->ngrp > AE_VC_GROUP_MAX)
			x->ngrp = 0;
	}
	if (!ret) {
		find_known_tables(&pl);
		find_decided(&pl);
		find_vc_first(c);
	}
	ae_memfn_records(c);
	for (int k = 0; k < n; k++)
		c->in[k].drec = c->in[k].rec_before || c->in[k].rec_after ||
				ae_df_vsib_bytes(&c->in[k].df);
	/* AECC_DATA_DEBUG=1: per instruction, its first predecessor, the
	 * known set on entry, address uses, writes and the records placed */
	if (getenv("AECC_DATA_DEBUG"))
		for (int k = 0; k < n; k++)
			fprintf(stderr, "%5d p%d kin %05x uses %05x writes %05x before %05x (low %04x) after %05x%s  %s\n",
				k, pl.pstart[k + 1] - pl.pstart[k] ? pl.preds[pl.pstart[k]] : -1, pl.kin[k], c->in[k].df.uses, c->in[k].df.writes,
				c->in[k].rec_before, c->in[k].rec_low, c->in[k].rec_after, pl.entry[k] ? " E" : "",
				c->a.st[c->in[k].stmt].text);
	free(pl.pstart);
	free(pl.preds);
	free(pl.entry);
	free(pl.kin);
	free(pl.req);
	free(pl.narrow);
	free(pl.cstart);
	free(pl.calls);
	free(pl.by_calls);
	free(pl.written);
	return ret;
}

/*
 * Bytes that hold r's value after x defines it: a zero-extending load of
 * a byte or word needs 1 or 2, a 32-bit write 4 (the upper half is 0;
 * not where the destination may be kept whole), a sign-extending load to
 * 64 bits its source's size (*sext set).
 */
static int def_width(const struct insn *x, int r, int *sext)
{
	const struct ae_df_op *op = &x->df;

	*sext = 0;
	if (x->kind == IK_CALL || x->kind == IK_CALL_IND || op->dst != r)
		return 8;
	if (op->kind == AE_DF_MOVSX && op->dw == 8 && op->has_mem &&
	    (op->mem.size == 1 || op->mem.size == 2 || op->mem.size == 4)) {
		*sext = 1;
		return op->mem.size;
	}
	if (op->kind == AE_DF_MOVZX && (op->dw == 4 || op->dw == 8) &&
	    (op->has_mem ? op->mem.size == 1 || op->mem.size == 2 : op->sw == 1 || op->sw == 2))
		return op->has_mem ? op->mem.size : op->sw;
	if (op->dw == 4 && op->kind != AE_DF_XCHG && !x->keeps_dst)
		return 4;
	return 8;
}

void ae_data_events(struct ae_ctx *c, int k,
		    void (*add)(struct ae_ctx *c, int k, int kind, int width, int flag,
				uint32_t a, uint32_t b))
{
	const struct insn *x = &c->in[k];

	if (x->rec_before & FS_BIT)
		add(c, k, AE_EV_VAL, 8, AE_VAL_FSBASE, 0, 0);
	for (int i = 0; i < x->ngrp; i++) {
		int r = x->grp[i];

		add(c, k, AE_EV_VAL, (x->rec_low >> r) & 1 ? 4 : 8,
		    (x->rec_low >> r) & 1 ? AE_VAL_REG_VC_LOW : AE_VAL_REG_VC, r,
		    ae_vc_slot(c->objid, k, r, 0) | (i ? 0 : AE_VC_GROUP(x->ngrp)));
	}
	for (int r = 0; r < 16 && !x->ngrp; r++)
		if ((x->vc_before >> r) & 1)
			add(c, k, AE_EV_VAL, (x->rec_low >> r) & 1 ? 4 : 8,
			    (x->rec_low >> r) & 1 ? AE_VAL_REG_VC_LOW : AE_VAL_REG_VC, r,
			    ae_vc_slot(c->objid, k, r, 0));
		else if ((x->rec_before >> r) & 1)
			add(c, k, AE_EV_VAL, (x->rec_low >> r) & 1 ? 4 : 8, AE_VAL_REG, r, 0);
	/* a gather's index and mask: after the base register's record */
	if (ae_df_vsib_bytes(&x->df))
		add(c, k, AE_EV_VAL, ae_df_vsib_bytes(&x->df), AE_VAL_VSIB, 0, 0);
	for (int r = 0; r < 16; r++)
		if ((x->vc_after >> r) & 1) {
			int sext, w = def_width(x, r, &sext);
			int flag = sext ? AE_VAL_REG_VC_SEXT : AE_VAL_REG_VC;

			/* what follows reads the low half only */
			if (w == 8 && (x->rec_after_low >> r) & 1) {
				w = 4;
				flag = AE_VAL_REG_VC_LOW;
			}
			add(c, k, AE_EV_VAL_AFTER, w, flag, r, ae_vc_slot(c->objid, k, r, 1) |
			    (x->lc_scr >= 0 && r == x->df.dst ? AE_VC_BY_ADDR : 0));
		} else if ((x->rec_after >> r) & 1) {
			int sext, w = def_width(x, r, &sext);

			/* what follows reads the low half only */
			if (w == 8 && (x->rec_after_low >> r) & 1)
				w = 4;
			add(c, k, AE_EV_VAL_AFTER, w, sext ? AE_VAL_REG_SEXT : AE_VAL_REG, r, 0);
		}
}
