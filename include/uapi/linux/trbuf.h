/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * trbuf.h - the one interface shared by the aetrace kernel side
 * (kernel-patches/, trbuf-driver/) and user side (instrument/, bdump/,
 * analysis/). See docs/FORMAT.md for the on-disk use of these records.
 */
#ifndef _UAPI_LINUX_TRBUF_H
#define _UAPI_LINUX_TRBUF_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Every traced process maps the global buffer at this fixed address. */
#define TRBUF_MAP_ADDR		0x500000000000ULL

/*
 * Instrumentation-sequence range: [start, end) user addresses of one
 * restartable sequence; the commit `lea N(%r15),%r15` is the last
 * instruction inside the range. A binary carries these sorted by start in
 * its section __ae_seqtab (32-bit fields: programs are static, non-PIE).
 */
struct trbuf_seq_range {
	__u32 start;
	__u32 end;
};

/* Schedule marker types (invariant 5). */
enum trbuf_marker_type {
	TRBUF_MK_START		= 1,	/* task starts being traced */
	TRBUF_MK_SWITCH_IN	= 2,	/* task resumes on cpu at ip */
	TRBUF_MK_SWITCH_OUT	= 3,	/* task leaves cpu (optional) */
	TRBUF_MK_SIGNAL		= 4,	/* handler arg, signal arg2; ip = interrupted */
	TRBUF_MK_SIGRETURN	= 5,	/* back from handler; ip = resumed ip */
	TRBUF_MK_FORK		= 6,	/* arg = child tid, arg2 = clone flags */
	TRBUF_MK_EXEC		= 7,	/* task exec'd: its old image is done */
	TRBUF_MK_EXIT		= 8,	/* task exited, arg = exit code */
	TRBUF_MK_SUBBUF		= 9,	/* cpu moved to sub-buffer seq */
	TRBUF_MK_STOP		= 10,	/* tracing stopped (untrace, consumer gone) */
	TRBUF_MK_ROLLBACK	= 11,	/* ip was rewound from arg to ip */
};

/*
 * SIGRETURN markers: with TRBUF_MKF_CTX_CHECKED in flags, the producer
 * compared the registers the handler's frame gives back at the sigreturn
 * with those of the interrupted code at delivery, and arg says what the
 * handler changed (bit r: general register r in x86 encoding order, %rax
 * 0 to %r14 14; %r15 is the cursor and never counts); with
 * TRBUF_MKF_CTX_FULL too, also the flags and the x87/SSE/AVX state
 * (TRBUF_CTX_STATUS: a status flag, TRBUF_CTX_DF: the direction flag,
 * TRBUF_CTX_VECTOR: the vector or x87 state, PKRU aside); with
 * TRBUF_MKF_CTX_FLAGS instead, the flags but not the vector state (a
 * trbuf.ko that could not read it, or one built before the kernel's
 * sigreturn hook came after the FPU restore). Without them nothing was
 * compared, and arg is 0 (the frame's r15, from an older trbuf.ko).
 */
#define TRBUF_MKF_CTX_CHECKED	0x1
#define TRBUF_MKF_CTX_FULL	0x2
#define TRBUF_MKF_CTX_FLAGS	0x4
#define TRBUF_CTX_STATUS	(1ULL << 16)	/* CF, PF, ZF, SF, OF */
#define TRBUF_CTX_DF		(1ULL << 17)
#define TRBUF_CTX_VECTOR	(1ULL << 18)

/* SUBBUF markers: arg2 says why the CPU moved to a new sub-buffer. */
#define TRBUF_SUBBUF_FULL	0	/* a traced store hit the guard page */
#define TRBUF_SUBBUF_FLUSH	1	/* TRBUF_IOC_FLUSH */
#define TRBUF_SUBBUF_MARKERS	2	/* the marker area was half full */

/*
 * One schedule marker: where in the buffer (cpu, seq, offset) an event
 * happened, to which task, and where the task's user code resumes.
 * Markers live in kernel memory (traced tasks cannot forge them) and travel
 * with the sub-buffer (cpu, seq) they point into: TRBUF_IOC_GET_MARKERS
 * hands them out with that sub-buffer, in event order.
 */
