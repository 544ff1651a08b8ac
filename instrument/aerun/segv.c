// SPDX-License-Identifier: MIT
/*
 * segv.c - the program's SIGSEGV action, which aerun's overflow faults
 * must leave as they found it. The kernel forces a fault's SIGSEGV: where
 * the faulting thread blocks it or the process ignores it, the action is
 * first reset to the default for the whole process and the signal
 * unblocked in the thread (force_sig_info_to_task()). aerun swallows the
 * signal at its overflow stop, but not that reset, which left a program
 * whose worker threads block every signal without its own SIGSEGV
 * handler. So aerun follows each process's SIGSEGV action (its seccomp
 * filter traps rt_sigaction(SIGSEGV) through the x86-64 entry; fork
 * copies it, exec resets it, a delivery resets an SA_RESETHAND one) and,
 * at an overflow stop that finds it reset, sets it again from inside the
 * thread, first thing: until then the process runs with the default
 * action, and another thread's fault there kills it (a window no
 * restoring closes). The thread's block is put back where the reset
 * says it was blocked: a handler is reset only then, and only when no
 * other thread of the process is stopped at a fault of its own, which
 * may be the one that reset it (a block is never given to a thread that
 * did not have it; an ignored signal is reset blocked or not, so its
 * block cannot be told).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "aerun.h"

/* A process whose SIGSEGV action is not the default. */
struct aerun_segv {
	pid_t pid;			/* thread group id */
	uint64_t act[4];		/* struct kernel_sigaction: handler,
					 * flags, restorer, mask */
	uint64_t insn;			/* a syscall instruction of its code,
					 * 0 not looked for yet */
	struct aerun_segv *next;
};

#define SEGV_BIT	(1ull << (SIGSEGV - 1))
#define SEGV_DFL	((uint64_t)(uintptr_t)SIG_DFL)
#define SEGV_IGN	((uint64_t)(uintptr_t)SIG_IGN)
#define SEGV_RESETHAND	0x80000000ull	/* SA_RESETHAND */

/* The action SIG_IGN, which exec and CLONE_CLEAR_SIGHAND keep */
static const uint64_t segv_ign[4] = { SEGV_IGN };

static struct aerun_segv **find(struct aerun *a, pid_t pid)
{
	struct aerun_segv **p = &a->segv;

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

/* pid's action becomes act (NULL: the default), in code with a syscall
 * instruction at insn (0: unknown). Returns 0 or -ENOMEM. */
static int set_act(struct aerun *a, pid_t pid, const uint64_t *act, uint64_t insn)
{
	struct aerun_segv **p = find(a, pid), *s = *p;

	if (!act || act[0] == SEGV_DFL) {
		if (s) {
			*p = s->next;
			free(s);
		}
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->pid = pid;
		*p = s;
	}
	memcpy(s->act, act, sizeof(s->act));
	s->insn = insn;
	return 0;
}

int aerun_proc_sigs(pid_t tid, uint64_t *cgt, uint64_t *ign)
{
	char path[64], line[256];
	unsigned long long v;
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (got != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigCgt: %llx", &v) == 1) {
			*cgt = v;
			got |= 1;
		} else if (sscanf(line, "SigIgn: %llx", &v) == 1) {
			*ign = v;
			got |= 2;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -1;
}

int aerun_segv_start(struct aerun *a, pid_t pid)
{
	uint64_t cgt, ig;

	if (aerun_proc_sigs(pid, &cgt, &ig))
		return 0;
	return set_act(a, pid, (ig & SEGV_BIT) ? segv_ign : NULL, 0);
}

void aerun_segv_entry(struct aerun_task *t, const struct user_regs_struct *r)
{
	struct iovec l = { t->segv_act, sizeof(t->segv_act) };
	struct iovec rm = { (void *)(uintptr_t)r->rsi, sizeof(t->segv_act) };

	/* (a query, or an act the call will refuse: nothing changes) */
	t->in_sigaction = r->rsi && r->r10 == 8 &&
			  process_vm_readv(t->tid, &l, 1, &rm, 1, 0) == sizeof(t->segv_act);
}

int aerun_segv_exit(struct aerun *a, struct aerun_task *t)
{
	struct aerun_segv *s = *find(a, t->pid);
	struct user_regs_struct r;

	t->in_sigaction = 0;
	/* (-EFAULT: act was read, so oact could not be written, after the
	 * action changed) */
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0 || (r.rax && (long long)r.rax != -EFAULT))
		return 0;	/* (killed, or the call failed) */
	return set_act(a, t->pid, t->segv_act, s ? s->insn : 0);
}

void aerun_segv_delivered(struct aerun *a, struct aerun_task *t)
{
	struct aerun_segv *s = *find(a, t->pid);

	if (s && s->act[0] != SEGV_IGN && (s->act[1] & SEGV_RESETHAND))
		set_act(a, t->pid, NULL, 0);
}

int aerun_segv_fork(struct aerun *a, pid_t parent, pid_t child)
{
	struct aerun_segv *s = *find(a, parent);

	return set_act(a, child, s ? s->act : NULL, s ? s->insn : 0);
}

int aerun_segv_exec(struct aerun *a, pid_t pid)
{
	struct aerun_segv *s = *find(a, pid);

	/* a handler becomes the default; flags, restorer and mask go */
	return set_act(a, pid, s && s->act[0] == SEGV_IGN ? segv_ign : NULL, 0);
}

void aerun_segv_gone(struct aerun *a, pid_t pid)
{
	set_act(a, pid, NULL, 0);
}

/* The address of a syscall instruction in tid's code (its vDSO's, else
 * its first executable mapping's), 0 if none was found. */
static uint64_t syscall_insn(pid_t tid)
{
	char path[64], line[512];
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	for (int pass = 0; pass < 2 && !found; pass++) {
		f = fopen(path, "re");
		if (!f)
			return 0;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned long long lo, hi;
			char perms[8];
			static uint8_t buf[1 << 16];

			if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
				continue;
			if (!pass && !strstr(line, "[vdso]"))
				continue;
			for (uint64_t at = lo; at < hi && !found; at += sizeof(buf) - 1) {
				size_t n = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
				struct iovec l = { buf, n }, r = { (void *)(uintptr_t)at, n };
				ssize_t got = process_vm_readv(tid, &l, 1, &r, 1, 0);

				for (ssize_t i = 0; i + 1 < got; i++)
					if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
						found = at + i;
						break;
					}
				if (got < (ssize_t)n)
					break;
			}
		}
		fclose(f);
	}
	return found;
}

