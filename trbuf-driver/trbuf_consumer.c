// SPDX-License-Identifier: GPL-2.0
/*
 * The consumer side: attach and detach, GET/PUT of full sub-buffers and
 * their markers, FLUSH by IPI, STATUS counters.
 */
#include <linux/cpu.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

/**
 * trbuf_consumer_attach - make @file the consumer of @buf
 * @buf: the buffer
 * @file: the consumer's open file
 * @info: filled with the buffer geometry
 *
 * Return: 0, or -EBUSY if @buf already has a consumer.
 */
int trbuf_consumer_attach(struct trbuf_buf *buf, struct file *file,
			  struct trbuf_info *info)
{
	int ret = 0;

	mutex_lock(&buf->consumer_lock);
	if (buf->consumer && buf->consumer != file) {
		ret = -EBUSY;
	} else {
		buf->consumer = file;
		WRITE_ONCE(buf->consumer_tgid, current->tgid);
		WRITE_ONCE(buf->consumer_gone, false);
	}
	mutex_unlock(&buf->consumer_lock);
	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->map_size = buf->map_size;
	info->subbuf_size = buf->subbuf_size;
	info->nr_cpus = buf->nr_cpus;
	info->nr_subbufs = buf->nr_subbufs;
	info->subbuf_markers = buf->mk_cap;
	return 0;
}

/**
 * trbuf_consumer_detach - the consumer closed @file: never hang tracees
 * @buf: the buffer
 * @file: the file being released
 *
 * Unread sub-buffers are recycled and tasks waiting for space resume; from
 * now on overflowing CPUs recycle their sub-buffers (counted discarded).
 */
void trbuf_consumer_detach(struct trbuf_buf *buf, struct file *file)
{
	unsigned int cpu, i;
	unsigned long flags;

	mutex_lock(&buf->consumer_lock);
	if (buf->consumer != file) {
		mutex_unlock(&buf->consumer_lock);
		return;
	}
	buf->consumer = NULL;
	WRITE_ONCE(buf->consumer_gone, true);
	mutex_unlock(&buf->consumer_lock);

	for (cpu = 0; cpu < buf->nr_cpus; cpu++) {
		struct trbuf_cpu *c = &buf->cpus[cpu];

		raw_spin_lock_irqsave(&c->lock, flags);
		for (i = 0; i < buf->nr_subbufs; i++) {
			if (c->sbs[i].state == TRBUF_SB_FULL ||
			    c->sbs[i].state == TRBUF_SB_READING) {
				c->sbs[i].state = TRBUF_SB_FREE;
				TRBUF_CNT(buf, discarded);
			}
		}
		if (cpu == raw_smp_processor_id())
			trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_STOP, current,
				NULL, 0, 0);
		raw_spin_unlock_irqrestore(&c->lock, flags);
		wake_up_all(&c->space_wq);
	}
}

/**
 * trbuf_has_full - is a full sub-buffer waiting for GET_SUBBUF?
 * @buf: the buffer
 *
 * Return: true if one is.
 */
bool trbuf_has_full(struct trbuf_buf *buf)
{
	unsigned int cpu, i;

	for (cpu = 0; cpu < buf->nr_cpus; cpu++)
		for (i = 0; i < buf->nr_subbufs; i++)
			if (READ_ONCE(buf->cpus[cpu].sbs[i].state) ==
			    TRBUF_SB_FULL)
				return true;
	return false;
}

/**
 * trbuf_get_subbuf - hand the oldest full sub-buffer of some CPU out
 * @buf: the buffer
 * @out: its cpu, ring index, seq, committed length and mapping offset
 *
 * CPUs are served round-robin, each CPU's sub-buffers in seq order.
 *
 * Return: 0, or -EAGAIN if none is full.
 */
int trbuf_get_subbuf(struct trbuf_buf *buf, struct trbuf_subbuf *out)
{
	static unsigned int rr;
	unsigned int n, cpu, i, best;
	unsigned long flags;

	for (n = 0; n < buf->nr_cpus; n++) {
		struct trbuf_cpu *c;

		cpu = (READ_ONCE(rr) + n) % buf->nr_cpus;
		c = &buf->cpus[cpu];
		raw_spin_lock_irqsave(&c->lock, flags);
		best = UINT_MAX;
		for (i = 0; i < buf->nr_subbufs; i++)
			if (c->sbs[i].state == TRBUF_SB_FULL &&
			    (best == UINT_MAX ||
			     c->sbs[i].seq < c->sbs[best].seq))
				best = i;
		if (best != UINT_MAX) {
			c->sbs[best].state = TRBUF_SB_READING;
			out->cpu = cpu;
			out->index = best;
			out->seq = c->sbs[best].seq;
			out->len = c->sbs[best].len;
			out->offset = trbuf_sb_addr(buf, cpu, best) - TRBUF_MAP_ADDR;
		}
		raw_spin_unlock_irqrestore(&c->lock, flags);
		if (best != UINT_MAX) {
			WRITE_ONCE(rr, cpu + 1);
			return 0;
		}
	}
	return -EAGAIN;
}

