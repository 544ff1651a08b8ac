// SPDX-License-Identifier: MIT
/*
 * regen.c - abstract execution: walk the twin's code from its entry point
 * and, at every point the instrumenter marked, take the decision the
 * witness stream dictates (paper §2.2): at a predicate the next witness
 * names the side taken; instrumented edges consume and check their
 * witness; indirect transfers read their recorded value; returns follow a
 * shadow call stack, which setjmp/longjmp records resynchronise.
 *
 * Signals: a SIGNAL marker at stream position P means the handler ran when
 * the thread had written exactly P bytes; it is entered at the first of:
 * reaching the marker's (twin) ip, or needing byte P. Its bytes end at the
 * matching SIGRETURN marker, after the sigreturn syscall of __restore_rt.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/schema.h>

#include "program.h"

#define MAX_LEVELS 64

struct sj {
	uint64_t sp;
	size_t depth;
};

struct rg {
	struct ae_program *p;
	struct ae_stream *s;
	const struct ae_regen_sink *sink;
	struct ae_regen_stats *st;
	uint64_t pos;
	size_t mi;		/* next marker */
	uint64_t *mkip;		/* twin ip of each marker (0 if none) */
	size_t *mkend;		/* SIGNAL: index of the matching SIGRETURN */
	uint64_t *stk;
	size_t n, cap;
	struct sj *sj;
	size_t nsj, capsj;
	int level;
	jmp_buf unwind[MAX_LEVELS];
	size_t level_depth[MAX_LEVELS];
	uint64_t level_ip[MAX_LEVELS];	/* twin ip each handler interrupted */
	uint64_t unwind_pc;
	uint64_t loaded_target;	/* from the last AE_VAL_JTLOAD */
	int finishing;		/* in _Exit: stop after its system call */
	int stop;
	int debug;		/* AETRACE_DEBUG: narrate signals and longjmps */
};

static int rerr(struct rg *g, uint64_t pc, const char *msg)
{
	fprintf(stderr, "aetrace: %s at trace offset %llu, instruction %#llx (%llu instructions regenerated)\n",
		msg, (unsigned long long)g->pos, (unsigned long long)pc,
		(unsigned long long)g->st->insns);
	return -1;
}

static void push(struct rg *g, uint64_t a)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->stk = realloc(g->stk, g->cap * sizeof(*g->stk));
		if (!g->stk)
			abort();
	}
	g->stk[g->n++] = a;
}

static int run(struct rg *g, uint64_t pc);

static int is_sig(const struct rg *g, size_t i)
{
	return i < g->s->nmk && g->s->mk[i].type == TRBUF_MK_SIGNAL;
}

/* Skip markers that carry no control flow for one thread. */
static void skip_passive(struct rg *g)
{
	while (g->mi < g->s->nmk) {
		uint32_t t = g->s->mk[g->mi].type;

		if (t == TRBUF_MK_SIGNAL || t == TRBUF_MK_SIGRETURN ||
		    t == TRBUF_MK_EXIT)
			break;
		g->mi++;
	}
}

/* Enter the handler of the pending SIGNAL marker; returns after its
 * sigreturn. */
static int deliver(struct rg *g)
{
	const struct trbuf_marker *m = &g->s->mk[g->mi];
	uint64_t handler = ae_map_resume(g->p, m->arg);
	size_t depth = g->n;
	uint64_t loaded = g->loaded_target;
	int ret;

	if (!handler)
		return rerr(g, m->arg, "signal handler is not instrumented code");
	if (!g->p->restorer)
		return rerr(g, m->arg, "the twin has no __restore_rt");
	if (g->level + 1 >= MAX_LEVELS)
		return rerr(g, handler, "signal handlers nested too deeply");
	g->level_ip[g->level + 1] = g->mkip[g->mi];
	g->mi++;
	g->st->signals++;
	if (g->debug)
		fprintf(stderr, "aetrace: signal %u at offset %llu: handler %#llx, depth %zu\n",
			m->arg2, (unsigned long long)g->pos, (unsigned long long)handler, depth);
	push(g, g->p->restorer);
	g->level++;
	g->level_depth[g->level] = depth;
	ret = run(g, handler);
	g->level--;
	if (ret < 0 || g->stop)
		return ret;
	g->n = depth;
	g->loaded_target = loaded;
	return 0;
}

static int pending_signal_here(struct rg *g)
{
	skip_passive(g);
	return is_sig(g, g->mi) && g->s->mkpos[g->mi] == g->pos;
}

