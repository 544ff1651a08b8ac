// SPDX-License-Identifier: MIT
/*
 * aecc_place - unit tests of aecc's witness placement on hand-written
 * assembly, one small control-flow graph per corner (loops and diamonds,
 * a call behind a branch, a jump table, two tables one after the other,
 * computed goto, rep string instructions, setjmp/longjmp), no program
 * run. TAP output.
 *
 * The tracing property is checked by brute force, independently of the
 * placement's own check: from every instruction, every path (bounded in
 * length) to the next point where the regenerator stops (exit, call,
 * indirect jump, rep, setjmp, ...) writes a witness sequence, computed
 * from the schema events the traced program acts on; replaying that
 * sequence from the same instruction, deciding each branch as the
 * regenerator does (next witness in the predicate's pool or not), must
 * give back exactly that path and consume exactly those witnesses.
 * A control run flips one predicate's side in the schema and must be
 * caught by the same check. Each corner also checks the value records its
 * construct needs (jump-table index width, table load, rep counts, %rsp
 * at setjmp and longjmp). With -fae-data: library routines traced by
 * their arguments (strlen, memcmp), the width of register records,
 * branches decided by known registers, and where a register is recorded
 * when a table or a call that never returns seems to lead on. Witness
 * ids shared where no branch needs them apart (colours). With the value
 * cache, a branch side that reaches a value-cache record first writes no
 * witness: the paths that end at such a record end with that byte, which
 * the replay must tell from the other side's witnesses by its class
 * alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <aetrace/vcprof.h>

#include "cfg.h"
#include "ir.h"
#include "vcprof.h"

#define MAX_DEPTH	48	/* edges per path */
#define MAX_VISITS	3	/* times one edge is taken in one path */
#define MAX_PATHS	20000	/* complete paths checked per start */

static int ntest, nfail;

static void result(int ok, const char *fmt, const char *name, const char *what)
{
	printf("%sok %d - %s: ", ok ? "" : "not ", ++ntest, name);
	printf(fmt, what);
	putchar('\n');
	if (!ok)
		nfail++;
}

struct walk {
	struct ae_ctx *c;
	int path[MAX_DEPTH];		/* edge indices */
	int depth;
	unsigned char visits[4096];	/* per edge, this path */
	long paths, bad, truncated;
	char why[256];
};

/* Returns the event of `kind` at instruction k (flag == -1: any), or NULL. */
static const struct ae_event *event_at(const struct ae_ctx *c, int k, int kind, int flag)
{
	for (int i = 0; i < c->nev; i++)
		if ((int)c->ev[i].insn == k && c->ev[i].kind == kind &&
		    (flag < 0 || c->ev[i].flag == flag))
			return &c->ev[i];
	return NULL;
}

/* Returns the witness id the program writes when it leaves k by edge ei,
 * or -1 if none. */
static long edge_witness(const struct ae_ctx *c, int ei)
{
	const struct edge *e = &c->e[ei];
	const struct insn *x = &c->in[e->from];

	for (int i = 0; i < c->nev; i++) {
		const struct ae_event *ev = &c->ev[i];

		if ((int)ev->insn != e->from)
			continue;
		if (x->kind == IK_JCC) {
			if ((ev->kind == AE_EV_WIT_TAKEN && e->kind == E_TAKEN) ||
			    (ev->kind == AE_EV_WIT_FALL && e->kind == E_FALL))
				return ev->a;
		} else if (ev->kind == AE_EV_WIT_BEFORE || ev->kind == AE_EV_WIT_TAKEN ||
			   ev->kind == AE_EV_WIT_FALL) {
			return ev->a;
		}
	}
	return -1;
}

/*
 * Is the first byte written on reaching v a value-cache record's? In the
 * order emit.c writes them: before v its before-witness and before
 * records, after it its fall-through witness and after records.
 */
static int first_byte_vc(const struct ae_ctx *c, int v)
{
	const struct ae_event *first = NULL;

	for (int after = 0; after < 2 && !first; after++)
		for (int i = 0; i < c->nev && !first; i++) {
			const struct ae_event *ev = &c->ev[i];

			if ((int)ev->insn != v)
				continue;
			if (!after && (ev->kind == AE_EV_WIT_BEFORE ||
				       (ev->kind == AE_EV_VAL && ev->width)))
				first = ev;
			if (after && (ev->kind == AE_EV_WIT_FALL || ev->kind == AE_EV_WIT_TAKEN ||
				      (ev->kind == AE_EV_VAL_AFTER && ev->width)))
				first = ev;
		}
	return first && (first->kind == AE_EV_VAL || first->kind == AE_EV_VAL_AFTER) &&
	       (first->flag == AE_VAL_REG_VC || first->flag == AE_VAL_REG_VC_SEXT ||
		first->flag == AE_VAL_REG_VC_LOW);
}

/* The pseudo witness for a value-cache record's first byte. */
#define VC_BYTE		(-2L)

/* Does the regenerator stop at vertex v (exit, or a point it resolves
 * from a value or a call)? */
static int stops(const struct ae_ctx *c, int v)
{
	return v >= c->n || ae_is_block(&c->in[v]) || c->in[v].nout == 0;
}

/*
 * Replay the witnesses of w->path from its start, deciding branches from
 * the schema alone. Returns 0 when it reproduces the path, else -1 with
 * w->why set.
 */
static int replay(struct walk *w)
{
	struct ae_ctx *c = w->c;
	long wit[MAX_DEPTH + 1];
	int nw = 0, pos = 0;
	int v = c->e[w->path[0]].from, end = c->e[w->path[w->depth - 1]].to;

	for (int i = 0; i < w->depth; i++) {
		long id = edge_witness(c, w->path[i]);

		if (id >= 0)
			wit[nw++] = id;
	}
	/* a path that ends at a value-cache record: its first byte next */
	if (end < c->n && first_byte_vc(c, end))
		wit[nw] = VC_BYTE;
	for (int i = 0; i < w->depth; i++) {
		const struct insn *x = &c->in[v];
		int ei = x->out[0];
		long id;

		if (x->kind == IK_JCC) {
			const struct ae_event *pe = event_at(c, v, AE_EV_PRED, -1);
			int in = 0, taken;

			if (!pe) {
				snprintf(w->why, sizeof(w->why), "branch at insn %d has no PRED event", v);
				return -1;
			}
			if (pos == nw && !(end < c->n && first_byte_vc(c, end))) {
				snprintf(w->why, sizeof(w->why),
					 "branch at insn %d: no witness before the path stops", v);
				return -1;
			}
			if (wit[pos] == VC_BYTE && !(pe->flag & AE_PRED_VC_OTHER)) {
				snprintf(w->why, sizeof(w->why),
					 "branch at insn %d reads a value-cache record as a witness", v);
				return -1;
			}
			if (wit[pos] == VC_BYTE ||
			    ((pe->flag & AE_PRED_VC_OTHER) && !ae_is_wit_byte(wit[pos] & 0xff))) {
				in = 0;
			} else {
				for (uint32_t j = 0; j < pe->b; j++)
					in |= c->pool[pe->a + j] == wit[pos];
			}
			taken = in ? pe->flag & AE_PRED_TAKEN : !(pe->flag & AE_PRED_TAKEN);
			for (int j = 0; j < x->nout; j++)
				if ((c->e[x->out[j]].kind == E_TAKEN) == taken)
					ei = x->out[j];
		}
		if (ei != w->path[i]) {
			snprintf(w->why, sizeof(w->why),
				 "from insn %d the witnesses lead elsewhere at insn %d",
				 c->e[w->path[0]].from, v);
			return -1;
		}
		id = edge_witness(c, ei);
		if (id >= 0) {
			if (pos == nw || wit[pos] != id) {
				snprintf(w->why, sizeof(w->why), "witness %ld out of order", id);
				return -1;
			}
			pos++;
		}
		v = c->e[ei].to;
	}
	if (pos != nw) {
		snprintf(w->why, sizeof(w->why), "witnesses left over");
		return -1;
	}
	return 0;
}

/* Every path from the end of w->path on; checks each complete one. */
static void walk_from(struct walk *w, int v)
{
	const struct insn *x;

	if (w->depth && stops(w->c, v)) {
		w->paths++;
		if (w->bad == 0 && replay(w))
			w->bad++;
		return;
	}
	if (w->depth == MAX_DEPTH || w->paths >= MAX_PATHS) {
		w->truncated++;
		return;
	}
	x = &w->c->in[v];
	for (int j = 0; j < x->nout; j++) {
		int ei = x->out[j];

		if (ei >= (int)sizeof(w->visits) || w->visits[ei] == MAX_VISITS)
			continue;
		w->visits[ei]++;
		w->path[w->depth++] = ei;
		walk_from(w, w->c->e[ei].to);
		w->depth--;
		w->visits[ei]--;
	}
}

/* Returns the number of complete paths checked, or -1 (why in *why). */
static long check_tracing(struct ae_ctx *c, char *why, size_t len)
{
	long total = 0;

	for (int s = 0; s < c->n; s++) {
		struct walk w = { .c = c };

		walk_from(&w, s);
		if (w.bad) {
			snprintf(why, len, "%s", w.why);
			return -1;
		}
		total += w.paths;
	}
	return total;
}

/* Index of the first instruction whose text starts with `prefix`, or -1. */
static int insn_with(const struct ae_ctx *c, const char *prefix)
{
	for (int k = 0; k < c->n; k++)
		if (!strncmp(c->a.st[c->in[k].stmt].text, prefix, strlen(prefix)))
			return k;
	return -1;
}

/* The record of register reg before the first instruction starting with
 * `prefix` (*k: that instruction, -1 if none), or NULL. */
