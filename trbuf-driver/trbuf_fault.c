// SPDX-License-Identifier: GPL-2.0
/*
 * Faults on a mapping of the buffer (docs/ARCHITECTURE.md invariant 7):
 * data pages mapped again, overflow of a traced task onto a guard page
 * (close the sub-buffer, or sleep without mmap_lock until the consumer
 * frees one and retry the fault).
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/vmalloc.h>
#include <asm/ptrace.h>
#include "trbuf_core.h"

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
					trbuf_next_free(buf, cpu)))
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
				    trbuf_next_free(buf, cpu));
	else
		wait_event_interruptible(buf->cpus[cpu].space_wq,
					 trbuf_next_free(buf, cpu));
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
	r = trbuf_find_range(ctx, regs->ip);
	if (!r)
		return VM_FAULT_SIGBUS;

	local_irq_save(flags);
	c = trbuf_this_cpu(buf);
	cpu = trbuf_cpu_of(buf, c);
	raw_spin_lock(&c->lock);
	if (c->owner != current || !trbuf_cursor_valid(buf, c, regs->r15)) {
		/* r15 is not this CPU's cursor: a broken producer */
		raw_spin_unlock(&c->lock);
		local_irq_restore(flags);
		TRBUF_CNT(buf, bad_cursor);
		return VM_FAULT_SIGBUS;
	}
	regs->ip = r->start;
	guard = trbuf_cur_start(buf, c) + buf->subbuf_size;
	if (vmf->address < guard || vmf->address >= guard + PAGE_SIZE) {
		/* stale fault from before a migration or flush: retry */
		raw_spin_unlock(&c->lock);
		local_irq_restore(flags);
		return VM_FAULT_NOPAGE;
	}
	ret = trbuf_switch_subbuf(buf, c, regs->r15);
	if (!ret) {
		regs->r15 = c->cursor;
		trbuf_mk_push(buf, c, c->cursor, TRBUF_MK_SUBBUF, current, regs,
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
