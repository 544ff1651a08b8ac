// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/trbuf: open/ioctl/mmap/poll glue around the trace buffer core
 * (trbuf_core.c).  See include/uapi/linux/trbuf.h.
 *
 * Who may do what: opening needs CAP_SYS_ADMIN or the device node's group.
 * Any opener may TRACE_ME itself (ENOTCONN while no consumer is attached,
 * unless it asks for TRBUF_TRACE_DISCARD), UNTRACE and read STATUS.  The
 * first file to ask becomes the consumer (one at a time): only it may
 * GET/PUT sub-buffers, GET_MARKERS and FLUSH, and it maps the buffer
 * read-only.  Only traced tasks may map the buffer writable.
 */
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "trbuf_core.h"

/* Only root or members of the group owning the device node. */
static int trbuf_open(struct inode *inode, struct file *file)
{
	struct trbuf_buf *buf;

	if (!capable(CAP_SYS_ADMIN) && !in_group_p(inode->i_gid))
		return -EPERM;
	buf = trbuf_buf_get_current();
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	file->private_data = buf;
	return 0;
}

static int trbuf_release(struct inode *inode, struct file *file)
{
	struct trbuf_buf *buf = file->private_data;

	trbuf_consumer_detach(buf, file);
	trbuf_buf_put(buf);
	return 0;
}

static bool is_consumer(struct trbuf_buf *buf, struct file *file)
{
	return READ_ONCE(buf->consumer) == file;
}

static int same_file(const void *file, struct file *f, unsigned int fd)
{
	return f == file;
}

/*
 * A descriptor of @file is closed (close() or exit).  Once the process
 * that attached as the consumer holds none any more, the consumer is gone
 * even if children it forked still hold the file (they may be traced and
 * waiting for it to read: release would never come).
 */
static int trbuf_dev_flush(struct file *file, fl_owner_t id)
{
	struct trbuf_buf *buf = file->private_data;

	if (is_consumer(buf, file) &&
	    current->tgid == READ_ONCE(buf->consumer_tgid) &&
	    !iterate_fd(id, 0, same_file, file))
		trbuf_consumer_detach(buf, file);
	return 0;
}

static long trbuf_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg)
{
	struct trbuf_buf *buf = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct trbuf_sb_markers mk;
	struct trbuf_status st;
	struct trbuf_subbuf sb;
	struct trbuf_info info;
	int ret;

	switch (cmd) {
	case TRBUF_IOC_TRACE_ME:
		return trbuf_trace_me(buf, uarg);
	case TRBUF_IOC_UNTRACE:
		return trbuf_untrace();
	case TRBUF_IOC_CONSUMER:
		ret = trbuf_consumer_attach(buf, file, &info);
		if (!ret && copy_to_user(uarg, &info, sizeof(info)))
			ret = -EFAULT;
		return ret;
	case TRBUF_IOC_GET_SUBBUF:
		if (!is_consumer(buf, file))
			return -EPERM;
		ret = trbuf_get_subbuf(buf, &sb);
		if (!ret && copy_to_user(uarg, &sb, sizeof(sb))) {
			/* full again: the next GET_SUBBUF hands it out */
			trbuf_unget_subbuf(buf, &sb);
			ret = -EFAULT;
		}
		return ret;
	case TRBUF_IOC_GET_MARKERS:
		if (!is_consumer(buf, file))
			return -EPERM;
		if (copy_from_user(&mk, uarg, sizeof(mk)))
			return -EFAULT;
		ret = trbuf_get_markers(buf, &mk);
		if (!ret && copy_to_user(uarg, &mk, sizeof(mk)))
			ret = -EFAULT;
		return ret;
	case TRBUF_IOC_PUT_SUBBUF:
		if (!is_consumer(buf, file))
			return -EPERM;
		if (copy_from_user(&sb, uarg, sizeof(sb)))
			return -EFAULT;
		return trbuf_put_subbuf(buf, &sb);
	case TRBUF_IOC_FLUSH:
		if (!is_consumer(buf, file))
			return -EPERM;
		return trbuf_flush(buf);
	case TRBUF_IOC_STATUS:
		trbuf_status(buf, &st);
		if (copy_to_user(uarg, &st, sizeof(st)))
			return -EFAULT;
		return 0;
	default:
		return -ENOTTY;
	}
}