static const struct ae_event *reg_record(const struct ae_ctx *c, const char *prefix, int reg,
					 int *k)
{
	const struct ae_event *ev = NULL;

	*k = insn_with(c, prefix);
	for (int j = 0; j < c->nev && *k >= 0; j++)
		if ((int)c->ev[j].insn == *k && c->ev[j].kind == AE_EV_VAL &&
		    c->ev[j].flag == AE_VAL_REG && (int)c->ev[j].a == reg)
			ev = &c->ev[j];
	return ev;
}

/* Expect a value record of `kind` (width `width`, 0: any) at the first
 * instruction starting with `prefix`. */
static void expect_value(const char *name, const struct ae_ctx *c, const char *prefix,
			 int evkind, int flag, int width, const char *what)
{
	int k = insn_with(c, prefix);
	const struct ae_event *ev = k >= 0 ? event_at(c, k, evkind, flag) : NULL;

	result(ev && (!width || ev->width == width), "%s", name, what);
}

struct corner {
	const char *name;
	const char *asm_text;
	void (*values)(const char *name, const struct ae_ctx *c);
};

static void values_jump_table(const char *name, const struct ae_ctx *c)
{
	expect_value(name, c, "jmp\t*.L12", AE_EV_VAL, AE_VAL_JTIDX, 1,
		     "5-entry jump table recorded as a 1-byte index");
}

static void values_computed_goto(const char *name, const struct ae_ctx *c)
{
	int k = insn_with(c, "jmp\t*%rdx");

	expect_value(name, c, "movq\t.Ltab(", AE_EV_VAL, AE_VAL_JTLOAD, 1,
		     "table load recorded as a 1-byte index");
	result(k >= 0 && event_at(c, k, AE_EV_TARGET_LOADED, -1) &&
	       !event_at(c, k, AE_EV_VAL, -1), "%s", name,
	       "its jmp *%rdx writes nothing (target from the load)");
}

static void values_rep(const char *name, const struct ae_ctx *c)
{
	expect_value(name, c, "rep movsb", AE_EV_VAL, AE_VAL_REPCNT, 8,
		     "rep movsb records %rcx before");
	expect_value(name, c, "repe cmpsb", AE_EV_VAL, AE_VAL_REPCNT, 8,
		     "repe cmpsb records %rcx before");
	expect_value(name, c, "repe cmpsb", AE_EV_VAL_AFTER, AE_VAL_REPCNT_AFTER, 8,
		     "repe cmpsb records %rcx after");
}

static void values_longjmp(const char *name, const struct ae_ctx *c)
{
	expect_value(name, c, "movq\t%rbx, (%rdi)", AE_EV_VAL, AE_VAL_SETJMP_SP, 8,
		     "%rsp recorded at setjmp entry");
	expect_value(name, c, "jmp\t*%rdx", AE_EV_VAL, AE_VAL_LONGJMP_SP, 8,
		     "%rsp recorded at longjmp's jump");
	expect_value(name, c, "jmp\t*%rdx", AE_EV_VAL, AE_VAL_TARGET, 8,
		     "longjmp's target recorded");
}

static void values_call(const char *name, const struct ae_ctx *c)
{
	int k = insn_with(c, "call\th");
	int p = insn_with(c, "je\t.L7");
	int ok = k >= 0 && p >= 0;

	/* the regenerator must know whether the call happened before it
	 * follows it: a witness on the branch (blocking witness) */
	ok = ok && (event_at(c, p, AE_EV_WIT_TAKEN, -1) || event_at(c, p, AE_EV_WIT_FALL, -1));
	result(ok, "%s", name, "a witness between the branch and the call");
}

static void values_adjacent_tables(const char *name, const struct ae_ctx *c)
{
	expect_value(name, c, "jmp\t*.L21", AE_EV_VAL, AE_VAL_JTIDX, 1,
		     "250-entry table followed by another: still a 1-byte index");
}

/* The 248 entries of adjacent_tables' first table between its first and last. */
#define Q_L20	"\t.quad\t.L20\n"
#define Q_5	Q_L20 Q_L20 Q_L20 Q_L20 Q_L20
#define Q_25	Q_5 Q_5 Q_5 Q_5 Q_5
#define Q_248	Q_25 Q_25 Q_25 Q_25 Q_25 Q_25 Q_25 Q_25 Q_25 Q_5 Q_5 Q_5 Q_5 \
		Q_L20 Q_L20 Q_L20
/* the 9 entries of the second table after its first */
#define Q_L30	"\t.quad\t.L30\n"
#define Q_9	Q_L30 Q_L30 Q_L30 Q_L30 Q_L30 Q_L30 Q_L30 Q_L30 Q_L30

static void values_table_goes_on(const char *name, const struct ae_ctx *c)
{
	expect_value(name, c, "jmp\t*tab(", AE_EV_VAL, AE_VAL_JTIDX, 2,
		     "a table that goes on past a label: a 2-byte index for its 301 entries");
}

#define Q_OP1	"\t.quad\top1\n"
#define Q_OP1_10	Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1 Q_OP1
#define Q_OP1_100	Q_OP1_10 Q_OP1_10 Q_OP1_10 Q_OP1_10 Q_OP1_10 \
			Q_OP1_10 Q_OP1_10 Q_OP1_10 Q_OP1_10 Q_OP1_10

static const struct corner corners[] = {
	{ "loop_diamond",
	  "\t.text\n\t.globl\tf\n\t.type\tf, @function\n"
	  "f:\n\txorl\t%eax, %eax\n"
	  ".L2:\n\ttestl\t%edi, %edi\n\tje\t.L3\n\ttestl\t$1, %edi\n\tjne\t.L5\n"
	  "\taddl\t$1, %eax\n\tjmp\t.L6\n"
	  ".L5:\n\taddl\t$3, %eax\n"
	  ".L6:\n\tsubl\t$1, %edi\n\tjmp\t.L2\n"
	  ".L3:\n\tcmpl\t$5, %eax\n\tjg\t.L4\n\tret\n"
	  ".L4:\n\taddl\t$2, %eax\n\tret\n", NULL },
	{ "call_behind_branch",
	  "\t.text\n\t.globl\tg\n\t.type\tg, @function\n"
	  "g:\n\ttestl\t%edi, %edi\n\tje\t.L7\n\tsubq\t$8, %rsp\n\tcall\th\n"
	  "\taddq\t$8, %rsp\n"
	  ".L7:\n\tret\n", values_call },
	{ "jump_table",
	  "\t.text\n\t.globl\tsw\n\t.type\tsw, @function\n"
	  "sw:\n\tcmpl\t$4, %edi\n\tja\t.L10\n\tmovl\t%edi, %edi\n\tjmp\t*.L12(,%rdi,8)\n"
	  "\t.section\t.rodata\n\t.align 8\n"
	  ".L12:\n\t.quad\t.L11\n\t.quad\t.L13\n\t.quad\t.L14\n\t.quad\t.L15\n\t.quad\t.L10\n"
	  "\t.text\n"
	  ".L11:\n\tmovl\t$1, %eax\n\tret\n"
	  ".L13:\n\ttestl\t%esi, %esi\n\tjne\t.L10\n\tmovl\t$2, %eax\n\tret\n"
	  ".L14:\n\tmovl\t$3, %eax\n\tret\n"
	  ".L15:\n\tmovl\t$4, %eax\n\tret\n"
	  ".L10:\n\txorl\t%eax, %eax\n\tret\n", values_jump_table },
	/* two switches' tables one after the other in .rodata, as GCC
	 * writes a file's: the relocations run on from the first into the
	 * second, the assembly does not. The first has 250 entries, more
	 * than the object has instructions; b's case .L32 reads (%rcx), and
	 * a's last entry, .L23, is also reached from the load of %rsi before
	 * it: only that edge knows %rsi (tables_checks) */
	{ "adjacent_tables",
	  "\t.text\n\t.type\ta, @function\n"
	  "a:\n\tcmpl\t$249, %edi\n\tja\t.L20\n\tmovl\t%edi, %edi\n\tjmp\t*.L21(,%rdi,8)\n"
	  "\t.section\t.rodata\n\t.align 8\n"
	  ".L21:\n\t.quad\t.L22\n" Q_248 "\t.quad\t.L23\n"
	  "\t.text\n"
	  ".L22:\n\tmovq\t(%rdx), %rsi\n"
	  ".L23:\n\tmovl\t(%rsi), %eax\n\tret\n"
	  ".L20:\n\txorl\t%eax, %eax\n\tret\n"
	  "\t.globl\tb\n\t.type\tb, @function\n"
	  "b:\n\tcmpl\t$9, %edi\n\tja\t.L30\n\tmovl\t%edi, %edi\n\tjmp\t*.L31(,%rdi,8)\n"
	  "\t.section\t.rodata\n\t.align 8\n"
	  ".L31:\n\t.quad\t.L32\n" Q_9
	  "\t.text\n"
	  ".L32:\n\tmovl\t(%rcx), %eax\n\tret\n"
	  ".L30:\n\txorl\t%eax, %eax\n\tret\n", values_adjacent_tables },
	/* hand-written: a label inside the table; a 16-bit index reaches
	 * every entry */
	{ "table_goes_on",
	  "\t.text\n\t.globl\tf\n\t.type\tf, @function\n"
	  "f:\n\tmovzwl\t(%rdi), %eax\n\ttestl\t%esi, %esi\n\tje\top0\n\tjmp\t*tab(,%rax,8)\n"
	  "op0:\n\tret\nop1:\n\tmovl\t$1, %eax\n\tret\n"
	  "\t.section\t.rodata\n"
	  "tab:\n\t.quad\top0\ntab2:\n" Q_OP1_100 Q_OP1_100 Q_OP1_100, values_table_goes_on },
	{ "computed_goto",
	  "\t.text\n\t.globl\tinterp\n\t.type\tinterp, @function\n"
	  "interp:\n\txorl\t%esi, %esi\n\tmovl\t(%rdi), %eax\n\tmovq\t.Ltab(,%rax,8), %rdx\n"
	  "\taddq\t$4, %rdi\n\tjmp\t*%rdx\n"
	  ".La:\n\taddl\t$1, %esi\n\tcmpl\t$9, %esi\n\tjg\t.Lb\n\tmovl\t(%rdi), %eax\n"
	  "\tmovq\t.Ltab(,%rax,8), %rcx\n\taddq\t$4, %rdi\n\tjmp\t*%rcx\n"
	  ".Lb:\n\tmovl\t%esi, %eax\n\tret\n"
	  "\t.section\t.rodata\n\t.align 8\n"
	  ".Ltab:\n\t.quad\t.La\n\t.quad\t.Lb\n", values_computed_goto },
	{ "rep",
	  "\t.text\n\t.globl\tcp\n\t.type\tcp, @function\n"
	  "cp:\n\tmovq\t%rdx, %rcx\n\ttestq\t%rcx, %rcx\n\tje\t.L1\n\trep movsb\n"
	  ".L1:\n\tmovq\t%r8, %rcx\n\trepe cmpsb\n\tjne\t.L9\n\txorl\t%eax, %eax\n\tret\n"
	  ".L9:\n\tmovl\t$1, %eax\n\tret\n", values_rep },
	{ "setjmp_longjmp",
	  "\t.text\n\t.globl\tsetjmp\n\t.type\tsetjmp, @function\n"
	  "setjmp:\n\tmovq\t%rbx, (%rdi)\n\tmovq\t%rbp, 8(%rdi)\n\tleaq\t8(%rsp), %rdx\n"
	  "\tmovq\t%rdx, 16(%rdi)\n\tmovq\t(%rsp), %rdx\n\tmovq\t%rdx, 24(%rdi)\n"
	  "\txorl\t%eax, %eax\n\tret\n"
	  "\t.globl\tlongjmp\n\t.type\tlongjmp, @function\n"
	  "longjmp:\n\tmovl\t%esi, %eax\n\ttestl\t%eax, %eax\n\tjne\t1f\n\tincl\t%eax\n"
	  "1:\n\tmovq\t(%rdi), %rbx\n\tmovq\t8(%rdi), %rbp\n\tmovq\t16(%rdi), %rsp\n"
	  "\tmovq\t24(%rdi), %rdx\n\tjmp\t*%rdx\n", values_longjmp },
};

