// SPDX-License-Identifier: GPL-2.0
/*
 * Schedule markers (docs/ARCHITECTURE.md invariant 5): each sub-buffer has
 * a marker area in kernel memory, written under the CPU's own lock (no
 * global lock on the context-switch path) and handed to the consumer with
 * the sub-buffer, so a marker can neither outlive nor precede its data.
 * An area that gets half full closes its sub-buffer early; when no
 * sub-buffer is free the CPU's traced writers block on the guard page
 * until the consumer frees one, and the other half of the area takes the
 * markers written meanwhile.  Markers that can wait for room do so
 * (trbuf_mk_wait_room()); the last quarter of an area is left to those
 * that cannot.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
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
 * @regs: @t's user registers (ip, sp, cx recorded), or NULL
 * @arg: type-specific argument
 * @arg2: second type-specific argument
 *
 * Never wakes anybody (callers may hold scheduler locks).  A half full
 * area closes its sub-buffer (trbuf_close_for_markers()).  A marker that
 * finds the area full is counted in markers_lost.
 *
 * Return: the marker, to add flags to under the same lock, or NULL when
 * it was lost.
 */
struct trbuf_marker *trbuf_mk_push(struct trbuf_buf *buf, struct trbuf_cpu *c,
				   unsigned long pos, u32 type, struct task_struct *t,
				   struct pt_regs *regs, u64 arg, u32 arg2)
{
	struct trbuf_sb *sb = &c->sbs[c->cur];
	unsigned long start = trbuf_cur_start(buf, c);
	struct trbuf_marker *m;

	if (sb->nr_mk == buf->mk_cap) {
		/* both halves used while the consumer holds every sub-buffer */
		TRBUF_CNT(buf, markers_lost);
		return NULL;
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
	m->cx = regs ? regs->cx : 0;
	TRBUF_CNT(buf, markers);
	if (sb->nr_mk >= buf->mk_cap / 2 && !c->closing)
		trbuf_close_for_markers(buf, c);
	return m;
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

/* Write the switch-in marker current owes on this CPU (and its rollback). */
static void pay_owed(struct trbuf_buf *buf, struct trbuf_cpu *c,
		     struct pt_regs *regs)
{
	c->owed = NULL;
	if (!c->owed_resumable)
		trbuf_rollback(current->trbuf, c, current, regs);
	TRBUF_CNT(buf, switches_in);
	trbuf_mk_push(buf, c, regs->r15, TRBUF_MK_SWITCH_IN, current, regs,
		      0, 0);
}

/*
 * Make room in @c's active area for current's @n markers and pay the
 * switch-in marker current owes on this CPU (it comes first).  Returns
 * false when the area is in its reserve and no sub-buffer is free.
 */
static bool make_room(struct trbuf_buf *buf, struct trbuf_cpu *c,
		      struct pt_regs *regs, unsigned int n)
{
	bool owner = c->owner == current;
	bool owed = owner && c->owed == current;
	unsigned int need = n + (owed ? 2 : 0);
	unsigned long pos = owner ? regs->r15 : c->cursor;

	if (!need)
		return true;
	if (owner && !trbuf_cursor_valid(buf, c, pos)) {
		/* r15 clobbered by the program: nothing to move, push as is */
		TRBUF_CNT(buf, bad_cursor);
		c->owed = NULL;
		return true;
	}
	if (c->sbs[c->cur].nr_mk + need > buf->mk_cap - buf->mk_cap / 4) {
		if (trbuf_switch_subbuf(buf, c, pos))
			return false;
		if (owner)
			regs->r15 = c->cursor;
		/* SUBBUF opens the area; then the rollback the move calls for */
		trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF,
			      owner ? current : NULL, owner ? regs : NULL,
			      c->sbs[c->cur].seq, TRBUF_SUBBUF_MARKERS);
		if (owed)
			c->owed_resumable = false;
		else if (owner)
			trbuf_rollback(current->trbuf, c, current, regs);
	}
	if (owed)
		pay_owed(buf, c, regs);
	return true;
}

/*
 * Killed, or on the way out of a process that is exiting (a task whose
 * process exits as a whole can no longer be sent SIGKILL): waits no more.
 */
static bool dying(void)
{
	return fatal_signal_pending(current) ||
	       (READ_ONCE(current->signal->flags) & SIGNAL_GROUP_EXIT);
}

/* Woken: a sub-buffer of @c was freed, or another task switched to it. */
static bool room_may_come(struct trbuf_buf *buf, struct trbuf_cpu *c, u64 seq)
{
	return trbuf_next_free(buf, trbuf_cpu_of(buf, c)) ||
	       READ_ONCE(c->sbs[READ_ONCE(c->cur)].seq) != seq;
}

/**
 * trbuf_mk_wait_room - lock this CPU with room for current's markers
 * @buf: the buffer
 * @regs: current's user registers
 * @n: markers current is about to push (its rollback included)
 * @flags: where the interrupt state is saved (restore after unlocking)
 *
 * For the markers that can wait (switch-in paid late, signal, sigreturn,
 * fork, exec, exit, start, stop), so that none is dropped: pays current's
 * owed switch-in marker on this CPU first, and when the active area is in
 * its reserve (the last quarter, kept for the markers that cannot wait),
 * switches to a free sub-buffer or sleeps until the consumer frees one.
 * A task in the kernel writes no trace bytes, so the markers still name
 * the position they had when the hook was called.  Without a consumer
 * sub-buffers are recycled and nobody sleeps.  The sleep is killable and
 * freezable: a dying task (killed, or in a process exiting as a whole)
 * waits no more and writes its markers into the reserve (a bounded few
 * per task: an owed switch-in, its exit), so a stalled consumer never
 * makes a traced task unkillable.  Process context; may sleep.
 *
 * Return: this CPU's state, its lock held with interrupts off.
 */
struct trbuf_cpu *trbuf_mk_wait_room(struct trbuf_buf *buf,
				     struct pt_regs *regs, unsigned int n,
				     unsigned long *flags)
{
	struct trbuf_cpu *c;
	u64 seq;

	for (;;) {
		local_irq_save(*flags);
		c = trbuf_this_cpu(buf);
		raw_spin_lock(&c->lock);
		if (make_room(buf, c, regs, n))
			return c;
		if (dying()) {
			if (c->owed == current && c->owner == current)
				pay_owed(buf, c, regs);
			return c;
		}
		seq = c->sbs[c->cur].seq;
		raw_spin_unlock(&c->lock);
		local_irq_restore(*flags);
		TRBUF_CNT(buf, overflow_waits);
		trbuf_wake(buf);
		wait_event_state(c->space_wq, room_may_come(buf, c, seq),
				 TASK_KILLABLE | TASK_FREEZABLE);
	}
}
