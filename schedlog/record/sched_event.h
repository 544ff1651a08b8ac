/* SPDX-License-Identifier: MIT */
/*
 * sched_event.h - the BPF schedule log (`schedlog-record -o all.bin`):
 * the one contract between the BPF programs (schedlog_record.bpf.c), the
 * recorder that writes the file (schedlog_record.c) and its readers
 * (analysis/timeline.c, tests). See docs/FORMAT.md, "BPF schedule log".
 *
 * File: one struct sched_log_header, then struct sched_event records
 * (record_size bytes each) in ring-buffer order, the last one of a clean
 * stop being SCHED_EV_END. Little endian.
 */
#ifndef AETRACE_SCHED_EVENT_H
#define AETRACE_SCHED_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SCHED_LOG_MAGIC		0x4650424843534541ULL	/* "AESCHBPF" */
#define SCHED_LOG_VERSION	1
#define SCHED_COMM_LEN		16

/* Header flags. */
#define SCHED_LOG_COMPLETE	0x1	/* stopped cleanly, counters final */

/* Exit status of schedlog-record when BPF cannot be used on this kernel. */
#define SCHED_RECORD_EXIT_NOBPF	3

struct sched_log_header {
	__u64 magic;		/* SCHED_LOG_MAGIC */
	__u32 version;		/* SCHED_LOG_VERSION */
	__u32 record_size;	/* sizeof(struct sched_event) */
	__u32 nr_cpus;		/* possible CPUs of the recording machine */
	__u32 flags;		/* SCHED_LOG_* */
	__u64 start_ns;		/* CLOCK_MONOTONIC when recording began */
	__u64 end_ns;		/* CLOCK_MONOTONIC at the stop (0 until then) */
	__u64 events;		/* records written, END excluded */
	__u64 lost;		/* events the ring buffer had no room for */
	__u64 reserved;
};

enum sched_event_type {
	SCHED_EV_SWITCH		= 1,	/* prev leaves cpu, next runs */
	SCHED_EV_MIGRATE	= 2,	/* task moved: arg orig cpu, arg2 dest cpu */
	SCHED_EV_FORK		= 3,	/* task (parent) created task2 (child) */
	SCHED_EV_EXEC		= 4,	/* task exec'd; comm is the new one, arg the old tid */
	SCHED_EV_EXIT		= 5,	/* task exits; arg = exit code */
	SCHED_EV_WAKEUP		= 6,	/* task woken by task2; arg = target cpu */
	SCHED_EV_WAKEUP_NEW	= 7,	/* new task first woken; arg = target cpu */
	SCHED_EV_LOST		= 8,	/* arg events lost before this point */
	SCHED_EV_END		= 9,	/* clean stop; arg events, arg2 lost in all */
};

/*
 * One event. time_ns is bpf_ktime_get_ns(), CLOCK_MONOTONIC, the clock of
 * struct trbuf_marker.time_ns. pid is the tgid, tid the thread id (the
 * idle task of every CPU is pid 0 tid 0). For SWITCH, task is prev and
 * task2 next, arg is prev's state (0: runnable, i.e. preempted; else the
 * kernel's TASK_* bits), arg2 is 1 when the switch was a preemption.
 */
struct sched_event {
	__u64 time_ns;
	__u16 type;		/* enum sched_event_type */
	__u16 cpu;		/* CPU the event happened on */
	__u32 flags;		/* 0 */
	__s32 pid;		/* task */
	__s32 tid;
	__s32 pid2;		/* task2 (SWITCH next, FORK child, WAKEUP waker) */
	__s32 tid2;
	__u64 arg;
	__u64 arg2;
	char comm[SCHED_COMM_LEN];
	char comm2[SCHED_COMM_LEN];
};

#endif /* AETRACE_SCHED_EVENT_H */
