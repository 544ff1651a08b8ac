// SPDX-License-Identifier: MIT
/*
 * place.c - witness placement (paper section 2.2, after Ball & Larus):
 * blocking witnesses on predicate -> call/value/exit paths first, then the
 * complement of a maximum spanning tree (loop-depth weights; exits are
 * tree leaves, see place_mst()), then a witness on every cycle that would
 * write nothing, then a check of the tracing property (disjoint witness
 * sets at every predicate) that adds witnesses where it fails. A decided
 * branch (data.c: the regenerator computes its flags) is no predicate.
 * A side whose every path reaches a value-cache record first (data.c
 * vc_first) needs no witness: the regenerator tells the record's first
 * byte from the other side's witnesses, which are then witness bytes
 * (schema.h ae_is_wit_byte). Witness ids are numbered per connected
 * component, then coloured.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "place.h"
#include "xalloc.h"

static int uf_find(int *p, int x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static int uf_union(int *p, int a, int b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a == b)
		return 0;
	p[a] = b;
	return 1;
}

static int edge_w_cmp(const void *a, const void *b, void *arg)
{
	const struct ae_ctx *c = arg;
	const struct edge *x = &c->e[*(const int *)a];
	const struct edge *y = &c->e[*(const int *)b];

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}


/*
 * Does reaching x from a decided branch need a witness first? A direct
 * call that writes nothing: the callee may be the branch's own function
 * (a recursion whose every level is decided would write no byte, and
 * (trace offset, ip) would not tell its levels apart). Records are
 * bytes already, an indirect call records its target, a routine entered
 * past its argument records cannot come back.
 */
static int decided_block(const struct insn *x)
{
	return x->kind == IK_CALL && !x->drec && !x->memfn_call;
}

/*
 * A walk from a predicate's edge (decided: a decided branch's) meets
 * vertex v: 1 the edge needs a witness, -1 the walk ends there (bytes,
 * another predicate or an exit speak for it), 0 it goes on.
 */
static int blocking_at(const struct ae_ctx *c, int v, int decided)
{
	const struct insn *x;

	if (v == c->n)
		return decided ? -1 : 1;
	x = &c->in[v];
	/* a value-cache record's first byte speaks for the edge */
	if (!decided && x->vc_first)
		return -1;
	if (decided ? decided_block(x) : ae_is_block(x))
		return 1;
	return ae_is_block(x) || (x->kind == IK_JCC && !x->decided) ? -1 : 0;
}

/*
 * Blocking witnesses: no witness-free predicate -> call/value/exit path
 * (the regenerator reads the predicate's witness next); for a decided
 * branch, no witness-free path to a call that writes nothing. A decided
 * branch on the way leads on along both of its edges.
 */
static void place_blocking(struct ae_ctx *c)
{
	int n = c->n;
	int *seen = ae_xcalloc(n + 1, sizeof(int));
	int *work = ae_xmalloc((2 * n + 4) * sizeof(int));
	int stamp = 0;

	for (int p = 0; p < n; p++) {
		int decided = c->in[p].decided;

		if (c->in[p].kind != IK_JCC)
			continue;
		for (int j = 0; j < c->in[p].nout; j++) {
			struct edge *e = &c->e[c->in[p].out[j]];
			int nw = 0, block = 0;

			stamp++;
			work[nw++] = e->to;
			while (nw && !block) {
				int v = work[--nw], r = blocking_at(c, v, decided);
				struct insn *x = &c->in[v];

				block = r > 0;
				if (r || seen[v] == stamp)
					continue;
				seen[v] = stamp;
				for (int i = 0; i < x->nout; i++)
					if (c->e[x->out[i]].state != S_WIT)
						work[nw++] = c->e[x->out[i]].to;
			}
			if (block)
				e->state = S_WIT;
		}
	}
	free(seen);
	free(work);
}