/**
 * trbuf_unget_subbuf - undo trbuf_get_subbuf() (its copy to user failed)
 * @buf: the buffer
 * @sb: as filled by trbuf_get_subbuf()
 *
 * The sub-buffer is full again and handed out by the next GET_SUBBUF.
 */
void trbuf_unget_subbuf(struct trbuf_buf *buf, const struct trbuf_subbuf *sb)
{
	struct trbuf_cpu *c = &buf->cpus[sb->cpu];
	unsigned long flags;

	raw_spin_lock_irqsave(&c->lock, flags);
	if (c->sbs[sb->index].state == TRBUF_SB_READING &&
	    c->sbs[sb->index].seq == sb->seq)
		c->sbs[sb->index].state = TRBUF_SB_FULL;
	raw_spin_unlock_irqrestore(&c->lock, flags);
}

/**
 * trbuf_get_markers - copy the markers of a handed-out sub-buffer
 * @buf: the buffer
 * @req: cpu, index, seq from GET_SUBBUF; start, max, user pointer; count
 *	and total are filled in
 *
 * A handed-out sub-buffer's marker area no longer changes, so it is copied
 * without the CPU's lock; a failed copy loses nothing (call again).
 *
 * Return: 0, -EINVAL if the sub-buffer is not handed out, -EFAULT.
 */
int trbuf_get_markers(struct trbuf_buf *buf, struct trbuf_sb_markers *req)
{
	struct trbuf_marker __user *um = u64_to_user_ptr(req->markers);
	struct trbuf_cpu *c;
	struct trbuf_sb *sb;
	unsigned long flags;
	u32 total;
	bool ok;

	if (req->cpu >= buf->nr_cpus || req->index >= buf->nr_subbufs)
		return -EINVAL;
	c = &buf->cpus[req->cpu];
	sb = &c->sbs[req->index];
	raw_spin_lock_irqsave(&c->lock, flags);
	ok = sb->state == TRBUF_SB_READING && sb->seq == req->seq;
	total = sb->nr_mk;
	raw_spin_unlock_irqrestore(&c->lock, flags);
	if (!ok)
		return -EINVAL;
	req->total = total;
	req->count = 0;
	if (req->start >= total)
		return 0;
	req->count = min(req->max, total - req->start);
	if (copy_to_user(um, sb->mk + req->start,
			 array_size(req->count, sizeof(*um))))
		return -EFAULT;
	return 0;
}

/**
 * trbuf_put_subbuf - the consumer is done with a sub-buffer
 * @buf: the buffer
 * @sb: cpu and index as returned by trbuf_get_subbuf()
 *
 * Return: 0, or -EINVAL if it was not handed out.
 */
int trbuf_put_subbuf(struct trbuf_buf *buf, const struct trbuf_subbuf *sb)
{
	struct trbuf_cpu *c;
	unsigned long flags;
	int ret = -EINVAL;

	if (sb->cpu >= buf->nr_cpus || sb->index >= buf->nr_subbufs)
		return -EINVAL;
	c = &buf->cpus[sb->cpu];
	raw_spin_lock_irqsave(&c->lock, flags);
	if (c->sbs[sb->index].state == TRBUF_SB_READING &&
	    c->sbs[sb->index].seq == sb->seq) {
		c->sbs[sb->index].state = TRBUF_SB_FREE;
		ret = 0;
	}
	raw_spin_unlock_irqrestore(&c->lock, flags);
	/* only the CPU's waiters, and only when their next one is free */
	if (!ret && trbuf_next_free(buf, sb->cpu))
		wake_up_all(&c->space_wq);
	return ret;
}

/*
 * Does @c's active sub-buffer hold bytes or markers, its bytes ending at
 * @pos (or where a pending marker close ends them)?
 */
static bool holds_data(struct trbuf_buf *buf, struct trbuf_cpu *c,
		       unsigned long pos)
{
	if (c->close_at)
		pos = c->close_at;
	return pos != trbuf_cur_start(buf, c) || c->sbs[c->cur].nr_events;
}

