/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interface of trbuf.ko, one file per concern:
 *   trbuf_buffer.c    buffer lifetime, per-CPU rings, sub-buffer switch, mmap
 *   trbuf_markers.c   per-sub-buffer marker areas (invariant 5)
 *   trbuf_rollback.c  sequence tables, rollback decision (invariant 3)
 *   trbuf_fault.c     guard-page fault, overflow wait (invariant 7)
 *   trbuf_hooks.c     kernel-patch hooks, tracing contexts, TRACE_ME
 *   trbuf_consumer.c  GET/PUT sub-buffer, markers, flush, detach, status
 *   trbuf_testcut.c   test knob test_cut_us: forced cuts for the rollback tests
 *   trbuf_dev.c       /dev/trbuf file operations (thin glue)
 * Invariants: docs/ARCHITECTURE.md.
 */
#ifndef _TRBUF_CORE_H
#define _TRBUF_CORE_H

#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/trbuf.h>

enum trbuf_sb_state {
	TRBUF_SB_FREE,
	TRBUF_SB_ACTIVE,	/* the CPU writes into it */
	TRBUF_SB_FULL,		/* closed, waiting for the consumer */
	TRBUF_SB_READING,	/* handed out by GET_SUBBUF */
};

/*
 * One sub-buffer and its marker area: the markers that point into it, in
 * kernel memory (traced tasks cannot forge them), handed to the consumer
 * with it.
 */
struct trbuf_sb {
	enum trbuf_sb_state state;
	u32 len;
	u64 seq;
	u32 nr_mk;			/* markers in mk[] */
	u32 nr_events;			/* of which not SUBBUF markers */
	struct trbuf_marker *mk;	/* buf->mk_cap entries */
};

/* One CPU's region: a ring of sub-buffers and the CPU's write cursor. */
struct trbuf_cpu {
	raw_spinlock_t lock;
	unsigned int cur;		/* index of the ACTIVE sub-buffer */
	u64 next_seq;
	/* Write position while no traced task owns the live r15. */
	unsigned long cursor;
	/* Traced task whose user r15 is the live cursor, or NULL. */
	struct task_struct *owner;
	/*
	 * Non-zero: the marker area is half full but no sub-buffer is free;
	 * the active one ends here, the cursor sits on its guard page so the
	 * next traced store faults and waits for the consumer.
	 */
	unsigned long close_at;
	/*
	 * Traced task that left this CPU inside a sequence with its r15 equal
	 * to @cursor: if it comes back before anybody moved the cursor, it
	 * resumes where it was (no rollback, so single-stepping works).
	 */
	struct task_struct *cut;
	/*
	 * Traced owner whose switch-in marker did not fit (the area is in its
	 * reserve): trbuf_hook_resume() writes it before the task returns to
	 * user mode; @owed_resumable: no rollback is due then.
	 */
	struct task_struct *owed;
	bool owed_resumable;
	bool closing;			/* in trbuf_close_for_markers() */
	/* tasks waiting for this CPU's next sub-buffer to be freed */
	wait_queue_head_t space_wq;
	struct trbuf_sb *sbs;
};

struct trbuf_counters {
	atomic64_t rollbacks, switches_in, markers, markers_lost;
	atomic64_t subbufs_full, overflow_waits, discarded, bad_cursor;
	atomic64_t traced, flushes;
};

/* The global buffer; every traced process maps it at TRBUF_MAP_ADDR. */
struct trbuf_buf {
	struct kref ref;
	void *mem;			/* data of all sub-buffers, no guards */
	size_t subbuf_size;
	unsigned int nr_subbufs;
	unsigned int nr_cpus;
	size_t map_size;
	struct trbuf_cpu *cpus;

	struct trbuf_marker *mk_mem;	/* marker areas of all sub-buffers */
	unsigned int mk_cap;		/* markers per sub-buffer */

	wait_queue_head_t consumer_wq;	/* full sub-buffers */
	struct mutex consumer_lock;
	struct file *consumer;
	pid_t consumer_tgid;		/* the process that attached it */
	bool consumer_gone;		/* no consumer: recycle, never wait */
	struct trbuf_counters cnt;
	struct work_struct free_work;
};

/* Tracing context shared by a traced task and the tasks it forks. */
struct trbuf_ctx {
	refcount_t ref;
	struct trbuf_buf *buf;
	u32 nr_ranges;
	struct trbuf_seq_range *ranges;
	struct work_struct free_work;
};

#define TRBUF_CNT(buf, name) atomic64_inc(&(buf)->cnt.name)

extern struct workqueue_struct *trbuf_wq;

/* User address of sub-buffer @i of @cpu in every mapping. */
static inline unsigned long trbuf_sb_addr(struct trbuf_buf *buf,
					  unsigned int cpu, unsigned int i)
{
	return TRBUF_MAP_ADDR + PAGE_SIZE +
	       (unsigned long)(cpu * buf->nr_subbufs + i) *
	       (buf->subbuf_size + PAGE_SIZE);
}

