// SPDX-License-Identifier: GPL-2.0
/*
 * The aetrace global trace buffer: per-CPU rings of
 * sub-buffers, the per-CPU write cursors swapped through user r15 at
 * context switch, rollback of cut instrumentation sequences, overflow by
 * guard-page fault and the schedule markers (docs/ARCHITECTURE.md
 * invariants 1-7).
 * The /dev/trbuf file operations live in trbuf_dev.c.
 *
 * Markers are lossless and per CPU: each sub-buffer has a marker area in
 * kernel memory, written under the CPU's own lock (no global lock on the
 * context-switch path) and handed to the consumer with the sub-buffer, so
 * a marker can neither outlive nor precede its data.  An area that gets
 * half full closes its sub-buffer early; when no sub-buffer is free the
 * CPU's traced writers block on the guard page until the consumer frees
 * one, and the other half of the area takes the markers written meanwhile.
 *
 * Locking: each CPU's state is changed only on that CPU, with interrupts
 * off, under its raw lock (the consumer takes the same lock from any CPU
 * to change sub-buffer states).  The cursor lives in the user r15 of the
 * CPU's owner task while one runs, else in trbuf_cpu::cursor.
 */
#include <linux/bsearch.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/trbuf_hooks.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

static unsigned long total_size = 8 << 20;
module_param(total_size, ulong, 0644);
MODULE_PARM_DESC(total_size, "bytes of trace buffer over all CPUs (next buffer)");
static unsigned int subbuf_size = 64 << 10;
module_param(subbuf_size, uint, 0644);
MODULE_PARM_DESC(subbuf_size, "bytes per sub-buffer, page multiple (next buffer)");
static unsigned int subbuf_markers = 1024;
module_param(subbuf_markers, uint, 0644);
MODULE_PARM_DESC(subbuf_markers, "marker area of a sub-buffer, 8..65536 (next buffer)");
/* Fault injection for the kselftests; both off by default. */
static bool test_fail_alloc;
module_param(test_fail_alloc, bool, 0644);
MODULE_PARM_DESC(test_fail_alloc, "test: fail the next buffer allocations with ENOMEM");
static unsigned int test_sigreturn_spin_us;
module_param(test_sigreturn_spin_us, uint, 0644);
MODULE_PARM_DESC(test_sigreturn_spin_us, "test: spin preemptibly this long in the sigreturn hook");

static DEFINE_MUTEX(trbuf_cur_lock);
static struct trbuf_buf *trbuf_cur;	/* buffer new users attach to */
static struct workqueue_struct *trbuf_wq;

#define TRBUF_CNT(buf, name) atomic64_inc(&(buf)->cnt.name)

/* User address of sub-buffer @i of @cpu in every mapping. */
static unsigned long sb_addr(struct trbuf_buf *buf, unsigned int cpu,
			     unsigned int i)
{
	return TRBUF_MAP_ADDR + PAGE_SIZE +
	       (unsigned long)(cpu * buf->nr_subbufs + i) *
	       (buf->subbuf_size + PAGE_SIZE);
}

static unsigned int cpu_of(struct trbuf_buf *buf, struct trbuf_cpu *c)
{
	return c - buf->cpus;
}

static unsigned long cur_start(struct trbuf_buf *buf, struct trbuf_cpu *c)
{
	return sb_addr(buf, cpu_of(buf, c), c->cur);
}

/* Is @pos a position inside (or at the end of) @c's active sub-buffer? */
static bool cursor_valid(struct trbuf_buf *buf, struct trbuf_cpu *c,
			 unsigned long pos)
{
	unsigned long start = cur_start(buf, c);

	return pos >= start && pos <= start + buf->subbuf_size;
}

static struct trbuf_cpu *this_cpu_state(struct trbuf_buf *buf)
{
	return &buf->cpus[smp_processor_id()];
}

/* ---- markers ---- */

static void close_for_markers(struct trbuf_buf *buf, struct trbuf_cpu *c);
static bool next_free(struct trbuf_buf *buf, unsigned int cpu);

