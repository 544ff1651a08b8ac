// SPDX-License-Identifier: MIT
/*
 * cfg.c - edges between the decoded instructions of one object: fall
 * through, taken, and exit (calls are followed by the regenerator, so a
 * call's only edge is to its return point), with loop-depth weights.
 */
#include <math.h>
#include <stdlib.h>

#include "cfg.h"
#include "scan.h"
#include "xalloc.h"

static int add_edge(struct ae_ctx *c, int from, int to, enum edge_kind k)
{
	struct edge *e;

	if (c->ne == c->cape) {
		c->cape = c->cape ? c->cape * 2 : 1024;
		c->e = ae_xrealloc(c->e, c->cape * sizeof(*c->e));
	}
	e = &c->e[c->ne];
	e->from = from;
	e->to = to;
	e->kind = k;
	e->state = S_FREE;
	e->w = 0;
	e->id = -1;
	c->in[from].out[c->in[from].nout++] = c->ne;
	return c->ne++;
}

/* (add_edge may move c->e: index it only after the call) */
static void force_edge(struct ae_ctx *c, int ei)
{
	c->e[ei].state = S_FORCED;
}

/* musl's sigsetjmp keeps its return address in the jmp_buf (pop to
 * memory, later push back): the regenerator's call stack must follow. */
int ae_moves_retaddr(const struct insn *x)
{
	return x->in_sigsetjmp && x->stack_mem;
}

int ae_is_block(const struct insn *x)
{
	return x->kind == IK_CALL || x->kind == IK_CALL_IND ||
	       x->kind == IK_JMP_IND || x->rep || x->setjmp_entry ||
	       ae_moves_retaddr(x) || x->tload || x->drec;
}

void ae_build_graph(struct ae_ctx *c)
{
	int n = c->n;

	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int nx = ae_insn_at(c, x->sec, x->off + x->len);

		if (x->rep < 0)
			x->rep = 0;
		x->next = nx;
		switch (x->kind) {
		case IK_PLAIN:
			add_edge(c, k, nx >= 0 ? nx : n, nx >= 0 ? E_FALL : E_EXIT);
			break;
		case IK_CALL:
		case IK_CALL_IND:
			if (nx >= 0 && !c->in[nx].func_start)
				force_edge(c, add_edge(c, k, nx, E_FALL));
			break;
		case IK_JCC:
			add_edge(c, k, x->target >= 0 ? x->target : n, E_TAKEN);
			add_edge(c, k, nx >= 0 ? nx : n, nx >= 0 ? E_FALL : E_EXIT);
			break;
		case IK_JMP:
			add_edge(c, k, x->target >= 0 ? x->target : n,
				 x->target >= 0 ? E_TAKEN : E_EXIT);
			break;
		case IK_JMP_IND:
			force_edge(c, add_edge(c, k, n, E_EXIT));
			break;
		case IK_RET:
			add_edge(c, k, n, E_EXIT);
			break;
		case IK_STOP:
			break;
		}
	}
	/* Loop depth estimate: backward jumps spanning an instruction. */
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];

		if ((x->kind == IK_JCC || x->kind == IK_JMP) && x->target >= 0) {
			struct insn *t = &c->in[x->target];

			if (t->sec == x->sec && t->off <= x->off)
				for (int j = 0; j < n; j++)
					if (c->in[j].sec == x->sec &&
					    c->in[j].off >= t->off && c->in[j].off <= x->off)
						c->in[j].depth++;
		}
	}
	for (int i = 0; i < c->ne; i++) {
		struct edge *e = &c->e[i];
		struct insn *f = &c->in[e->from];
		int d = f->depth > 6 ? 6 : f->depth;

		e->w = pow(10, d);
		if (f->kind == IK_JCC)
			e->w *= e->kind == E_TAKEN ? 0.51 : 0.49;
	}
}

/*
 * Computed-goto dispatch (`mov TABLE(,%i,8),%r; ...; jmp *%r`, Lua's
 * interpreter loop): record the table index (1 byte for up to 256 labels)
 * at the load instead of the 8-byte target at the jump, when the load
 * reaches the jump on a straight line that nothing else enters and that
 * leaves %r alone.
 */
void ae_link_table_loads(struct ae_ctx *c)
{
	int n = c->n;
	int *npred = ae_xcalloc(n + 1, sizeof(int));

	for (int i = 0; i < c->ne; i++)
		if (c->e[i].to < n)
			npred[c->e[i].to]++;
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int v = k, ok = 0;

		if (x->tload_reg < 0)
			continue;
		for (int steps = 0; steps < 64; steps++) {
			struct insn *y = &c->in[v];

			if (y->kind != IK_PLAIN || y->rep || y->nout != 1)
				break;
			v = c->e[y->out[0]].to;
			if (v >= n || npred[v] != 1)
				break;
			y = &c->in[v];
			if (y->kind == IK_JMP_IND && y->ind == IND_REG &&
			    y->ind_reg == x->tload_reg && !y->in_longjmp) {
				ok = 1;
				break;
			}
			if (y->writes & (1u << x->tload_reg))
				break;
		}
		if (ok) {
			x->tload = 1;
			c->in[v].from_tload = 1;
		}
	}
	free(npred);
}