/* Flip the side of the first predicate event; returns 0 if there is none. */
static int flip_a_predicate(struct ae_ctx *c)
{
	for (int i = 0; i < c->nev; i++)
		if (c->ev[i].kind == AE_EV_PRED) {
			c->ev[i].flag ^= AE_PRED_TAKEN;
			return 1;
		}
	return 0;
}

/* Write `text` to DIR/NAME.s and run aecc's analysis on it with -fae-data
 * (and -fae-memfn-lib when lib & 1, the value cache when lib & 2); 0, or
 * -1 after a failed result line. */
static int analyze_data_asm_prof(const char *dir, const char *name, const char *text, int lib,
				 const struct ae_vcprof *prof, struct ae_ctx *c)
{
	char path[96], work[96];
	struct ae_instr_opts o = { .tmpdir = work, .data = 1, .memfn_lib = lib & 1,
				   .no_vcache = !(lib & 2), .vcprof = prof };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.s", dir, name);
	snprintf(work, sizeof(work), "%s/%s.d", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || mkdir(work, 0700) ||
	    ae_analyze(c, path, &o)) {
		result(0, "%s", name, "aecc -fae-data analyses it");
		return -1;
	}
	return 0;
}

static int analyze_data_asm(const char *dir, const char *name, const char *text, int lib,
			    struct ae_ctx *c)
{
	return analyze_data_asm_prof(dir, name, text, lib, NULL, c);
}

/*
 * -fae-data: a byte-loop strlen is traced by its argument (AE_EV_EXPAND,
 * %rdi before its entry, %rax before its ret, nothing else in its body);
 * a memset with a system call in it is not (instrumented as usual); a
 * direct call of strlen enters past its records (AE_EV_ARGS_AT_CALL).
 */
static const char memfn_asm[] =
	"\t.text\n\t.globl\tstrlen\n\t.type\tstrlen, @function\n"
	"strlen:\n\tmovq\t%rdi, %rax\n"
	".L30:\n\tcmpb\t$0, (%rax)\n\tje\t.L31\n\taddq\t$1, %rax\n\tjmp\t.L30\n"
	".L31:\n\tsubq\t%rdi, %rax\n\tret\n"
	"\t.globl\tmemset\n\t.type\tmemset, @function\n"
	"memset:\n\ttestq\t%rdx, %rdx\n\tje\t.L33\n\tsyscall\n"
	".L33:\n\tmovq\t%rdi, %rax\n\tret\n"
	"\t.globl\tf\n\t.type\tf, @function\n"
	"f:\n\tsubq\t$8, %rsp\n\tleaq\t(%rsp), %rdi\n\tcall\tstrlen\n\taddq\t$8, %rsp\n\tret\n"
	"\t.globl\tmemcmp\n\t.type\tmemcmp, @function\n"
	"memcmp:\n\ttestq\t%rdx, %rdx\n\tje\t.L42\n"
	".L41:\n\tmovzbl\t(%rdi), %eax\n\tmovzbl\t(%rsi), %ecx\n\tcmpl\t%ecx, %eax\n\tjne\t.L43\n"
	"\taddq\t$1, %rdi\n\taddq\t$1, %rsi\n\tsubq\t$1, %rdx\n\tjne\t.L41\n"
	".L42:\n\txorl\t%eax, %eax\n\tret\n"
	".L43:\n\tsubl\t%ecx, %eax\n\tret\n";

static void memfn_checks(const char *dir)
{
	struct ae_ctx c;
	int k, body_quiet = 1;
	const struct ae_event *ev;

	if (analyze_data_asm(dir, "memfn", memfn_asm, 1, &c))
		return;
	k = insn_with(&c, "movq\t%rdi, %rax");
	ev = k >= 0 ? event_at(&c, k, AE_EV_EXPAND, 0) : NULL;
	result(ev && ev->a == AE_MEMFN_STRLEN && ev->width == 8, "%s", "memfn",
	       "strlen's entry is expanded, with an 8-byte result");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL, AE_VAL_REG) : NULL;
	result(ev && ev->a == 7, "%s", "memfn", "strlen records %rdi at its entry");
	for (int i = 0; i < c.nev; i++) {
		const struct insn *x = &c.in[c.ev[i].insn];

		if (x->memfn_body == k + 1 && c.ev[i].insn != (uint32_t)k &&
		    !(x->kind == IK_RET && c.ev[i].kind == AE_EV_VAL && c.ev[i].a == 0))
			body_quiet = 0;
	}
	result(body_quiet, "%s", "memfn", "strlen's body has no event but %rax before its ret");
	k = insn_with(&c, "testq\t%rdx, %rdx");
	result(k >= 0 && !event_at(&c, k, AE_EV_EXPAND, -1) &&
	       event_at(&c, insn_with(&c, "je\t.L33"), AE_EV_PRED, -1), "%s", "memfn",
	       "a memset with a system call is instrumented as usual");
	k = insn_with(&c, "call\tstrlen");
	ev = k >= 0 ? event_at(&c, k, AE_EV_ARGS_AT_CALL, 0) : NULL;
	result(ev && ev->a == AE_MEMFN_STRLEN, "%s", "memfn",
	       "a direct call of strlen enters past its argument records");
	k = insn_with(&c, "movzbl\t(%rdi), %eax");
	k = k > 0 ? k - 2 : -1;		/* memcmp's entry, testq */
	ev = k >= 0 ? event_at(&c, k, AE_EV_EXPAND, 0) : NULL;
	result(ev && ev->a == AE_MEMFN_MEMCMP && ev->width == 8, "%s", "memfn",
	       "memcmp's entry is expanded, with its 8-byte stop record");
	body_quiet = 1;
	for (int i = 0; i < c.nev; i++) {
		const struct insn *x = &c.in[c.ev[i].insn];

		if (x->memfn_body == k + 1 && c.ev[i].insn != (uint32_t)k)
			body_quiet = 0;
	}
	result(k >= 0 && body_quiet, "%s", "memfn", "memcmp's body has no event, not even before its rets");
	ae_ctx_free(&c);
}

/*
 * -fae-data: records as narrow as what reads them. An argument read at
 * 32 bits only (and, a 32-bit lea, a 32-bit move) is recorded by its low
 * half; one used whole as an index, or still live at a call (the callee
 * may read it whole), takes 8 bytes; a sign-extending load records its
 * source's 4 bytes, to be sign-extended; a call's int result 4 bytes,
 * a pointer 8.
 */