/*
 * Append one marker positioned at @pos in @c's active sub-buffer to its
 * marker area.  Never wakes anybody (callers may hold scheduler locks).
 * Called with @c->lock held on @c's CPU.
 */
static void mk_push(struct trbuf_buf *buf, struct trbuf_cpu *c,
		    unsigned long pos, u32 type, struct task_struct *t,
		    struct pt_regs *regs, u64 arg, u32 arg2)
{
	struct trbuf_sb *sb = &c->sbs[c->cur];
	unsigned long start = cur_start(buf, c);
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
	m->cpu = cpu_of(buf, c);
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
		close_for_markers(buf, c);
}

static void trbuf_wake(struct trbuf_buf *buf)
{
	if (wq_has_sleeper(&buf->consumer_wq))
		wake_up_interruptible(&buf->consumer_wq);
}

/* ---- rollback ---- */

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

static const struct trbuf_seq_range *find_range(struct trbuf_ctx *ctx,
						unsigned long ip)
{
	if (ip > U32_MAX || !ctx->nr_ranges)
		return NULL;
	return bsearch(&ip, ctx->ranges, ctx->nr_ranges,
		       sizeof(*ctx->ranges), range_cmp);
}

/* Invariant 3: rewind a user ip strictly inside a sequence to its start. */
static void rollback(struct trbuf_ctx *ctx, struct trbuf_cpu *c,
		     struct task_struct *t, struct pt_regs *regs)
{
	const struct trbuf_seq_range *r = find_range(ctx, regs->ip);
	unsigned long from;

	if (!r || regs->ip == r->start)
		return;
	from = regs->ip;
	regs->ip = r->start;
	TRBUF_CNT(ctx->buf, rollbacks);
	mk_push(ctx->buf, c, c->owner == t ? regs->r15 : c->cursor,
		TRBUF_MK_ROLLBACK, t, regs, from, 0);
}

/* ---- sub-buffer switching ---- */

/*
 * Close @c's active sub-buffer at @pos and activate the next one.  In
 * lossless mode fails with -EAGAIN if the next one is not free; without a
 * consumer, unread sub-buffers are recycled (counted as discarded).
 * Called with @c->lock held on @c's CPU.
 */
static int switch_subbuf(struct trbuf_buf *buf, struct trbuf_cpu *c,
			 unsigned long pos)
{
	unsigned int next = (c->cur + 1) % buf->nr_subbufs;
	struct trbuf_sb *sb = &c->sbs[c->cur], *nsb = &c->sbs[next];
	bool gone = READ_ONCE(buf->consumer_gone);

	if (nsb->state != TRBUF_SB_FREE) {
		if (!gone)
			return -EAGAIN;
		TRBUF_CNT(buf, discarded);
	}
	if (c->close_at)
		pos = c->close_at;
	c->close_at = 0;
	sb->len = pos - cur_start(buf, c);
	if (gone) {
		sb->state = TRBUF_SB_FREE;
		TRBUF_CNT(buf, discarded);
	} else {
		sb->state = TRBUF_SB_FULL;
		TRBUF_CNT(buf, subbufs_full);
	}
	nsb->state = TRBUF_SB_ACTIVE;
	nsb->seq = c->next_seq++;
	nsb->len = 0;
	nsb->nr_mk = 0;
	nsb->nr_events = 0;
	c->cur = next;
	c->cursor = cur_start(buf, c);
	return 0;
}

/*
 * The active marker area is half full: close the sub-buffer at the live
 * cursor, or, when no sub-buffer is free, end its data at the cursor and
 * park the cursor on the guard page so traced stores fault and wait in
 * trbuf_fault() (the other half of the area is the reserve).  Called again
 * for every marker while parked: the first one after the consumer freed a
 * sub-buffer closes it.  The live cursor is in the owner's r15; the owner,
 * if any, is current.  Called with @c->lock held on @c's CPU.
 */
