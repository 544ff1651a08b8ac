// SPDX-License-Identifier: MIT
/*
 * emit.c - the two assembly files written for one object: the twin (the
 * source with a local label before every instruction and the .ae_imap
 * table of them) and the instrumented file (witness and value sequences
 * around the instructions, taken-edge stubs, the sequence table
 * __ae_seqtab, and the schema and twin object embedded by .incbin).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "memfn.h"
#include "regs.h"
#include "vcprof.h"
#include "xalloc.h"

struct out {
	FILE *f;
	int nseq;
	int nstub;
	int ncmp;
	/* value-cache records: the slot of each store .Laevu<i>, and
	 * whether a store into the address cache .Laevw<i> follows it, for
	 * .ae_vcupd */
	uint32_t *vcslot;
	uint8_t *vclc;
	int nvc, capvc;
	int ngroup;		/* value-cache groups, for their labels */
	/* pending taken-edge stubs of the current section */
	char **stub;
	int nstubs, capstubs;
};

static void seq_begin(struct out *o)
{
	fprintf(o->f, ".Lss%d:\n", o->nseq);
}

static void seq_end(struct out *o)
{
	fprintf(o->f, ".Lse%d:\n", o->nseq++);
}

static void emit_witness(struct out *o, FILE *f, int id, int width)
{
	static const char sfx[] = { 0, 'b', 'w', 0, 'l' };

	fprintf(f, ".Lss%d:\n\tmov%c\t$%d, (%%r15)\n\tleaq\t%d(%%r15), %%r15\n.Lse%d:\n",
		o->nseq, sfx[width], id, width, o->nseq);
	o->nseq++;
}

static void emit_value_reg(struct out *o, int reg, int width)
{
	const char *name = width == 1 ? ae_reg8[reg] : width == 2 ? ae_reg16[reg] :
			   width == 4 ? ae_reg32[reg] : ae_reg64[reg];
	static const char sfx[] = { 0, 'b', 'w', 0, 'l', 0, 0, 0, 'q' };

	seq_begin(o);
	fprintf(o->f, "\tmov%c\t%%%s, (%%r15)\n\tleaq\t%d(%%r15), %%r15\n",
		sfx[width], name, width);
	seq_end(o);
}

/* Gather x's AE_VAL_VSIB record: its index register, then its mask
 * (dataflow.h ae_df_vsib_bytes()). EVEX moves where a register only
 * EVEX names (16-31) or a zmm is involved. */
static void emit_value_vsib(struct out *o, const struct insn *x)
{
	const struct ae_df_mem *m = &x->df.mem;
	static const char *const pfx[] = { "x", "y", "z" };
	const char *ip = pfx[m->vsib / 32];
	const char *mov = m->vsib == 64 || m->vidx >= 16 ? "vmovdqu64" : "vmovdqu";

	seq_begin(o);
	fprintf(o->f, "\t%s\t%%%smm%d, (%%r15)\n", mov, ip, m->vidx);
	if (m->vmask_k)
		fprintf(o->f, "\tkmovw\t%%k%d, %d(%%r15)\n", m->vmask, m->vsib);
	else
		fprintf(o->f, "\tvmovdqu\t%%%smm%d, %d(%%r15)\n", pfx[m->vmask_w / 32],
			m->vmask, m->vsib);
	fprintf(o->f, "\tleaq\t%d(%%r15), %%r15\n", ae_df_vsib_bytes(&x->df));
	seq_end(o);
}

static void add_stub(struct out *o, char *text)
{
	if (o->nstubs == o->capstubs) {
		o->capstubs = o->capstubs ? o->capstubs * 2 : 64;
		o->stub = ae_xrealloc(o->stub, o->capstubs * sizeof(char *));
	}
	o->stub[o->nstubs++] = text;
}

/*
 * The start of a coding's sequence: the difference of register r64 and
 * slot sl, plus bias, into t; on to label .L<next><n> unless at most max
 * (the difference is in [-bias, max - bias]). sfx 'q' for 64 bits, 'l'
 * for low halves (the difference wraps at 32 bits; t's upper half is
 * then zero, as the leas that follow need). The bias is added first, by
 * a lea into t: one instruction fewer than a copy and an add.
 */
