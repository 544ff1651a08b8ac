// SPDX-License-Identifier: MIT
/*
 * events.c - the schema events of one object: at each instruction, in the
 * order its trace bytes are written, the witnesses (before it, on its
 * taken edge through a stub, on its fall-through edge), the values it
 * records, and at each predicate the witness ids of its smaller side, so
 * the regenerator can decide the branch from the next witness it reads
 * (or, at a decided one, that it computes the branch).
 */
#include <stdlib.h>

#include "cfg.h"
#include "data.h"
#include "events.h"
#include "memfn.h"
#include "place.h"
#include "xalloc.h"

static void add_event(struct ae_ctx *c, int k, int kind, int width, int flag,
		      uint32_t a, uint32_t b)
{
	struct ae_event *ev;

	if (c->nev == c->capev) {
		c->capev = c->capev ? c->capev * 2 : 256;
		c->ev = ae_xrealloc(c->ev, c->capev * sizeof(*c->ev));
	}
	ev = &c->ev[c->nev++];
	ev->insn = k;
	ev->kind = kind;
	ev->width = width;
	ev->flag = flag;
	ev->a = a;
	ev->b = b;
}

static void make_pred_events(struct ae_ctx *c)
{
	int n = c->n;
	int *stack = ae_xmalloc((c->ne + n + 2) * sizeof(int) * 2);
	char *color = ae_xmalloc(n + 1);

	for (int p = 0; p < n; p++) {
		struct insn *x = &c->in[p];
		int m, cnt[2] = { 0, 0 }, vc[2], side;
		char *set[2];

		if (x->kind != IK_JCC || x->memfn_body)
			continue;
		if (x->decided) {
			add_event(c, p, AE_EV_PRED_KNOWN, 0, 0, 0, 0);
			continue;
		}
		m = c->compn[c->comp[p]] + 1;
		for (int j = 0; j < 2; j++) {
			set[j] = ae_xcalloc(m, 1);
			ae_witness_set(c, x->out[j], set[j], &vc[j], stack, color);
			for (int i = 0; i < m; i++)
				cnt[j] += set[j][i];
		}
		/* out[0] is the taken edge; describe the smaller side, or
		 * the one that cannot begin with a value-cache record */
		side = vc[0] ? 1 : vc[1] ? 0 : cnt[0] <= cnt[1] ? 0 : 1;
		add_event(c, p, AE_EV_PRED, c->compw[c->comp[p]],
			  (side == 0 ? AE_PRED_TAKEN : 0) | (vc[!side] ? AE_PRED_VC_OTHER : 0),
			  c->npool, cnt[side]);
		for (int i = 0; i < m; i++) {
			if (!set[side][i])
				continue;
			if (c->npool == c->cappool) {
				c->cappool = c->cappool ? c->cappool * 2 : 256;
				c->pool = ae_xrealloc(c->pool, c->cappool * sizeof(uint32_t));
			}
			c->pool[c->npool++] = i;
		}
		free(set[0]);
		free(set[1]);
	}
	free(stack);
	free(color);
}

void ae_make_events(struct ae_ctx *c)
{
	int n = c->n;

	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int w = c->compw[c->comp[k]];

		/* a routine traced by its arguments: their records at the
		 * entry, its result before every ret, nothing else */
		if (x->memfn_body) {
			const struct insn *e = &c->in[x->memfn_body - 1];
			int rw = ae_memfn_result_width(e->memfn);

			if (x->memfn) {
				ae_data_events(c, k, add_event);
				add_event(c, k, AE_EV_EXPAND, rw, 0, x->memfn, 0);
			}
			if (x->kind == IK_RET && rw && !ae_memfn_is_cmp(e->memfn))
				add_event(c, k, AE_EV_VAL, rw, AE_VAL_REG, 0, 0);
			continue;
		}
		/* before-witnesses: single-successor transfers */
		for (int j = 0; j < x->nout; j++) {
			struct edge *e = &c->e[x->out[j]];

			if (e->state != S_WIT)
				continue;
			if (x->kind == IK_JMP || x->kind == IK_RET)
				add_event(c, k, AE_EV_WIT_BEFORE, w, 0, e->id, 0);
		}
		if (x->memfn_call)
			add_event(c, k, AE_EV_ARGS_AT_CALL, 0, 0, x->memfn_call, 0);
		if (x->setjmp_entry)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_SETJMP_SP, 0, 0);
		if (x->rep)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_REPCNT, 0, 0);
		if (x->tload && !x->jt_known)
			add_event(c, k, AE_EV_VAL, x->jt_width, AE_VAL_JTLOAD, 0, 0);
		if (ae_moves_retaddr(x) && x->stack_mem == 1)
			add_event(c, k, AE_EV_SHADOW_POP, 0, 0, 0, 0);
		if (ae_moves_retaddr(x) && x->stack_mem == 2)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_RETADDR, 0, 0);
		if (x->kind == IK_JMP_IND && x->in_longjmp)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_LONGJMP_SP, 0, 0);
		if (x->kind == IK_JMP_IND || x->kind == IK_CALL_IND) {
			if (x->from_tload)
				add_event(c, k, AE_EV_TARGET_LOADED, 0, 0, 0, 0);
			else if (x->ind != IND_TABLE)
				add_event(c, k, AE_EV_VAL, 8, AE_VAL_TARGET, 0, 0);
			else if (!x->jt_known)
				add_event(c, k, AE_EV_VAL, x->jt_width, AE_VAL_JTIDX, 0, 0);
		}
		if (x->kind == IK_JCC) {
			for (int j = 0; j < 2; j++) {
				struct edge *e = &c->e[x->out[j]];

				if (e->state == S_WIT)
					add_event(c, k, e->kind == E_TAKEN ?
						  AE_EV_WIT_TAKEN : AE_EV_WIT_FALL, w, 0, e->id, 0);
			}
		} else if (x->kind == IK_PLAIN) {
			struct edge *e = &c->e[x->out[0]];

			if (e->state == S_WIT)
				add_event(c, k, AE_EV_WIT_FALL, w, 0, e->id, 0);
		}
		if (x->rep == 2)
			add_event(c, k, AE_EV_VAL_AFTER, 8, AE_VAL_REPCNT_AFTER, 0, 0);
		/* data records last: the regenerator reads them after the rest */
		if (c->data)
			ae_data_events(c, k, add_event);
		/* a known table index: read after k's register records */
		if (x->jt_known)
			add_event(c, k, AE_EV_VAL, 0, x->tload ? AE_VAL_JTLOAD_KNOWN : AE_VAL_JTIDX_KNOWN,
				  x->ind_reg, 0);
	}
	make_pred_events(c);
}

void ae_sort_events(struct ae_ctx *c)
{
	int *cnt = ae_xcalloc(c->n + 2, sizeof(int));
	struct ae_event *out = ae_xrealloc(NULL, (c->nev + 1) * sizeof(*out));

	for (int i = 0; i < c->nev; i++)
		cnt[c->ev[i].insn + 1]++;
	for (int k = 0; k <= c->n; k++)
		cnt[k + 1] += cnt[k];
	for (int i = 0; i < c->nev; i++)
		out[cnt[c->ev[i].insn]++] = c->ev[i];
	free(c->ev);
	c->ev = out;
	c->capev = c->nev + 1;
	free(cnt);
}
