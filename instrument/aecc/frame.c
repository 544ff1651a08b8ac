// SPDX-License-Identifier: MIT
/*
 * frame.c - spill slots the regenerator knows (-fae-data). GCC keeps a
 * value that lives across calls or under register pressure in a slot of
 * its frame (`mov %rdi,0x8(%rsp)` ... `mov 0x8(%rsp),%rdi`). When the
 * value was known at the store, the regenerator, which sees every store
 * the traced code makes, still knows it at the reload (analysis/shadow.c),
 * unless something it does not see wrote the slot in between: the kernel
 * (a system call's buffer, a signal frame) or another thread. Both need
 * the slot's address, so a slot is followed only
 *
 *  - while no instruction of the procedure has let the frame's address
 *    out (lea off %rsp, %rsp copied or combined: from then on, in this
 *    activation, nothing is followed);
 *  - at a known offset from the procedure's entry %rsp (push, pop, add
 *    and sub of constants; anything else forgets every slot);
 *  - above %rsp - 128 (signal frames are written below the red zone).
 *
 * Callees write below the caller's %rsp; a callee that writes its stack
 * arguments does so in traced code, where the regenerator sees it (and
 * forgets a slot stored with an unknown value: a loud error, not a wrong
 * address). A call that may return twice (setjmp, vfork) forgets all.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "xalloc.h"

#define D_NONE	INT32_MAX	/* not reached yet */
#define D_TOP	INT32_MIN	/* not a known offset */
#define RED_ZONE 128
#define MAX_KEYS 64

/* Does op let the frame's address out (into a register or memory)? */
static int frame_escape(const struct ae_df_op *op)
{
	if (op->kind == AE_DF_LEA)
		return (op->mem.base == AE_DF_RSP || op->mem.index == AE_DF_RSP) &&
		       op->dst != AE_DF_RSP;
	if (op->src == AE_DF_RSP)
		return 1;
	if (op->dst == AE_DF_RSP)
		/* push %rsp, xchg, xadd, cmp %rsp... */
		return op->kind == AE_DF_PUSH || op->kind == AE_DF_XCHG || op->kind == AE_DF_OTHER;
	return 0;
}

/* %rsp after x (on the way to its successors) from d before it. */
static int32_t delta_after(const struct insn *x, int32_t d)
{
	const struct ae_df_op *op = &x->df;

	if (d == D_NONE || d == D_TOP)
		return d;
	if (x->kind == IK_CALL || x->kind == IK_CALL_IND)
		return d;	/* the callee's ret pops what the call pushed */
	switch (op->kind) {
	case AE_DF_PUSH:
		return d - 8;
	case AE_DF_POP:
		return op->dst == AE_DF_RSP ? D_TOP : d + 8;
	case AE_DF_ADD:
	case AE_DF_SUB:
		if (op->dst == AE_DF_RSP && op->src < 0 && !op->has_mem && op->dw == 8 &&
		    op->imm > -(1 << 24) && op->imm < (1 << 24))
			return op->kind == AE_DF_ADD ? d + (int32_t)op->imm : d - (int32_t)op->imm;
		break;
	case AE_DF_LEA:
		if (op->dst == AE_DF_RSP && op->mem.base == AE_DF_RSP && op->mem.index < 0 &&
		    op->dw == 8 && op->mem.disp > -(1 << 24) && op->mem.disp < (1 << 24))
			return d + (int32_t)op->mem.disp;
		break;
	default:
		break;
	}
	return (op->writes >> AE_DF_RSP) & 1 ? D_TOP : d;
}

static int32_t meet(int32_t a, int32_t b)
{
	if (a == D_NONE)
		return b;
	if (b == D_NONE || a == b)
		return a;
	return D_TOP;
}

/* A memory operand at a constant offset from %rsp. */
static int on_stack(const struct ae_df_op *op)
{
	return op->has_mem && op->mem.base == AE_DF_RSP && op->mem.index < 0 &&
	       !op->mem.fs && !op->mem.rip;
}

