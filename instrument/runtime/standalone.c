// SPDX-License-Identifier: MIT
/*
 * standalone.c - map aerun's sub-buffers (fd AE_STANDALONE_FD) at
 * TRBUF_MAP_ADDR with PROT_NONE guard pages, then close the fd so the
 * program sees the fd table of an untraced run.
 */
#include <linux/trbuf.h>
#include "sys.h"
#include "standalone.h"

unsigned long ae_standalone_setup(void)
{
	struct ae_standalone_ctl ctl;
	unsigned long span, addr, stride;
	long r;
	__u32 i;

	if (ae_sys2(__NR_fcntl, AE_STANDALONE_FD, AE_F_GETFD) < 0)
		return 0;
	r = ae_sys4(__NR_pread64, AE_STANDALONE_FD, &ctl, sizeof(ctl), 0);
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
			       AE_STANDALONE_FD,
			       ctl.data_offset + (unsigned long)i * ctl.subbuf_size);
		if (addr != want)
			ae_die("aetrace runtime: cannot map an aerun sub-buffer\n");
	}
	ctl.mapped_addr = TRBUF_MAP_ADDR;
	ae_sys4(__NR_pwrite64, AE_STANDALONE_FD, &ctl, sizeof(ctl), 0);
	ae_sys1(__NR_close, AE_STANDALONE_FD);
	return TRBUF_MAP_ADDR;
}