static void close_for_markers(struct trbuf_buf *buf, struct trbuf_cpu *c)
{
	struct task_struct *t = c->owner;
	struct pt_regs *regs = NULL;
	unsigned long pos = c->cursor;

	if (t && t != current)
		return;
	if (t) {
		regs = task_pt_regs(t);
		if (!cursor_valid(buf, c, regs->r15))
			return;
	}
	if (c->close_at && !next_free(buf, cpu_of(buf, c)))
		return;
	c->closing = true;
	if (t) {
		/* the cursor moves: a cut sequence must start over */
		rollback(t->trbuf, c, t, regs);
		pos = regs->r15;
	}
	if (!switch_subbuf(buf, c, pos)) {
		if (regs)
			regs->r15 = c->cursor;
		mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, t, regs,
			c->sbs[c->cur].seq, TRBUF_SUBBUF_MARKERS);
	} else if (!c->close_at) {
		c->close_at = pos;
		if (regs)
			regs->r15 = cur_start(buf, c) + buf->subbuf_size;
		else
			c->cursor = cur_start(buf, c) + buf->subbuf_size;
	}
	c->closing = false;
}

static bool next_free(struct trbuf_buf *buf, unsigned int cpu)
{
	struct trbuf_cpu *c = &buf->cpus[cpu];
	unsigned int next = (READ_ONCE(c->cur) + 1) % buf->nr_subbufs;

	return READ_ONCE(c->sbs[next].state) == TRBUF_SB_FREE ||
	       READ_ONCE(buf->consumer_gone);
}

/*
 * Page backing user offset @off of the mapping, or NULL for a guard page
 * (the first page, and the page after every sub-buffer).
 */
static struct page *data_page(struct trbuf_buf *buf, unsigned long off)
{
	unsigned long blk = buf->subbuf_size + PAGE_SIZE, i, in;

	if (off < PAGE_SIZE || off >= buf->map_size)
		return NULL;
	i = (off - PAGE_SIZE) / blk;
	in = (off - PAGE_SIZE) % blk;
	if (in >= buf->subbuf_size)
		return NULL;
	return vmalloc_to_page(buf->mem + i * buf->subbuf_size + in);
}

/* Sleep for a free sub-buffer without mmap_lock, then retry the fault. */
static vm_fault_t wait_for_space(struct trbuf_buf *buf, struct vm_fault *vmf,
				 unsigned int cpu)
{
	if (!(vmf->flags & FAULT_FLAG_ALLOW_RETRY)) {
		/* the caller cannot retry: wait holding the lock */
		if (wait_event_killable(buf->cpus[cpu].space_wq,
					next_free(buf, cpu)))
			return VM_FAULT_SIGBUS;
		return VM_FAULT_NOPAGE;
	}
	if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
		return VM_FAULT_RETRY;
	/* the mapping may go away once the lock is dropped: pin @buf */
	kref_get(&buf->ref);
	mmap_read_unlock(vmf->vma->vm_mm);
	/*
	 * A signal ends the wait; the fault is retried after the handler.
	 * Not while the CPU's marker area is in its reserve (close_at): a
	 * woken task writes markers (switch-in, signal) that only the reserve
	 * can hold, so then only SIGKILL ends the wait.
	 */
	if (READ_ONCE(buf->cpus[cpu].close_at))
		wait_event_killable(buf->cpus[cpu].space_wq,
				    next_free(buf, cpu));
	else
		wait_event_interruptible(buf->cpus[cpu].space_wq,
					 next_free(buf, cpu));
	trbuf_buf_put(buf);
	return VM_FAULT_RETRY;
}

/**
 * trbuf_fault - fault in a mapping of @buf (invariant 7)
 * @buf: the buffer
 * @vmf: the fault
 *
 * A data page (unmapped by MADV_DONTNEED, say) is mapped again.  A traced
 * task that stored past its sub-buffer onto the guard page gets the
 * sub-buffer closed at its committed r15 (or where a full marker area
 * ended it), its ip rewound to the sequence start and r15 moved to the
 * next sub-buffer; while none is free it sleeps without mmap_lock.
 *
 * Return: 0 with vmf->page set for a data page, VM_FAULT_NOPAGE to
 * re-execute the sequence, VM_FAULT_RETRY after sleeping, VM_FAULT_SIGBUS
 * for guard-page stores that are not an overflow of a traced task.
 */