static void vc_prelude(FILE *f, char sfx, const char *r64, const char *t, const char *sl,
		       long bias, long max, const char *next, int n)
{
	fprintf(f, "\tlea%c\t%ld(%%%s), %%%s\n\tsub%c\t%s, %%%s\n"
		"\tcmp%c\t$%ld, %%%s\n\tja\t.L%s%d\n",
		sfx, bias, r64, t, sfx, sl, t, sfx, max, t, next, n);
}

/* The stores after a coding's commit, labelled .Laevu<i> (into the value
 * slot sl) and, with the address cache (index in lt), .Laevw<i> (into its
 * slot), for .ae_vcupd. Returns nothing. */
static void vc_store(struct out *o, FILE *f, char q, const char *r, const char *sl,
		     const char *lt, uint32_t slot)
{
	int i = o->nvc++;

	if (o->nvc > o->capvc) {
		o->capvc = o->capvc ? o->capvc * 2 : 256;
		o->vcslot = ae_xrealloc(o->vcslot, o->capvc * sizeof(uint32_t));
		o->vclc = ae_xrealloc(o->vclc, o->capvc);
	}
	o->vcslot[i] = slot;
	o->vclc[i] = !!lt;
	fprintf(f, ".Laevu%d:\n\tmov%c\t%%%s, %s\n", i, q, r, sl);
	if (lt)
		fprintf(f, ".Laevw%d:\n\tmovq\t%%%s, %%fs:%s@tpoff(,%%%s,2)\n", i, r, AE_LC_SYMBOL,
			lt);
}

/* vc_store() out of line, then back to .Laevr<n>, after the record's
 * inline code */
static void vc_store_back(struct out *o, FILE *sf, char q, const char *r, const char *sl,
			  const char *lt, uint32_t slot, int n)
{
	vc_store(o, sf, q, r, sl, lt, slot);
	fprintf(sf, "\tjmp\t.Laevr%d\n", n);
}

/* The sequence of the one-byte difference (2 * d) of register reg (r64)
 * and slot sl in scratch t, on to .L<next><n> when it does not fit */
static void vc_one_byte(struct out *o, char q, const char *r64, int scr, const char *t,
			const char *sl, const char *next, int n)
{
	const char *t64 = ae_reg64[scr];

	seq_begin(o);
	vc_prelude(o->f, q, r64, t, sl, 64, 127, next, n);
	fprintf(o->f, "\tleaq\t-128(%%%s,%%%s), %%%s\n\tmovb\t%%%s, (%%r15)\n"
		"\tleaq\t1(%%r15), %%r15\n", t64, t64, t64, ae_reg8[scr]);
	seq_end(o);
}

/*
 * The address cache's slot for the load from memop (ae_lc_slot(): the
 * address over 4, modulo AE_LC_SLOTS), as 2 * its byte offset into
 * __ae_lc, in register lscr: the address's bits 2-13, in place, which the
 * accesses scale by 2 (one instruction fewer than a shift and a mask).
 */
static void vc_lc_index(FILE *f, const char *memop, int lscr)
{
	fprintf(f, "\tleaq\t%s, %%%s\n\tandl\t$%d, %%%s\n", memop, ae_reg64[lscr],
		(AE_LC_SLOTS - 1) << 2, ae_reg32[lscr]);
}

/* The sequence of the address cache's hit (AE_VC_BY_ADDR_HIT): does the
 * address cache's slot (lt, vc_lc_index()) hold reg? On to .L<next><n>
 * if not. */
static void vc_lc_hit(struct out *o, int reg, const char *lt, const char *next, int n)
{
	seq_begin(o);
	fprintf(o->f, "\tcmpq\t%%%s, %%fs:%s@tpoff(,%%%s,2)\n\tjne\t.L%s%d\n"
		"\tmovb\t$%d, (%%r15)\n\tleaq\t1(%%r15), %%r15\n",
		ae_reg64[reg], AE_LC_SYMBOL, lt, next, n, AE_VC_BY_ADDR_HIT);
	seq_end(o);
}