static const char widths_asm[] =
	"\t.text\n"
	"g32:\n\tandl\t$7, %edi\n\tmovl\t(%rsi,%rdi,4), %eax\n\tret\n"
	"glea:\n\tleal\t1(%rdi), %eax\n\tmovzbl\t(%rsi,%rax), %eax\n\tret\n"
	"g64:\n\tmovl\t(%rsi,%rdi,8), %eax\n\tret\n"
	"gcall:\n\tmovl\t%edi, %ecx\n\tmovl\t(%rdx,%rcx,4), %eax\n\tpushq\t%rbx\n"
	"\tcall\text\n\tpopq\t%rbx\n\tret\n"
	"gsx:\n\tmovslq\t(%rdi), %rax\n\tmovq\t(%rsi,%rax,8), %rax\n\tret\n"
	"gint:\n\tpushq\t%rbx\n\tmovq\t%rsi, %rbx\n\tcall\text1\n\tcltq\n"
	"\tmovl\t(%rbx,%rax,4), %eax\n\tpopq\t%rbx\n\tret\n"
	"gptr:\n\tsubq\t$8, %rsp\n\tcall\text2\n\tmovl\t(%rax), %eax\n\taddq\t$8, %rsp\n\tret\n"
	"gcrc:\n\tmovl\t648(%rdi), %eax\n\tmovl\t%eax, %ecx\n\tsall\t$8, %eax\n\tshrl\t$24, %ecx\n"
	"\txorl\t%esi, %ecx\n\tmovzbl\t%cl, %ecx\n\txorl\ttab(,%rcx,4), %eax\n"
	"\tmovl\t%eax, 648(%rdi)\n\tret\n"
	"gword:\n\tmovzbl\t(%rsi), %r8d\n\tshll\t$8, %r8d\n\torl\t%edx, %r8d\n"
	"\tmovzwl\t%r8w, %r9d\n\tmovl\ttab(,%r9,4), %eax\n\tret\n"
	"gboth:\n\tmovl\t(%rdi), %r10d\n\tmovzbl\t%r10b, %r11d\n\tmovl\ttab(,%r11,4), %edx\n"
	"\tmovl\ttab(,%r10,4), %eax\n\tret\n"
	"gloop:\n\tmovl\t(%rdi), %eax\n1:\n\tmovzbl\t%al, %r9d\n\taddl\ttab(,%r9,4), %r8d\n"
	"\tdecl\t%esi\n\tjne\t1b\n\tmovl\t%r8d, %eax\n\tret\n";

static void widths_checks(const char *dir)
{
	static const struct {
		const char *insn, *what;
		int reg, width;
	} want[] = {
		{ "andl\t$7, %edi", "an index masked at 32 bits: 4 bytes", 7, 4 },
		{ "leal\t1(%rdi), %eax", "a 32-bit lea's base: 4 bytes", 7, 4 },
		{ "movl\t(%rsi,%rdi,8), %eax", "an index used whole: 8 bytes", 7, 8 },
		{ "movl\t%edi, %ecx", "an argument still live at a call: 8 bytes", 7, 8 },
	};
	struct ae_ctx c;
	const struct ae_event *ev;
	int k;

	if (analyze_data_asm(dir, "widths", widths_asm, 0, &c))
		return;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ev = reg_record(&c, want[i].insn, want[i].reg, &k);
		result(ev && ev->width == want[i].width, "%s", "widths", want[i].what);
	}
	k = insn_with(&c, "movslq\t(%rdi), %rax");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_SEXT) : NULL;
	result(ev && ev->a == 0 && ev->width == 4, "%s", "widths",
	       "movslq's result: its 4 loaded bytes, sign-extended");
	k = insn_with(&c, "call\text1");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) : NULL;
	result(ev && ev->a == 0 && ev->width == 4, "%s", "widths",
	       "an int result (cltq reads %eax): 4 bytes");
	k = insn_with(&c, "call\text2");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) : NULL;
	result(ev && ev->a == 0 && ev->width == 8, "%s", "widths",
	       "a pointer result: 8 bytes");
	/* a byte-wide index computed in its block from a loaded 4-byte
	 * value: the index's byte, not the loaded 4 */
	k = insn_with(&c, "movzbl\t%cl, %ecx");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) : NULL;
	result(ev && ev->a == 1 && ev->width == 1, "%s", "widths",
	       "a table index narrowed to a byte from a loaded crc: its 1 byte");
	k = insn_with(&c, "movl\t648(%rdi), %eax");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "widths",
	       "and nothing recorded at the crc's load");
	/* narrowed, but from a byte load: the load's 1 byte stays */
	k = insn_with(&c, "movzbl\t(%rsi), %r8d");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) : NULL;
	result(ev && ev->a == 8 && ev->width == 1, "%s", "widths",
	       "a 2-byte index made from a loaded byte: the byte's record stays");
	k = insn_with(&c, "movzwl\t%r8w, %r9d");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "widths",
	       "and none of the 2-byte index");
	/* the loaded value is needed whole too: its record alone */
	k = insn_with(&c, "movl\t(%rdi), %r10d");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG), "%s", "widths",
	       "a load also used whole as an index: recorded");
	k = insn_with(&c, "movzbl\t%r10b, %r11d");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "widths",
	       "and its low byte's index, known from it, is not recorded too");
	/* a load before a loop, narrowed in it: once, before the loop */
	k = insn_with(&c, "movzbl\t%al, %r9d");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "widths",
	       "a byte index taken in a loop from a value loaded before it: not recorded in the loop");
	ae_ctx_free(&c);
}

/*
 * -fae-data across calls: a local function that only this object's
 * direct calls enter knows on entry the argument registers every call
 * site knows, so it records none of them there; a call site that does not
 * know one makes it known there (where its caller's values come from:
 * held across a loop of calls, recorded once). Any other entry records
 * them: a global name (another object may call it), an address taken (a
 * lea, a pointer in data).
 * Debugging information and .eh_frame naming a function take no address.
 */
static const char callers_asm[] =
	"\t.text\n"
	"\t.type\tleaf, @function\n"
	"leaf:\n.LFB0:\n\tmovl\t(%rdi,%rsi,4), %eax\n\tret\n"
	"\t.globl\tpub\n\t.type\tpub, @function\n"
	"pub:\n\tmovq\t(%rdi), %rax\n\tret\n"
	"\t.type\ttaken, @function\n"
	"taken:\n\tmovq\t(%rdx), %rax\n\tret\n"
	"\t.type\tinptr, @function\n"
	"inptr:\n\tmovq\t(%rcx), %rax\n\tret\n"
	"\t.type\tmixed, @function\n"
	"mixed:\n\tmovq\t(%r8), %rax\n\tret\n"
	"\t.globl\tcaller\n\t.type\tcaller, @function\n"
	"caller:\n\tpushq\t%rbx\n\tmovq\t(%rdi), %rbx\n"
	"\tmovq\t%rbx, %rdi\n\tmovl\t$3, %esi\n\tcall\tleaf\n"
	"\tmovq\t%rbx, %rdi\n\tcall\tpub\n"
	"\tleaq\ttaken(%rip), %rax\n\tmovq\t%rbx, %rdx\n\tcall\ttaken\n"
	"\tmovq\t%rbx, %rcx\n\tcall\tinptr\n"
	"\tmovq\t%rbx, %r8\n\tcall\tmixed\n"
	"\tmovq\t%rax, %r8\n\tcall\tmixed\n"
	"\tmovq\t8(%rbx), %rax\n\tpopq\t%rbx\n\tret\n"
	"\t.section\t.data.rel.local,\"aw\"\n\t.quad\tinptr\n"
	"\t.section\t.debug_info,\"\",@progbits\n\t.quad\t.LFB0\n"
	"\t.section\t.debug_str,\"MS\",@progbits,1\n\t.string\t\"leaf\"\n"
	"\t.section\t.eh_frame,\"a\",@progbits\n\t.long\t.LFB0-.\n"
	"\t.text\n\t.type\tgot, @function\n"
	"got:\n\tmovq\t(%rsi), %rax\n\tret\n"
	"\t.type\tdiff, @function\n"
	"diff:\n\tmovq\t(%r9), %rax\n\tret\n"
	"\t.globl\tcaller2\n\t.type\tcaller2, @function\n"
	"caller2:\n\tpushq\t%rbx\n\tmovq\t(%rdi), %rbx\n\tmovq\t%rbx, %rsi\n\tcall\tgot\n"
	"\tmovq\t%rbx, %r9\n\tcall\tdiff\n"
	"\tmovq\tgot@GOTPCREL(%rip), %rax\n\tmovq\t8(%rbx), %rax\n\tpopq\t%rbx\n\tret\n"
	"\t.section\t.rodata\n\t.long\tdiff - caller2\n";

static void callers_checks(const char *dir)
{
	static const struct {
		const char *insn, *what;
		int reg, recorded;
	} want[] = {
		{ "movl\t(%rdi,%rsi,4), %eax",
		  "a local function's arguments its one call site knows: not recorded at its entry "
		  "(debugging information and .eh_frame name it)", 7, 0 },
		{ "movl\t(%rdi,%rsi,4), %eax", "nor its constant argument", 6, 0 },
		{ "movq\t(%rdi), %rax", "a global function's argument: recorded at its entry", 7, 1 },
		{ "movq\t(%rdx), %rax", "a local function whose address a lea takes: recorded", 2, 1 },
		{ "movq\t(%rcx), %rax", "a local function a pointer in data names: recorded", 1, 1 },
		{ "movq\t(%r8), %rax",
		  "a local function one of whose call sites does not know: not recorded at its entry", 8, 0 },
		{ "movq\t(%rsi), %rax", "a local function whose address a GOT load takes: recorded", 6, 1 },
		{ "movq\t(%r9), %rax",
		  "a local function a difference the assembler resolves names: recorded", 9, 1 },
	};
	struct ae_ctx c;
	int k;

	if (analyze_data_asm(dir, "callers", callers_asm, 0, &c))
		return;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ae_event *ev = reg_record(&c, want[i].insn, want[i].reg, &k);

		result(k >= 0 && !!ev == want[i].recorded, "%s", "callers", want[i].what);
	}
	/* the caller's own record (it uses the value too) is what the
	 * callees learn from */
	k = insn_with(&c, "movq\t(%rdi), %rbx");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG), "%s", "callers",
	       "the caller records the value it loads and passes");
	/* the call site that does not know is where it gets known: after
	 * the call that returned the value it passes on */
	k = insn_with(&c, "movq\t%rax, %r8");
	result(k > 0 && c.in[k - 1].kind == IK_CALL && event_at(&c, k - 1, AE_EV_VAL_AFTER, AE_VAL_REG),
	       "%s", "callers", "the call site that does not know records the value after the call that returned it");
	ae_ctx_free(&c);
}