vm_fault_t trbuf_fault(struct trbuf_buf *buf, struct vm_fault *vmf)
{
	struct trbuf_ctx *ctx = current->trbuf;
	struct pt_regs *regs = task_pt_regs(current);
	const struct trbuf_seq_range *r;
	unsigned long guard, flags;
	struct trbuf_cpu *c;
	struct page *page;
	unsigned int cpu;
	int ret;

	page = data_page(buf, vmf->address - vmf->vma->vm_start);
	if (page) {
		get_page(page);
		vmf->page = page;
		return 0;
	}
	if (!ctx || ctx->buf != buf || !(vmf->flags & FAULT_FLAG_USER))
		return VM_FAULT_SIGBUS;
	r = find_range(ctx, regs->ip);
	if (!r)
		return VM_FAULT_SIGBUS;

	local_irq_save(flags);
	c = this_cpu_state(buf);
	cpu = cpu_of(buf, c);
	raw_spin_lock(&c->lock);
	if (c->owner != current || !cursor_valid(buf, c, regs->r15)) {
		/* r15 is not this CPU's cursor: a broken producer */
		raw_spin_unlock(&c->lock);
		local_irq_restore(flags);
		TRBUF_CNT(buf, bad_cursor);
		return VM_FAULT_SIGBUS;
	}
	regs->ip = r->start;
	guard = cur_start(buf, c) + buf->subbuf_size;
	if (vmf->address < guard || vmf->address >= guard + PAGE_SIZE) {
		/* stale fault from before a migration or flush: retry */
		raw_spin_unlock(&c->lock);
		local_irq_restore(flags);
		return VM_FAULT_NOPAGE;
	}
	ret = switch_subbuf(buf, c, regs->r15);
	if (!ret) {
		regs->r15 = c->cursor;
		mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, current, regs,
			c->sbs[c->cur].seq, TRBUF_SUBBUF_FULL);
	}
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);

	trbuf_wake(buf);
	if (!ret)
		return VM_FAULT_NOPAGE;
	/* Lossless: wait until the consumer frees a sub-buffer, retry. */
	TRBUF_CNT(buf, overflow_waits);
	return wait_for_space(buf, vmf, cpu);
}

/* ---- kernel hooks ---- */

static void trbuf_hook_switch_out(struct task_struct *prev)
{
	struct trbuf_ctx *ctx = prev->trbuf;
	struct trbuf_buf *buf = ctx->buf;
	struct pt_regs *regs = task_pt_regs(prev);
	struct trbuf_cpu *c = this_cpu_state(buf);

	raw_spin_lock(&c->lock);
	if (c->owner == prev) {
		/* the rollback of a cut sequence waits for the switch-in */
		if (cursor_valid(buf, c, regs->r15)) {
			c->cursor = regs->r15;
			c->cut = find_range(ctx, regs->ip) ? prev : NULL;
		} else {
			TRBUF_CNT(buf, bad_cursor);
		}
		c->owner = NULL;
	}
	raw_spin_unlock(&c->lock);
}

static void trbuf_hook_switch_in(struct task_struct *next)
{
	struct trbuf_buf *buf = next->trbuf->buf;
	struct pt_regs *regs = task_pt_regs(next);
	struct trbuf_cpu *c;
	unsigned long flags;

	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	/*
	 * Invariant 3: a sequence cut at switch-out is rewound unless the task
	 * resumes where nothing moved its cursor (same CPU, nobody wrote, no
	 * flush): then its partial stores are still in place.  A debugger
	 * single-stepping a traced task thus gets through sequences.
	 */
	if (c->cut != next || regs->r15 != c->cursor)
		rollback(next->trbuf, c, next, regs);
	c->cut = NULL;
	regs->r15 = c->cursor;
	c->owner = next;
	TRBUF_CNT(buf, switches_in);
	/*
	 * A marker at every switch-in, even when the task was the last one
	 * traced on this CPU: it may have written on another CPU since, and
	 * only the marker tells a reader where its bytes continue.
	 */
	mk_push(buf, c, c->cursor, TRBUF_MK_SWITCH_IN, next, regs, 0, 0);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
}