static int consume(struct rg *g, unsigned int width, uint64_t *v, uint64_t pc)
{
	while (pending_signal_here(g))
		if (deliver(g) || g->stop)
			return -1;
	if (g->pos + width > g->s->len) {
		if (g->s->exited)
			return rerr(g, pc, "trace ends before the program's recorded exit point (truncated?)");
		return rerr(g, pc, "trace truncated");
	}
	*v = 0;
	memcpy(v, g->s->data + g->pos, width);
	g->pos += width;
	return 0;
}

/* The next witness, looking past the bytes of handlers that run first. */
static int peek(struct rg *g, unsigned int width, uint64_t *v, uint64_t pc)
{
	uint64_t p = g->pos;
	size_t m = g->mi;

	for (;;) {
		while (m < g->s->nmk && g->s->mk[m].type != TRBUF_MK_SIGNAL &&
		       g->s->mk[m].type != TRBUF_MK_SIGRETURN &&
		       g->s->mk[m].type != TRBUF_MK_EXIT)
			m++;
		if (!is_sig(g, m) || g->s->mkpos[m] != p)
			break;
		if (g->mkend[m] == (size_t)-1)
			return rerr(g, pc, "cannot look past a signal handler that never returned");
		p = g->s->mkpos[g->mkend[m]];
		m = g->mkend[m] + 1;
	}
	if (p + width > g->s->len)
		return rerr(g, pc, "trace truncated at a branch");
	*v = 0;
	memcpy(v, g->s->data + p, width);
	return 0;
}

static int witness(struct rg *g, const struct ae_rev *e, uint64_t pc)
{
	uint64_t w;

	if (consume(g, e->width, &w, pc))
		return -1;
	g->st->witness_bytes += e->width;
	if (w != e->a) {
		char msg[128];

		snprintf(msg, sizeof(msg), "corrupt trace: witness %llu where %u was expected",
			 (unsigned long long)w, e->a);
		g->pos -= e->width;
		return rerr(g, pc, msg);
	}
	return 0;
}

static int emit(struct rg *g, uint64_t pc, unsigned int len)
{
	g->st->insns++;
	if (g->sink->insn && g->sink->insn(g->sink->ctx, pc, len)) {
		g->stop = 1;
		return -1;
	}
	return 0;
}

static void setjmp_record(struct rg *g, uint64_t sp)
{
	if (g->debug)
		fprintf(stderr, "aetrace: setjmp sp %#llx depth %zu\n",
			(unsigned long long)sp, g->n);
	/* after setjmp returns, rsp = sp + 8 and the shadow loses one entry */
	for (size_t i = 0; i < g->nsj; i++)
		if (g->sj[i].sp == sp + 8) {
			g->sj[i].depth = g->n - 1;
			return;
		}
	if (g->nsj == g->capsj) {
		g->capsj = g->capsj ? g->capsj * 2 : 16;
		g->sj = realloc(g->sj, g->capsj * sizeof(*g->sj));
	}
	g->sj[g->nsj].sp = sp + 8;
	g->sj[g->nsj].depth = g->n ? g->n - 1 : 0;
	g->nsj++;
}

static int longjmp_record(struct rg *g, uint64_t sp, uint64_t pc)
{
	for (size_t i = 0; i < g->nsj; i++)
		if (g->sj[i].sp == sp) {
			g->n = g->sj[i].depth;
			return 0;
		}
	return rerr(g, pc, "longjmp to a stack pointer no setjmp recorded");
}

static int run_loop(struct rg *g, uint64_t pc);

/* One level of execution (the program, or a signal handler): a longjmp
 * out of a handler unwinds to the level it lands in and resumes there. */
static int run(struct rg *g, uint64_t start)
{
	if (setjmp(g->unwind[g->level]))
		return run_loop(g, g->unwind_pc);
	return run_loop(g, start);
}