/*
 * -fae-data: a call that never returns (die1, die2: the object cannot
 * tell) falls through in the graph into a block that reads %rbx. In f
 * %rbx still holds the caller's value there, so it is recorded after the
 * call, which no run reaches, not at f's entry; in g a path to the call
 * wrote it, and its input is recorded at g's entry as usual. h.cold is
 * GCC's cold part of h, which h jumps to after writing %rbp: not an
 * entry with the caller's values, so its loop's call is no place for
 * the record.
 */
static const char noreturn_asm[] =
	"\t.text\n\t.globl\tf\n\t.type\tf, @function\n"
	"f:\n\tpushq\t%rbx\n\ttestl\t%edi, %edi\n\tjne\t.L51\n\tcall\tdie1\n"
	".L52:\n\tmovl\t(%rbx), %eax\n\tpopq\t%rbx\n\tret\n"
	".L51:\n\tmovq\t(%rsi), %rbx\n\tjmp\t.L52\n"
	"\t.globl\tg\n\t.type\tg, @function\n"
	"g:\n\tpushq\t%rbp\n\tmovq\t%rdi, %rbp\n\ttestl\t%esi, %esi\n\tjne\t.L61\n\tcall\tdie2\n"
	".L62:\n\tmovl\t(%rbp), %eax\n\tpopq\t%rbp\n\tret\n"
	".L61:\n\tmovq\t(%rdx), %rbp\n\tjmp\t.L62\n"
	"\t.globl\th\n\t.type\th, @function\n"
	"h:\n\tpushq\t%rbp\n\tpushq\t%rbx\n\tmovq\t(%rdi), %rbp\n\tmovl\t$5, %ebx\n"
	"\ttestl\t%esi, %esi\n\tjne\th.cold\n\tpopq\t%rbx\n\tpopq\t%rbp\n\tret\n"
	"\t.section\t.text.unlikely\n\t.type\th.cold, @function\n"
	"h.cold:\n.L73:\n\tcall\tg3\n\tmovl\t(%rbp), %eax\n\tsubl\t$1, %ebx\n\tjne\t.L73\n"
	"\tpopq\t%rbx\n\tpopq\t%rbp\n\tret\n";

static void noreturn_checks(const char *dir)
{
	struct ae_ctx c;
	int k;

	if (analyze_data_asm(dir, "noreturn", noreturn_asm, 0, &c))
		return;
	k = insn_with(&c, "call\tdie1");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) &&
	       !reg_record(&c, "pushq\t%rbx", 3, &k) && k >= 0, "%s", "noreturn",
	       "%rbx unwritten since the entry: recorded after the call, not at the entry");
	k = insn_with(&c, "call\tdie2");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1) &&
	       reg_record(&c, "pushq\t%rbp", 7, &k), "%s", "noreturn",
	       "%rbp written before the call: its input %rdi recorded at the entry");
	k = insn_with(&c, "call\tg3");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1) &&
	       reg_record(&c, "call\tg3", 5, &k), "%s", "noreturn",
	       "h.cold, entered by a jump after h wrote %rbp: recorded at its entry, "
	       "not after each call in its loop");
	ae_ctx_free(&c);
}

/*
 * -fae-data's value cache: a 64-bit record is coded against it where the
 * flags are dead, with a scratch register nothing reads later; where a
 * compare's flags are still to be read (cmov), the record stays plain.
 * A 32-bit write's and a movslq's 4-byte records are coded too (the
 * register is their value, extended), and so is the low half of a 64-bit
 * value that only a 32-bit lea reads, or a 32-bit argument's, as low
 * halves (AE_VAL_REG_VC_LOW: their upper halves are unknown). bsf's and
 * cmpxchg's destinations may keep their upper half: all 8 bytes. A load
 * between a compare and its branch is recorded on the branch's sides.
 */
static const char vcache_asm[] =
	"\t.text\n"
	"vok:\n\tmovq\t(%rdi), %rax\n\tmovq\t(%rax), %rax\n\tret\n"
	"vflags:\n\ttestq\t%rsi, %rsi\n\tmovq\t(%rdi), %rdx\n\tmovq\t(%rdx), %rax\n"
	"\tcmovne\t%rsi, %rax\n\tret\n"
	"vlive:\n\tmovq\t(%rdi), %r8\n\tmovq\t(%r8), %rax\n\taddq\t%r11, %rax\n"
	"\taddq\t%r10, %rax\n\tret\n"
	"vhigh:\n\tmovq\t(%rdi), %rcx\n\tmovq\t(%rcx), %rax\n\tmovzbl\t%dh, %edx\n"
	"\taddq\t%rdx, %rax\n\taddq\t%r8, %rax\n\taddq\t%r9, %rax\n\taddq\t%r10, %rax\n"
	"\taddq\t%r11, %rax\n\tret\n"
	"v32:\n\tmovl\t(%rdi), %eax\n\tmovq\t(%rsi,%rax,8), %rax\n\tret\n"
	"vsx:\n\tmovslq\t(%rdi), %rdx\n\tmovq\t(%rsi,%rdx,8), %rax\n\tret\n"
	"vlow:\n\tmovq\t(%rdi), %r9\n\tleal\t1(%r9), %eax\n\tmovzbl\t(%rsi,%rax), %eax\n\tret\n"
	"vr11:\n\tleaq\t8(%rdi), %r11\n\tmovq\t(%r11), %rax\n\tmovq\t(%rax), %rax\n\tret\n"
	"vself:\n\tmovq\t8(%rdi), %rdi\n\tmovq\t(%rdi), %rax\n\tret\n"
	"varg:\n\tleal\t1(%rsi), %eax\n\tmovzbl\t(%rdi,%rax), %eax\n\tret\n"
	"vbsf:\n\tbsfl\t%esi, %r10d\n\tmovq\t(%rdi,%r10,8), %rax\n\tret\n"
	"vcx:\n\tmovl\t%esi, %eax\n\tcmpxchgl\t%esi, %r11d\n\tmovq\t(%rdi,%r11,8), %rax\n\tret\n"
	"vpop:\n\tpopq\t%rsi\n\tmovl\t(%rdi), %r11d\n\tmovq\t(%rdx,%r11,8), %rax\n"
	"\taddq\t%r10, %rax\n\taddq\t%r9, %rax\n\taddq\t%r8, %rax\n\taddq\t%rcx, %rax\n"
	"\taddq\t%rdx, %rax\n\tret\n"
	"vsink:\n\tcmpb\t$0x45, 8(%r9)\n\tmovq\t(%rdx), %rsi\n\tjne\t1f\n"
	"\tmovq\t(%r9), %rdi\n\tmovq\t(%rdi,%rsi,8), %rax\n\tret\n1:\n\txorl\t%eax, %eax\n\tret\n"
	"vjoin:\n\ttestq\t%rcx, %rcx\n\tje\t2f\n\tcmpb\t$0x45, 8(%r8)\n\tmovq\t(%r10), %rsi\n"
	"\tjne\t2f\n\tmovq\t(%r8), %rdi\n\tmovq\t(%rdi,%rsi,8), %rax\n\tret\n"
	"2:\n\tmovq\t(%rsi), %rax\n\tret\n"
	"vbyte:\n\tcmpb\t$0x45, 8(%r11)\n\tmovzbl\t(%rdx), %esi\n\tjne\t3f\n"
	"\tmovq\t(%rdi,%rsi,8), %rax\n\tret\n3:\n\txorl\t%eax, %eax\n\tret\n"
	"vword:\n\tmovl\t(%rdi), %eax\n\txorl\t%edx, %eax\n\tmovzwl\t%ax, %ecx\n"
	"\tmovl\t(%rsi,%rcx,4), %eax\n\tret\n"
	"vtail:\n\tmovq\t40(%rdi), %rax\n\tmovq\t8(%rax), %rdi\n\tjmp\tvext\n"
	"vind:\n\tmovq\t24(%rsi), %rax\n\tmovq\t8(%rax), %rdi\n\tjmp\t*%rcx\n"
	"\t.weak\tvweakt\nvweakt:\n\tret\n"
	"vweak:\n\tmovq\t32(%rsi), %rax\n\tmovq\t8(%rax), %rdx\n\taddq\t%r11, %rdx\n"
	"\tjmp\tvweakt\n";

