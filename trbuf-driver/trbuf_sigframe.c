// SPDX-License-Identifier: GPL-2.0
/*
 * What a traced task's signal frames held at delivery: the general
 * registers, the flags and a copy of the FPU state of the
 * interrupted code, to tell at each sigreturn which of them the handler
 * changed in its ucontext (docs/ARCHITECTURE.md item 30).  Only a task
 * itself reads or changes its frames (its delivery, sigreturn, exit,
 * exec), and its parent at its fork, before it runs; the table that finds
 * them is shared, and also taken where a dead task is freed (free_task(),
 * from an RCU callback).
 */
#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/trbuf_hooks.h>
#include <asm/processor-flags.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

/*
 * Frames kept per task; beyond, the oldest goes (its return unchecked).
 * 13: struct trbuf_frames fits a 2 KiB slab.
 */
#define TRBUF_FRAMES	13

struct trbuf_frame {
	unsigned long regs[15];	/* x86 encoding order, %rax to %r14 */
	unsigned long ip;
	unsigned long flags;
	void *fpu;		/* the FPU state's values, or NULL */
	u32 fpu_size;		/* their size */
};

struct trbuf_frames {
	struct hlist_node node;
	struct task_struct *task;
	unsigned int nr;
	struct trbuf_frame f[TRBUF_FRAMES];	/* in delivery order */
};
static_assert(sizeof(struct trbuf_frames) <= 2048);

static DEFINE_HASHTABLE(trbuf_frames_ht, 8);
static DEFINE_SPINLOCK(trbuf_frames_lock);
/* FPU state copies held: 0 at unload, else one leaked (warned) */
static atomic_t fpu_copies = ATOMIC_INIT(0);

/* @t's frames, the table's lock held; with @del, out of the table */
static struct trbuf_frames *frames_find(struct task_struct *t, bool del)
{
	struct trbuf_frames *fs;

	hash_for_each_possible(trbuf_frames_ht, fs, node, (unsigned long)t)
		if (fs->task == t) {
			if (del)
				hash_del(&fs->node);
			return fs;
		}
	return NULL;
}

/* @t's frames; only @t itself may use them once the lock is dropped. */
static struct trbuf_frames *frames_of(struct task_struct *t)
{
	struct trbuf_frames *fs;
	unsigned long flags;

	spin_lock_irqsave(&trbuf_frames_lock, flags);
	fs = frames_find(t, false);
	spin_unlock_irqrestore(&trbuf_frames_lock, flags);
	return fs;
}

/* @fs into the table as @t's frames (@t has none there yet) */
static void frames_add(struct trbuf_frames *fs, struct task_struct *t)
{
	unsigned long flags;

	fs->task = t;
	spin_lock_irqsave(&trbuf_frames_lock, flags);
	hash_add(trbuf_frames_ht, &fs->node, (unsigned long)t);
	spin_unlock_irqrestore(&trbuf_frames_lock, flags);
}

/*
 * The FPU copies may fail (the return then compares the flags only):
 * never retried hard, never a reason to reclaim or kill for.
 */
#define FPU_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)

/*
 * A copy of current's user FPU state (its values, whatever the processor's
 * in-use bits say), its size into @size; NULL when it cannot be read (no
 * XSAVE, no memory).  A copy, not a hash: compared with memcmp(), it is
 * exact and cheaper than hashing a few KiB at every delivery and return.
 */
static void *fpu_copy(u32 *size)
{
	void *state;

	*size = trbuf_fpu_user_state(NULL, 0);
	if (!*size)
		return NULL;
	state = kmalloc(*size, FPU_GFP);
	if (state && trbuf_fpu_user_state(state, *size) != *size) {
		kfree(state);	/* cannot happen: only current resizes it */
		state = NULL;
	}
	if (state)
		atomic_inc(&fpu_copies);
	return state;
}

/* A copy of another copy (a forked child's frames), or NULL. */
static void *fpu_dup(const void *state, u32 size)
{
	void *copy = state ? kmemdup(state, size, FPU_GFP) : NULL;

	if (copy)
		atomic_inc(&fpu_copies);
	return copy;
}

static void fpu_free(void *state)
{
	if (state)
		atomic_dec(&fpu_copies);
	kfree(state);
}

