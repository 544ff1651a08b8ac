// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer lifetime: the global buffer (per-CPU rings of sub-buffers, their
 * marker areas), its allocation from the module parameters, switching a
 * CPU to its next sub-buffer, and the mapping of its data pages.
 *
 * Locking: each CPU's state is changed only on that CPU, with interrupts
 * off, under its raw lock (the consumer takes the same lock from any CPU
 * to change sub-buffer states).  The cursor lives in the user r15 of the
 * CPU's owner task while one runs, else in trbuf_cpu::cursor.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
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

static DEFINE_MUTEX(trbuf_cur_lock);
static struct trbuf_buf *trbuf_cur;	/* buffer new users attach to */

/**
 * trbuf_switch_subbuf - close @c's active sub-buffer, activate the next
 * @buf: the buffer
 * @c: this CPU's state, its lock held, interrupts off
 * @pos: end of the committed data (a pending marker close wins)
 *
 * Without a consumer, unread sub-buffers are recycled (counted discarded).
 *
 * Return: 0, or -EAGAIN in lossless mode when the next one is not free.
 */
int trbuf_switch_subbuf(struct trbuf_buf *buf, struct trbuf_cpu *c,
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
	sb->len = pos - trbuf_cur_start(buf, c);
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
	c->cursor = trbuf_cur_start(buf, c);
	return 0;
}

/**
 * trbuf_next_free - may @cpu switch to its next sub-buffer?
 * @buf: the buffer
 * @cpu: the CPU
 *
 * Return: true if its next sub-buffer is free or nobody consumes.
 */
bool trbuf_next_free(struct trbuf_buf *buf, unsigned int cpu)
{
	struct trbuf_cpu *c = &buf->cpus[cpu];
	unsigned int next = (READ_ONCE(c->cur) + 1) % buf->nr_subbufs;

	return READ_ONCE(c->sbs[next].state) == TRBUF_SB_FREE ||
	       READ_ONCE(buf->consumer_gone);
}

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
		c->cursor = trbuf_sb_addr(buf, cpu, 0);
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
			unsigned long uaddr = trbuf_sb_addr(buf, cpu, i);
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
