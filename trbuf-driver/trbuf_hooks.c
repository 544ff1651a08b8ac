// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel-patch hooks (include/linux/trbuf_hooks.h): cursor swap at
 * context switch, signal delivery and return, fork, exec, exit; the
 * tracing context a traced task holds, from TRACE_ME to exit.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/trbuf_hooks.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

/*
 * The SIGRETURN markers say the flags and the FPU state were compared
 * (TRBUF_MKF_CTX_FULL): the hook must see them restored.
 */
#if !defined(TRBUF_HOOK_SIGRETURN_FLAGS) || !defined(TRBUF_HOOK_SIGRETURN_FPU)
#error "the kernel calls the sigreturn hook before it restores the flags or the FPU state: build it with kernel-patches/ as they are"
#endif

static unsigned int test_sigreturn_spin_us;
module_param(test_sigreturn_spin_us, uint, 0644);
MODULE_PARM_DESC(test_sigreturn_spin_us, "test: spin preemptibly this long in the sigreturn hook");

struct workqueue_struct *trbuf_wq;

static void trbuf_hook_switch_out(struct task_struct *prev)
{
	struct trbuf_ctx *ctx = prev->trbuf;
	struct trbuf_buf *buf = ctx->buf;
	struct pt_regs *regs = task_pt_regs(prev);
	struct trbuf_cpu *c = trbuf_this_cpu(buf);

	raw_spin_lock(&c->lock);
	if (c->owner == prev) {
		/* the rollback of a cut sequence waits for the switch-in */
		if (trbuf_cursor_valid(buf, c, regs->r15)) {
			c->cursor = regs->r15;
			c->cut = trbuf_find_range(ctx, regs->ip) ? prev : NULL;
			/* an owed rollback is due whatever happens next */
			if (c->owed == prev && !c->owed_resumable)
				c->cut = NULL;
		} else {
			TRBUF_CNT(buf, bad_cursor);
		}
		c->owner = NULL;
	}
	if (c->owed == prev)
		c->owed = NULL;
	raw_spin_unlock(&c->lock);
}

static void trbuf_hook_switch_in(struct task_struct *next)
{
	struct trbuf_buf *buf = next->trbuf->buf;
	struct pt_regs *regs = task_pt_regs(next);
	struct trbuf_cpu *c;
	unsigned long flags;
	bool resumable;

	local_irq_save(flags);
	c = trbuf_this_cpu(buf);
	raw_spin_lock(&c->lock);
	/*
	 * Invariant 3: a sequence cut at switch-out is rewound unless the task
	 * resumes where nothing moved its cursor (same CPU, nobody wrote, no
	 * flush): then its partial stores are still in place.  A debugger
	 * single-stepping a traced task thus gets through sequences.
	 */
	resumable = c->cut == next && regs->r15 == c->cursor;
	c->cut = NULL;
	regs->r15 = c->cursor;
	c->owner = next;
	if (!trbuf_mk_room(buf, c)) {
		/*
		 * Invariant 5: the marker area is in its reserve (the consumer
		 * holds every sub-buffer).  Nothing may sleep here: the marker
		 * (and the rollback) is owed, written by trbuf_hook_resume()
		 * before the task returns to user mode and writes a byte.
		 */
		c->owed = next;
		c->owed_resumable = resumable;
		set_tsk_thread_flag(next, TIF_NOTIFY_RESUME);
		raw_spin_unlock(&c->lock);
		local_irq_restore(flags);
		return;
	}
	if (!resumable)
		trbuf_rollback(next->trbuf, c, next, regs);
	TRBUF_CNT(buf, switches_in);
	/*
	 * A marker at every switch-in, even when the task was the last one
	 * traced on this CPU: it may have written on another CPU since, and
	 * only the marker tells a reader where its bytes continue.
	 */
	trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_SWITCH_IN, next, regs, 0, 0);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
}