static void place_mst(struct ae_ctx *c)
{
	int n = c->n;
	int *uf = ae_xmalloc((n + 1) * sizeof(int));
	int *order = ae_xmalloc(c->ne * sizeof(int));
	int no = 0;

	/*
	 * Exit edges lead to a fresh EXIT vertex each: a procedure is entered
	 * only through calls, which the regenerator follows itself, so (unlike
	 * edge profiling, where the imaginary EXIT -> ENTRY edge joins them)
	 * entries and exits need no witness of their own; blocking witnesses
	 * already cover predicate -> exit paths.
	 */
	for (int i = 0; i <= n; i++)
		uf[i] = i;
	for (int i = 0; i < c->ne; i++) {
		/* a decided branch's edges are no choice to record */
		if (c->in[c->e[i].from].decided && c->e[i].state == S_FREE)
			c->e[i].state = S_TREE;
		if (c->e[i].to == n && c->e[i].state == S_FREE)
			c->e[i].state = S_TREE;
		else if (c->e[i].state == S_FORCED && c->e[i].to < n)
			uf_union(uf, c->e[i].from, c->e[i].to);
		else if (c->e[i].state == S_FREE)
			order[no++] = i;
	}
	qsort_r(order, no, sizeof(int), edge_w_cmp, c);
	for (int i = 0; i < no; i++) {
		struct edge *e = &c->e[order[i]];

		e->state = uf_union(uf, e->from, e->to) ? S_TREE : S_WIT;
	}
	free(uf);
	free(order);
}

/*
 * Every cycle writes a byte: the regenerator places signals, context
 * switches and a thread's end by (trace offset, ip), which a cycle that
 * writes nothing would make ambiguous (and a thread killed in it would
 * regenerate iterations that never ran). The spanning tree's chords see
 * to it, but for cycles closed by decided branches' edges: a depth-first
 * search over the edges without witnesses, not through instructions that
 * write records, puts a witness on each back edge it finds.
 */
static void break_silent_cycles(struct ae_ctx *c)
{
	int n = c->n;
	char *color = ae_xcalloc(n + 1, 1);
	int *stack = ae_xmalloc((n + 1) * sizeof(int));
	int *next = ae_xcalloc(n + 1, sizeof(int));

	for (int s = 0; s < n; s++) {
		int sp = 0;

		if (color[s] || c->in[s].drec)
			continue;
		color[s] = 1;
		stack[sp++] = s;
		while (sp) {
			int v = stack[sp - 1];
			const struct insn *x = &c->in[v];
			struct edge *e;

			if (next[v] == x->nout) {
				color[v] = 2;
				sp--;
				continue;
			}
			e = &c->e[x->out[next[v]++]];
			if (e->state == S_WIT || e->to >= n || c->in[e->to].drec)
				continue;
			if (color[e->to] == 1) {
				e->state = S_WIT;
			} else if (!color[e->to]) {
				color[e->to] = 1;
				stack[sp++] = e->to;
			}
		}
	}
	free(color);
	free(stack);
	free(next);
}

int ae_witness_set(struct ae_ctx *c, int ei, char *set, int *vc, int *stack, char *color)
{
	int n = c->n, sp = 0, bad = 0;
	struct edge *e = &c->e[ei];

	*vc = 0;
	if (e->state == S_WIT) {
		set[e->id] = 1;
		return 0;
	}
	memset(color, 0, n + 1);
	/* iterative DFS with colours to detect witness-free cycles */
	stack[sp++] = e->to;
	while (sp && !bad) {
		int v = stack[sp - 1];
		struct insn *x;

		if (v < 0) {	/* post-order marker */
			color[-v - 1] = 2;
			sp--;
			continue;
		}
		if (v < n && c->in[v].vc_first) {
			*vc = 1;
			sp--;
			continue;
		}
		if (v == n || ae_is_block(&c->in[v])) {
			bad = 1;
			break;
		}
		if (color[v] == 2) {
			sp--;
			continue;
		}
		if (color[v] == 1) {
			bad = 1;	/* witness-free cycle */
			break;
		}
		color[v] = 1;
		stack[sp - 1] = -v - 1;
		x = &c->in[v];
		for (int j = 0; j < x->nout; j++) {
			struct edge *f = &c->e[x->out[j]];

			if (f->state == S_WIT)
				set[f->id] = 1;
			else if (f->to == n || color[f->to] != 2)
				stack[sp++] = f->to;
		}
	}
	return bad ? -1 : 0;
}

