// SPDX-License-Identifier: MIT
/*
 * Kernel mode of the tracing runtime (docs/INTERNALS.md, mode 1): register
 * the calling thread with /dev/trbuf, passing the program's __ae_seqtab so
 * the kernel can roll back cut sequences, and map the global buffer at
 * TRBUF_MAP_ADDR.  On success the kernel has loaded r15 with this CPU's
 * cursor.  Freestanding: raw system calls only, r15 untouched.
 */
#include <linux/trbuf.h>
#include "sys.h"

extern const struct trbuf_seq_range __start___ae_seqtab[] __attribute__((weak));
extern const struct trbuf_seq_range __stop___ae_seqtab[] __attribute__((weak));

#define AE_O_RDWR	02
#define AE_O_CLOEXEC	02000000
#define AE_EEXIST	17
#define AE_ENOTCONN	107

int ae_trbuf_register_table(const struct trbuf_seq_range *tab,
			    unsigned long count);
int ae_trbuf_register(void);

/*
 * Register with an explicit sequence table (hand-written producers in
 * tests/kselftest use this directly).  Returns 0 with r15 loaded by the
 * kernel, or -errno (no device, not allowed, bad table, address taken,
 * -ENOTCONN: no consumer attached, with a warning on stderr) with the
 * thread left untraced.
 */
int ae_trbuf_register_table(const struct trbuf_seq_range *tab,
			    unsigned long count)
{
	struct trbuf_trace_me tm;
	long fd, ret, addr;

	fd = ae_sys3(__NR_open, "/dev/trbuf", AE_O_RDWR | AE_O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	tm.ranges = (unsigned long)tab;
	tm.count = count;
	tm.flags = 0;
	tm.map_size = 0;
	ret = ae_sys3(__NR_ioctl, fd, TRBUF_IOC_TRACE_ME, &tm);
	if (ret == -AE_ENOTCONN) {
		/* the README's contract: say why, the caller falls back */
		static const char msg[] = "aetrace: /dev/trbuf has no consumer "
			"(start bdump first): not tracing through the kernel\n";

		ae_sys3(__NR_write, 2, msg, sizeof(msg) - 1);
	}
	if (ret < 0)
		goto out_close;
	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, tm.map_size, AE_PROT_RW,
		       AE_MAP_SHARED | AE_MAP_FIXED_NOREPLACE, fd, 0);
	if (addr != (long)TRBUF_MAP_ADDR) {
		ret = addr < 0 ? addr : -AE_EEXIST;
		if (addr >= 0)
			ae_sys2(__NR_munmap, addr, tm.map_size);
		ae_sys3(__NR_ioctl, fd, TRBUF_IOC_UNTRACE, 0);
		goto out_close;
	}
	ret = 0;
out_close:
	/* The mapping keeps the buffer; no fd is left behind for the program. */
	ae_sys1(__NR_close, fd);
	return ret;
}

/* Register with the program's own sequence table (ld's section bounds). */
int ae_trbuf_register(void)
{
	unsigned long n = 0;

	if (__start___ae_seqtab && __stop___ae_seqtab)
		n = __stop___ae_seqtab - __start___ae_seqtab;
	return ae_trbuf_register_table(__start___ae_seqtab, n);
}