/*
 * Called before a traced task returns to user mode when TIF_NOTIFY_RESUME
 * is set: pays a switch-in marker owed since trbuf_hook_switch_in(),
 * sleeping until the consumer frees a sub-buffer of the CPU if need be.
 * Sleeping here loses nothing: a task that has not returned to user mode
 * has written no bytes, so the marker written just before the return
 * names the same position; if it is switched out meanwhile, the debt is
 * void and the next switch-in pays or owes again.
 */
static void trbuf_hook_resume(struct pt_regs *regs)
{
	struct trbuf_buf *buf = current->trbuf->buf;
	struct trbuf_cpu *c;
	unsigned long flags;

	c = trbuf_mk_wait_room(buf, regs, 0, &flags);
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

/**
 * trbuf_ctx_put - drop a tracing context reference
 * @ctx: the context; safe in atomic context (frees from a work)
 */
void trbuf_ctx_put(struct trbuf_ctx *ctx)
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

	c = trbuf_mk_wait_room(buf, regs, 2, &flags);
	trbuf_rollback(ctx, c, current, regs);
	trbuf_mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
		TRBUF_MK_SIGNAL, current, regs,
		(unsigned long)ksig->ka.sa.sa_handler, ksig->sig);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
	/* what the frame saves (rolled back): its sigreturn compares */
	trbuf_sigframe_push(regs);
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
	struct trbuf_marker *m;
	struct trbuf_cpu *c;
	unsigned long flags;
	u64 changed = 0, end;
	u16 checked;

	/* the general registers, the flags and the FPU state, restored */
	checked = trbuf_sigframe_pop(regs, &changed);
	c = trbuf_mk_wait_room(buf, regs, 1, &flags);
	m = trbuf_mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
			  TRBUF_MK_SIGRETURN, current, regs, changed, 0);
	if (m)
		m->flags |= checked;
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
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
	/* a fork in a handler returns from it in the child too */
	trbuf_sigframe_fork(child);
	/* the child has not run: it writes nothing before this marker */
	c = trbuf_mk_wait_room(buf, regs, 1, &flags);
	trbuf_mk_push(buf, c, c->owner == current ? regs->r15 : c->cursor,
		TRBUF_MK_FORK, current, regs, child->pid, (u32)clone_flags);
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_wake(buf);
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

	c = trbuf_mk_wait_room(buf, regs, 1, &flags);
	if (c->owner == current) {
		if (trbuf_cursor_valid(buf, c, regs->r15))
			c->cursor = regs->r15;
		else
			TRBUF_CNT(buf, bad_cursor);
		c->owner = NULL;
	}
	if (c->cut == current)
		c->cut = NULL;
	if (c->owed == current)
		c->owed = NULL;
	trbuf_mk_push(buf, c, c->cursor, type, current, regs, arg, 0);
	current->trbuf = NULL;
	raw_spin_unlock(&c->lock);
	local_irq_restore(flags);
	trbuf_sigframe_free(current);
	atomic64_dec(&buf->cnt.traced);
	trbuf_wake(buf);
	trbuf_ctx_put(ctx);
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
	trbuf_sigframe_free(tsk);
	atomic64_dec(&ctx->buf->cnt.traced);
	trbuf_ctx_put(ctx);
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
	.resume		= trbuf_hook_resume,
};

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
		ret = trbuf_ranges_check(ctx->ranges, arg.count);
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

	c = trbuf_mk_wait_room(buf, regs, 1, &flags);
	current->trbuf = ctx;
	c->owner = current;
	regs->r15 = c->cursor;
	trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_START, current, regs, 0, 0);
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
 * trbuf_core_init - register the kernel hooks, prepare the test timers
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
	if (ret) {
		destroy_workqueue(trbuf_wq);
		return ret;
	}
	trbuf_testcut_init();
	return 0;
}

/**
 * trbuf_core_exit - unregister the hooks and free what is left
 *
 * No task is traced any more (each holds a module reference).
 */
void trbuf_core_exit(void)
{
	trbuf_testcut_exit();
	trbuf_hooks_unregister(&trbuf_ops);
	trbuf_sigframe_exit();
	destroy_workqueue(trbuf_wq);
}