/*
 * Register reg coded against its value-cache slot (schema.h AE_VC_*)
 * with scratch register scr and the flags, both dead here (data.c); a
 * full value is its low `width` bytes (8, or 4 where the register is
 * those extended). With `low` (AE_VAL_REG_VC_LOW), only the low halves
 * of the register and the slot count, and only the slot's low half is
 * written. With `memop` (AE_VC_BY_ADDR), the load just done from that
 * operand: where the one-byte difference does not reach, the address
 * cache's slot is tried (its index in lscr, dead here too); with
 * `lfirst`, before the difference (a place whose loads mostly hit it:
 * the same stream, fewer instructions). One sequence per coding; each
 * recomputes its comparison from the slots, so re-running one after a
 * cut (invariant 2) needs nothing from another. The slots are written
 * after the commit, outside every sequence: a cut before the commit
 * leaves them alone, so a re-run codes against the same values. The
 * first coding tried is inline; the others are out of line with the
 * stubs.
 */
static void emit_value_vc(struct out *o, int reg, int scr, uint32_t slot, int width, int low,
			  int lscr, const char *memop, int lfirst)
{
	const char *r = low ? ae_reg32[reg] : ae_reg64[reg], *r64 = ae_reg64[reg];
	const char *t = low ? ae_reg32[scr] : ae_reg64[scr], *t64 = ae_reg64[scr];
	const char *lt = memop ? ae_reg64[lscr] : NULL;
	char q = low ? 'l' : 'q';
	int n = o->nvc;
	char sl[64], *buf;
	size_t bl;
	FILE *f = o->f, *sf;

	snprintf(sl, sizeof(sl), "%%fs:%s@tpoff+%u", AE_VC_SYMBOL, 8 * slot);
	sf = open_memstream(&buf, &bl);
	if (!sf) {
		fprintf(stderr, "aecc: open_memstream: %s\n", strerror(errno));
		abort();
	}
	if (memop && lfirst) {
		vc_lc_index(f, memop, lscr);
		vc_lc_hit(o, reg, lt, "aevd", n);
		vc_store(o, f, q, r, sl, lt, slot);
		fprintf(f, ".Laevr%d:\n", n);
		o->f = sf;
		fprintf(sf, ".Laevd%d:\n", n);
		vc_one_byte(o, q, r64, scr, t, sl, "aevb", n);
		vc_store_back(o, sf, q, r, sl, NULL, slot, n);
	} else {
		vc_one_byte(o, q, r64, scr, t, sl, memop ? "aeva" : "aevb", n);
		vc_store(o, f, q, r, sl, NULL, slot);
		fprintf(f, ".Laevr%d:\n", n);
		o->f = sf;
		if (memop) {
			fprintf(sf, ".Laeva%d:\n", n);
			vc_lc_index(sf, memop, lscr);
			vc_lc_hit(o, reg, lt, "aevb", n);
			vc_store_back(o, sf, q, r, sl, lt, slot, n);
		}
	}
	/* two bytes: 4 * d + 1 */
	fprintf(sf, ".Laevb%d:\n", n);
	seq_begin(o);
	vc_prelude(sf, q, r64, t, sl, 8192, 16383, "aevt", n);
	fprintf(sf, "\tleaq\t-32767(,%%%s,4), %%%s\n\tmovw\t%%%s, (%%r15)\n\tleaq\t2(%%r15), %%r15\n",
		t64, t64, ae_reg16[scr]);
	seq_end(o);
	vc_store_back(o, sf, q, r, sl, lt, slot, n);
	/* three bytes: 8 * d + 3 */
	fprintf(sf, ".Laevt%d:\n", n);
	seq_begin(o);
	vc_prelude(sf, q, r64, t, sl, 0x100000, 0x1fffff, "aevf", n);
	fprintf(sf, "\tleaq\t-0x7ffffd(,%%%s,8), %%%s\n\tmovw\t%%%s, (%%r15)\n\tshrl\t$16, %%%s\n"
		"\tmovb\t%%%s, 2(%%r15)\n\tleaq\t3(%%r15), %%r15\n",
		t64, t64, ae_reg16[scr], ae_reg32[scr], ae_reg8[scr]);
	seq_end(o);
	vc_store_back(o, sf, q, r, sl, lt, slot, n);
	/* the tag, then the value */
	fprintf(sf, ".Laevf%d:\n", n);
	seq_begin(o);
	fprintf(sf, "\tmovb\t$%d, (%%r15)\n\tmov%c\t%%%s, 1(%%r15)\n\tleaq\t%d(%%r15), %%r15\n",
		AE_VC_FULL, width == 4 ? 'l' : 'q', width == 4 ? ae_reg32[reg] : ae_reg64[reg],
		1 + width);
	seq_end(o);
	vc_store_back(o, sf, q, r, sl, lt, slot, n);
	o->f = f;
	fclose(sf);
	add_stub(o, buf);
}

