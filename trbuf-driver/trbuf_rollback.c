// SPDX-License-Identifier: GPL-2.0
/*
 * Rollback of cut instrumentation sequences (docs/ARCHITECTURE.md
 * invariant 3): the sequence table a traced process registered and the
 * rewind of a user ip found strictly inside one.
 */
#include <linux/bsearch.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

static int range_cmp(const void *key, const void *elt)
{
	unsigned long ip = *(const unsigned long *)key;
	const struct trbuf_seq_range *r = elt;

	if (ip < r->start)
		return -1;
	if (ip >= r->end)
		return 1;
	return 0;
}

/**
 * trbuf_find_range - the registered sequence that contains a user ip
 * @ctx: the task's tracing context
 * @ip: user instruction pointer
 *
 * Return: the range, or NULL if @ip is in none.
 */
const struct trbuf_seq_range *trbuf_find_range(struct trbuf_ctx *ctx,
						unsigned long ip)
{
	if (ip > U32_MAX || !ctx->nr_ranges)
		return NULL;
	return bsearch(&ip, ctx->ranges, ctx->nr_ranges,
		       sizeof(*ctx->ranges), range_cmp);
}

/**
 * trbuf_rollback - rewind a user ip strictly inside a sequence (invariant 3)
 * @ctx: @t's tracing context
 * @c: this CPU's state, its lock held, interrupts off
 * @t: the task whose sequence was cut
 * @regs: @t's user registers; ip is moved to the sequence start
 *
 * Leaves a ROLLBACK marker; an ip at a sequence start or outside any
 * sequence is left alone.
 */
void trbuf_rollback(struct trbuf_ctx *ctx, struct trbuf_cpu *c,
		     struct task_struct *t, struct pt_regs *regs)
{
	const struct trbuf_seq_range *r = trbuf_find_range(ctx, regs->ip);
	unsigned long from;

	if (!r || regs->ip == r->start)
		return;
	from = regs->ip;
	regs->ip = r->start;
	TRBUF_CNT(ctx->buf, rollbacks);
	trbuf_mk_push(ctx->buf, c, c->owner == t ? regs->r15 : c->cursor,
		TRBUF_MK_ROLLBACK, t, regs, from, 0);
}

/**
 * trbuf_ranges_check - validate a sequence table from user space
 * @r: the ranges
 * @n: how many
 *
 * Return: 0 if each range is non-empty and they are sorted without
 * overlap, else -EINVAL.
 */
int trbuf_ranges_check(const struct trbuf_seq_range *r, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (r[i].start >= r[i].end)
			return -EINVAL;
		if (i && r[i].start < r[i - 1].end)
			return -EINVAL;
	}
	return 0;
}