static inline unsigned int trbuf_cpu_of(struct trbuf_buf *buf,
					struct trbuf_cpu *c)
{
	return c - buf->cpus;
}

/* User address of the start of @c's active sub-buffer. */
static inline unsigned long trbuf_cur_start(struct trbuf_buf *buf,
					    struct trbuf_cpu *c)
{
	return trbuf_sb_addr(buf, trbuf_cpu_of(buf, c), c->cur);
}

/* Is @pos a position inside (or at the end of) @c's active sub-buffer? */
static inline bool trbuf_cursor_valid(struct trbuf_buf *buf,
				      struct trbuf_cpu *c, unsigned long pos)
{
	unsigned long start = trbuf_cur_start(buf, c);

	return pos >= start && pos <= start + buf->subbuf_size;
}

static inline struct trbuf_cpu *trbuf_this_cpu(struct trbuf_buf *buf)
{
	return &buf->cpus[smp_processor_id()];
}

/*
 * May a switch-in marker go into @c's active area?  The last quarter is
 * the reserve of markers that cannot wait (signal, fork, exit, rollback);
 * switch-ins beyond it are owed (trbuf_hook_resume()).
 */
static inline bool trbuf_mk_room(struct trbuf_buf *buf, struct trbuf_cpu *c)
{
	return c->sbs[c->cur].nr_mk + 2 <= buf->mk_cap - buf->mk_cap / 4;
}

/* trbuf_buffer.c */
int trbuf_switch_subbuf(struct trbuf_buf *buf, struct trbuf_cpu *c,
			unsigned long pos);
bool trbuf_next_free(struct trbuf_buf *buf, unsigned int cpu);
struct trbuf_buf *trbuf_buf_get_current(void);
void trbuf_buf_put(struct trbuf_buf *buf);
int trbuf_trace_me(struct trbuf_buf *buf, struct trbuf_trace_me __user *uarg);
int trbuf_untrace(void);
int trbuf_consumer_attach(struct trbuf_buf *buf, struct file *file,
			  struct trbuf_info *info);
void trbuf_consumer_detach(struct trbuf_buf *buf, struct file *file);
int trbuf_get_subbuf(struct trbuf_buf *buf, struct trbuf_subbuf *sb);
int trbuf_put_subbuf(struct trbuf_buf *buf, const struct trbuf_subbuf *sb);
unsigned int trbuf_flush(struct trbuf_buf *buf);
void trbuf_status(struct trbuf_buf *buf, struct trbuf_status *st);
void trbuf_unget_subbuf(struct trbuf_buf *buf, const struct trbuf_subbuf *sb);
int trbuf_get_markers(struct trbuf_buf *buf, struct trbuf_sb_markers *req);
bool trbuf_has_full(struct trbuf_buf *buf);
int trbuf_map(struct trbuf_buf *buf, struct vm_area_struct *vma);
vm_fault_t trbuf_fault(struct trbuf_buf *buf, struct vm_fault *vmf);

/* trbuf_markers.c */
struct trbuf_marker *trbuf_mk_push(struct trbuf_buf *buf, struct trbuf_cpu *c,
				   unsigned long pos, u32 type, struct task_struct *t,
				   struct pt_regs *regs, u64 arg, u32 arg2);
void trbuf_close_for_markers(struct trbuf_buf *buf, struct trbuf_cpu *c);
struct trbuf_cpu *trbuf_mk_wait_room(struct trbuf_buf *buf,
				     struct pt_regs *regs, unsigned int n,
				     unsigned long *flags);
void trbuf_wake(struct trbuf_buf *buf);

/* trbuf_rollback.c */
const struct trbuf_seq_range *trbuf_find_range(struct trbuf_ctx *ctx,
					       unsigned long ip);
void trbuf_rollback(struct trbuf_ctx *ctx, struct trbuf_cpu *c,
		    struct task_struct *t, struct pt_regs *regs);
int trbuf_ranges_check(const struct trbuf_seq_range *r, u32 n);

/* trbuf_consumer.c */
bool trbuf_flush_this_cpu(struct trbuf_buf *buf);

/* trbuf_hooks.c */
void trbuf_ctx_put(struct trbuf_ctx *ctx);
int trbuf_core_init(void);
void trbuf_core_exit(void);

/* trbuf_testcut.c */
void trbuf_testcut_init(void);
void trbuf_testcut_exit(void);

/* trbuf_sigframe.c: the registers and FPU state each signal frame saved */
void trbuf_sigframe_push(const struct pt_regs *regs);
u16 trbuf_sigframe_pop(const struct pt_regs *regs, u64 *changed);
void trbuf_sigframe_fork(struct task_struct *child);
void trbuf_sigframe_free(struct task_struct *t);
void trbuf_sigframe_exit(void);

#endif /* _TRBUF_CORE_H */