/* The compare of a group's record e with its slot (the flags: equal?) */
static void vc_group_cmp(FILE *f, const struct ae_event *e)
{
	int low = e->flag == AE_VAL_REG_VC_LOW;

	fprintf(f, "\tcmp%c\t%%fs:%s@tpoff+%u, %%%s\n", low ? 'l' : 'q', AE_VC_SYMBOL,
		8 * AE_VC_SLOT_OF(e->b), low ? ae_reg32[e->a] : ae_reg64[e->a]);
}

/* Records 0 .. n-1 of group g compared in turn, to .Laeg<g>_<i> at the
 * first that differs */
static void vc_group_cmps(FILE *f, const struct ae_event *ev, int n, int g)
{
	for (int i = 0; i < n; i++) {
		vc_group_cmp(f, &ev[i]);
		fprintf(f, "\tjne\t.Laeg%d_%d\n", g, i);
	}
}

/*
 * A group of n value-cache records before x (AE_VC_GROUP, events ev[0..n)):
 * one sequence compares each register with its slot and writes
 * AE_VC_GROUP_HIT(n) when all are equal, AE_VC_GROUP_HIT(n - 1) when only
 * the last differs (the last record, often a value loaded for this use
 * alone, is then coded by itself after the commit: the flags of its
 * compare survive the commit's lea, and a handler taken in between
 * restores them). At an earlier record i that differs, out of line: a
 * sequence of its own compares the first i again (a cut re-runs it, and
 * a handler taken after the first compares may have changed a slot) and
 * writes AE_VC_GROUP_HIT(i), then records i .. n-1 are coded one by one
 * (record 0 differing: all of them, no tag). Hits store nothing: their
 * slots hold their values already.
 */
static void emit_vc_group(struct out *o, const struct insn *x, const struct ae_event *ev, int n)
{
	int g = o->ngroup++;
	FILE *f = o->f, *sf;
	char *buf;
	size_t bl;

	seq_begin(o);
	vc_group_cmps(f, ev, n - 1, g);
	fprintf(f, "\tmovb\t$%d, (%%r15)\n", AE_VC_GROUP_HIT(n - 1));
	vc_group_cmp(f, &ev[n - 1]);
	fprintf(f, "\tjne\t.Laegp%d\n\tmovb\t$%d, (%%r15)\n.Laegp%d:\n\tleaq\t1(%%r15), %%r15\n",
		g, AE_VC_GROUP_HIT(n), g);
	seq_end(o);
	fprintf(f, "\tjne\t.Laegi%d_%d\n.Laegd%d:\n", g, n - 1, g);

	sf = open_memstream(&buf, &bl);
	if (!sf) {
		fprintf(stderr, "aecc: open_memstream: %s\n", strerror(errno));
		abort();
	}
	o->f = sf;
	for (int i = n - 2; i > 0; i--) {
		fprintf(sf, ".Laeg%d_%d:\n", g, i);
		seq_begin(o);
		vc_group_cmps(sf, ev, i, g);
		fprintf(sf, "\tmovb\t$%d, (%%r15)\n\tleaq\t1(%%r15), %%r15\n", AE_VC_GROUP_HIT(i));
		seq_end(o);
		fprintf(sf, "\tjmp\t.Laegi%d_%d\n", g, i);
	}
	fprintf(sf, ".Laeg%d_0:\n", g);
	for (int i = 0; i < n; i++) {
		fprintf(sf, ".Laegi%d_%d:\n", g, i);
		emit_value_vc(o, ev[i].a, x->vc_scr_before, AE_VC_SLOT_OF(ev[i].b), ev[i].width,
			      ev[i].flag == AE_VAL_REG_VC_LOW, -1, NULL, 0);
	}
	fprintf(sf, "\tjmp\t.Laegd%d\n", g);
	o->f = f;
	fclose(sf);
	add_stub(o, buf);
}