static __poll_t trbuf_poll(struct file *file, poll_table *wait)
{
	struct trbuf_buf *buf = file->private_data;

	poll_wait(file, &buf->consumer_wq, wait);
	if (trbuf_has_full(buf))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static void trbuf_vm_open(struct vm_area_struct *vma)
{
	struct trbuf_buf *buf = vma->vm_private_data;

	kref_get(&buf->ref);
}

static void trbuf_vm_close(struct vm_area_struct *vma)
{
	trbuf_buf_put(vma->vm_private_data);
}

static vm_fault_t trbuf_vm_fault(struct vm_fault *vmf)
{
	return trbuf_fault(vmf->vma->vm_private_data, vmf);
}

/* Splitting or moving the mapping would break the fixed layout. */
static int trbuf_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int trbuf_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct trbuf_vm_ops = {
	.open		= trbuf_vm_open,
	.close		= trbuf_vm_close,
	.fault		= trbuf_vm_fault,
	.may_split	= trbuf_vm_may_split,
	.mremap		= trbuf_vm_mremap,
};

static int trbuf_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct trbuf_buf *buf = file->private_data;
	struct trbuf_ctx *ctx = current->trbuf;
	int ret;

	if (vma->vm_start != TRBUF_MAP_ADDR || vma->vm_pgoff ||
	    vma->vm_end - vma->vm_start != buf->map_size ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (is_consumer(buf, file)) {
		/* the consumer reads; a writable map could forge the trace */
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		vma->vm_flags &= ~VM_MAYWRITE;
	} else if (!ctx || ctx->buf != buf) {
		return -EPERM;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP | VM_MIXEDMAP;
	vma->vm_ops = &trbuf_vm_ops;
	vma->vm_private_data = buf;
	ret = trbuf_map(buf, vma);
	if (ret)
		return ret;
	kref_get(&buf->ref);
	return 0;
}

/*
 * The buffer lives at TRBUF_MAP_ADDR in every process, never on top of an
 * existing mapping (MAP_FIXED_NOREPLACE semantics even for MAP_FIXED).
 */
static unsigned long trbuf_get_unmapped_area(struct file *file,
					     unsigned long addr,
					     unsigned long len,
					     unsigned long pgoff,
					     unsigned long flags)
{
	if (addr != TRBUF_MAP_ADDR || pgoff)
		return -EINVAL;
	if (find_vma_intersection(current->mm, addr, addr + len))
		return -EEXIST;
	return addr;
}

static const struct file_operations trbuf_fops = {
	.owner			= THIS_MODULE,
	.open			= trbuf_open,
	.flush			= trbuf_dev_flush,
	.release		= trbuf_release,
	.unlocked_ioctl		= trbuf_ioctl,
	.poll			= trbuf_poll,
	.mmap			= trbuf_mmap,
	.get_unmapped_area	= trbuf_get_unmapped_area,
	.llseek			= noop_llseek,
};

static struct miscdevice trbuf_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "trbuf",
	.fops	= &trbuf_fops,
	.mode	= 0660,
};

static int __init trbuf_init(void)
{
	int ret;

	ret = trbuf_core_init();
	if (ret)
		return ret;
	ret = misc_register(&trbuf_misc);
	if (ret)
		trbuf_core_exit();
	return ret;
}

static void __exit trbuf_exit(void)
{
	misc_deregister(&trbuf_misc);
	trbuf_core_exit();
}

module_init(trbuf_init);
module_exit(trbuf_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("aetrace global trace buffer /dev/trbuf");