static void ctx_free_work(struct work_struct *work)
{
	struct trbuf_ctx *ctx = container_of(work, struct trbuf_ctx,
					     free_work);

	trbuf_buf_put(ctx->buf);
	kvfree(ctx->ranges);
	kfree(ctx);
	module_put(THIS_MODULE);
}

/* Drop a context reference; safe in atomic context (frees from a work). */
static void ctx_put(struct trbuf_ctx *ctx)
{
	if (refcount_dec_and_test(&ctx->ref))
		queue_work(trbuf_wq, &ctx->free_work);
}

static void trbuf_hook_signal_deliver(struct ksignal *ksig,
				      struct pt_regs *regs)
{
	struct trbuf_ctx *ctx = current->trbuf;
	struct trbuf_buf *buf = ctx->buf;
	struct trbuf_cpu *c;
	unsigned long flags;

	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	rollback(ctx, c, current, regs);
	mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
		TRBUF_MK_SIGNAL, current, regs,
		(unsigned long)ksig->ka.sa.sa_handler, ksig->sig);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
}

/*
 * The live cursor stays in user r15 (the kernel never writes the frame's
 * r15 back for a traced task), so nothing is returned: a value computed
 * here could be stale after a preemption before the caller stored it.
 */
static void trbuf_hook_sigreturn(struct pt_regs *regs,
				 unsigned long frame_r15)
{
	struct trbuf_buf *buf = current->trbuf->buf;
	unsigned int spin_us = READ_ONCE(test_sigreturn_spin_us);
	struct trbuf_cpu *c;
	unsigned long flags;
	u64 end;

	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
		TRBUF_MK_SIGRETURN, current, regs, frame_r15, 0);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	/* test: widen the window in which the hook's caller can be preempted */
	end = ktime_get_ns() + spin_us * NSEC_PER_USEC;
	while (spin_us && ktime_get_ns() < end)
		cpu_relax();
}

static void trbuf_hook_fork(struct task_struct *child,
			    unsigned long clone_flags)
{
	struct trbuf_ctx *ctx = current->trbuf;
	struct trbuf_buf *buf = ctx->buf;
	struct pt_regs *regs = task_pt_regs(current);
	struct trbuf_cpu *c;
	unsigned long flags;

	refcount_inc(&ctx->ref);
	child->trbuf = ctx;
	atomic64_inc(&buf->cnt.traced);
	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
		TRBUF_MK_FORK, current, regs, child->pid, (u32)clone_flags);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
}

/*
 * Stop tracing current: commit its live r15 to the CPU's cursor first
 * (else the next task on this CPU overwrites its last bytes), then leave
 * a marker of @type.
 */
static void untrace_current(u32 type, u64 arg)
{
	struct trbuf_ctx *ctx = current->trbuf;
	struct trbuf_buf *buf = ctx->buf;
	struct pt_regs *regs = task_pt_regs(current);
	struct trbuf_cpu *c;
	unsigned long flags;

	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	if (c->owner == current) {
		if (cursor_valid(buf, c, regs->r15))
			c->cursor = regs->r15;
		else
			TRBUF_CNT(buf, bad_cursor);
		c->owner = NULL;
	}
	if (c->cut == current)
		c->cut = NULL;
	mk_push(buf, c, c->cursor, type, current, regs, arg, 0);
	current->trbuf = NULL;
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	atomic64_dec(&buf->cnt.traced);
	trbuf_wake(buf);
	ctx_put(ctx);
}

static void trbuf_hook_exec(struct task_struct *tsk)
{
	untrace_current(TRBUF_MK_EXEC, 0);
}

static void trbuf_hook_exit(struct task_struct *tsk, long code)
{
	untrace_current(TRBUF_MK_EXIT, code);
}