/*
 * Whether two copies of the FPU state differ.  The layout is the UABI's,
 * at fixed offsets: a state grown since (a handler's first use of AMX
 * enlarged the task's) is the same where the other ends, and zero, the
 * new components' initial values, beyond.
 */
static bool fpu_differ(const void *a, u32 na, const void *b, u32 nb)
{
	u32 n = min(na, nb);

	if (memcmp(a, b, n))
		return true;
	if (na > n)
		return memchr_inv(a + n, 0, na - n);
	return nb > n && memchr_inv(b + n, 0, nb - n);
}

/* Frames @from to @to - 1 of @fs are gone: free their FPU states. */
static void frames_drop(struct trbuf_frames *fs, unsigned int from,
			unsigned int to)
{
	for (; from < to; from++) {
		fpu_free(fs->f[from].fpu);
		fs->f[from].fpu = NULL;
	}
}

static void frame_of(const struct pt_regs *regs, struct trbuf_frame *f)
{
	f->regs[0] = regs->ax;
	f->regs[1] = regs->cx;
	f->regs[2] = regs->dx;
	f->regs[3] = regs->bx;
	f->regs[4] = regs->sp;
	f->regs[5] = regs->bp;
	f->regs[6] = regs->si;
	f->regs[7] = regs->di;
	f->regs[8] = regs->r8;
	f->regs[9] = regs->r9;
	f->regs[10] = regs->r10;
	f->regs[11] = regs->r11;
	f->regs[12] = regs->r12;
	f->regs[13] = regs->r13;
	f->regs[14] = regs->r14;
	f->ip = regs->ip;
	f->flags = regs->flags;
	f->fpu = NULL;
}

/**
 * trbuf_sigframe_push - keep the registers a signal frame saves
 * @regs: current's user registers as the frame will hold them (after
 *	the rollback of a cut sequence)
 *
 * Called at delivery to a traced task, before the frame is built, where
 * sleeping is allowed; the FPU state is still the interrupted code's.  On
 * failure to allocate, the frame's sigreturn goes unchecked.
 */
void trbuf_sigframe_push(const struct pt_regs *regs)
{
	struct trbuf_frames *fs = frames_of(current);
	struct trbuf_frame *f;
	unsigned int i, n = 0;

	if (!fs) {
		fs = kzalloc(sizeof(*fs), GFP_KERNEL_ACCOUNT);
		if (!fs)
			return;
		frames_add(fs, current);
	}
	/*
	 * One delivered at the same point is gone (its handler left by
	 * longjmp and the code came back there).
	 */
	for (i = 0; i < fs->nr; i++)
		if (fs->f[i].regs[4] != regs->sp || fs->f[i].ip != regs->ip)
			fs->f[n++] = fs->f[i];
		else
			frames_drop(fs, i, i + 1);
	fs->nr = n;
	if (fs->nr == TRBUF_FRAMES) {
		frames_drop(fs, 0, 1);
		fs->nr--;
		memmove(fs->f, fs->f + 1, fs->nr * sizeof(fs->f[0]));
	}
	f = &fs->f[fs->nr++];
	frame_of(regs, f);
	f->fpu = fpu_copy(&f->fpu_size);
}

/**
 * trbuf_sigframe_pop - what a handler changed in its frame
 * @regs: current's user registers as the sigreturn restored them, the
 *	flags and the FPU state included
 * @changed: out: bit r set when general register r (x86 encoding order)
 *	differs from its value at delivery; TRBUF_CTX_STATUS when a status
 *	flag does, TRBUF_CTX_DF when the direction flag does,
 *	TRBUF_CTX_VECTOR when a value of the FPU state does
 *
 * Matches the frame by the %rip and %rsp it gives back, and drops it and
 * the frames delivered after it (handlers within it that never returned).
 *
 * Return: what was compared, as the SIGRETURN marker's flags:
 * TRBUF_MKF_CTX_CHECKED with TRBUF_MKF_CTX_FULL (the FPU state too) or
 * TRBUF_MKF_CTX_FLAGS (it could not be read, at delivery or now), with
 * @changed set; or 0 when no frame matches (a handler that changed %rip
 * or %rsp, or a frame not kept).
 */