/* A call to a routine that may return twice (its frame's slots then hold
 * what was stored after the first return). */
static int returns_twice(const struct ae_ctx *c, const struct insn *x)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "vfork", "getcontext",
	};
	char m[32];
	const char *ops;
	size_t n;

	if (x->kind != IK_CALL && x->kind != IK_CALL_IND)
		return 0;
	if (x->kind == IK_CALL_IND)
		return 1;	/* it might be setjmp */
	ae_insn_split(c->a.st[x->stmt].text, m, sizeof(m), &ops);
	n = strcspn(ops, "@ \t");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !strncmp(ops, names[i], n))
			return 1;
	return 0;
}

static int key_of(const struct ae_frames *f, int32_t off, int size)
{
	for (int i = 0; i < f->nkeys; i++)
		if (f->key_off[i] == off && f->key_size[i] == size)
			return i;
	return -1;
}

/* Keys overlapping [lo, hi). */
static uint64_t overlapping(const struct ae_frames *f, int64_t lo, int64_t hi)
{
	uint64_t m = 0;

	for (int i = 0; i < f->nkeys; i++)
		if (f->key_off[i] < hi && f->key_off[i] + f->key_size[i] > lo)
			m |= 1ull << i;
	return m;
}

struct cand {
	int32_t off;
	int size, count;
};

static int by_count(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return y->count - x->count;
}

/* The slots reloads read, the most often read first (at most MAX_KEYS). */
static void choose_keys(struct ae_frames *f, const struct ae_ctx *c, const int32_t *delta,
			const uint8_t *esc)
{
	struct cand *cd = ae_xmalloc((c->n + 1) * sizeof(*cd));
	int nc = 0;

	for (int k = 0; k < c->n; k++) {
		const struct ae_df_op *op = &c->in[k].df;
		int32_t off;
		int i;

		if (c->in[k].kind != IK_PLAIN || !on_stack(op) || !ae_df_is_reload(op) ||
		    op->dst == AE_DF_RSP || esc[k] || delta[k] == D_NONE || delta[k] == D_TOP ||
		    op->mem.disp < -(1 << 24) || op->mem.disp > (1 << 24))
			continue;
		off = delta[k] + (int32_t)op->mem.disp;
		for (i = 0; i < nc; i++)
			if (cd[i].off == off && cd[i].size == op->mem.size)
				break;
		if (i == nc)
			cd[nc++] = (struct cand){ off, op->mem.size, 0 };
		cd[i].count++;
	}
	qsort(cd, nc, sizeof(*cd), by_count);
	f->nkeys = nc < MAX_KEYS ? nc : MAX_KEYS;
	f->key_off = ae_xmalloc((f->nkeys + 1) * sizeof(*f->key_off));
	f->key_size = ae_xmalloc(f->nkeys + 1);
	for (int i = 0; i < f->nkeys; i++) {
		f->key_off[i] = cd[i].off;
		f->key_size[i] = (uint8_t)cd[i].size;
	}
	free(cd);
}