/* Number the witnesses of each component afresh (0, 1, ...). */
static void assign_ids(struct ae_ctx *c)
{
	int n = c->n;

	for (int i = 0; i < n + 1; i++)
		c->compn[i] = 0;
	for (int i = 0; i < c->ne; i++) {
		struct edge *e = &c->e[i];

		if (e->state == S_WIT)
			e->id = c->compn[c->comp[e->from]]++;
	}
}

/*
 * Witness ids need only tell apart what one predicate's two sides may
 * write first: with every id unique, a large procedure (Lua's
 * interpreter loop) has more than 256 and writes 2-byte witnesses. Once
 * the placement holds, colour the witness edges, fewest colours first in
 * edge order, so that no predicate has one colour on both of its sides;
 * the colour is the id. Where one side may begin with a value-cache
 * record, the other side's colours are witness bytes (their low byte).
 * The sets are taken with the unique ids the loop left, which name one
 * edge each.
 */
static void colour_ids(struct ae_ctx *c)
{
	int n = c->n, ne = c->ne, np = 0, cap = ne + 1;
	int *base = ae_xcalloc(n + 2, sizeof(int));
	int *edge_of, *pstart, *pedges, *mstart, *mem, *colour, *forb;
	int *stack = ae_xmalloc((ne + n + 2) * sizeof(int) * 2);
	char *vis = ae_xmalloc(n + 1);
	char *pvc = ae_xcalloc(2 * n + 1, 1), *need_w = ae_xcalloc(ne + 1, 1);
	int total = 0, maxc = 256 * (ne / 30 + 2) + ne + 2;

	/* (component, unique id) -> edge */
	for (int i = 0; i < n; i++)
		if (c->comp[i] == i) {
			base[i] = total;
			total += c->compn[i];
		}
	edge_of = ae_xmalloc((total + 1) * sizeof(int));
	for (int i = 0; i < ne; i++)
		if (c->e[i].state == S_WIT)
			edge_of[base[c->comp[c->e[i].from]] + c->e[i].id] = i;
	/* each predicate's two sides, as edges: side j of p at
	 * pedges[pstart[2p + j] .. pstart[2p + j + 1]) */
	pstart = ae_xcalloc(2 * n + 1, sizeof(int));
	pedges = ae_xmalloc(cap * sizeof(int));
	for (int p = 0; p < n; p++) {
		const struct insn *x = &c->in[p];
		int m = c->compn[c->comp[p]] + 1;

		for (int j = 0; j < 2; j++) {
			char *set;
			int vc;

			pstart[2 * p + j] = np;
			if (x->kind != IK_JCC || x->decided || x->memfn_body)
				continue;
			set = ae_xcalloc(m, 1);
			ae_witness_set(c, x->out[j], set, &vc, stack, vis);
			pvc[2 * p + j] = vc;
			for (int i = 0; i < m; i++) {
				if (!set[i])
					continue;
				if (np == cap) {
					cap *= 2;
					pedges = ae_xrealloc(pedges, cap * sizeof(int));
				}
				pedges[np++] = edge_of[base[c->comp[p]] + i];
			}
			free(set);
		}
	}
	pstart[2 * n] = np;
	for (int ps = 0; ps < 2 * n; ps++)
		if (pvc[ps])
			for (int i = pstart[ps ^ 1]; i < pstart[(ps ^ 1) + 1]; i++)
				need_w[pedges[i]] = 1;
	/* each edge's memberships (2p + j) */
	mstart = ae_xcalloc(ne + 1, sizeof(int));
	mem = ae_xmalloc((np + 1) * sizeof(int));
	for (int i = 0; i < np; i++)
		mstart[pedges[i]]++;
	for (int i = 0, sum = 0; i <= ne; i++) {
		int k = i < ne ? mstart[i] : 0;

		mstart[i] = sum;
		sum += k;
	}
	for (int ps = 0; ps < 2 * n; ps++)
		for (int i = pstart[ps]; i < pstart[ps + 1]; i++)
			mem[mstart[pedges[i]]++] = ps;
	for (int i = ne; i > 0; i--)
		mstart[i] = mstart[i - 1];
	mstart[0] = 0;
	/* greedy: the least colour no opposite side has yet */
	colour = ae_xmalloc((ne + 1) * sizeof(int));
	forb = ae_xcalloc(maxc, sizeof(int));
	for (int i = 0; i < ne; i++)
		colour[i] = -1;
	for (int i = 0; i < n + 1; i++)
		c->compn[i] = 0;
	for (int u = 0; u < ne; u++) {
		int k = 0;

		if (c->e[u].state != S_WIT)
			continue;
		for (int a = mstart[u]; a < mstart[u + 1]; a++) {
			int other = mem[a] ^ 1;

			for (int i = pstart[other]; i < pstart[other + 1]; i++)
				if (colour[pedges[i]] >= 0)
					forb[colour[pedges[i]]] = u + 1;
		}
		while (forb[k] == u + 1 || (need_w[u] && !ae_is_wit_byte(k & 0xff)))
			k++;
		colour[u] = k;
		c->e[u].id = k;
		if (k + 1 > c->compn[c->comp[c->e[u].from]])
			c->compn[c->comp[c->e[u].from]] = k + 1;
	}
	free(base);
	free(edge_of);
	free(pstart);
	free(pedges);
	free(mstart);
	free(mem);
	free(colour);
	free(forb);
	free(stack);
	free(vis);
	free(pvc);
	free(need_w);
}

