// SPDX-License-Identifier: MIT
/*
 * trace.c - the ptrace loop of aerun: emulates, for one traced thread, the
 * kernel hooks (docs/ARCHITECTURE.md): overflow into a guard page (invariant 7),
 * rollback of a cut sequence before signal delivery (invariants 3 and 6),
 * live r15 at sigreturn (invariant 6), signal/sigreturn/exit markers
 * (invariant 5).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/ucontext.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include "aerun.h"

/* Where the kernel's rt_sigreturn finds the frame: at the syscall of the
 * restorer (musl __restore_rt), the handler's ret has popped pretcode, so
 * rsp points at the ucontext. */
#define UC_GREG(r)	(offsetof(ucontext_t, uc_mcontext.gregs) + (r) * sizeof(greg_t))
_Static_assert(UC_GREG(REG_R15) == 96, "ucontext layout");

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t subbuf_addr(const struct aerun *a, uint32_t i)
{
	return ae_standalone_subbuf_addr(&a->ctl, i);
}

/* The runtime of the program mapped the buffer (it is instrumented). */
static int runtime_active(const struct aerun *a)
{
	const struct ae_standalone_ctl *c = (const void *)a->map;

	return __atomic_load_n(&c->mapped_addr, __ATOMIC_ACQUIRE) != 0;
}

/* Offset of cursor r15 in the current sub-buffer, -1 if outside it. */
static int64_t cursor_offset(const struct aerun *a, uint64_t r15)
{
	uint64_t base = subbuf_addr(a, a->cur);

	if (r15 < base || r15 - base > a->ctl.subbuf_size)
		return -1;
	return r15 - base;
}

static void marker(struct aerun *a, uint32_t type, uint64_t r15, uint64_t ip,
		   uint64_t sp, uint64_t arg, uint32_t arg2)
{
	int64_t off = cursor_offset(a, r15);
	struct trbuf_marker m = {
		.time_ns = now_ns(),
		.type = type,
		.cpu = 0,
		.pid = a->pid,
		.tid = a->pid,
		.seq = a->cur_seq,
		.offset = off < 0 ? 0 : off,
		.arg2 = arg2,
		.ip = ip,
		.sp = sp,
		.arg = arg,
	};

	if (off < 0 && runtime_active(a))
		fprintf(stderr, "aerun: marker %u: r15 %#llx outside sub-buffer %u\n",
			type, (unsigned long long)r15, a->cur);
	aerun_add_marker(a, &m);
}

static int getregs(struct aerun *a, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, a->pid, 0, r) < 0) {
		fprintf(stderr, "aerun: PTRACE_GETREGS of %d: %s\n", a->pid, strerror(errno));
		return -errno;
	}
	return 0;
}

