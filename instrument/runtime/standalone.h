/* SPDX-License-Identifier: MIT */
/*
 * standalone.h - the control page aerun shares with the tracing runtime.
 *
 * aerun (instrument/aerun) passes a memfd as fd AE_STANDALONE_FD to the
 * traced program. Page 0 of the memfd is struct ae_standalone_ctl; the
 * sub-buffers follow at data_offset, back to back (sub-buffer i at
 * data_offset + i * subbuf_size). The runtime maps sub-buffer i at
 * TRBUF_MAP_ADDR + i * (subbuf_size + guard_size), with guard_size bytes of
 * PROT_NONE after each, so an overflowing store faults and aerun (the
 * ptrace tracer) switches sub-buffers (docs/ARCHITECTURE.md invariant 7).
 *
 * A program started by a traced task (fork + exec) has no fd 1023: its
 * runtime asks aerun through two ioctl calls on fd 1023 that aerun's seccomp
 * filter hands to it (without aerun they fail with EBADF and change
 * nothing): AE_STANDALONE_IOC_ATTACH fills a buffer of
 * AE_STANDALONE_PATH_MAX bytes with a path that opens the memfd
 * (/proc/<aerun>/fd/<n>) and returns 0; after mapping, AE_STANDALONE_IOC_CURSOR
 * returns the task's initial r15 (aerun places each traced thread in its own
 * region, see instrument/aerun/aerun.h) or -errno. A runtime that cannot
 * open the path (its credentials changed: setuid to another user before
 * the exec) says so with AE_STANDALONE_IOC_DETACH (returns 0): aerun leaves
 * it untraced, as a program not built with aecc, and it runs with the
 * discard buffer.
 *
 * Only plain fixed-size integers: the runtime is freestanding.
 */
#ifndef AE_STANDALONE_H
#define AE_STANDALONE_H

#include <linux/types.h>

#define AE_STANDALONE_FD	1023
#define AE_STANDALONE_MAGIC	0x4e555245u	/* "ERUN" little endian */
#define AE_STANDALONE_VERSION	1
#define AE_STANDALONE_IOC_ATTACH	0x41450001u
#define AE_STANDALONE_IOC_CURSOR	0x41450002u
#define AE_STANDALONE_IOC_DETACH	0x41450003u
#define AE_STANDALONE_PATH_MAX		64

struct ae_standalone_ctl {
	__u32 magic;		/* AE_STANDALONE_MAGIC */
	__u32 version;		/* AE_STANDALONE_VERSION */
	__u32 nr_subbufs;
	__u32 subbuf_size;	/* bytes, multiple of the page size */
	__u32 guard_size;	/* bytes of PROT_NONE after each sub-buffer */
	__u32 pad;
	__u64 data_offset;	/* memfd offset of sub-buffer 0 */
	__u64 map_addr;		/* where the runtime maps them: TRBUF_MAP_ADDR */
	/* Written by the runtime once mapped (aerun checks it at exit). */
	__u64 mapped_addr;	/* 0 until mapped */
	/* The first program's pid: fd 1023 is for it alone; another process
	 * that inherited it (through an uninstrumented first program) closes
	 * it and attaches like any exec'd program. 0: no check. */
	__u32 first_pid;
	__u32 pad2;
};

/* Offset of a sub-buffer's first byte in the traced process. */
static inline __u64 ae_standalone_subbuf_addr(const struct ae_standalone_ctl *c,
					      __u32 i)
{
	return c->map_addr + (__u64)i * (c->subbuf_size + c->guard_size);
}

#endif /* AE_STANDALONE_H */