static int run_loop(struct rg *g, uint64_t pc)
{
	while (!g->stop) {
		struct ae_dinsn *d = ae_decode(g->p, pc);
		uint64_t next, repcnt = 1, after = 0;
		int have_rep = 0, have_lj = 0;
		uint64_t target_val = 0, jtidx = 0, ljsp = 0;
		int have_target = 0, have_jt = 0, loaded = 0;

		if (!d)
			return rerr(g, pc, "execution left the twin's code");
		/* a signal delivered right here? the program's exit? */
		skip_passive(g);
		if (is_sig(g, g->mi) && g->s->mkpos[g->mi] == g->pos &&
		    g->mkip[g->mi] == pc) {
			if (deliver(g))
				return -1;
			continue;
		}
		if (g->mi < g->s->nmk && g->s->mk[g->mi].type == TRBUF_MK_EXIT &&
		    g->s->mkpos[g->mi] == g->pos && g->mkip[g->mi] == pc) {
			if (!(g->s->mk[g->mi].flags & AE_MK_EXIT_AT_SYSCALL)) {
				g->stop = 2;
				return 0;
			}
			g->finishing = 1;
		}
		/* records written before the instruction */
		for (int i = 0; i < d->nev; i++) {
			const struct ae_rev *e = &d->ev[i];

			if (e->kind == AE_EV_WIT_BEFORE) {
				if (witness(g, e, pc))
					return -1;
			} else if (e->kind == AE_EV_TARGET_LOADED) {
				loaded = 1;
			} else if (e->kind == AE_EV_SHADOW_POP) {
				if (!g->n)
					return rerr(g, pc, "pop of a return address with an empty call stack");
				g->n--;
			} else if (e->kind == AE_EV_VAL) {
				uint64_t v;

				if (consume(g, e->width, &v, pc))
					return -1;
				g->st->value_bytes += e->width;
				switch (e->flag) {
				case AE_VAL_TARGET:
					target_val = v;
					have_target = 1;
					break;
				case AE_VAL_JTIDX:
					jtidx = v;
					have_jt = 1;
					break;
				case AE_VAL_JTLOAD: {
					const uint8_t *t = ae_image_ptr(&g->p->orig,
								       d->disp + v * 8, 8);

					if (!t)
						return rerr(g, pc, "dispatch-table index outside the table");
					memcpy(&g->loaded_target, t, 8);
					break;
				}
				case AE_VAL_SETJMP_SP:
					setjmp_record(g, v);
					break;
				case AE_VAL_LONGJMP_SP:
					ljsp = v;
					have_lj = 1;
					break;
				case AE_VAL_REPCNT:
					repcnt = v;
					have_rep = 1;
					break;
				case AE_VAL_RETADDR: {
					uint64_t o = ae_map_resume(g->p, v);

					if (!o)
						return rerr(g, pc, "pushed return address is not instrumented code");
					push(g, o);
					break;
				}
				default:
					return rerr(g, pc, "unknown value record in schema");
				}
			}
		}
		for (int i = 0; i < d->nev; i++) {
			const struct ae_rev *e = &d->ev[i];

			if (e->kind == AE_EV_VAL_AFTER) {
				if (consume(g, e->width, &after, pc))
					return -1;
				g->st->value_bytes += e->width;
				if (have_rep && repcnt >= after)
					repcnt -= after;
			}
		}
		/* the instruction (a rep instruction is one step per iteration) */
		if (have_rep) {
			if (!repcnt)
				repcnt = 1;
			for (uint64_t i = 0; i < repcnt; i++)
				if (emit(g, pc, d->len))
					return -1;
		} else if (emit(g, pc, d->len)) {
			return -1;
		}
		next = pc + d->len;
		switch (d->kind) {
		case AE_K_PLAIN:
			break;
		case AE_K_STOP:
			return rerr(g, pc, "reached a trapping instruction (ud2/hlt)");
		case AE_K_SYSCALL:
			if (g->finishing) {
				g->stop = 2;
				return 0;
			}
			skip_passive(g);
			if (g->level > 0 && g->mi < g->s->nmk &&
			    g->s->mk[g->mi].type == TRBUF_MK_SIGRETURN &&
			    g->s->mkpos[g->mi] == g->pos) {
				/* the handler must return where it interrupted */
				if (g->mkip[g->mi] != g->level_ip[g->level])
					return rerr(g, pc, "signal handler returned elsewhere than it interrupted (context changed): not supported");
				g->mi++;
				return 0;
			}
			break;
		case AE_K_JCC: {
			const struct ae_rev *pred = NULL, *wt = NULL, *wf = NULL;
			uint64_t w;
			int taken, in_set = 0;

			for (int i = 0; i < d->nev; i++) {
				if (d->ev[i].kind == AE_EV_PRED)
					pred = &d->ev[i];
				else if (d->ev[i].kind == AE_EV_WIT_TAKEN)
					wt = &d->ev[i];
				else if (d->ev[i].kind == AE_EV_WIT_FALL)
					wf = &d->ev[i];
			}
			if (!pred)
				return rerr(g, pc, "conditional branch without schema (uninstrumented code?)");
			if (peek(g, pred->width, &w, pc))
				return -1;
			for (uint32_t i = 0; i < pred->b; i++)
				if (pred->pool[i] == w) {
					in_set = 1;
					break;
				}
			taken = in_set ? pred->flag : !pred->flag;
			if (taken) {
				next = d->target;
				g->st->blocks++;
				if (wt && witness(g, wt, pc))
					return -1;
			} else if (wf && witness(g, wf, pc)) {
				return -1;
			}
			pc = next;
			continue;
		}
		case AE_K_JMP:
			next = d->target;
			g->st->blocks++;
			break;
		case AE_K_CALL:
			push(g, next);
			next = d->target;
			g->st->blocks++;
			break;
		case AE_K_JMP_IND:
		case AE_K_CALL_IND:
			if (have_jt) {
				const uint8_t *t = ae_image_ptr(&g->p->orig,
							       d->disp + jtidx * d->scale, 8);

				if (!t)
					return rerr(g, pc, "jump-table index outside the table");
				memcpy(&target_val, t, 8);
			} else if (loaded) {
				target_val = g->loaded_target;
			} else if (have_target) {
				/* a target's own records are read when we get there */
				uint64_t o = ae_map_resume(g->p, target_val);

				if (!o)
					return rerr(g, pc, "indirect transfer to code that is not instrumented");
				target_val = o;
			} else {
				return rerr(g, pc, "indirect transfer without a recorded target");
			}
			if (d->kind == AE_K_CALL_IND)
				push(g, next);
			next = target_val;
			g->st->blocks++;
			if (have_lj) {
				int l;

				if (longjmp_record(g, ljsp, pc))
					return -1;
				if (g->debug)
					fprintf(stderr, "aetrace: longjmp to %#llx, depth %zu, level %d\n",
						(unsigned long long)next, g->n, g->level);
				/* a longjmp out of a signal handler */
				for (l = g->level; l > 0 && g->n < g->level_depth[l]; l--)
					;
				if (l < g->level) {
					g->level = l;
					g->unwind_pc = next;
					longjmp(g->unwind[l], 1);
				}
			}
			break;
		case AE_K_RET:
			if (!g->n)
				return rerr(g, pc, "return with an empty call stack");
			next = g->stk[--g->n];
			g->st->blocks++;
			break;
		}
		/* fall-through witness of a non-branch */
		if (d->kind == AE_K_PLAIN || d->kind == AE_K_SYSCALL) {
			for (int i = 0; i < d->nev; i++)
				if (d->ev[i].kind == AE_EV_WIT_FALL &&
				    witness(g, &d->ev[i], pc))
					return -1;
		}
		pc = next;
	}
	return 0;
}

