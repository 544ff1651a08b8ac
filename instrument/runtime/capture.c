// SPDX-License-Identifier: MIT
/*
 * capture.c - in-process capture to a raw file, for running a traced
 * program under another tool that observes it (valgrind lackey), where
 * neither aerun nor /dev/trbuf can be used: AE_CAPTURE=FILE in the
 * environment selects it. One 256 MiB buffer (not pre-faulted), no
 * overflow handling (a full buffer faults on its guard page); the
 * instrumented C library calls __ae_exit_hook at the entry of _Exit, which
 * writes the file: struct ae_capture_hdr, then the witness bytes.
 */
#include <linux/trbuf.h>
#include "sys.h"
#include <aetrace/capture.h>

#define AE_CAPTURE_SIZE		(256UL << 20)
#define AE_CAPTURE_FD		1021
#define AE_O_WRONLY		01
#define AE_O_CREAT		0100
#define AE_O_TRUNC		01000
#define AE_O_CLOEXEC		02000000

static int ae_prefix(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return 1;
}

unsigned long ae_capture_setup(unsigned long *entry_sp)
{
	unsigned long argc = entry_sp[0];
	char **envp = (char **)(entry_sp + 1 + argc + 1);
	const char *path = 0;
	unsigned long addr;
	long fd;

	for (; *envp; envp++)
		if (ae_prefix(*envp, "AE_CAPTURE="))
			path = *envp + 11;
	if (!path)
		return 0;
	fd = ae_sys4(__NR_open, path, AE_O_WRONLY | AE_O_CREAT | AE_O_TRUNC | AE_O_CLOEXEC, 0644, 0);
	if (fd < 0)
		ae_die("aetrace runtime: AE_CAPTURE: cannot create the capture file\n");
	if (ae_sys3(__NR_dup3, fd, AE_CAPTURE_FD, AE_O_CLOEXEC) != AE_CAPTURE_FD)
		ae_die("aetrace runtime: AE_CAPTURE: cannot move the capture fd\n");
	ae_sys1(__NR_close, fd);
	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, AE_CAPTURE_SIZE + AE_PAGE_SIZE, AE_PROT_NONE,
		       AE_MAP_PRIVATE | AE_MAP_ANONYMOUS | AE_MAP_NORESERVE |
		       AE_MAP_FIXED_NOREPLACE, -1, 0);
	if (addr != TRBUF_MAP_ADDR ||
	    ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, AE_CAPTURE_SIZE, AE_PROT_RW,
		    AE_MAP_PRIVATE | AE_MAP_ANONYMOUS | AE_MAP_FIXED | AE_MAP_NORESERVE,
		    -1, 0) != (long)TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: AE_CAPTURE: cannot map the capture buffer\n");
	return TRBUF_MAP_ADDR;
}

static void ae_write_all(const void *p, unsigned long n)
{
	const char *c = p;

	while (n) {
		long w = ae_sys3(__NR_write, AE_CAPTURE_FD, c, n);

		if (w <= 0)
			ae_die("aetrace runtime: AE_CAPTURE: write failed\n");
		c += w;
		n -= w;
	}
}

/* Called (through __ae_exit_hook) with the final cursor and the address
 * of _Exit's first original instruction. */
void ae_capture_exit(unsigned long r15, unsigned long exit_entry)
{
	struct ae_capture_hdr h = {
		.magic = AE_CAPTURE_MAGIC,
		.len = r15 - TRBUF_MAP_ADDR,
		.exit_entry = exit_entry,
	};

	/* the runtime keeps no data: capture mode is "fd 1021 is open" */
	if (ae_sys2(__NR_fcntl, AE_CAPTURE_FD, AE_F_GETFD) < 0)
		return;
	ae_write_all(&h, sizeof(h));
	ae_write_all((const void *)TRBUF_MAP_ADDR, h.len);
	ae_sys1(__NR_close, AE_CAPTURE_FD);
}
