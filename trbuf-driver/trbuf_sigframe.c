// SPDX-License-Identifier: GPL-2.0
/*
 * What a traced task's signal frames held at delivery: the general
 * registers, the flags and a keyed hash of the FPU state of the
 * interrupted code, to tell at each sigreturn which of them the handler
 * changed in its ucontext (docs/ARCHITECTURE.md item 30).  Only a task
 * itself reads or changes its frames (its delivery, sigreturn, exit,
 * exec), and its parent at its fork, before it runs; the table that finds
 * them is shared, and also taken where a dead task is freed (free_task(),
 * from an RCU callback).
 */
#include <crypto/blake2s.h>
#include <linux/hashtable.h>
#include <linux/random.h>
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
	u64 fpu_hash;		/* of the FPU state's values */
	u32 fpu_size;		/* the state's size; 0: not hashed */
};

struct trbuf_frames {
	struct hlist_node node;
	struct task_struct *task;
	unsigned int nr;
	struct trbuf_frame f[TRBUF_FRAMES];	/* in delivery order */
};

static DEFINE_HASHTABLE(trbuf_frames_ht, 8);
static DEFINE_SPINLOCK(trbuf_frames_lock);

/*
 * The hash's key, random per load: a handler cannot make a changed FPU
 * state hash as the saved one did without knowing it.
 */
static u8 fpu_key[BLAKE2S_KEY_SIZE];

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
 * The keyed hash of current's user FPU state (its values, whatever the
 * processor's in-use bits say), into @hash.
 * Return: the state's size, 0 when it cannot be read (no XSAVE, no memory).
 */
static u32 fpu_hash(u64 *hash)
{
	u32 size = trbuf_fpu_user_state(NULL, 0);
	void *state;

	if (!size)
		return 0;
	state = kvmalloc(size, GFP_KERNEL);
	if (!state)
		return 0;
	if (trbuf_fpu_user_state(state, size) == size)
		blake2s((u8 *)hash, state, fpu_key, sizeof(*hash), size, sizeof(fpu_key));
	else
		size = 0;	/* cannot happen: only current resizes it */
	kvfree(state);
	return size;
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
	f->fpu_size = 0;
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
	fs->nr = n;
	if (fs->nr == TRBUF_FRAMES) {
		fs->nr--;
		memmove(fs->f, fs->f + 1, fs->nr * sizeof(fs->f[0]));
	}
	f = &fs->f[fs->nr++];
	frame_of(regs, f);
	f->fpu_size = fpu_hash(&f->fpu_hash);
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
 * TRBUF_MKF_CTX_FLAGS (it could not be read, at delivery or now),
 * @changed set;
 * or 0 when no frame matches (a handler that changed %rip or %rsp, or a
 * frame not kept).
 */
u16 trbuf_sigframe_pop(const struct pt_regs *regs, u64 *changed)
{
	struct trbuf_frames *fs = frames_of(current);
	struct trbuf_frame now;
	unsigned long fl;	/* the flags that differ */
	unsigned int i, r;
	u32 size;
	u64 hash;

	if (!fs)
		return 0;
	frame_of(regs, &now);
	for (i = fs->nr; i; i--)
		if (fs->f[i - 1].regs[4] == now.regs[4] && fs->f[i - 1].ip == now.ip)
			break;
	if (!i)
		return 0;
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
	size = fs->f[i].fpu_size ? fpu_hash(&hash) : 0;
	if (!size)	/* not read at delivery, or now */
		return TRBUF_MKF_CTX_CHECKED | TRBUF_MKF_CTX_FLAGS;
	/* another size: the handler made the task use AMX */
	if (size != fs->f[i].fpu_size || hash != fs->f[i].fpu_hash)
		*changed |= TRBUF_CTX_VECTOR;
	return TRBUF_MKF_CTX_CHECKED | TRBUF_MKF_CTX_FULL;
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

	if (!fs || !fs->nr || task_pt_regs(child)->sp != task_pt_regs(current)->sp)
		return;
	cfs = kmemdup(fs, sizeof(*fs), GFP_KERNEL_ACCOUNT);
	if (cfs)
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
	kfree(fs);
}

/**
 * trbuf_sigframe_init - draw the FPU state hash's key at module load
 */
void trbuf_sigframe_init(void)
{
	BUILD_BUG_ON(sizeof(struct trbuf_frames) > 2048);
	get_random_bytes(fpu_key, sizeof(fpu_key));
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
		kfree(fs);
	}
	spin_unlock_irqrestore(&trbuf_frames_lock, flags);
	memzero_explicit(fpu_key, sizeof(fpu_key));
}