struct trbuf_marker {
	__u64 time_ns;		/* CLOCK_MONOTONIC */
	__u32 type;		/* enum trbuf_marker_type */
	__u16 cpu;
	__u16 flags;
	__s32 pid;		/* tgid */
	__s32 tid;
	__u64 seq;		/* sub-buffer sequence number on cpu */
	__u32 offset;		/* byte offset in that sub-buffer */
	__u32 arg2;
	__u64 ip;		/* user ip at which the task resumes */
	__u64 sp;		/* user sp at that point */
	__u64 arg;		/* type specific */
	__u64 cx;		/* user %rcx (a rep at ip: iterations left) */
};

#define TRBUF_IOC_MAGIC		'T'

/* Most sequence ranges one TRACE_ME may register. */
#define TRBUF_MAX_RANGES	(1U << 20)

/* TRACE_ME flags: trace even while no consumer is attached (bytes dropped). */
#define TRBUF_TRACE_DISCARD	1U

/**
 * struct trbuf_trace_me - argument of %TRBUF_IOC_TRACE_ME
 * @ranges: user pointer to @count &struct trbuf_seq_range, sorted by
 *	start, non-overlapping, each start < end (the binary's __ae_seqtab)
 * @count: number of ranges, at most %TRBUF_MAX_RANGES (0: no rollback)
 * @flags: 0 or %TRBUF_TRACE_DISCARD
 * @map_size: out: length to mmap at %TRBUF_MAP_ADDR
 */
struct trbuf_trace_me {
	__u64 ranges;
	__u32 count;
	__u32 flags;
	__u64 map_size;
};

/**
 * struct trbuf_info - geometry of the global buffer (%TRBUF_IOC_CONSUMER)
 * @map_size: length to mmap at %TRBUF_MAP_ADDR
 * @subbuf_size: bytes of one sub-buffer (a multiple of the page size)
 * @nr_cpus: number of per-CPU regions
 * @nr_subbufs: sub-buffers in each per-CPU ring
 * @subbuf_markers: capacity of a sub-buffer's marker area
 *
 * Sub-buffer i of cpu c starts at offset
 * PAGE + (c * nr_subbufs + i) * (subbuf_size + PAGE) of the mapping; a
 * guard page precedes every sub-buffer and one ends the mapping.
 */
struct trbuf_info {
	__u64 map_size;
	__u32 subbuf_size;
	__u32 nr_cpus;
	__u32 nr_subbufs;
	__u32 subbuf_markers;
};

/**
 * struct trbuf_subbuf - one full sub-buffer handed to the consumer
 * @cpu: CPU whose region holds it
 * @index: position in that CPU's ring (give it back to PUT_SUBBUF)
 * @seq: sequence number of the sub-buffer on @cpu (0, 1, 2, ...)
 * @len: committed length in bytes
 * @offset: byte offset of its first byte in the consumer's mapping
 */
struct trbuf_subbuf {
	__u32 cpu;
	__u32 index;
	__u64 seq;
	__u64 len;
	__u64 offset;
};

/**
 * struct trbuf_sb_markers - argument of %TRBUF_IOC_GET_MARKERS
 * @cpu: in: as returned by GET_SUBBUF
 * @index: in: as returned by GET_SUBBUF
 * @seq: in: as returned by GET_SUBBUF
 * @markers: in: user pointer to @max &struct trbuf_marker
 * @start: in: index of the first marker to copy
 * @max: in: capacity of @markers
 * @count: out: markers copied
 * @total: out: markers the sub-buffer carries
 */
struct trbuf_sb_markers {
	__u32 cpu;
	__u32 index;
	__u64 seq;
	__u64 markers;
	__u32 start;
	__u32 max;
	__u32 count;
	__u32 total;
};