static void vcache_checks(const char *dir)
{
	/* the record after each: which kind, of which register, how wide
	 * (a zero source leaves bsf's destination whole, a failed compare
	 * cmpxchg's: its upper half is not zero) */
	static const struct {
		const char *insn, *what;
		int flag, reg, width;
	} recs[] = {
		{ "movl\t(%rdi), %eax", "a 32-bit load's 4 bytes: coded, a full value zero-extended",
		  AE_VAL_REG_VC, 0, 4 },
		{ "movslq\t(%rdi), %rdx", "movslq's 4 bytes: coded, a full value sign-extended",
		  AE_VAL_REG_VC_SEXT, 2, 4 },
		{ "movq\t(%rdi), %r9", "the low half of a 64-bit value: coded, low halves only",
		  AE_VAL_REG_VC_LOW, 9, 4 },
		{ "bsfl\t%esi, %r10d", "bsf's 32-bit destination: all 8 bytes, coded",
		  AE_VAL_REG_VC, 10, 8 },
		{ "cmpxchgl\t%esi, %r11d", "cmpxchg's 32-bit destination: all 8 bytes, coded",
		  AE_VAL_REG_VC, 11, 8 },
	};
	/* a coded record after each, and its scratch register */
	static const struct {
		const char *insn, *what;
		int reg;
	} scr[] = {
		{ "movq\t(%rdi), %r8", "the scratch register is one nothing reads later (not r11, r10 or r8)",
		  9 },
		{ "movq\t(%rdi), %rcx", "a register read as %dh is live: not the scratch (rsi is)", 6 },
		{ "movl\t(%rdi), %r11d",
		  "a register just popped, unread, is not the scratch (valgrind would drop the pop's load): rdi is",
		  7 },
		{ "movq\t40(%rdi), %rax",
		  "before a tail call (a jump to an undefined symbol) the ABI is trusted: r11 is free", 11 },
		{ "movq\t32(%rsi), %rax",
		  "a tail jump to a weak function defined here (another may win at the link) is a tail call: the scratch is rdx, overwritten before it, not r10",
		  2 },
	};
	/* the operand the address cache's code recomputes the address of */
	static const struct {
		const char *insn, *want, *what;
	} ops[] = {
		{ "movq\t0x10(%rax,%rbx,4), %rcx", "0x10(%rax,%rbx,4)",
		  "a load's operand, commas inside parentheses" },
		{ "movl\t-8(%rbp), %eax", "-8(%rbp)", "a negative displacement" },
		{ "movq\ttab+16(,%rdx,8), %rax", "tab+16(,%rdx,8)", "a symbol and an index" },
		{ "movq\t1b(%rax), %rcx", NULL, "a numeric label: another label out of line, refused" },
		{ "movq\t%fs:8(%rax), %rcx", NULL, "a segment: refused" },
		{ "movq\t%rax, %rcx", NULL, "no memory operand: refused" },
	};
	char buf[AE_LOAD_OPERAND_MAX];
	struct ae_ctx c;
	const struct ae_event *ev;
	int k;

	if (analyze_data_asm(dir, "vcache", vcache_asm, 2, &c))
		return;
	k = insn_with(&c, "movq\t(%rdi), %rax");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC) : NULL;
	result(ev && ev->a == 0 && ev->width == 8 &&
	       (ev->b & ~AE_VC_BY_ADDR) == ae_vc_slot(c.objid, k, 0, 1), "%s", "vcache",
	       "a loaded pointer: coded against its slot");
	result(ev && ev->b & AE_VC_BY_ADDR && c.in[k].lc_scr >= 0 && c.in[k].lc_scr != 7 &&
	       c.in[k].vc_scr_after != 7 && c.in[k].lc_scr != c.in[k].vc_scr_after, "%s", "vcache",
	       "... and the address cache's: two scratch registers, neither the address's %rdi");
	k = insn_with(&c, "movq\t(%r11), %rax");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC) : NULL;
	result(ev && ev->b & AE_VC_BY_ADDR && c.in[k].vc_scr_after != 11 && c.in[k].lc_scr >= 0 &&
	       c.in[k].lc_scr != 11, "%s", "vcache",
	       "the address cache's scratch registers: not the address's %r11, dead after the load");
	k = insn_with(&c, "movq\t8(%rdi), %rdi");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC) : NULL;
	result(ev && !(ev->b & AE_VC_BY_ADDR) && c.in[k].lc_scr < 0, "%s", "vcache",
	       "a load that overwrites its address register: not the address cache's");
	k = insn_with(&c, "movq\t(%rdi), %rdx");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) &&
	       !event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC), "%s", "vcache",
	       "flags a cmov reads later: a plain record");
	k = insn_with(&c, "movq\t(%rdx), %rsi");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "vcache",
	       "a load between a compare and its branch: no record there, the flags are live");
	k = insn_with(&c, "movq\t(%r9), %rdi");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL, AE_VAL_REG_VC) : NULL;
	result(ev && ev->a == 6 && ev->width == 8 && ev->b == ae_vc_slot(c.objid, k, 6, 0),
	       "%s", "vcache", "... but before the branch's side that reads it, coded");
	k = insn_with(&c, "xorl\t%eax, %eax");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL, -1), "%s", "vcache",
	       "... and none on the side that does not read it");
	k = insn_with(&c, "movzbl\t(%rdx), %esi");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) : NULL;
	result(ev && ev->width == 1, "%s", "vcache",
	       "a byte loaded there keeps its 1-byte record (a coded one would be larger)");
	k = insn_with(&c, "movq\t(%r10), %rsi");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG), "%s", "vcache",
	       "a side entered from elsewhere too reads it: the plain record stays");
	k = insn_with(&c, "movzwl\t%ax, %ecx");
	result(k >= 0 && !event_at(&c, k, AE_EV_VAL_AFTER, -1), "%s", "vcache",
	       "a 2-byte index made from a 4-byte load: not narrowed (the load's record is coded)");
	k = insn_with(&c, "leal\t1(%rsi), %eax");
	ev = k >= 0 ? event_at(&c, k, AE_EV_VAL, AE_VAL_REG_VC_LOW) : NULL;
	result(ev && ev->a == 6 && ev->width == 4 && ev->b == ae_vc_slot(c.objid, k, 6, 0) &&
	       !event_at(&c, k, AE_EV_VAL, AE_VAL_REG), "%s", "vcache",
	       "a 32-bit argument's low half before a 32-bit lea: coded, low halves only");
	k = insn_with(&c, "movq\t24(%rsi), %rax");
	result(k >= 0 && event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG) &&
	       !event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC), "%s", "vcache",
	       "before an indirect jump that is not a table's everything is live: a plain record");
	for (size_t i = 0; i < sizeof(scr) / sizeof(scr[0]); i++) {
		k = insn_with(&c, scr[i].insn);
		ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, AE_VAL_REG_VC) : NULL;
		result(ev && c.in[k].vc_scr_after == scr[i].reg, "%s", "vcache", scr[i].what);
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *got = ae_load_operand(ops[i].insn, buf, sizeof(buf));

		result(ops[i].want ? got && !strcmp(got, ops[i].want) : !got, "%s", "vcache",
		       ops[i].what);
	}
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		k = insn_with(&c, recs[i].insn);
		ev = k >= 0 ? event_at(&c, k, AE_EV_VAL_AFTER, -1) : NULL;
		result(ev && ev->flag == recs[i].flag && (int)ev->a == recs[i].reg &&
		       ev->width == recs[i].width, "%s", "vcache", recs[i].what);
	}
	ae_ctx_free(&c);
}

/*
 * A value-cache profile (aecc -fae-vc-profile) makes a place whose
 * records the cache coded in nearly as many bytes as plain ones a plain
 * record (vcprof.h ae_vcprof_plain: less than 2.5 bytes saved a record,
 * at least 64 records), before or after its instruction; every other
 * place stays coded, and the placement still gives back every path.
 */
static void vcprof_checks(const char *dir)
{
	/* a profile line (when 'a' or 'b'; 0: none) and the record expected
	 * (event kind ev: AE_EV_VAL before, AE_EV_VAL_AFTER after) */
	static const struct {
		const char *insn, *what;
		char when;
		int reg, recs, bytes, ev, flag, width;
	} places[] = {
		{ "movl\t(%rdi), %eax", "a 32-bit value in 1.51 bytes a record: plain, 4 bytes",
		  'a', 0, 100, 151, AE_EV_VAL_AFTER, AE_VAL_REG, 4 },
		{ "movq\t(%rdi), %rax", "a pointer in 1.5 bytes a record: coded",
		  'a', 0, 100, 150, AE_EV_VAL_AFTER, AE_VAL_REG_VC, 8 },
		{ "movq\t(%rdi), %r8", "a pointer in 5.51 bytes a record: plain, 8 bytes",
		  'a', 8, 100, 551, AE_EV_VAL_AFTER, AE_VAL_REG, 8 },
		{ "leal\t1(%rsi), %eax", "a low half before an instruction in 2 bytes a record: plain, 4 bytes",
		  'b', 6, 100, 200, AE_EV_VAL, AE_VAL_REG, 4 },
		{ "movslq\t(%rdi), %rdx", "movslq's value in 2 bytes a record: plain, 4 bytes sign-extended",
		  'a', 2, 100, 200, AE_EV_VAL_AFTER, AE_VAL_REG_SEXT, 4 },
		{ "movl\t(%rdi), %r11d", "63 records, too few to say: coded",
		  'a', 11, 63, 315, AE_EV_VAL_AFTER, AE_VAL_REG_VC, 4 },
		{ "movq\t(%rdi), %r9", "a line for a record before the instruction leaves the one after it coded",
		  'b', 9, 100, 800, AE_EV_VAL_AFTER, AE_VAL_REG_VC_LOW, 4 },
		{ "movq\t(%rdi), %rcx", "exactly 2.5 bytes saved a record: coded",
		  'a', 1, 100, 550, AE_EV_VAL_AFTER, AE_VAL_REG_VC, 8 },
		{ "movq\t(%r9), %rdi", "a record moved past a compare's branch, in 8 bytes a record: plain there",
		  'b', 6, 100, 800, AE_EV_VAL, AE_VAL_REG, 8 },
		{ "movq\t(%r11), %rax", "a place the profile does not name: coded",
		  0, 0, 0, 0, AE_EV_VAL_AFTER, AE_VAL_REG_VC, 8 },
	};
	char path[96], why[256];
	struct ae_vcprof *prof = NULL;
	struct ae_ctx c;
	FILE *f;
	long n;

	if (analyze_data_asm(dir, "vcprof0", vcache_asm, 2, &c))
		return;
	snprintf(path, sizeof(path), "%s/vcprof.prof", dir);
	f = fopen(path, "w");
	if (!f) {
		ae_ctx_free(&c);
		result(0, "%s", "vcprof", "the profile is written");
		return;
	}
	fprintf(f, "%s\n", AE_VCPROF_HEADER);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++)
		if (places[i].when)
			fprintf(f, "%08x %d %c %d %d 0 0 %d\n", c.objid, insn_with(&c, places[i].insn),
				places[i].when, places[i].reg, places[i].recs, places[i].bytes);
	ae_ctx_free(&c);
	if (fclose(f) || ae_vcprof_load(path, &prof)) {
		result(0, "%s", "vcprof", "the profile is written and read");
		return;
	}
	if (analyze_data_asm_prof(dir, "vcprof1", vcache_asm, 2, prof, &c)) {
		ae_vcprof_free(prof);
		return;
	}
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		int k = insn_with(&c, places[i].insn);
		const struct ae_event *ev = k >= 0 ? event_at(&c, k, places[i].ev, -1) : NULL;

		result(ev && ev->flag == places[i].flag && (int)ev->a == places[i].reg &&
		       ev->width == places[i].width, "%s", "vcprof", places[i].what);
	}
	n = check_tracing(&c, why, sizeof(why));
	result(n > 0, "%s", "vcprof", n > 0 ? "every path given back by its witnesses" :
	       n ? why : "no path checked");
	ae_ctx_free(&c);
	ae_vcprof_free(prof);
}

