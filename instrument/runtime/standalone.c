// SPDX-License-Identifier: MIT
/*
 * standalone.c - map aerun's sub-buffers at TRBUF_MAP_ADDR with PROT_NONE
 * guard pages. The first program gets the memfd as fd AE_STANDALONE_FD and
 * closes it once mapped, so it sees the fd table of an untraced run; a
 * program exec'd by a traced task asks aerun for the memfd and its cursor
 * (standalone.h).
 */
#include <linux/trbuf.h>
#include "sys.h"
#include "standalone.h"

#define AE_O_RDWR	02
#define AE_O_CLOEXEC	02000000

/* Maps the sub-buffers of the memfd @fd; returns TRBUF_MAP_ADDR, or 0 when
 * @fd is not aerun's control page (dies on a broken one). */
static unsigned long ae_standalone_map(long fd)
{
	struct ae_standalone_ctl ctl;
	unsigned long span, addr, stride;
	long r;
	__u32 i;

	r = ae_sys4(__NR_pread64, fd, &ctl, sizeof(ctl), 0);
	if (r != sizeof(ctl) || ctl.magic != AE_STANDALONE_MAGIC)
		return 0;	/* fd 1023 is not aerun's: leave it alone */
	if (ctl.version != AE_STANDALONE_VERSION)
		ae_die("aetrace runtime: aerun control page has an unknown version\n");
	if (!ctl.nr_subbufs || !ctl.subbuf_size ||
	    ctl.subbuf_size % AE_PAGE_SIZE || ctl.guard_size % AE_PAGE_SIZE ||
	    !ctl.guard_size || ctl.map_addr != TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: aerun control page has a bad geometry\n");

	stride = (unsigned long)ctl.subbuf_size + ctl.guard_size;
	span = stride * ctl.nr_subbufs;
	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, span, AE_PROT_NONE,
		       AE_MAP_PRIVATE | AE_MAP_ANONYMOUS | AE_MAP_NORESERVE |
		       AE_MAP_FIXED_NOREPLACE, -1, 0);
	if (addr != TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: cannot reserve the trace buffer at 0x500000000000\n");
	for (i = 0; i < ctl.nr_subbufs; i++) {
		unsigned long want = TRBUF_MAP_ADDR + i * stride;

		addr = ae_sys6(__NR_mmap, want, ctl.subbuf_size, AE_PROT_RW,
			       AE_MAP_SHARED | AE_MAP_FIXED | AE_MAP_POPULATE,
			       fd, ctl.data_offset + (unsigned long)i * ctl.subbuf_size);
		if (addr != want)
			ae_die("aetrace runtime: cannot map an aerun sub-buffer\n");
	}
	ctl.mapped_addr = TRBUF_MAP_ADDR;
	ae_sys4(__NR_pwrite64, fd, &ctl, sizeof(ctl), 0);
	return TRBUF_MAP_ADDR;
}

/* A program exec'd under aerun: returns its r15, or 0 without aerun or
 * when aerun's buffer cannot be opened (then aerun leaves it untraced). */
static unsigned long ae_standalone_attach(void)
{
	unsigned long path[AE_STANDALONE_PATH_MAX / sizeof(unsigned long)] = { 0 };
	long fd, r15;

	if (ae_sys3(__NR_ioctl, AE_STANDALONE_FD, AE_STANDALONE_IOC_ATTACH, path))
		return 0;	/* not under aerun: EBADF */
	((char *)path)[AE_STANDALONE_PATH_MAX - 1] = 0;
	fd = ae_sys3(__NR_open, path, AE_O_RDWR | AE_O_CLOEXEC, 0);
	if (fd < 0) {
		/* not ours to open (another user): run untraced */
		ae_sys3(__NR_ioctl, AE_STANDALONE_FD, AE_STANDALONE_IOC_DETACH, 0);
		return 0;
	}
	if (!ae_standalone_map(fd))
		ae_die("aetrace runtime: aerun's trace buffer has no control page\n");
	ae_sys1(__NR_close, fd);
	r15 = ae_sys3(__NR_ioctl, AE_STANDALONE_FD, AE_STANDALONE_IOC_CURSOR, 0);
	if (r15 < (long)TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: aerun gave no trace cursor\n");
	return r15;
}

/* Returns the initial r15 under aerun, 0 when not run by aerun. */
unsigned long ae_standalone_setup(void)
{
	struct ae_standalone_ctl ctl;
	unsigned long addr;

	if (ae_sys2(__NR_fcntl, AE_STANDALONE_FD, AE_F_GETFD) < 0)
		return ae_standalone_attach();
	if (ae_sys4(__NR_pread64, AE_STANDALONE_FD, &ctl, sizeof(ctl), 0) == sizeof(ctl) &&
	    ctl.magic == AE_STANDALONE_MAGIC && ctl.first_pid &&
	    ctl.first_pid != (__u32)ae_sys0(__NR_getpid)) {
		/* aerun's fd, inherited through an uninstrumented program */
		ae_sys1(__NR_close, AE_STANDALONE_FD);
		return ae_standalone_attach();
	}
	addr = ae_standalone_map(AE_STANDALONE_FD);
	if (addr)
		ae_sys1(__NR_close, AE_STANDALONE_FD);
	return addr;
}