/*
 * The %fs base, read from musl's thread self pointer at %fs:0 through a
 * scratch register pushed below the red zone (the code around may keep
 * data there; lea leaves the flags alone). Invariant 2: the load is the
 * sequence's first instruction, re-running it is harmless.
 */
static void emit_fsbase(struct out *o, const struct insn *x)
{
	static const int cand[] = { 1, 2, 6, 7, 8, 9, 10, 11 };
	int scr = 1;

	for (int j = 0; j < 8; j++)
		if (!(x->df.uses & (1u << cand[j]))) {
			scr = cand[j];
			break;
		}
	fprintf(o->f, "\tleaq\t-128(%%rsp), %%rsp\n\tpushq\t%%%s\n", ae_reg64[scr]);
	seq_begin(o);
	fprintf(o->f, "\tmovq\t%%fs:0, %%%s\n\tmovq\t%%%s, (%%r15)\n\tleaq\t8(%%r15), %%r15\n",
		ae_reg64[scr], ae_reg64[scr]);
	seq_end(o);
	fprintf(o->f, "\tpopq\t%%%s\n\tleaq\t128(%%rsp), %%rsp\n", ae_reg64[scr]);
}

/*
 * A compare's stop record (schema.h AE_MEMFN_STOP_*): at the routine's
 * entry, scan both areas as musl's byte loops will (memcmp: while k < n
 * and the bytes are equal; strcmp: and not a terminator; strncmp: up to
 * n - 1) and record where the scan stops with the bytes there. Only
 * registers the ABI kills at a call are used (%rax, %rcx, %r8, %r9) and
 * the flags, so the sequence may compute: re-running it from its start
 * (invariant 2) reads the same bytes again. It reads no byte the routine
 * does not read, so it faults only where the routine would.
 */
static void emit_cmp_stop(struct out *o, int kind)
{
	FILE *f = o->f;
	int n = o->ncmp++;

	seq_begin(o);
	fprintf(f, "\txorl\t%%eax, %%eax\n\txorl\t%%ecx, %%ecx\n\txorl\t%%r8d, %%r8d\n");
	if (kind == AE_MEMFN_STRNCMP)
		fprintf(f, "\ttestq\t%%rdx, %%rdx\n\tje\t.Laecmp%d_done\n", n);
	fprintf(f, ".Laecmp%d_loop:\n", n);
	if (kind == AE_MEMFN_MEMCMP)
		fprintf(f, "\txorl\t%%ecx, %%ecx\n\txorl\t%%r8d, %%r8d\n"
			"\tcmpq\t%%rdx, %%rax\n\tjae\t.Laecmp%d_done\n", n);
	fprintf(f, "\tmovzbl\t(%%rdi,%%rax), %%ecx\n\tmovzbl\t(%%rsi,%%rax), %%r8d\n");
	if (kind == AE_MEMFN_STRNCMP)
		fprintf(f, "\tleaq\t1(%%rax), %%r9\n\tcmpq\t%%rdx, %%r9\n\tjae\t.Laecmp%d_done\n", n);
	if (kind != AE_MEMFN_MEMCMP)
		fprintf(f, "\ttestl\t%%ecx, %%ecx\n\tje\t.Laecmp%d_done\n", n);
	fprintf(f, "\tcmpl\t%%r8d, %%ecx\n\tjne\t.Laecmp%d_done\n"
		"\taddq\t$1, %%rax\n\tjmp\t.Laecmp%d_loop\n"
		".Laecmp%d_done:\n"
		"\tshlq\t$48, %%rcx\n\tshlq\t$56, %%r8\n\torq\t%%rcx, %%rax\n\torq\t%%r8, %%rax\n"
		"\tmovq\t%%rax, (%%r15)\n\tleaq\t8(%%r15), %%r15\n", n, n, n);
	seq_end(o);
}

static void flush_stubs(struct out *o)
{
	for (int i = 0; i < o->nstubs; i++) {
		fputs(o->stub[i], o->f);
		free(o->stub[i]);
	}
	o->nstubs = 0;
}

/* The value and address caches (TLS common symbols), each on whole
 * pages of its own: no page holds slots of both (tests/data/vc_signal.c
 * makes one cache read-only while the other is written). */