/* The corner named `name`'s assembly. */
static const char *corner_asm(const char *name)
{
	for (size_t i = 0; i < sizeof(corners) / sizeof(corners[0]); i++)
		if (!strcmp(corners[i].name, name))
			return corners[i].asm_text;
	return "";
}

/* Is the record of no bytes at instruction `prefix` a known table index
 * of `flag` and register reg, read after every register record there,
 * and the index's own record (`old`) gone? */
static int known_index(const struct ae_ctx *c, const char *prefix, int flag, int old, int reg)
{
	int k = insn_with(c, prefix), seen = 0, ok = k >= 0 && !event_at(c, k, AE_EV_VAL, old);

	for (int i = 0; i < c->nev && ok; i++) {
		const struct ae_event *ev = &c->ev[i];

		if ((int)ev->insn != k || ev->kind != AE_EV_VAL)
			continue;
		if (ev->flag == flag)
			seen = ev->width == 0 && (int)ev->a == reg;
		else if (seen)
			ok = 0;		/* a register record after it */
	}
	return ok && seen;
}

/*
 * -fae-data: a table's index register is an address register of its
 * own access, so the data records make it known and the index is not
 * written again (AE_VAL_JTIDX_KNOWN, AE_VAL_JTLOAD_KNOWN), with the
 * value cache and without. A table's jump leads to its own entries only,
 * not on into the next table.
 */