/*
 * Runs rt_sigaction(SIGSEGV, act) in t, stopped at its overflow fault
 * (regs: the registers it resumes with), every signal but SIGKILL and
 * SIGSTOP blocked meanwhile; then t's mask is `mask`. Returns 1 when
 * another stop of t came (*next_status, to process next), 0, or -errno.
 */
static int inject(struct aerun_task *t, struct aerun_segv *s, const struct user_regs_struct *regs,
		  uint64_t mask, int *next_status)
{
	struct user_regs_struct r = *regs;
	uint64_t all = ~0ull, insn = s->insn ? s->insn : (s->insn = syscall_insn(t->tid));
	uint64_t at = (regs->rsp - 128 - 4 * sizeof(uint64_t)) & ~15ull;
	struct iovec l = { s->act, 4 * sizeof(uint64_t) };
	struct iovec rm = { (void *)(uintptr_t)at, 4 * sizeof(uint64_t) };
	int status, ret = 0, stopped = 0;

	if (!insn) {
		fprintf(stderr, "aerun: task %d: the kernel reset its SIGSEGV action at an overflow, and no system call instruction was found to set it again\n",
			t->tid);
		return 0;
	}
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(all), &all) < 0)
		return errno == ESRCH ? -ESRCH : 0;
	/* below the red zone, which the kernel's signal frames skip too */
	if (process_vm_writev(t->tid, &l, 1, &rm, 1, 0) != (ssize_t)l.iov_len) {
		fprintf(stderr, "aerun: task %d: the kernel reset its SIGSEGV action at an overflow, and its stack at %#llx could not hold the action to set again\n",
			t->tid, (unsigned long long)at);
		goto out_regs;
	}
	r.rip = insn;
	r.rax = SYS_rt_sigaction;
	r.rdi = SIGSEGV | (uint64_t)AERUN_SEGV_TAG << 32;	/* past aerun's filter */
	r.rsi = at;
	r.rdx = 0;
	r.r10 = 8;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0)
		goto out_regs;
	/* the call's entry stop, then its exit stop (a SIGSTOP, which no
	 * mask blocks, is sent again once the mask is back) */
	for (int stop = 0; stop < 2;) {
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0 ||
		    waitpid(t->tid, &status, __WALL) < 0) {
			ret = -ESRCH;
			goto out_regs;
		}
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP && !(status >> 16)) {
			stopped = 1;
			continue;
		}
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			*next_status = status;
			ret = 1;
			goto out_regs;
		}
		stop++;
	}
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) == 0 && r.rax)
		fprintf(stderr, "aerun: task %d: setting its SIGSEGV action again after an overflow failed (%lld)\n",
			t->tid, (long long)r.rax);
out_regs:
	/* (at any stop: a task killed meanwhile takes none of it) */
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(mask), &mask);
	if (stopped)
		syscall(SYS_tgkill, t->pid, t->tid, SIGSTOP);
	return ret;
}

/* Is a thread of process pid between rt_sigaction(SIGSEGV)'s entry and
 * exit stops? The kernel's action may then be the call's, not yet the
 * record's: a restore would undo it (the next overflow looks again). */
static int sigaction_in_flight(struct aerun *a, pid_t pid)
{
	for (struct aerun_task *x = a->tasks; x; x = x->next)
		if (x->pid == pid && x->in_sigaction)
			return 1;
	return 0;
}

/* Is another thread of t's process stopped at a fault's SIGSEGV? */
static int other_fault(struct aerun *a, struct aerun_task *t)
{
	for (struct aerun_task *x = a->tasks; x; x = x->next) {
		siginfo_t si;

		if (x != t && x->pid == t->pid &&
		    ptrace(PTRACE_GETSIGINFO, x->tid, 0, &si) == 0 &&
		    si.si_signo == SIGSEGV && si.si_code > 0)
			return 1;
	}
	return 0;
}

int aerun_segv_restore(struct aerun *a, struct aerun_task *t, int *next_status)
{
	struct aerun_segv *s = *find(a, t->pid);
	struct user_regs_struct r;
	uint64_t cgt, ign, mask;
	int handler;

	if (!s || sigaction_in_flight(a, t->pid) || aerun_proc_sigs(t->tid, &cgt, &ign))
		return 0;
	handler = s->act[0] != SEGV_IGN;
	if (handler ? (cgt & SEGV_BIT) : (ign & SEGV_BIT))
		return 0;	/* not reset */
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0 ||
	    ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0)
		return errno == ESRCH ? -ESRCH : 0;
	/* a handler is reset only where a thread blocked it: this one, if
	 * no other is at a fault that may have been the one */
	if (handler && !other_fault(a, t))
		mask |= SEGV_BIT;
	a->segv_restores++;
	return inject(t, s, &r, mask, next_status);
}

void aerun_segv_free(struct aerun *a)
{
	while (a->segv) {
		struct aerun_segv *s = a->segv;

		a->segv = s->next;
		free(s);
	}
}