static void trbuf_hook_release(struct task_struct *tsk)
{
	struct trbuf_ctx *ctx = tsk->trbuf;

	tsk->trbuf = NULL;
	atomic64_dec(&ctx->buf->cnt.traced);
	ctx_put(ctx);
}

static const struct trbuf_hook_ops trbuf_ops = {
	.switch_out	= trbuf_hook_switch_out,
	.switch_in	= trbuf_hook_switch_in,
	.signal_deliver	= trbuf_hook_signal_deliver,
	.sigreturn	= trbuf_hook_sigreturn,
	.fork		= trbuf_hook_fork,
	.exec		= trbuf_hook_exec,
	.exit		= trbuf_hook_exit,
	.release	= trbuf_hook_release,
};

/* ---- buffer lifetime ---- */

/* Free @buf's memory; takes no lock (the allocation path holds one). */
static void buf_free_mem(struct trbuf_buf *buf)
{
	unsigned int cpu;

	for (cpu = 0; buf->cpus && cpu < buf->nr_cpus; cpu++)
		kfree(buf->cpus[cpu].sbs);
	kfree(buf->cpus);
	vfree(buf->mk_mem);
	vfree(buf->mem);
	kfree(buf);
}

static void buf_free_work(struct work_struct *work)
{
	struct trbuf_buf *buf = container_of(work, struct trbuf_buf,
					     free_work);

	mutex_lock(&trbuf_cur_lock);
	if (trbuf_cur == buf)
		trbuf_cur = NULL;
	mutex_unlock(&trbuf_cur_lock);
	buf_free_mem(buf);
}

static void buf_release(struct kref *ref)
{
	struct trbuf_buf *buf = container_of(ref, struct trbuf_buf, ref);

	queue_work(trbuf_wq, &buf->free_work);
}

/**
 * trbuf_buf_put - drop a reference taken by trbuf_buf_get_current()
 * @buf: the buffer; may be called in atomic context
 */
void trbuf_buf_put(struct trbuf_buf *buf)
{
	kref_put(&buf->ref, buf_release);
}

static struct trbuf_buf *buf_alloc(void)
{
	unsigned int ncpus = nr_cpu_ids, nsub, cpu, i, mkcap;
	size_t sbsz = READ_ONCE(subbuf_size);
	struct trbuf_buf *buf;
	unsigned long n;

	if (!sbsz || sbsz % PAGE_SIZE || sbsz > (1U << 30))
		return ERR_PTR(-EINVAL);
	n = READ_ONCE(total_size) / ncpus / sbsz;
	if (n < 2 || n > 65536)
		return ERR_PTR(-EINVAL);
	nsub = n;
	mkcap = READ_ONCE(subbuf_markers);
	if (mkcap < 8 || mkcap > 65536)
		return ERR_PTR(-EINVAL);
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	kref_init(&buf->ref);
	buf->subbuf_size = sbsz;
	buf->nr_subbufs = nsub;
	buf->nr_cpus = ncpus;
	buf->map_size = PAGE_SIZE + (size_t)ncpus * nsub * (sbsz + PAGE_SIZE);
	buf->mk_cap = mkcap;
	/* no consumer yet: TRACE_ME refuses, DISCARD tracees never wait */
	buf->consumer_gone = true;
	init_waitqueue_head(&buf->consumer_wq);
	mutex_init(&buf->consumer_lock);
	INIT_WORK(&buf->free_work, buf_free_work);
	buf->mem = vmalloc_user((size_t)ncpus * nsub * sbsz);
	buf->mk_mem = vmalloc(array3_size(ncpus * nsub, mkcap,
					  sizeof(*buf->mk_mem)));
	if (!READ_ONCE(test_fail_alloc))
		buf->cpus = kcalloc(ncpus, sizeof(*buf->cpus), GFP_KERNEL);
	if (!buf->mem || !buf->mk_mem || !buf->cpus)
		goto err_free_buf;
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct trbuf_cpu *c = &buf->cpus[cpu];