/**
 * trbuf_flush_this_cpu - close this CPU's active sub-buffer
 * @buf: the buffer; called with interrupts off (IPI, timer)
 *
 * Only if it holds committed bytes or markers other than SUBBUF ones (so
 * an idle CPU is not flushed again and again), and only if the next one
 * is free (else nothing changes: no rollback, no marker).  A traced task
 * running here has its cut sequence rolled back (its cursor moves); the
 * SUBBUF marker names it, if any.
 *
 * Return: true if the active sub-buffer holds bytes or markers and stays
 * open because its next one is not free yet (the consumer has not put it
 * back), or if the traced task running here has no valid cursor (where
 * its bytes end is unknown).
 */
bool trbuf_flush_this_cpu(struct trbuf_buf *buf)
{
	struct trbuf_cpu *c = trbuf_this_cpu(buf);
	struct task_struct *t = current, *owner = NULL;
	struct pt_regs *regs = NULL;
	unsigned long pos;
	bool kept = false;

	raw_spin_lock(&c->lock);
	pos = c->cursor;
	if (c->owner == t && t->trbuf && t->trbuf->buf == buf) {
		owner = t;
		regs = task_pt_regs(t);
		if (!trbuf_cursor_valid(buf, c, regs->r15)) {
			kept = true;
			goto out_unlock;
		}
		pos = regs->r15;
	}
	if (!trbuf_next_free(buf, trbuf_cpu_of(buf, c))) {
		kept = holds_data(buf, c, pos);
		goto out_unlock;
	}
	if (owner) {
		trbuf_rollback(t->trbuf, c, t, regs);
		pos = regs->r15;
	}
	if (!holds_data(buf, c, pos))
		goto out_unlock;
	if (trbuf_switch_subbuf(buf, c, pos)) {
		kept = true;
		goto out_unlock;
	}
	if (regs)
		regs->r15 = c->cursor;
	trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, owner, regs,
		c->sbs[c->cur].seq, TRBUF_SUBBUF_FLUSH);
out_unlock:
	raw_spin_unlock(&c->lock);
	return kept;
}

/* One FLUSH: its buffer, and how many CPUs kept a non-empty sub-buffer. */
struct trbuf_flush_req {
	struct trbuf_buf *buf;
	atomic_t kept;
};

static void flush_ipi(void *info)
{
	struct trbuf_flush_req *req = info;

	if (trbuf_flush_this_cpu(req->buf))
		atomic_inc(&req->kept);
}

/**
 * trbuf_flush - force a sub-buffer switch on every CPU (TRBUF_IOC_FLUSH)
 * @buf: the buffer
 *
 * Partially filled sub-buffers become full so the consumer can drain them
 * while traced tasks keep running.  A CPU whose next sub-buffer is not
 * free keeps its active one: a consumer that must take everything (at its
 * end) puts its full sub-buffers back and flushes again until none is
 * kept.  An offline CPU cannot be interrupted: its active sub-buffer is
 * left as it is, and counted if it holds anything.  Process context.
 *
 * Return: the number of CPUs whose active sub-buffer holds bytes or
 * markers and stayed open (see trbuf_flush_this_cpu()), offline ones
 * included.
 */
unsigned int trbuf_flush(struct trbuf_buf *buf)
{
	struct trbuf_flush_req req = { .buf = buf, .kept = ATOMIC_INIT(0) };
	unsigned int cpu, kept;
	unsigned long flags;

	TRBUF_CNT(buf, flushes);
	cpus_read_lock();
	on_each_cpu(flush_ipi, &req, 1);
	kept = atomic_read(&req.kept);
	for (cpu = 0; cpu < buf->nr_cpus; cpu++) {
		struct trbuf_cpu *c = &buf->cpus[cpu];

		if (cpu_online(cpu))
			continue;
		raw_spin_lock_irqsave(&c->lock, flags);
		if (holds_data(buf, c, c->cursor))
			kept++;
		raw_spin_unlock_irqrestore(&c->lock, flags);
	}
	cpus_read_unlock();
	trbuf_wake(buf);
	return kept;
}

/**
 * trbuf_status - snapshot the counters (TRBUF_IOC_STATUS)
 * @buf: the buffer
 * @st: filled in
 */
void trbuf_status(struct trbuf_buf *buf, struct trbuf_status *st)
{
	struct trbuf_counters *k = &buf->cnt;

	st->rollbacks = atomic64_read(&k->rollbacks);
	st->switches_in = atomic64_read(&k->switches_in);
	st->markers = atomic64_read(&k->markers);
	st->markers_lost = atomic64_read(&k->markers_lost);
	st->subbufs_full = atomic64_read(&k->subbufs_full);
	st->overflow_waits = atomic64_read(&k->overflow_waits);
	st->discarded = atomic64_read(&k->discarded);
	st->bad_cursor = atomic64_read(&k->bad_cursor);
	st->traced = atomic64_read(&k->traced);
	st->flushes = atomic64_read(&k->flushes);
}