/**
 * struct trbuf_status - counters of the current buffer (%TRBUF_IOC_STATUS)
 * @rollbacks: user ips rewound to a sequence start
 * @switches_in: switch-ins of traced tasks
 * @markers: markers written
 * @markers_lost: markers dropped: a sub-buffer's marker area was full while
 *	no sub-buffer of its CPU was free (see docs/INTERNALS.md); 0 in
 *	every run that does not stall the consumer for that long
 * @subbufs_full: sub-buffers closed and handed to the consumer
 * @overflow_waits: times a task slept for a free sub-buffer
 * @discarded: sub-buffers recycled unread (no consumer any more)
 * @bad_cursor: switch-outs whose r15 was outside the CPU's sub-buffer
 * @traced: tasks traced now
 * @flushes: FLUSH requests
 */
struct trbuf_status {
	__u64 rollbacks;
	__u64 switches_in;
	__u64 markers;
	__u64 markers_lost;
	__u64 subbufs_full;
	__u64 overflow_waits;
	__u64 discarded;
	__u64 bad_cursor;
	__u64 traced;
	__u64 flushes;
};

/*
 * TRBUF_IOC_TRACE_ME: trace the calling thread: copy and validate the
 * sequence table, set user r15 to this CPU's cursor on return.  Then mmap
 * map_size bytes at TRBUF_MAP_ADDR (MAP_SHARED, PROT_READ|PROT_WRITE).
 * Errors: EFAULT, EINVAL (bad table or flags), E2BIG (too many ranges),
 * EBUSY (already traced), ENOMEM, ENOTCONN (no consumer is attached and
 * flags lacks TRBUF_TRACE_DISCARD: nothing would record the trace).
 */
#define TRBUF_IOC_TRACE_ME	_IOWR(TRBUF_IOC_MAGIC, 1, struct trbuf_trace_me)
/* TRBUF_IOC_UNTRACE: commit r15, stop tracing the calling thread. */
#define TRBUF_IOC_UNTRACE	_IO(TRBUF_IOC_MAGIC, 2)
/*
 * TRBUF_IOC_CONSUMER: this open file becomes the consumer (EBUSY if any).
 * Only the consumer may GET/PUT sub-buffers, GET_MARKERS, FLUSH and map
 * the buffer read-only; only traced tasks may map it read-write.
 */
#define TRBUF_IOC_CONSUMER	_IOR(TRBUF_IOC_MAGIC, 3, struct trbuf_info)
/*
 * TRBUF_IOC_GET_SUBBUF: take the oldest full sub-buffer of some CPU
 * (EAGAIN: none); poll() reports POLLIN while one is full.  A sub-buffer
 * may be empty (len 0) when it carries only markers.
 */
#define TRBUF_IOC_GET_SUBBUF	_IOR(TRBUF_IOC_MAGIC, 4, struct trbuf_subbuf)
/* TRBUF_IOC_PUT_SUBBUF: give a sub-buffer from GET_SUBBUF back (cpu, index). */
#define TRBUF_IOC_PUT_SUBBUF	_IOW(TRBUF_IOC_MAGIC, 5, struct trbuf_subbuf)
/*
 * TRBUF_IOC_FLUSH: close every CPU's non-empty sub-buffer now (via IPI).
 * Returns how many CPUs kept a non-empty one open: their next sub-buffer
 * is not free (still full or handed out), or the CPU is offline, or the
 * traced task running there has no valid cursor.  A consumer that must
 * take every byte (at its end) puts its sub-buffers back and flushes
 * again until 0.
 */
#define TRBUF_IOC_FLUSH		_IO(TRBUF_IOC_MAGIC, 6)
/* TRBUF_IOC_STATUS: read the counters. */
#define TRBUF_IOC_STATUS	_IOR(TRBUF_IOC_MAGIC, 7, struct trbuf_status)
/*
 * TRBUF_IOC_GET_MARKERS: copy the markers of a sub-buffer handed out by
 * GET_SUBBUF (before PUT_SUBBUF); EINVAL if it is not handed out.  Call
 * again with a larger start while start + count < total.  (Number 8 was
 * the 64-byte markers' copy, before cx: a consumer and a driver built
 * for different sizes get ENOTTY, not each other's records.)
 */
#define TRBUF_IOC_GET_MARKERS	_IOWR(TRBUF_IOC_MAGIC, 9, struct trbuf_sb_markers)

#endif /* _UAPI_LINUX_TRBUF_H */