		raw_spin_lock_init(&c->lock);
		init_waitqueue_head(&c->space_wq);
		c->sbs = kcalloc(nsub, sizeof(*c->sbs), GFP_KERNEL);
		if (!c->sbs)
			goto err_free_buf;
		for (i = 0; i < nsub; i++) {
			c->sbs[i].state = TRBUF_SB_FREE;
			c->sbs[i].mk = buf->mk_mem +
				((size_t)cpu * nsub + i) * mkcap;
		}
		c->sbs[0].state = TRBUF_SB_ACTIVE;
		c->next_seq = 1;
		c->cursor = sb_addr(buf, cpu, 0);
	}
	return buf;

err_free_buf:
	/* not buf_free_work(): the caller holds trbuf_cur_lock */
	buf_free_mem(buf);
	return ERR_PTR(-ENOMEM);
}

/**
 * trbuf_buf_get_current - reference the buffer new users attach to
 *
 * Creates it (with the current module parameters) when none exists.
 *
 * Return: the buffer or an ERR_PTR.
 */
struct trbuf_buf *trbuf_buf_get_current(void)
{
	struct trbuf_buf *buf;

	mutex_lock(&trbuf_cur_lock);
	buf = trbuf_cur;
	if (!buf || !kref_get_unless_zero(&buf->ref)) {
		buf = buf_alloc();
		if (!IS_ERR(buf))
			trbuf_cur = buf;
	}
	mutex_unlock(&trbuf_cur_lock);
	return buf;
}

/* ---- ioctls ---- */

static int ranges_check(const struct trbuf_seq_range *r, u32 n)
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

/**
 * trbuf_trace_me - start tracing the calling thread (TRBUF_IOC_TRACE_ME)
 * @buf: the buffer of the file the ioctl came through
 * @uarg: user &struct trbuf_trace_me
 *
 * Return: 0 with user r15 set to this CPU's cursor on return, or -errno.
 */
int trbuf_trace_me(struct trbuf_buf *buf, struct trbuf_trace_me __user *uarg)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct trbuf_trace_me arg;
	struct trbuf_ctx *ctx;
	struct trbuf_cpu *c;
	unsigned long flags;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~TRBUF_TRACE_DISCARD)
		return -EINVAL;
	if (arg.count > TRBUF_MAX_RANGES)
		return -E2BIG;
	if (current->trbuf)
		return -EBUSY;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->nr_ranges = arg.count;
	if (arg.count) {
		ctx->ranges = kvmalloc_array(arg.count, sizeof(*ctx->ranges),
					     GFP_KERNEL);
		ret = -ENOMEM;
		if (!ctx->ranges)
			goto err_free_ctx;
		ret = -EFAULT;
		if (copy_from_user(ctx->ranges, u64_to_user_ptr(arg.ranges),
				   arg.count * sizeof(*ctx->ranges)))
			goto err_free_ranges;
		ret = ranges_check(ctx->ranges, arg.count);
		if (ret)
			goto err_free_ranges;
	}
	/* Without a consumer nothing records the trace: say so, never hang. */
	ret = -ENOTCONN;
	if (!(arg.flags & TRBUF_TRACE_DISCARD) && !READ_ONCE(buf->consumer))
		goto err_free_ranges;
	arg.map_size = buf->map_size;
	ret = -EFAULT;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		goto err_free_ranges;

	refcount_set(&ctx->ref, 1);
	INIT_WORK(&ctx->free_work, ctx_free_work);
	kref_get(&buf->ref);
	ctx->buf = buf;
	__module_get(THIS_MODULE);
	atomic64_inc(&buf->cnt.traced);

	local_irq_save(flags);
	c = this_cpu_state(buf);
	raw_spin_lock(&c->lock);
	current->trbuf = ctx;
	c->owner = current;
	regs->r15 = c->cursor;
	mk_push(buf, c, c->cursor, TRBUF_MK_START, current, regs, 0, 0);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
	return 0;

err_free_ranges:
	kvfree(ctx->ranges);
err_free_ctx:
	kfree(ctx);
	return ret;
}

/**
 * trbuf_untrace - stop tracing the calling thread (TRBUF_IOC_UNTRACE)
 *
 * Return: 0, or -EINVAL if it was not traced.
 */