static void emit_caches(FILE *f)
{
	fprintf(f, "\t.tls_common\t%s, %d, 4096\n\t.tls_common\t%s, %d, 4096\n",
		AE_VC_SYMBOL, 8 * AE_VC_SLOTS, AE_LC_SYMBOL, 8 * AE_LC_SLOTS);
}

/*
 * A stub jumps to its branch's target from elsewhere in the section, so a
 * numeric local label reference ("1f", "2b") is resolved to the unique
 * name given to that label definition.
 */
static const char *stub_target(struct ae_ctx *c, size_t si, const char *ops,
			       char *buf, size_t len)
{
	size_t n = strlen(ops);
	long dir;

	if (n < 2 || (ops[n - 1] != 'f' && ops[n - 1] != 'b'))
		return ops;
	for (size_t i = 0; i < n - 1; i++)
		if (!isdigit((unsigned char)ops[i]))
			return ops;
	dir = ops[n - 1] == 'f' ? 1 : -1;
	for (long i = (long)si + dir; i >= 0 && i < (long)c->a.n; i += dir) {
		struct ae_stmt *t = &c->a.st[i];

		if (t->kind == AE_ST_LABEL && strlen(t->text) == n - 1 &&
		    !strncmp(t->text, ops, n - 1)) {
			snprintf(buf, len, ".Laenum%ld", i);
			return buf;
		}
	}
	return ops;
}