/* What instruction k (frame offset d on entry, escaped: esc) does to slots. */
static void transfer(struct ae_frames *f, const struct ae_ctx *c, int k, int32_t d, int esc)
{
	const struct insn *x = &c->in[k];
	const struct ae_df_op *op = &x->df;
	int32_t dout = delta_after(x, d);
	uint64_t kill = 0, lost;

	f->gen[k] = f->gen_reg[k] = f->load[k] = -1;
	if (esc || frame_escape(op) || d == D_NONE || d == D_TOP || dout == D_TOP ||
	    returns_twice(c, x)) {
		f->kill[k] = ~0ull;
		return;
	}
	if (op->has_mem && (op->mem.acc == AE_ACC_S || op->mem.acc == AE_ACC_M) &&
	    op->mem.base == AE_DF_RSP) {
		if (!on_stack(op) || op->kind == AE_DF_POP || op->mem.size == 0 ||
		    op->mem.size > 64 || op->mem.disp < -(1 << 24) || op->mem.disp > (1 << 24))
			kill = ~0ull;
		else
			kill |= overlapping(f, (int64_t)d + op->mem.disp,
					    (int64_t)d + op->mem.disp + op->mem.size);
	}
	if (op->kind == AE_DF_PUSH || op->kind == AE_DF_CALL)
		kill |= overlapping(f, (int64_t)d - 8, d);
	/* the callee's frame; below the red zone, a signal frame's */
	lost = overlapping(f, INT64_MIN / 2, (int64_t)dout - RED_ZONE);
	if (x->kind == IK_CALL || x->kind == IK_CALL_IND)
		lost |= overlapping(f, INT64_MIN / 2, d);
	kill |= lost;
	f->kill[k] = kill;
	if (kill == ~0ull || !on_stack(op) || op->mem.disp < -(1 << 24) ||
	    op->mem.disp > (1 << 24))
		return;
	if (op->kind == AE_DF_MOV && op->dst < 0 && op->mem.acc == AE_ACC_S &&
	    (op->src < 0 || op->sw == op->mem.size)) {
		f->gen[k] = (int8_t)key_of(f, d + (int32_t)op->mem.disp, op->mem.size);
		f->gen_reg[k] = (int8_t)op->src;
		/* a slot below the red zone after the store is not followed */
		if (f->gen[k] >= 0 && ((lost >> f->gen[k]) & 1))
			f->gen[k] = -1;
	}
	if (x->kind == IK_PLAIN && ae_df_is_reload(op) && op->dst != AE_DF_RSP)
		f->load[k] = (int8_t)key_of(f, d + (int32_t)op->mem.disp, op->mem.size);
}

void ae_frames_build(struct ae_frames *f, const struct ae_ctx *c, const int *pstart,
		    const int *preds, const char *entry)
{
	int n = c->n, changed;
	int32_t *delta = ae_xmalloc((n + 1) * sizeof(*delta));
	uint8_t *esc = ae_xcalloc(n + 1, 1);

	memset(f, 0, sizeof(*f));
	for (int k = 0; k < n; k++)
		delta[k] = entry[k] ? 0 : D_NONE;
	do {
		changed = 0;
		for (int k = 0; k < n; k++) {
			int32_t d = entry[k] ? 0 : D_NONE;
			uint8_t e = 0;

			for (int i = pstart[k]; i < pstart[k + 1]; i++) {
				const struct insn *p = &c->in[preds[i]];

				if (delta[preds[i]] == D_NONE)
					continue;
				d = meet(d, delta_after(p, delta[preds[i]]));
				e |= esc[preds[i]] | frame_escape(&p->df);
			}
			if (d != delta[k] || e != esc[k]) {
				delta[k] = d;
				esc[k] = e;
				changed = 1;
			}
		}
	} while (changed);
	choose_keys(f, c, delta, esc);
	f->kill = ae_xmalloc((n + 1) * sizeof(*f->kill));
	f->gen = ae_xmalloc(n + 1);
	f->gen_reg = ae_xmalloc(n + 1);
	f->load = ae_xmalloc(n + 1);
	for (int k = 0; k < n; k++)
		transfer(f, c, k, delta[k], esc[k]);
	free(delta);
	free(esc);
}

uint64_t ae_frames_out(const struct ae_frames *f, int k, uint64_t in, uint32_t known)
{
	uint64_t out = in & ~f->kill[k];

	if (f->gen[k] >= 0 && (f->gen_reg[k] < 0 || ((known >> f->gen_reg[k]) & 1)))
		out |= 1ull << f->gen[k];
	return out;
}

void ae_frames_free(struct ae_frames *f)
{
	free(f->key_off);
	free(f->key_size);
	free(f->kill);
	free(f->gen);
	free(f->gen_reg);
	free(f->load);
	memset(f, 0, sizeof(*f));
}