int trbuf_untrace(void)
{
	if (!current->trbuf)
		return -EINVAL;
	untrace_current(TRBUF_MK_STOP, 0);
	return 0;
}

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
			mk_push(buf, c, c->cursor, TRBUF_MK_STOP, current,
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
			out->offset = sb_addr(buf, cpu, best) - TRBUF_MAP_ADDR;
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
	if (!ret && next_free(buf, sb->cpu))
		wake_up_all(&c->space_wq);
	return ret;
}

/*
 * IPI: close this CPU's active sub-buffer if it holds committed bytes or
 * markers other than SUBBUF ones (so an idle CPU is not flushed again and
 * again).  The SUBBUF marker names the traced task running here, if any.
 */
static void flush_ipi(void *info)
{
	struct trbuf_buf *buf = info;
	struct trbuf_cpu *c = this_cpu_state(buf);
	struct task_struct *t = current, *owner = NULL;
	struct pt_regs *regs = NULL;
	unsigned long pos;

	raw_spin_lock(&c->lock);
	pos = c->cursor;
	if (c->owner == t && t->trbuf && t->trbuf->buf == buf) {
		owner = t;
		regs = task_pt_regs(t);
		if (!cursor_valid(buf, c, regs->r15))
			goto out_unlock;
		rollback(t->trbuf, c, t, regs);
		pos = regs->r15;
	}
	if (c->close_at)
		pos = c->close_at;
	if ((pos == cur_start(buf, c) && !c->sbs[c->cur].nr_events) ||
	    switch_subbuf(buf, c, pos))
		goto out_unlock;
	if (regs)
		regs->r15 = c->cursor;
	mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, owner, regs,
		c->sbs[c->cur].seq, TRBUF_SUBBUF_FLUSH);
out_unlock:
	raw_spin_unlock(&c->lock);
}

/**
 * trbuf_flush - force a sub-buffer switch on every CPU (TRBUF_IOC_FLUSH)
 * @buf: the buffer
 *
 * Partially filled sub-buffers become full so the consumer can drain them
 * while traced tasks keep running.  A CPU whose next sub-buffer is not
 * free keeps its active one.
 */
void trbuf_flush(struct trbuf_buf *buf)
{
	TRBUF_CNT(buf, flushes);
	on_each_cpu(flush_ipi, buf, 1);
	trbuf_wake(buf);
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

/**
 * trbuf_map - populate a mapping of the whole buffer at TRBUF_MAP_ADDR
 * @buf: the buffer
 * @vma: the new mapping; guard pages stay empty and fault
 *
 * Return: 0 or -errno.
 */
int trbuf_map(struct trbuf_buf *buf, struct vm_area_struct *vma)
{
	unsigned int cpu, i;
	size_t off;
	int ret;

	for (cpu = 0; cpu < buf->nr_cpus; cpu++) {
		for (i = 0; i < buf->nr_subbufs; i++) {
			unsigned long uaddr = sb_addr(buf, cpu, i);
			char *kaddr = buf->mem +
				((size_t)cpu * buf->nr_subbufs + i) *
				buf->subbuf_size;

			for (off = 0; off < buf->subbuf_size;
			     off += PAGE_SIZE) {
				ret = vm_insert_page(vma, uaddr + off,
						     vmalloc_to_page(kaddr + off));
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/**
 * trbuf_core_init - register the kernel hooks
 *
 * Return: 0 or -errno.
 */
int trbuf_core_init(void)
{
	int ret;

	trbuf_wq = alloc_workqueue("trbuf", 0, 0);
	if (!trbuf_wq)
		return -ENOMEM;
	ret = trbuf_hooks_register(&trbuf_ops);
	if (ret)
		destroy_workqueue(trbuf_wq);
	return ret;
}

/**
 * trbuf_core_exit - unregister the hooks and free what is left
 *
 * No task is traced any more (each holds a module reference).
 */
void trbuf_core_exit(void)
{
	trbuf_hooks_unregister(&trbuf_ops);
	destroy_workqueue(trbuf_wq);
}