static void write_instrumented(struct ae_ctx *c, FILE *f, const char *orig_o,
			      const char *schema_bin)
{
	struct out o = { .f = f };
	int *ev_first = ae_xmalloc((c->n + 1) * sizeof(int));
	char m[32], numbuf[48], opbuf[AE_LOAD_OPERAND_MAX];

	/* events are sorted by instruction; index the first of each */
	for (int k = 0; k <= c->n; k++)
		ev_first[k] = -1;
	for (int i = c->nev - 1; i >= 0; i--)
		ev_first[c->ev[i].insn] = i;

	for (size_t si = 0; si < c->a.n; si++) {
		struct ae_stmt *s = &c->a.st[si];
		int k = s->insn;

		if (s->kind == AE_ST_LABEL) {
			fprintf(f, "%s:\n", s->text);
			/* a name for numeric labels that stubs can use */
			if (isdigit((unsigned char)s->text[0]))
				fprintf(f, ".Laenum%zu:\n", si);
			continue;
		}
		if (s->kind == AE_ST_DIRECTIVE) {
			if (!strncmp(s->text, ".size", 5) || !strncmp(s->text, ".section", 8) ||
			    !strcmp(s->text, ".text") || !strncmp(s->text, ".text ", 6) ||
			    !strncmp(s->text, ".data", 5) || !strncmp(s->text, ".bss", 4) ||
			    !strcmp(s->text, ".previous") || !strncmp(s->text, ".pushsection", 12) ||
			    !strcmp(s->text, ".popsection"))
				flush_stubs(&o);
			fprintf(f, "\t%s\n", s->text);
			continue;
		}
		if (k < 0) {
			fprintf(f, "\t%s\n", s->text);
			continue;
		}
		/* the program ends: the runtime may have to save the trace */
		if (c->in[k].exit_entry)
			fprintf(f, "\tcall\t__ae_exit_hook\n");
		/* before the instruction: witnesses, then value records */
		for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++) {
			struct ae_event *ev = &c->ev[i];
			struct insn *x = &c->in[k];

			if (ev->kind == AE_EV_WIT_BEFORE) {
				emit_witness(&o, f, ev->a, ev->width);
			} else if (ev->kind == AE_EV_VAL && ev->width) {
				if (ev->flag == AE_VAL_FSBASE) {
					emit_fsbase(&o, x);
				} else if (ev->flag == AE_VAL_REG) {
					emit_value_reg(&o, ev->a, ev->width);
				} else if (ev->flag == AE_VAL_VSIB) {
					emit_value_vsib(&o, x);
				} else if ((ev->flag == AE_VAL_REG_VC || ev->flag == AE_VAL_REG_VC_LOW) &&
					   AE_VC_GROUP_OF(ev->b)) {
					emit_vc_group(&o, x, ev, AE_VC_GROUP_OF(ev->b));
					i += AE_VC_GROUP_OF(ev->b) - 1;
				} else if (ev->flag == AE_VAL_REG_VC || ev->flag == AE_VAL_REG_VC_LOW) {
					emit_value_vc(&o, ev->a, x->vc_scr_before, ev->b, ev->width,
						      ev->flag == AE_VAL_REG_VC_LOW, -1, NULL, 0);
				} else if ((ev->flag == AE_VAL_TARGET && x->ind == IND_MEM) ||
				    ev->flag == AE_VAL_RETADDR) {
					int scr = -1;
					static const int cand[] = { 1, 2, 6, 7, 8, 9, 10, 11 };

					for (int j = 0; j < 8; j++)
						if (!(x->mem_regs & (1u << cand[j]))) {
							scr = cand[j];
							break;
						}
					{
						const char *ops;

						ae_insn_split(s->text, m, sizeof(m), &ops);
						if (*ops == '*')
							ops++;
						fprintf(f, "\tmovq\t%%%s, -32(%%rsp)\n", ae_reg64[scr]);
						seq_begin(&o);
						fprintf(f, "\tmovq\t%s, %%%s\n\tmovq\t%%%s, (%%r15)\n\tleaq\t8(%%r15), %%r15\n",
							ops, ae_reg64[scr], ae_reg64[scr]);
						seq_end(&o);
						fprintf(f, "\tmovq\t-32(%%rsp), %%%s\n", ae_reg64[scr]);
					}
				} else {
					int reg = ev->flag == AE_VAL_REPCNT ? 1 :
						  ev->flag == AE_VAL_SETJMP_SP ||
						  ev->flag == AE_VAL_LONGJMP_SP ? 4 : x->ind_reg;

					emit_value_reg(&o, reg, ev->width);
				}
			}
		}
		/* callers that made the arguments known enter here */
		if (c->in[k].memfn && c->in[k].memfn_body)
			fprintf(f, "\t.globl\t%s\n%s:\n", ae_memfn_args_label(c->in[k].memfn, numbuf, sizeof(numbuf)),
				numbuf);
		if (c->in[k].memfn && c->in[k].memfn_body && ae_memfn_is_cmp(c->in[k].memfn))
			emit_cmp_stop(&o, c->in[k].memfn);
		fprintf(f, ".Laei%d:\n", k);
		/* the instruction itself (taken edge may go through a stub) */
		{
			int stub = -1;

			for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++)
				if (c->ev[i].kind == AE_EV_WIT_TAKEN)
					stub = i;
			if (stub >= 0) {
				struct ae_event *ev = &c->ev[stub];
				const char *ops;
				char *buf;
				size_t bl;
				FILE *sf;

				ae_insn_split(s->text, m, sizeof(m), &ops);
				fprintf(f, "\t%s\t.Laestub%d\n", m, o.nstub);
				sf = open_memstream(&buf, &bl);
				if (!sf) {
					fprintf(stderr, "aecc: open_memstream: %s\n", strerror(errno));
					abort();
				}
				fprintf(sf, ".Laestub%d:\n", o.nstub++);
				emit_witness(&o, sf, ev->a, ev->width);
				fprintf(sf, "\tjmp\t%s\n", stub_target(c, si, ops, numbuf, sizeof(numbuf)));
				fclose(sf);
				add_stub(&o, buf);
			} else if (c->in[k].memfn_call) {
				fprintf(f, "\tcall\t%s\n",
					ae_memfn_args_label(c->in[k].memfn_call, numbuf, sizeof(numbuf)));
			} else {
				fprintf(f, "\t%s\n", s->text);
			}
		}
		/* after the instruction: fall-through witness, value-after */
		for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++) {
			struct ae_event *ev = &c->ev[i];

			if (ev->kind == AE_EV_WIT_FALL)
				emit_witness(&o, f, ev->a, ev->width);
			else if (ev->kind == AE_EV_VAL_AFTER &&
				 (ev->flag == AE_VAL_REG_VC || ev->flag == AE_VAL_REG_VC_SEXT ||
				  ev->flag == AE_VAL_REG_VC_LOW))
				emit_value_vc(&o, ev->a, c->in[k].vc_scr_after, ev->b & ~AE_VC_BY_ADDR,
					      ev->width, ev->flag == AE_VAL_REG_VC_LOW, c->in[k].lc_scr,
					      ev->b & AE_VC_BY_ADDR ?
					      ae_load_operand(s->text, opbuf, sizeof(opbuf)) : NULL,
					      (ev->b & AE_VC_BY_ADDR) &&
					      ae_vcprof_lookup(c->vcprof, c->objid, ev->insn, ev->a));
			else if (ev->kind == AE_EV_VAL_AFTER)
				emit_value_reg(&o, ev->flag == AE_VAL_REG || ev->flag == AE_VAL_REG_SEXT ?
					       (int)ev->a : 1,
					       ev->flag == AE_VAL_REG || ev->flag == AE_VAL_REG_SEXT ?
					       ev->width : 8);
		}
	}
	flush_stubs(&o);
	free(o.stub);
	free(ev_first);

	if (c->vcache)
		emit_caches(f);
	if (o.nvc) {
		fprintf(f, "\t.section\t.ae_vcupd,\"\",@progbits\n\t.balign 4\n");
		for (int i = 0; i < o.nvc; i++) {
			fprintf(f, "\t.long\t.Laevu%d, %u\n", i, o.vcslot[i]);
			if (o.vclc[i])
				fprintf(f, "\t.long\t.Laevw%d, %#x\n", i, AE_VC_ADDR_STORE);
		}
	}
	free(o.vcslot);
	free(o.vclc);

	fprintf(f, "\t.section\t.ae_imap,\"\",@progbits\n\t.balign 4\n\t.long\t%u, %d\n",
		c->objid, c->n);
	for (int k = 0; k < c->n; k++)
		fprintf(f, "\t.long\t.Laei%d\n", k);
	if (o.nseq) {
		fprintf(f, "\t.section\t__ae_seqtab,\"a\",@progbits\n\t.balign 4\n");
		for (int i = 0; i < o.nseq; i++)
			fprintf(f, "\t.long\t.Lss%d, .Lse%d\n", i, i);
	}
	fprintf(f, "\t.section\t.ae_schema,\"\",@progbits\n\t.balign 4\n\t.incbin\t\"%s\"\n",
		schema_bin);
	fprintf(f, "\t.section\t.ae_orig,\"\",@progbits\n\t.balign 8\n\t.incbin\t\"%s\"\n",
		orig_o);
	fprintf(f, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
}