int ae_regen(struct ae_program *p, struct ae_stream *s,
	     const struct ae_regen_sink *sink, struct ae_regen_stats *st)
{
	struct rg g = { .p = p, .s = s, .sink = sink, .st = st,
			.debug = getenv("AETRACE_DEBUG") != NULL };
	size_t *stack;
	size_t sp = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	g.mkip = calloc(s->nmk + 1, sizeof(uint64_t));
	g.mkend = calloc(s->nmk + 1, sizeof(size_t));
	stack = calloc(s->nmk + 1, sizeof(size_t));
	for (size_t i = 0; i < s->nmk; i++) {
		const struct trbuf_marker *m = &s->mk[i];

		g.mkend[i] = (size_t)-1;
		if (m->type == TRBUF_MK_SIGNAL || m->type == TRBUF_MK_SIGRETURN ||
		    m->type == TRBUF_MK_EXIT)
			g.mkip[i] = ae_map_resume(p, m->ip);
		if (m->type == TRBUF_MK_SIGNAL)
			stack[sp++] = i;
		else if (m->type == TRBUF_MK_SIGRETURN && sp)
			g.mkend[stack[--sp]] = i;
	}
	free(stack);
	ret = run(&g, p->orig.entry);
	if (ret == 0 && g.stop != 2 && !g.stop)
		ret = rerr(&g, 0, "regeneration ended early");
	if (ret == 0 && g.pos != s->len) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%llu trace bytes left unread at the program's exit",
			 (unsigned long long)(s->len - g.pos));
		ret = rerr(&g, 0, msg);
	}
	if (g.stop == 1)
		ret = 0;	/* the sink asked to stop */
	st->blocks += st->insns ? 1 : 0;
	free(g.mkip);
	free(g.mkend);
	free(g.stk);
	free(g.sj);
	return ret;
}