int ae_place(struct ae_ctx *c)
{
	int n = c->n, changed;
	int *uf = ae_xmalloc((n + 1) * sizeof(int));
	char *set0, *set1, *color;
	int *stack;

	/* components: instructions joined by real edges */
	for (int i = 0; i <= n; i++)
		uf[i] = i;
	for (int i = 0; i < c->ne; i++)
		if (c->e[i].to < n)
			uf_union(uf, c->e[i].from, c->e[i].to);
	c->comp = ae_xmalloc((n + 1) * sizeof(int));
	c->compn = ae_xcalloc(n + 1, sizeof(int));
	c->compw = ae_xcalloc(n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		c->comp[i] = uf_find(uf, i);
	free(uf);

	/* a record after the instruction must be its first byte: no
	 * witness on its way out (written before that record) */
	for (int k = 0; k < n; k++)
		if (c->in[k].vc_first == 2 && c->e[c->in[k].out[0]].state == S_FREE)
			c->e[c->in[k].out[0]].state = S_FORCED;
	place_blocking(c);
	place_mst(c);
	break_silent_cycles(c);

	/* Check the tracing property; instrument both edges where it fails. */
	stack = ae_xmalloc((c->ne + n + 2) * sizeof(int) * 2);
	color = ae_xmalloc(n + 1);
	do {
		changed = 0;
		assign_ids(c);
		for (int p = 0; p < n; p++) {
			struct insn *x = &c->in[p];
			int m, ok, vc0, vc1;

			if (x->kind != IK_JCC || x->decided)
				continue;
			m = c->compn[c->comp[p]] + 1;
			set0 = ae_xcalloc(m, 1);
			set1 = ae_xcalloc(m, 1);
			ok = ae_witness_set(c, x->out[0], set0, &vc0, stack, color) == 0 &&
			     ae_witness_set(c, x->out[1], set1, &vc1, stack, color) == 0;
			for (int i = 0; ok && i < m; i++)
				if (set0[i] && set1[i])
					ok = 0;
			free(set0);
			free(set1);
			/* both sides begin with a value-cache record: a witness
			 * on the fall-through (no profile says which side is
			 * hot; the spanning tree prefers taken edges too) */
			if (ok && vc0 && vc1) {
				struct edge *e = &c->e[x->out[1]];

				e->state = S_WIT;
				e->id = c->compn[c->comp[e->from]]++;
				changed = 1;
				continue;
			}
			if (!ok) {
				for (int j = 0; j < 2; j++) {
					struct edge *e = &c->e[x->out[j]];

					if (e->state != S_WIT) {
						e->state = S_WIT;
						e->id = c->compn[c->comp[e->from]]++;
						changed = 1;
					}
				}
				if (!changed) {
					free(color);
					free(stack);
					return ae_err(c, c->a.st[x->stmt].line,
						      "cannot make branch '%s' traceable",
						      c->a.st[x->stmt].text);
				}
			}
		}
	} while (changed);
	free(color);
	free(stack);
	colour_ids(c);

	for (int i = 0; i < n; i++) {
		int m = c->compn[c->comp[i]];

		c->compw[c->comp[i]] = m <= 256 ? 1 : m <= 65536 ? 2 : 4;
	}
	return 0;
}