/* (orig_o and schema_bin: unused, the signature of write_instrumented) */
static void write_orig(struct ae_ctx *c, FILE *f, const char *orig_o,
		       const char *schema_bin)
{
	for (size_t si = 0; si < c->a.n; si++) {
		struct ae_stmt *s = &c->a.st[si];

		if (s->kind == AE_ST_LABEL)
			fprintf(f, "%s:\n", s->text);
		else if (s->insn >= 0)
			fprintf(f, ".Laei%d:\n\t%s\n", s->insn, s->text);
		else
			fprintf(f, "\t%s\n", s->text);
	}
	/* the same TLS layout as the program's */
	if (c->vcache)
		emit_caches(f);
	fprintf(f, "\t.section\t.ae_imap,\"\",@progbits\n\t.balign 4\n\t.long\t%u, %d\n",
		c->objid, c->a.ninsn);
	for (int k = 0; k < c->a.ninsn; k++)
		fprintf(f, "\t.long\t.Laei%d\n", k);
	fprintf(f, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
}

/* Write the file `path` with `fn`. Returns 0, or -1 after one line. */
static int write_asm(struct ae_ctx *c, const char *path,
		     void (*fn)(struct ae_ctx *c, FILE *f, const char *orig_o,
				const char *schema_bin),
		     const char *orig_o, const char *schema_bin)
{
	FILE *f = fopen(path, "w");
	int werr;

	if (!f)
		return ae_err(c, 0, "cannot create %s: %s", path, strerror(errno));
	fn(c, f, orig_o, schema_bin);
	werr = ferror(f);
	if (fclose(f) || werr)
		return ae_err(c, 0, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int ae_write_twin_asm(struct ae_ctx *c, const char *path)
{
	return write_asm(c, path, write_orig, NULL, NULL);
}

int ae_write_instrumented_asm(struct ae_ctx *c, const char *path,
			      const char *orig_o, const char *schema_bin)
{
	return write_asm(c, path, write_instrumented, orig_o, schema_bin);
}