static void tables_checks(const char *dir)
{
	/* hand-written tables whose second entry, op2, the assembly puts
	 * after something other than the end of the section: op2 reads
	 * %rcx, which only the path through op0 loads */
#define GOES_ON(tail)	"\t.text\n\t.globl\tf\n\t.type\tf, @function\n" \
			"f:\n\tmovl\t%esi, %eax\n\tjmp\t*tab(,%rax,8)\n" \
			"op0:\n\tmovq\t(%rdi), %rcx\nop2:\n\tmovl\t(%rcx), %eax\n\tret\n" \
			"\t.section\t.rodata\ntab:\n\t.quad\top0\n" tail
	static const struct {
		const char *text, *what;
	} goes_on[] = {
		{ GOES_ON("tab2:\n\t.quad\top2\n"),
		  "a label inside a table: %rcx recorded at the entry for its second entry" },
		{ GOES_ON("\t.text\n\tnop\n\t.section\t.rodata\n\t.quad\top2\n"),
		  "a table the text comes back to, no label: %rcx recorded at the entry" },
		{ GOES_ON("\t.pushsection\t.rodata\n\t.quad\top2\n\t.popsection\n"),
		  "a table that goes on through .pushsection: %rcx recorded at the entry" },
		{ GOES_ON("\t.text\n\tnop\n\t.sect\t.rodata\n\t.quad\top2\n"),
		  "a table the text comes back to by .sect: %rcx recorded at the entry" },
		{ GOES_ON("\t.text\n\tnop\n\t.SECTION\t.rodata\n\t.quad\top2\n"),
		  "a table the text comes back to by .SECTION: %rcx recorded at the entry" },
	};
#undef GOES_ON
	struct ae_ctx c;

	for (int lib = 0; lib <= 2; lib += 2) {
		const char *tag = lib ? "tables (value cache)" : "tables";
		char name[32];

		snprintf(name, sizeof(name), "jt%d", lib);
		if (!analyze_data_asm(dir, name, corner_asm("jump_table"), lib, &c)) {
			result(known_index(&c, "jmp\t*.L12", AE_VAL_JTIDX_KNOWN, AE_VAL_JTIDX, 7),
			       "%s", tag, "a jump table's index is %rdi, known: no index byte");
			ae_ctx_free(&c);
		}
		snprintf(name, sizeof(name), "cg%d", lib);
		if (!analyze_data_asm(dir, name, corner_asm("computed_goto"), lib, &c)) {
			result(known_index(&c, "movq\t.Ltab(,%rax,8), %rdx", AE_VAL_JTLOAD_KNOWN,
					   AE_VAL_JTLOAD, 0) &&
			       known_index(&c, "movq\t.Ltab(,%rax,8), %rcx", AE_VAL_JTLOAD_KNOWN,
					   AE_VAL_JTLOAD, 0),
			       "%s", tag, "both dispatch loads' index %rax is known: no index byte");
			ae_ctx_free(&c);
		}
	}
	for (size_t i = 0; i < sizeof(goes_on) / sizeof(goes_on[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "goeson%zu", i);
		int k;

		if (analyze_data_asm(dir, name, goes_on[i].text, 0, &c))
			continue;
		result(reg_record(&c, "movl\t%esi, %eax", 1, &k) != NULL, "%s", "tables",
		       goes_on[i].what);
		ae_ctx_free(&c);
	}
	if (!analyze_data_asm(dir, "adjtab", corner_asm("adjacent_tables"), 0, &c)) {
		int ka, kb;

		result(!reg_record(&c, "cmpl\t$249", 1, &ka) && ka >= 0 &&
		       reg_record(&c, "cmpl\t$9", 1, &kb) && kb >= 0, "%s", "tables",
		       "adjacent tables: %rcx recorded at the entry of b, whose case reads it, not of a");
		result(reg_record(&c, "cmpl\t$249", 6, &ka) != NULL, "%s", "tables",
		       "a's last table entry leads past the load of %rsi: recorded at a's entry");
		ae_ctx_free(&c);
	}
}

/*
 * -fae-data: branches on flags that arithmetic on known registers sets.
 * dloop counts %rax from 0 to 100 with no record in its body: decided,
 * yet the cycle must write a byte (a witness on one of its edges). In
 * drec each iteration records the pointer it loads: no witness at all.
 * ddiam's diamond on a known register has none either; its test of an
 * argument that no address uses stays a predicate. drecur's levels are
 * decided (dmain passes 5), yet each writes a byte before its call.
 */
static const char decided_asm[] =
	"\t.text\n"
	"dloop:\n\tmovl\t$0, %eax\n.Ll1:\n\taddq\t(%rdi,%rax,8), %rsi\n"
	"\taddq\t$1, %rax\n\tcmpq\t$100, %rax\n\tjne\t.Ll1\n\tmovq\t%rsi, %rax\n\tret\n"
	"drec:\n\tmovl\t$0, %eax\n.Ll2:\n\tmovq\t(%rdi,%rax,8), %rdx\n"
	"\taddq\t(%rdx), %rsi\n\taddq\t$1, %rax\n\tcmpq\t$100, %rax\n\tjne\t.Ll2\n"
	"\tmovq\t%rsi, %rax\n\tret\n"
	"ddiam:\n\tmovl\t$7, %ecx\n\tcmpl\t$5, %ecx\n\tjle\t.Ld1\n"
	"\tmovq\t(%rdi), %rax\n\tjmp\t.Ld2\n.Ld1:\n\tmovq\t8(%rdi), %rax\n"
	".Ld2:\n\ttestq\t%rsi, %rsi\n\tje\t.Ld3\n\taddq\t$1, %rax\n.Ld3:\n\tret\n"
	"\t.type\tdrecur, @function\n"
	"drecur:\n\ttestl\t%edi, %edi\n\tje\t.Lr1\n\tsubl\t$1, %edi\n\tcall\tdrecur\n"
	".Lr1:\n\tret\n\t.size\tdrecur, .-drecur\n"
	"\t.globl\tdmain\n\t.type\tdmain, @function\n"
	"dmain:\n\tmovl\t$5, %edi\n\tcall\tdrecur\n\tret\n";

/* Witness events at instructions first..last (by their text). */
static int witnesses_between(const struct ae_ctx *c, const char *first, const char *last)
{
	int a = insn_with(c, first), b = insn_with(c, last), n = 0;

	for (int i = 0; i < c->nev && a >= 0 && b >= a; i++)
		if ((int)c->ev[i].insn >= a && (int)c->ev[i].insn <= b &&
		    (c->ev[i].kind == AE_EV_WIT_BEFORE || c->ev[i].kind == AE_EV_WIT_TAKEN ||
		     c->ev[i].kind == AE_EV_WIT_FALL))
			n++;
	return a < 0 || b < a ? -1 : n;
}

/* Is the branch at `prefix` decided (AE_EV_PRED_KNOWN, no witness set)? */
static int decided_at(const struct ae_ctx *c, const char *prefix)
{
	int k = insn_with(c, prefix);

	return k >= 0 && event_at(c, k, AE_EV_PRED_KNOWN, -1) && !event_at(c, k, AE_EV_PRED, -1);
}

static void decided_checks(const char *dir)
{
	for (int lib = 0; lib <= 2; lib += 2) {
		const char *tag = lib ? "decided (value cache)" : "decided";
		char name[32];
		struct ae_ctx c;

		snprintf(name, sizeof(name), "dec%d", lib);
		if (analyze_data_asm(dir, name, decided_asm, lib, &c))
			continue;
		result(decided_at(&c, "jne\t.Ll1"), "%s", tag,
		       "a loop on a counter from 0 is decided");
		result(witnesses_between(&c, "addq\t(%rdi,%rax,8), %rsi", "jne\t.Ll1") == 1,
		       "%s", tag, "its cycle, which records nothing, writes one witness");
		result(decided_at(&c, "jne\t.Ll2") &&
		       witnesses_between(&c, "movq\t(%rdi,%rax,8), %rdx", "jne\t.Ll2") == 0,
		       "%s", tag, "a decided loop that records a value each time: no witness");
		result(decided_at(&c, "jle\t.Ld1") &&
		       witnesses_between(&c, "movl\t$7, %ecx", "movq\t8(%rdi), %rax") == 0,
		       "%s", tag, "a diamond on a known register: decided, no witness");
		result(decided_at(&c, "je\t.Lr1") &&
		       event_at(&c, insn_with(&c, "je\t.Lr1"), AE_EV_WIT_FALL, -1), "%s", tag,
		       "a decided recursion writes a witness before each call");
		result(event_at(&c, insn_with(&c, "je\t.Ld3"), AE_EV_PRED, -1) &&
		       !decided_at(&c, "je\t.Ld3"), "%s", tag,
		       "a test of an unrecorded argument stays a predicate");
		ae_ctx_free(&c);
	}
}

/* Analyse corner t (instruction tracing) in dir: the tracing property by
 * brute force, its control, and t's own checks. */
static void check_corner(const char *dir, const struct corner *t)
{
	char path[64], work[64], why[256];
	struct ae_instr_opts o = { .tmpdir = work };
	struct ae_ctx c;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s.s", dir, t->name);
	snprintf(work, sizeof(work), "%s/%s.d", dir, t->name);
	f = fopen(path, "w");
	if (!f || fputs(t->asm_text, f) < 0 || fclose(f) || mkdir(work, 0700)) {
		perror(path);
		exit(1);
	}
	if (ae_analyze(&c, path, &o)) {
		result(0, "%s", t->name, "aecc analyses it");
		ae_ctx_free(&c);
		return;
	}
	n = check_tracing(&c, why, sizeof(why));
	if (n > 0) {
		snprintf(why, sizeof(why), "%ld paths: each witness sequence gives back its path", n);
		result(1, "%s", t->name, why);
	} else {
		result(0, "%s", t->name, n ? why : "no path checked");
	}
	if (flip_a_predicate(&c))
		result(check_tracing(&c, why, sizeof(why)) < 0, "%s", t->name,
		       "control: a flipped predicate is caught");
	else
		result(0, "%s", t->name, "control: has a predicate to flip");
	if (t->values)
		t->values(t->name, &c);
	ae_ctx_free(&c);
}

/*
 * -fae-data with the value cache: vside's fall-through side loads a
 * pointer the next load uses (a value-cache record after it), its taken
 * side calls: only the taken side writes a witness, a witness byte. Both
 * of vboth's sides begin with such a record: one witness between them.
 * The tracing property by brute force; controls: a flipped predicate,
 * and vside's predicate without AE_PRED_VC_OTHER.
 */
static const char vcside_asm[] =
	"\t.text\n\t.globl\tvside\n\t.type\tvside, @function\n"
	"vside:\n\ttestl\t%esi, %esi\n\tje\t.Lv1\n\tmovq\t(%rdi), %rax\n"
	"\tmovq\t(%rax), %rax\n\tret\n"
	".Lv1:\n\tsubq\t$8, %rsp\n\tcall\th\n\taddq\t$8, %rsp\n\tret\n"
	"\t.globl\tvboth\n\t.type\tvboth, @function\n"
	"vboth:\n\ttestl\t%esi, %esi\n\tje\t.Lb1\n\tmovq\t(%rdi), %rax\n"
	"\tmovq\t(%rax), %rax\n\tret\n"
	".Lb1:\n\tmovq\t8(%rdi), %rax\n\tmovq\t(%rax), %rax\n\tret\n";

static void vcside_checks(const char *dir)
{
	const char *name = "vcside";
	const struct ae_event *pe, *wt, *wf;
	struct ae_ctx c;
	char why[256];
	long n;
	int p, q;

	if (analyze_data_asm(dir, name, vcside_asm, 2, &c))
		return;
	n = check_tracing(&c, why, sizeof(why));
	if (n > 0)
		snprintf(why, sizeof(why), "%ld paths: each byte sequence gives back its path", n);
	result(n > 0, "%s", name, n ? why : "no path checked");
	p = insn_with(&c, "je\t.Lv1");
	pe = p >= 0 ? event_at(&c, p, AE_EV_PRED, -1) : NULL;
	wt = p >= 0 ? event_at(&c, p, AE_EV_WIT_TAKEN, -1) : NULL;
	wf = p >= 0 ? event_at(&c, p, AE_EV_WIT_FALL, -1) : NULL;
	result(pe && wt && !wf && ae_is_wit_byte(wt->a & 0xff), "%s", name,
	       "the side that reaches a value-cache record first writes no witness, the other a witness byte");
	result(pe && pe->flag == (AE_PRED_TAKEN | AE_PRED_VC_OTHER) && pe->b == 1 &&
	       c.pool[pe->a] == wt->a, "%s", name,
	       "its predicate describes the witness side and says the other may begin with a record");
	q = insn_with(&c, "je\t.Lb1");
	result(q >= 0 && !!event_at(&c, q, AE_EV_WIT_TAKEN, -1) +
	       !!event_at(&c, q, AE_EV_WIT_FALL, -1) == 1, "%s", name,
	       "both sides begin with a record: one witness between them");
	if (flip_a_predicate(&c))
		result(check_tracing(&c, why, sizeof(why)) < 0, "%s", name,
		       "control: a flipped predicate is caught");
	flip_a_predicate(&c);
	if (pe) {
		((struct ae_event *)pe)->flag &= ~AE_PRED_VC_OTHER;
		result(check_tracing(&c, why, sizeof(why)) < 0, "%s", name,
		       "control: without AE_PRED_VC_OTHER the record is read as a witness");
	}
	ae_ctx_free(&c);
}

#define NDIAMONDS	200

/* Witness ids and widths of the diamonds corner: 2 per diamond, colours
 * 0 and 1, one byte each (unique ids would have taken two). */
static void values_colours(const char *name, const struct ae_ctx *c)
{
	int nwit = 0, maxid = -1, wide = 0;

	for (int i = 0; i < c->nev; i++) {
		const struct ae_event *ev = &c->ev[i];

		if (ev->kind != AE_EV_WIT_TAKEN && ev->kind != AE_EV_WIT_FALL &&
		    ev->kind != AE_EV_WIT_BEFORE)
			continue;
		nwit++;
		maxid = (int)ev->a > maxid ? (int)ev->a : maxid;
		wide += ev->width != 1;
	}
	result(nwit >= 2 * NDIAMONDS, "%s", name, "a witness on each side of each diamond");
	result(maxid == 1 && !wide, "%s", name,
	       "they share two ids, one byte each (unique ids would need two bytes)");
}

/*
 * Witness ids are colours: 200 diamonds, each closed by a call (where
 * the regenerator stops), whose sides' witnesses only their own branch
 * tells apart, share two ids and stay one byte wide; the tracing
 * property still holds by brute force.
 */
static void colour_checks(const char *dir)
{
	size_t cap = NDIAMONDS * 160 + 256, len;
	char *text = malloc(cap);
	struct corner t = { "diamonds", text, values_colours };

	if (!text)
		exit(1);
	len = snprintf(text, cap, "\t.text\n\t.globl\tmany\n\t.type\tmany, @function\n"
		       "many:\n\tpushq\t%%rbx\n\tmovl\t%%edi, %%ebx\n");
	for (int k = 0; k < NDIAMONDS; k++)
		len += snprintf(text + len, cap - len,
				"\ttestl\t$%d, %%ebx\n\tje\t.Lm%d\n\taddl\t$1, %%ebx\n\tjmp\t.Ln%d\n"
				".Lm%d:\n\taddl\t$2, %%ebx\n.Ln%d:\n\tmovl\t%%ebx, %%edi\n\tcall\th\n",
				1 << (k % 31), k, k, k, k);
	snprintf(text + len, cap - len, "\tpopq\t%%rbx\n\tret\n");
	check_corner(dir, &t);
	free(text);
}

int main(void)
{
	char dir[] = "/tmp/aecc_place.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("aecc_place: mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof(corners) / sizeof(corners[0]); i++)
		check_corner(dir, &corners[i]);
	colour_checks(dir);
	memfn_checks(dir);
	widths_checks(dir);
	callers_checks(dir);
	noreturn_checks(dir);
	vcache_checks(dir);
	vcprof_checks(dir);
	tables_checks(dir);
	decided_checks(dir);
	vcside_checks(dir);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "aecc_place: cannot remove %s\n", dir);
	}
	printf("1..%d\n", ntest);
	return nfail != 0;
}