u16 trbuf_sigframe_pop(const struct pt_regs *regs, u64 *changed)
{
	struct trbuf_frames *fs = frames_of(current);
	struct trbuf_frame now;
	unsigned long fl;	/* the flags that differ */
	unsigned int i, r;
	u16 compared = TRBUF_MKF_CTX_CHECKED | TRBUF_MKF_CTX_FLAGS;
	void *fpu = NULL;
	u32 size = 0;

	if (!fs)
		return 0;
	frame_of(regs, &now);
	for (i = fs->nr; i; i--)
		if (fs->f[i - 1].regs[4] == now.regs[4] && fs->f[i - 1].ip == now.ip)
			break;
	if (!i)
		return 0;
	frames_drop(fs, i, fs->nr);	/* handlers within it never returned */
	fs->nr = --i;
	*changed = 0;
	for (r = 0; r < ARRAY_SIZE(now.regs); r++)
		if (now.regs[r] != fs->f[i].regs[r])
			*changed |= 1ULL << r;
	fl = now.flags ^ fs->f[i].flags;
	if (fl & (X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF))
		*changed |= TRBUF_CTX_STATUS;
	if (fl & X86_EFLAGS_DF)
		*changed |= TRBUF_CTX_DF;
	/* not read at delivery, or now: the flags only */
	if (fs->f[i].fpu)
		fpu = fpu_copy(&size);
	if (fpu) {
		compared = TRBUF_MKF_CTX_CHECKED | TRBUF_MKF_CTX_FULL;
		if (fpu_differ(fpu, size, fs->f[i].fpu, fs->f[i].fpu_size))
			*changed |= TRBUF_CTX_VECTOR;
		fpu_free(fpu);
	}
	frames_drop(fs, i, i + 1);
	return compared;
}

/**
 * trbuf_sigframe_fork - a new task's copy of current's frames
 * @child: the new task, not yet run; current is its parent
 *
 * A fork in a handler returns from it in the child too, from the copy of
 * the frame on the child's stack: the child's sigreturn compares against
 * what the parent's delivery kept.  A child given a stack of its own (a
 * thread, posix_spawn) starts elsewhere and never returns from them: it
 * gets none (frames a handler left by longjmp stay in the parent, and
 * would be copied into every thread).  Called from the fork hook, where
 * sleeping is allowed; on failure to allocate, the child's returns from
 * those frames go unchecked.
 */
void trbuf_sigframe_fork(struct task_struct *child)
{
	struct trbuf_frames *fs = frames_of(current), *cfs;
	unsigned int i;

	if (!fs || !fs->nr || task_pt_regs(child)->sp != task_pt_regs(current)->sp)
		return;
	cfs = kzalloc(sizeof(*cfs), GFP_KERNEL_ACCOUNT);
	if (!cfs)
		return;
	cfs->nr = fs->nr;
	memcpy(cfs->f, fs->f, fs->nr * sizeof(fs->f[0]));
	/* (a state not copied: that return compares the flags only) */
	for (i = 0; i < cfs->nr; i++)
		cfs->f[i].fpu = fpu_dup(cfs->f[i].fpu, cfs->f[i].fpu_size);
	frames_add(cfs, child);
}

/**
 * trbuf_sigframe_free - forget a task's frames
 * @t: the task: current at its exit, exec or untrace, or a dead one
 */
void trbuf_sigframe_free(struct task_struct *t)
{
	struct trbuf_frames *fs;
	unsigned long flags;

	spin_lock_irqsave(&trbuf_frames_lock, flags);
	fs = frames_find(t, true);
	spin_unlock_irqrestore(&trbuf_frames_lock, flags);
	if (fs)
		frames_drop(fs, 0, fs->nr);
	kfree(fs);
}

/**
 * trbuf_sigframe_exit - free every task's frames at module unload
 *
 * No task is traced any more, and each freed its own: any left is a leak,
 * warned about once, then freed.
 */
void trbuf_sigframe_exit(void)
{
	struct trbuf_frames *fs;
	struct hlist_node *tmp;
	unsigned long flags;
	unsigned int b;

	spin_lock_irqsave(&trbuf_frames_lock, flags);
	WARN_ON_ONCE(!hash_empty(trbuf_frames_ht));
	hash_for_each_safe(trbuf_frames_ht, b, tmp, fs, node) {
		hash_del(&fs->node);
		frames_drop(fs, 0, fs->nr);
		kfree(fs);
	}
	spin_unlock_irqrestore(&trbuf_frames_lock, flags);
	WARN_ON_ONCE(atomic_read(&fpu_copies));
}