static int setregs(struct aerun *a, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, a->pid, 0, r) < 0) {
		fprintf(stderr, "aerun: PTRACE_SETREGS of %d: %s\n", a->pid, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Rewind rip to the sequence start if it is strictly inside one. */
static void rollback(struct aerun *a, struct user_regs_struct *r)
{
	uint64_t ip = aerun_seqtab_rollback(&a->seqtab, r->rip);

	if (ip != r->rip) {
		if (a->o.verbose > 1)
			fprintf(stderr, "aerun: rollback %#llx -> %#llx\n",
				(unsigned long long)r->rip, (unsigned long long)ip);
		r->rip = ip;
		a->rollbacks++;
	}
}

/* Is addr in the guard page after one of the sub-buffers? */
static int in_guard(const struct aerun *a, uint64_t addr)
{
	uint64_t stride = (uint64_t)a->ctl.subbuf_size + a->ctl.guard_size;

	if (addr < a->ctl.map_addr || addr >= a->ctl.map_addr + stride * a->ctl.nr_subbufs)
		return 0;
	return (addr - a->ctl.map_addr) % stride >= a->ctl.subbuf_size;
}

/* Overflow (invariant 7): commit, switch sub-buffer, resume at seq start. */
static int overflow(struct aerun *a, uint64_t addr)
{
	struct user_regs_struct r;
	int64_t off;
	int ret;

	ret = getregs(a, &r);
	if (ret)
		return ret;
	off = cursor_offset(a, r.r15);
	if (off < 0) {
		fprintf(stderr, "aerun: fault at %#llx with r15 %#llx outside sub-buffer %u (r15 clobbered?)\n",
			(unsigned long long)addr, (unsigned long long)r.r15, a->cur);
		return -EFAULT;
	}
	rollback(a, &r);
	ret = aerun_ring_commit(a, off);
	if (!ret)
		ret = aerun_ring_next(a);
	if (ret) {
		fprintf(stderr, "aerun: writing %s: %s\n", a->o.out, strerror(-ret));
		return ret;
	}
	r.r15 = subbuf_addr(a, a->cur);
	marker(a, TRBUF_MK_SUBBUF, r.r15, r.rip, r.rsp, a->cur_seq, 0);
	return setregs(a, &r);
}

static int signal_caught(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return (mask >> (sig - 1)) & 1;
}

/*
 * Signal-delivery-stop of sig for the program (invariant 6). Returns the
 * next wait status to process when single-stepping into the handler
 * produced an unexpected stop, 0 otherwise, <0 on error.
 */
static int deliver(struct aerun *a, int sig, int *next_status)
{
	struct user_regs_struct r, h;
	int status, ret;

	ret = getregs(a, &r);
	if (ret)
		return ret;
	if (runtime_active(a)) {
		uint64_t ip = r.rip;

		rollback(a, &r);
		if (ip != r.rip && (ret = setregs(a, &r)))
			return ret;
	}
	if (!runtime_active(a) || !signal_caught(a->pid, sig)) {
		ptrace(PTRACE_CONT, a->pid, 0, sig);
		return 0;
	}
	/* Stops at the first instruction of the handler (x86 signal_delivered). */
	if (ptrace(PTRACE_SINGLESTEP, a->pid, 0, sig) < 0)
		return -errno;
	if (waitpid(a->pid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP || (status >> 16)) {
		*next_status = status;
		return 1;
	}
	ret = getregs(a, &h);
	if (ret)
		return ret;
	marker(a, TRBUF_MK_SIGNAL, h.r15, r.rip, r.rsp, h.rip, sig);
	a->signals++;
	ptrace(PTRACE_CONT, a->pid, 0, 0);
	return 0;
}

/* rt_sigreturn (seccomp stop): the frame gets the live r15. */
static int on_sigreturn(struct aerun *a)
{
	struct user_regs_struct r;
	uint64_t uc, ip, sp;
	int ret;

	ret = getregs(a, &r);
	if (ret)
		return ret;
	if (r.orig_rax != 15 || !runtime_active(a))
		return 0;
	uc = r.rsp;
	errno = 0;
	ip = ptrace(PTRACE_PEEKDATA, a->pid, uc + UC_GREG(REG_RIP), 0);
	sp = ptrace(PTRACE_PEEKDATA, a->pid, uc + UC_GREG(REG_RSP), 0);
	if (errno || ptrace(PTRACE_POKEDATA, a->pid, uc + UC_GREG(REG_R15), r.r15) < 0) {
		fprintf(stderr, "aerun: cannot access the signal frame at %#llx: %s\n",
			(unsigned long long)uc, strerror(errno));
		return -errno;
	}
	marker(a, TRBUF_MK_SIGRETURN, r.r15, ip, sp, 0, 0);
	a->sigreturns++;
	return 0;
}

/* PTRACE_EVENT_EXIT: commit the last partial sub-buffer. */
static int exiting(struct aerun *a)
{
	struct user_regs_struct r;
	unsigned long code = 0;
	int64_t off;
	int ret;

	ret = getregs(a, &r);
	if (ret)
		return ret;
	ptrace(PTRACE_GETEVENTMSG, a->pid, 0, &code);
	a->final_ip = r.rip;
	if (!runtime_active(a)) {
		fprintf(stderr, "aerun: %s never mapped the trace buffer (not built with aecc?): no trace\n",
			a->o.prog);
		return 0;
	}
	off = cursor_offset(a, r.r15);
	if (off < 0) {
		fprintf(stderr, "aerun: %s exits with r15 %#llx outside sub-buffer %u: last sub-buffer dropped\n",
			a->o.prog, (unsigned long long)r.r15, a->cur);
		return -EFAULT;
	}
	marker(a, TRBUF_MK_EXIT, r.r15, r.rip, r.rsp, code, 0);
	ret = aerun_ring_commit(a, off);
	if (ret)
		fprintf(stderr, "aerun: writing %s: %s\n", a->o.out, strerror(-ret));
	return ret;
}

static void refuse(struct aerun *a, const char *what)
{
	unsigned long child = 0;

	ptrace(PTRACE_GETEVENTMSG, a->pid, 0, &child);
	fprintf(stderr, "aerun: %s %s; standalone capture traces a single thread, use bdump with the tracing kernel\n",
		a->o.prog, what);
	if (child)
		kill(child, SIGKILL);
	kill(a->pid, SIGKILL);
	a->failed = 1;
}

/* Runs the program to its end; a->status gets its wait status. */
int aerun_trace(struct aerun *a)
{
	int status, have = 0, execs = 0, err = 0;

	for (;;) {
		siginfo_t si;
		int sig, event, ret = 0;
		pid_t p;

		if (have) {
			have = 0;
			p = a->pid;
		} else {
			p = waitpid(-1, &status, __WALL);
			if (p < 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "aerun: waitpid: %s\n", strerror(errno));
				return -errno;
			}
		}
		if (p != a->pid) {	/* a refused child: let it die */
			if (WIFSTOPPED(status))
				ptrace(PTRACE_CONT, p, 0, 0);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			a->status = status;
			break;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (sig == SIGTRAP && event) {
			switch (event) {
			case PTRACE_EVENT_SECCOMP:
				ret = on_sigreturn(a);
				break;
			case PTRACE_EVENT_EXIT:
				ret = exiting(a);
				break;
			case PTRACE_EVENT_EXEC:
				if (execs++) {
					refuse(a, "exec'd another program");
				} else {
					struct user_regs_struct r;

					if (!getregs(a, &r))
						marker(a, TRBUF_MK_START, subbuf_addr(a, 0),
						       r.rip, r.rsp, 0, 0);
				}
				break;
			case PTRACE_EVENT_FORK:
				refuse(a, "forked");
				break;
			case PTRACE_EVENT_VFORK:
				refuse(a, "vforked");
				break;
			case PTRACE_EVENT_CLONE:
				refuse(a, "cloned");
				break;
			}
			if (ret && !err) {
				err = ret;
				kill(a->pid, SIGKILL);
				a->failed = 1;
			}
			ptrace(PTRACE_CONT, a->pid, 0, 0);
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, a->pid, 0, &si) < 0) {
			/* group-stop: resume (job control is not emulated) */
			ptrace(PTRACE_CONT, a->pid, 0, 0);
			continue;
		}
		if (sig == SIGSEGV && si.si_code > 0 && runtime_active(a) &&
		    in_guard(a, (uint64_t)si.si_addr)) {
			ret = overflow(a, (uint64_t)si.si_addr);
			if (ret) {
				err = err ? err : ret;
				kill(a->pid, SIGKILL);
				a->failed = 1;
			}
			ptrace(PTRACE_CONT, a->pid, 0, 0);
			continue;
		}
		ret = deliver(a, sig, &status);
		if (ret == 1) {
			have = 1;
		} else if (ret < 0) {
			err = err ? err : ret;
			kill(a->pid, SIGKILL);
			a->failed = 1;
			ptrace(PTRACE_CONT, a->pid, 0, 0);
		}
	}
	return err;
}
