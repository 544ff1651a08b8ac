// SPDX-License-Identifier: GPL-2.0
/*
 * schedlog_record.bpf.c - every scheduler event of the machine into one BPF
 * ring buffer: context switches (traced or not, kernel threads and idle
 * included), migrations, fork/exec/exit, wakeups. BTF-typed tracepoints
 * (tp_btf: no tracefs needed), CO-RE against the running kernel's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sched_event.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; 8 MiB unless told otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} rb SEC(".maps");

/* Events dropped because the ring buffer was full (read by user space). */
__u64 lost;

/*
 * Wake the reader only when the buffer is a quarter full: a wakeup per
 * event would make the reader's own switches most of the log.
 */
static __always_inline void submit(struct sched_event *e)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);

	bpf_ringbuf_submit(e, avail > size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

static __always_inline struct sched_event *reserve(__u16 type)
{
	struct sched_event *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return NULL;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->flags = 0;
	e->pid = e->tid = e->pid2 = e->tid2 = 0;
	e->arg = e->arg2 = 0;
	return e;
}

static __always_inline void task1(struct sched_event *e, struct task_struct *t)
{
	e->pid = BPF_CORE_READ(t, tgid);
	e->tid = BPF_CORE_READ(t, pid);
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
}

static __always_inline void task2(struct sched_event *e, struct task_struct *t)
{
	e->pid2 = BPF_CORE_READ(t, tgid);
	e->tid2 = BPF_CORE_READ(t, pid);
	BPF_CORE_READ_STR_INTO(&e->comm2, t, comm);
}

static __always_inline void no_task2(struct sched_event *e)
{
	__builtin_memset(e->comm2, 0, sizeof(e->comm2));
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct sched_event *e = reserve(SCHED_EV_SWITCH);

	if (!e)
		return 0;
	task1(e, prev);
	task2(e, next);
	e->arg = prev_state;
	e->arg2 = preempt;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	struct sched_event *e = reserve(SCHED_EV_MIGRATE);

	if (!e)
		return 0;
	task1(e, p);
	no_task2(e);
	e->arg = BPF_CORE_READ(p, thread_info.cpu);
	e->arg2 = dest_cpu;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sched_event *e = reserve(SCHED_EV_FORK);

	if (!e)
		return 0;
	task1(e, parent);
	task2(e, child);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid)
{
	struct sched_event *e = reserve(SCHED_EV_EXEC);

	if (!e)
		return 0;
	task1(e, p);
	no_task2(e);
	e->arg = old_pid;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct sched_event *e = reserve(SCHED_EV_EXIT);

	if (!e)
		return 0;
	task1(e, p);
	no_task2(e);
	e->arg = (__u32)BPF_CORE_READ(p, exit_code);
	submit(e);
	return 0;
}

static __always_inline int wakeup(struct task_struct *p, __u16 type)
{
	struct sched_event *e = reserve(type);

	if (!e)
		return 0;
	task1(e, p);
	task2(e, (struct task_struct *)bpf_get_current_task_btf());
	e->arg = BPF_CORE_READ(p, thread_info.cpu);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	return wakeup(p, SCHED_EV_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	return wakeup(p, SCHED_EV_WAKEUP_NEW);
}
