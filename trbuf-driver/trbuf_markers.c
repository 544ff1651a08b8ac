// SPDX-License-Identifier: GPL-2.0
/*
 * Schedule markers (docs/ARCHITECTURE.md invariant 5): each sub-buffer has
 * a marker area in kernel memory, written under the CPU's own lock (no
 * global lock on the context-switch path) and handed to the consumer with
 * the sub-buffer, so a marker can neither outlive nor precede its data.
 * An area that gets half full closes its sub-buffer early; when no
 * sub-buffer is free the CPU's traced writers block on the guard page
 * until the consumer frees one, and the other half of the area takes the
 * markers written meanwhile.
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/timekeeping.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

/**
 * trbuf_mk_push - append a marker to @c's active marker area
 * @buf: the buffer
 * @c: this CPU's state, its lock held, interrupts off
 * @pos: user position in the active sub-buffer the marker points to
 * @type: TRBUF_MK_*
 * @t: the task it names, or NULL
 * @regs: @t's user registers (ip, sp recorded), or NULL
 * @arg: type-specific argument
 * @arg2: second type-specific argument
 *
 * Never wakes anybody (callers may hold scheduler locks).  A half full
 * area closes its sub-buffer (trbuf_close_for_markers()).  A marker that
 * finds the area full is counted in markers_lost.
 */
void trbuf_mk_push(struct trbuf_buf *buf, struct trbuf_cpu *c,
		    unsigned long pos, u32 type, struct task_struct *t,
		    struct pt_regs *regs, u64 arg, u32 arg2)
{
	struct trbuf_sb *sb = &c->sbs[c->cur];
	unsigned long start = trbuf_cur_start(buf, c);
	struct trbuf_marker *m;

	if (sb->nr_mk == buf->mk_cap) {
		/* both halves used while the consumer holds every sub-buffer */
		TRBUF_CNT(buf, markers_lost);
		return;
	}
	/* a pending close ends the data there; bad cursors are clamped */
	if (c->close_at && pos > c->close_at)
		pos = c->close_at;
	pos = clamp(pos, start, start + buf->subbuf_size);
	m = &sb->mk[sb->nr_mk++];
	if (type != TRBUF_MK_SUBBUF)
		sb->nr_events++;
	m->time_ns = ktime_get_ns();
	m->type = type;
	m->cpu = trbuf_cpu_of(buf, c);
	m->flags = 0;
	m->pid = t ? t->tgid : 0;
	m->tid = t ? t->pid : 0;
	m->seq = sb->seq;
	m->offset = pos - start;
	m->arg2 = arg2;
	m->ip = regs ? regs->ip : 0;
	m->sp = regs ? regs->sp : 0;
	m->arg = arg;
	TRBUF_CNT(buf, markers);
	if (sb->nr_mk >= buf->mk_cap / 2 && !c->closing)
		trbuf_close_for_markers(buf, c);
}

/**
 * trbuf_wake - wake a consumer sleeping in poll/read for full sub-buffers
 * @buf: the buffer; not with scheduler locks held
 */
void trbuf_wake(struct trbuf_buf *buf)
{
	if (wq_has_sleeper(&buf->consumer_wq))
		wake_up_interruptible(&buf->consumer_wq);
}

/**
 * trbuf_close_for_markers - the active marker area is half full
 * @buf: the buffer
 * @c: this CPU's state, its lock held, interrupts off
 *
 * Closes the sub-buffer at the live cursor, or, when no sub-buffer is
 * free, ends its data at the cursor and parks the cursor on the guard page
 * so traced stores fault and wait in trbuf_fault() (the other half of the
 * area is the reserve).  Called again for every marker while parked: the
 * first one after the consumer freed a sub-buffer closes it.  The live
 * cursor is in the owner's r15; the owner, if any, is current.
 */
void trbuf_close_for_markers(struct trbuf_buf *buf, struct trbuf_cpu *c)
{
	struct task_struct *t = c->owner;
	struct pt_regs *regs = NULL;
	unsigned long pos = c->cursor;

	if (t && t != current)
		return;
	if (t) {
		regs = task_pt_regs(t);
		if (!trbuf_cursor_valid(buf, c, regs->r15))
			return;
	}
	if (c->close_at && !trbuf_next_free(buf, trbuf_cpu_of(buf, c)))
		return;
	c->closing = true;
	if (t) {
		/* the cursor moves: a cut sequence must start over */
		trbuf_rollback(t->trbuf, c, t, regs);
		pos = regs->r15;
	}
	if (!trbuf_switch_subbuf(buf, c, pos)) {
		if (regs)
			regs->r15 = c->cursor;
		trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, t, regs,
			c->sbs[c->cur].seq, TRBUF_SUBBUF_MARKERS);
	} else if (!c->close_at) {
		c->close_at = pos;
		if (regs)
			regs->r15 = trbuf_cur_start(buf, c) + buf->subbuf_size;
		else
			c->cursor = trbuf_cur_start(buf, c) + buf->subbuf_size;
	}
	c->closing = false;
}
