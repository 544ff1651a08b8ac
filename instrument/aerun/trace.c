// SPDX-License-Identifier: MIT
/*
 * trace.c - the ptrace loop of aerun: emulates, for every traced thread,
 * the kernel hooks (docs/ARCHITECTURE.md): overflow into a guard page (invariant 7),
 * rollback of a cut sequence before signal delivery (invariants 3 and 6),
 * live r15 at sigreturn (invariant 6), signal/sigreturn/fork/exec/exit
 * markers (invariant 5). Threads and children are followed with
 * PTRACE_O_TRACECLONE/FORK/VFORK/EXEC; each traced thread writes into its
 * own region (aerun.h).
 */
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ucontext.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "aerun.h"

/* Where the kernel's rt_sigreturn finds the frame: at the syscall of the
 * restorer (musl __restore_rt), the handler's ret has popped pretcode, so
 * rsp points at the ucontext. */
#define UC_GREG(r)	(offsetof(ucontext_t, uc_mcontext.gregs) + (r) * sizeof(greg_t))
_Static_assert(UC_GREG(REG_R15) == 96, "ucontext layout");

#define AERUN_CLONE_VM		0x00000100
#define AERUN_CLONE_VFORK	0x00004000
#define AERUN_CLONE_THREAD	0x00010000
#define AERUN_CLONE_CLEAR_SIGHAND	0x100000000ull
#define AERUN_NR_CLONE		56
#define AERUN_NR_CLONE3		435

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

/* The task's runtime has r15 in its region (its program is instrumented
 * and has mapped the buffer). */
static int task_active(const struct aerun *a, struct aerun_task *t)
{
	const struct ae_standalone_ctl *c = (const void *)a->map;

	if (t->active < 0 && __atomic_load_n(&c->mapped_addr, __ATOMIC_ACQUIRE))
		t->active = 1;
	return t->traced && t->region && t->active > 0;
}

/* Offset of cursor r15 in t's current sub-buffer, -1 if outside it. */
static int64_t cursor_offset(const struct aerun *a, const struct aerun_task *t, uint64_t r15)
{
	uint64_t base = subbuf_addr(a, t->cur);

	if (r15 < base || r15 - base > a->ctl.subbuf_size)
		return -1;
	return r15 - base;
}

/* Returns the marker added (NULL: lost). */
static struct trbuf_marker *marker(struct aerun *a, struct aerun_task *t, uint32_t type,
				   uint64_t r15, uint64_t ip, uint64_t sp, uint64_t cx,
				   uint64_t arg, uint32_t arg2)
{
	int64_t off = cursor_offset(a, t, r15);
	struct trbuf_marker m = {
		.time_ns = now_ns(),
		.type = type,
		.cpu = t->cpu,
		.pid = t->pid,
		.tid = t->tid,
		.seq = t->cur_seq,
		.offset = off < 0 ? 0 : off,
		.arg2 = arg2,
		.ip = ip,
		.sp = sp,
		.arg = arg,
		.cx = cx,
	};

	if (off < 0 && task_active(a, t))
		fprintf(stderr, "aerun: marker %u of task %d: r15 %#llx outside sub-buffer %u\n",
			type, t->tid, (unsigned long long)r15, t->cur);
	return aerun_add_marker(a, t, &m);
}

/* (-ESRCH, unreported: the task was killed while aerun handled its stop,
 * by its process's exit or a SIGKILL; aerun_trace() sees it go) */
static int getregs(pid_t tid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, tid, 0, r) < 0) {
		if (errno != ESRCH)
			fprintf(stderr, "aerun: PTRACE_GETREGS of %d: %s\n", tid, strerror(errno));
		return -errno;
	}
	return 0;
}

static int setregs(pid_t tid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, tid, 0, r) < 0) {
		if (errno != ESRCH)
			fprintf(stderr, "aerun: PTRACE_SETREGS of %d: %s\n", tid, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Rewind rip to the sequence start if it is strictly inside one. */
static void rollback(struct aerun *a, struct aerun_task *t, struct user_regs_struct *r)
{
	uint64_t ip = aerun_seqtab_rollback(&t->img->seqtab, r->rip);

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

static void report_ring_error(struct aerun *a, int ret)
{
	if (ret == -ENOSPC)
		fprintf(stderr, "aerun: every one of the %u sub-buffers is held by a live traced thread: run with more --subbufs\n",
			a->ctl.nr_subbufs);
	else
		fprintf(stderr, "aerun: writing %s: %s\n", a->o.out, strerror(-ret));
}

/* Overflow (invariant 7): commit, switch sub-buffer, resume at seq start. */
static int overflow(struct aerun *a, struct aerun_task *t, uint64_t addr)
{
	struct user_regs_struct r;
	int64_t off;
	int ret;

	ret = getregs(t->tid, &r);
	if (ret)
		return ret;
	off = cursor_offset(a, t, r.r15);
	if (off < 0) {
		fprintf(stderr, "aerun: fault at %#llx with r15 %#llx outside sub-buffer %u (r15 clobbered?)\n",
			(unsigned long long)addr, (unsigned long long)r.r15, t->cur);
		return -EFAULT;
	}
	rollback(a, t, &r);
	ret = aerun_ring_commit(a, t, off);
	if (!ret)
		ret = aerun_ring_next(a, t);
	if (ret) {
		report_ring_error(a, ret);
		return ret;
	}
	r.r15 = subbuf_addr(a, t->cur);
	marker(a, t, TRBUF_MK_SUBBUF, r.r15, r.rip, r.rsp, r.rcx, t->cur_seq, 0);
	t->cursor_unset = 1;
	ret = setregs(t->tid, &r);
	t->cursor_unset = ret != 0;
	return ret;
}

static int signal_caught(pid_t pid, int sig)
{
	uint64_t cgt, ign;

	return !aerun_proc_sigs(pid, &cgt, &ign) && ((cgt >> (sig - 1)) & 1);
}

/* n bytes at addr in tid's memory into buf, in one system call: a signal
 * storm's every stop counts (a handler every 100 us must not find the
 * next signal due at its return). Returns 0 or -errno. */
static int peek_bytes(pid_t tid, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(tid, &l, 1, &r, 1, 0);

	return got == (ssize_t)n ? 0 : got < 0 ? -errno : -EFAULT;
}

/*
 * A hash of tid's x87/SSE/AVX state as values: the kernel's copy, read
 * while tid is stopped (PTRACE_GETREGSET NT_X86_XSTATE, else the fxsave
 * image), so that no other thread can change it under the read, with the
 * components not in use read as their initial values. Left out: what says
 * how the state is held rather than what it is (the software bytes, the
 * XSAVE header's in-use bits) and PKRU, a protection key, as the tracing
 * kernel leaves them out (trbuf_fpu_user_state()). Returns 0 or -errno.
 */
static int fp_state_hash(pid_t tid, uint64_t *hash)
{
	static uint64_t fp[32768 / 8];
	static uint32_t pkru_off, pkru_size, have_pkru = -1u;
	struct iovec v = { fp, sizeof(fp) };
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a, by words */

	if (have_pkru == -1u) {
		uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;

		have_pkru = __get_cpuid_count(0xd, 9, &eax, &ebx, &ecx, &edx) && eax;
		pkru_size = eax;
		pkru_off = ebx;
	}
	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &v) < 0) {
		v.iov_len = sizeof(fp);
		if (ptrace(PTRACE_GETREGSET, tid, NT_PRFPREG, &v) < 0)
			return -errno;
	}
	if (v.iov_len < 512 || v.iov_len % 8)
		return -EINVAL;
	/* sw_reserved at 464, the XSAVE header at 512 */
	memset((uint8_t *)fp + 464, 0, (v.iov_len < 576 ? 512 : 576) - 464);
	if (have_pkru && pkru_off + pkru_size <= v.iov_len)
		memset((uint8_t *)fp + pkru_off, 0, pkru_size);
	for (size_t i = 0; i < v.iov_len / 8; i++)
		h = (h ^ fp[i]) * 0x100000001b3ull;
	*hash = h;
	return 0;
}

/* The registers of the ucontext at uc (gregs REG_R8 to REG_EFL) into f.
 * Returns 0 or -errno. */
static int uc_state(pid_t tid, uint64_t uc, struct aerun_frame *f)
{
	int ret;

	ret = peek_bytes(tid, uc + UC_GREG(REG_R8), f->gregs, sizeof(f->gregs));
	if (!ret)
		f->uc = uc;
	return ret;
}

/* r in the order of a ucontext's gregs, REG_R8 to REG_EFL */
static void regs_as_gregs(const struct user_regs_struct *r, uint64_t g[AERUN_FRAME_REGS])
{
	const uint64_t v[AERUN_FRAME_REGS] = {
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rdi, r->rsi, r->rbp, r->rbx, r->rdx, r->rax, r->rcx, r->rsp,
		r->rip, r->eflags,
	};

	memcpy(g, v, sizeof(v));
}

/*
 * Whether frame f, read from user memory at the handler's entry, holds
 * what the kernel saved from r, the registers at the delivery stop: equal
 * but for %rip and %rax, which the kernel's system-call restart may have
 * changed since (the handler's -EINTR, or %rip back onto the call). A
 * frame another thread wrote in between is not one to compare against.
 */
static int frame_is_kernels(const struct aerun_frame *f, const struct user_regs_struct *r)
{
	const uint64_t status_df = 0xcc5;	/* CF PF ZF SF OF DF */
	uint64_t g[AERUN_FRAME_REGS], rip, rax;
	int64_t ret = (int64_t)r->rax;

	regs_as_gregs(r, g);
	for (int i = 0; i < AERUN_FRAME_REGS; i++) {
		if (i == REG_RIP - REG_R8 || i == REG_RAX - REG_R8)
			continue;
		if (i == REG_EFL - REG_R8 ? (f->gregs[i] ^ g[i]) & status_df : f->gregs[i] != g[i])
			return 0;
	}
	rip = f->gregs[REG_RIP - REG_R8];
	rax = f->gregs[REG_RAX - REG_R8];
	if (rip == r->rip && rax == r->rax)
		return 1;
	/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK:
	 * a handler's gets -EINTR or the call again (handle_signal()) */
	if ((int64_t)r->orig_rax < 0 || ret < -516 || ret > -512 || ret == -515)
		return 0;
	return (rip == r->rip && rax == (uint64_t)-EINTR) ||
	       (rip == r->rip - 2 && rax == r->orig_rax);
}

/* Frame f, read at delivery, for code interrupted at sp: frames at or
 * above it below sp are gone (their handlers left by longjmp, the stack
 * went back past them); the oldest goes when too many are held. */
static void frame_push(struct aerun_task *t, const struct aerun_frame *f, uint64_t sp)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < t->nr_frames; i++)
		if (t->frames[i].uc < f->uc || t->frames[i].uc >= sp)
			t->frames[n++] = t->frames[i];
	t->nr_frames = n;
	if (t->nr_frames == AERUN_FRAMES)
		memmove(t->frames, t->frames + 1, --t->nr_frames * sizeof(t->frames[0]));
	t->frames[t->nr_frames++] = *f;
}

/*
 * What t's handler changed in its frame (now: as read at its sigreturn),
 * as TRBUF_CTX_* bits of a SIGRETURN marker's arg; pops the frame and
 * those delivered after it (handlers within it that never returned).
 * Returns 1 with *changed set (and *full: the vector state was compared,
 * its values read at both ends), 0 when aerun holds no such frame.
 */
static int frame_pop(struct aerun_task *t, const struct aerun_frame *now, uint64_t *changed,
		     int *full)
{
	/* gregs REG_R8 + i is general register enc[i] (x86 encoding order) */
	static const int8_t enc[AERUN_FRAME_REGS] = {
		8, 9, 10, 11, 12, 13, 14, -1, 7, 6, 5, 3, 2, 0, 1, 4, -1, -1,
	};
	const uint64_t status = 0x8c5, df = 0x400;	/* CF PF ZF SF OF; DF */
	const struct aerun_frame *was;
	unsigned int i = t->nr_frames;
	uint64_t fl;

	while (i && t->frames[i - 1].uc != now->uc)
		i--;
	if (!i)
		return 0;
	t->nr_frames = --i;
	was = &t->frames[i];
	*changed = 0;
	for (int r = 0; r < AERUN_FRAME_REGS; r++)
		if (enc[r] >= 0 && now->gregs[r] != was->gregs[r])
			*changed |= 1ull << enc[r];
	fl = now->gregs[REG_EFL - REG_R8] ^ was->gregs[REG_EFL - REG_R8];
	if (fl & status)
		*changed |= TRBUF_CTX_STATUS;
	if (fl & df)
		*changed |= TRBUF_CTX_DF;
	*full = now->fp_ok && was->fp_ok;
	if (*full && now->fp_hash != was->fp_hash)
		*changed |= TRBUF_CTX_VECTOR;
	return 1;
}

#define UC_REG(f, r)	((f)->gregs[(r) - REG_R8])

static int handler_entered(struct aerun *a, struct aerun_task *t);

/*
 * Signal-delivery-stop of sig for t (invariant 6). Returns 1 when
 * single-stepping into the handler produced another stop of t, to process
 * next (*next_status), 0 otherwise, <0 on error.
 */
static int deliver(struct aerun *a, struct aerun_task *t, int sig, int *next_status)
{
	struct user_regs_struct r;
	int status, ret;

	if (sig == SIGSEGV)
		aerun_segv_delivered(a, t);

	if (!task_active(a, t)) {
		ptrace(PTRACE_CONT, t->tid, 0, sig);
		return 0;
	}
	ret = getregs(t->tid, &r);
	if (ret)
		return ret;
	{
		uint64_t ip = r.rip;

		rollback(a, t, &r);
		if (ip != r.rip && (ret = setregs(t->tid, &r)))
			return ret;
	}
	if (!signal_caught(t->tid, sig)) {
		ptrace(PTRACE_CONT, t->tid, 0, sig);
		return 0;
	}
	/* the state the frame saves, before the handler's is set up */
	t->sig.fp_ok = !fp_state_hash(t->tid, &t->sig.fp_hash);
	t->sig_regs = r;
	t->sig_num = sig;
	t->sig_entering = 1;
	/* Stops at the first instruction of the handler (x86 signal_delivered). */
	if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, sig) < 0)
		return -errno;
	if (waitpid(t->tid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP || (status >> 16)) {
		/* (killed: aerun_trace() sees at that stop whether the
		 * kernel had entered the handler) */
		*next_status = status;
		return 1;
	}
	ret = handler_entered(a, t);
	if (ret)
		return ret;
	ptrace(PTRACE_CONT, t->tid, 0, 0);
	return 0;
}

/*
 * t stopped at its handler's first instruction, or at its exit after the
 * kernel entered the handler (its %rsp on the frame; else no signal came),
 * for the signal deliver() stepped into: its SIGNAL marker, its frame
 * kept. Returns 0 or -errno (-ESRCH: killed; its exit stop comes back).
 */
static int handler_entered(struct aerun *a, struct aerun_task *t)
{
	struct user_regs_struct r = t->sig_regs, h;
	struct aerun_frame f = t->sig;
	int ret;

	ret = getregs(t->tid, &h);
	if (ret)
		return ret;
	t->sig_entering = 0;
	if (h.rsp == r.rsp)
		return 0;
	/*
	 * Where the task resumes is what the kernel saved in the frame (an
	 * rt_sigframe: the return address, then the ucontext), after its
	 * system-call restart (%rip back onto an SA_RESTART syscall), which
	 * comes after this stop.
	 */
	if (!uc_state(t->tid, h.rsp + 8, &f)) {
		int kernels = frame_is_kernels(&f, &r);

		r.rip = UC_REG(&f, REG_RIP);
		r.rsp = UC_REG(&f, REG_RSP);
		r.rcx = UC_REG(&f, REG_RCX);
		if (kernels)
			frame_push(t, &f, r.rsp);
	}	/* (else its sigreturn goes unchecked) */
	marker(a, t, TRBUF_MK_SIGNAL, h.r15, r.rip, r.rsp, r.rcx, h.rip, t->sig_num);
	a->signals++;
	return 0;
}

/*
 * rt_sigreturn's entry: the SIGRETURN marker is written from the frame,
 * unchecked; the call's exit stop (sigreturn_done()) completes it from
 * what the kernel restored, and gives the task back its live r15.
 */
static int on_sigreturn(struct aerun *a, struct aerun_task *t, struct user_regs_struct *r)
{
	uint64_t uc = r->rsp;
	struct aerun_frame f;
	int ret;

	if (!task_active(a, t))
		return 0;
	ret = uc_state(t->tid, uc, &f);
	if (ret) {
		if (ret != -ESRCH)
			fprintf(stderr, "aerun: cannot access the signal frame at %#llx: %s\n",
				(unsigned long long)uc, strerror(-ret));
		return ret;
	}
	t->in_sigreturn = 1;
	t->sigret_uc = uc;
	t->sigret_r15 = r->r15;
	t->sigret_mk = marker(a, t, TRBUF_MK_SIGRETURN, r->r15, UC_REG(&f, REG_RIP),
			      UC_REG(&f, REG_RSP), UC_REG(&f, REG_RCX), 0, 0) ?
		       t->nr_mk - 1 : UINT32_MAX;
	a->sigreturns++;
	return 0;
}

/* The live r15 back into a task in rt_sigreturn, whose restore gave it
 * the frame's. Returns 0 or -errno. */
static int sigreturn_r15(struct aerun_task *t)
{
	if (ptrace(PTRACE_POKEUSER, t->tid, offsetof(struct user_regs_struct, r15),
		   t->sigret_r15) < 0)
		return -errno;
	t->in_sigreturn = 0;
	return 0;
}

/* A task in rt_sigreturn whose call did not run, or may not have: the
 * SIGRETURN its entry wrote, if still its last marker, goes. */
static void sigreturn_drop(struct aerun *a, struct aerun_task *t)
{
	if (t->in_sigreturn && t->nr_mk && t->sigret_mk == t->nr_mk - 1 &&
	    t->mk[t->sigret_mk].type == TRBUF_MK_SIGRETURN) {
		t->nr_mk--;
		a->markers--;
		a->sigreturns--;
	}
	t->in_sigreturn = 0;
}

/*
 * Killed in rt_sigreturn, before its exit stop: where the call ran (the
 * restore moved %rsp off the frame), the kernel restored the frame's r15
 * and the exit commits at the live one; where the kill skipped it (the
 * task dies in the restorer, in its handler), its SIGRETURN goes.
 */
static void sigreturn_killed(struct aerun *a, struct aerun_task *t)
{
	struct user_regs_struct r;

	if (getregs(t->tid, &r) || r.rsp != t->sigret_uc)
		sigreturn_r15(t);
	else
		sigreturn_drop(a, t);
}

/*
 * rt_sigreturn's exit stop: the frame's r15 is replaced by the live one
 * (here, not in the frame at the entry, where another thread could still
 * write it; r15 alone: a program may hold segment registers or bases
 * that PTRACE_SETREGS refuses), and what the handler changed is compared
 * as values: the registers and the vector state the kernel restored,
 * which no other thread can change between the compare and the restore
 * as it can the frame's bytes. Where the task cannot be written (it is
 * being killed), its exit stop gives it r15 (on_event()), and its marker
 * stays unchecked.
 */
static void sigreturn_done(struct aerun_task *t)
{
	struct user_regs_struct r;
	struct trbuf_marker *m;
	uint64_t changed = 0;
	struct aerun_frame f;
	int full;

	if (sigreturn_r15(t) || getregs(t->tid, &r))
		return;
	if (t->sigret_mk >= t->nr_mk)
		return;
	m = &t->mk[t->sigret_mk];
	if (m->type != TRBUF_MK_SIGRETURN || m->tid != t->tid)
		return;
	regs_as_gregs(&r, f.gregs);
	f.uc = t->sigret_uc;
	f.fp_ok = !fp_state_hash(t->tid, &f.fp_hash);
	m->ip = r.rip;
	m->sp = r.rsp;
	m->cx = r.rcx;
	if (frame_pop(t, &f, &changed, &full)) {
		m->arg = changed;
		m->flags |= TRBUF_MKF_CTX_CHECKED | (full ? TRBUF_MKF_CTX_FULL : TRBUF_MKF_CTX_FLAGS);
	}
}

/* Writes the NUL-terminated @s (at most AE_STANDALONE_PATH_MAX) at @addr. */
static int poke_string(pid_t tid, uint64_t addr, const char *s)
{
	char buf[AE_STANDALONE_PATH_MAX] = "";

	snprintf(buf, sizeof(buf), "%s", s);
	for (size_t i = 0; i < sizeof(buf); i += sizeof(long)) {
		long w;

		memcpy(&w, buf + i, sizeof(w));
		if (ptrace(PTRACE_POKEDATA, tid, addr + i, w) < 0)
			return -errno;
	}
	return 0;
}

/* Give a task a region: the lowest free virtual cpu and a free sub-buffer. */
static int region_new(struct aerun *a, struct aerun_task *t)
{
	uint32_t c;
	int ret;

	for (c = 0; c < a->ctl.nr_subbufs && a->cpu_used[c]; c++)
		;
	if (c == a->ctl.nr_subbufs) {
		report_ring_error(a, -ENOSPC);
		return -ENOSPC;
	}
	t->cpu = c;
	t->cur_seq = a->cpu_seq[c];
	t->resume_off = 0;
	ret = aerun_ring_next(a, t);
	if (ret) {
		report_ring_error(a, ret);
		return ret;
	}
	a->cpu_used[c] = 1;
	t->region = 1;
	return 0;
}

/* The task leaves its region: commit its last bytes (len) with its
 * markers; the cpu is free for the next new thread. */
static int region_end(struct aerun *a, struct aerun_task *t, uint32_t len)
{
	int ret;

	if (!t->region)
		return 0;
	t->region = 0;
	ret = aerun_ring_commit(a, t, len);
	a->cpu_seq[t->cpu] = t->cur_seq;
	a->cpu_used[t->cpu] = 0;
	if (ret)
		report_ring_error(a, ret);
	return ret;
}

/*
 * The runtime's requests (standalone.h) from a program exec'd by a traced
 * task: where the trace buffer is, then its initial r15 (START marker), or
 * that it cannot open the buffer (it is left untraced).
 * The syscall is skipped; rax is the answer.
 */
static int on_runtime_ioctl(struct aerun *a, struct aerun_task *t, struct user_regs_struct *r)
{
	long ans = -EPERM;
	int ret;

	if (r->rsi == AE_STANDALONE_IOC_ATTACH && t->traced && t->region) {
		char path[64];

		/*
		 * An instrumented first program maps the control page before it
		 * can start anything; once another program attaches, the page
		 * says nothing more about the first one.
		 */
		for (struct aerun_task *o = a->tasks; o; o = o->next)
			if (o->active < 0 && !task_active(a, o) && o->active < 0)
				o->active = 0;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), a->memfd);
		ans = poke_string(t->tid, r->rdx, path);
	} else if (r->rsi == AE_STANDALONE_IOC_CURSOR && t->traced && t->region &&
		   !t->active) {
		uint64_t r15 = subbuf_addr(a, t->cur) + t->resume_off;

		t->active = 1;
		marker(a, t, TRBUF_MK_START, r15, r->rip, r->rsp, r->rcx, 0, 0);
		ans = r15;
	} else if (r->rsi == AE_STANDALONE_IOC_DETACH && t->traced && t->region &&
		   !t->active) {
		/* its runtime cannot open the buffer: untraced from here */
		if (!a->o.quiet)
			fprintf(stderr, "aerun: task %d (%s) cannot open aerun's trace buffer (credentials changed?): left untraced\n",
				t->tid, t->img->path);
		t->traced = 0;
		a->nr_traced--;
		a->nr_untraced++;
		ret = region_end(a, t, t->resume_off);
		if (ret)
			return ret;
		ans = 0;
	} else {
		return 0;	/* not ours: the ioctl runs (EBADF) */
	}
	r->orig_rax = -1;
	r->rax = ans;
	t->cursor_unset = 1;
	ret = setregs(t->tid, r);
	t->cursor_unset = ret != 0;
	return ret;
}

/* The entry of the system call @t stopped at: AUDIT_ARCH_I386 for int
 * 0x80, AUDIT_ARCH_X86_64 for syscall (x32 included), 0 if unknown. */
static uint32_t syscall_arch(pid_t tid)
{
	struct __ptrace_syscall_info si = { 0 };

	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0)
		return 0;
	return si.arch;
}

static void exec_entry(struct aerun_task *t, const struct user_regs_struct *r)
{
	t->in_exec = 1;
	t->exec_r15 = r->r15;
	t->exec_ip = r->rip;
	t->exec_sp = r->rsp;
	t->exec_cx = r->rcx;
}

/*
 * Seccomp stop (aerun's filter, main.c; a program's own filter may add
 * stops of other calls): rt_sigreturn, exec, runtime requests,
 * rt_sigaction(SIGSEGV). The
 * numbers are those of the entry the call came through.
 */
static int on_seccomp(struct aerun *a, struct aerun_task *t)
{
	struct user_regs_struct r;
	uint32_t arch;
	int ret;

	ret = getregs(t->tid, &r);
	if (ret)
		return ret;
	arch = syscall_arch(t->tid);
	if (!arch && errno == ESRCH)
		return -ESRCH;
	if (arch == AUDIT_ARCH_I386) {
		if (r.orig_rax == AERUN_I386_EXECVE || r.orig_rax == AERUN_I386_EXECVEAT)
			exec_entry(t, &r);
		return 0;
	}
	if (arch != AUDIT_ARCH_X86_64) {
		fprintf(stderr, "aerun: task %d: system call %lld from an unknown entry\n",
			t->tid, (long long)r.orig_rax);
		return -EINVAL;
	}
	switch (r.orig_rax) {
	case SYS_rt_sigreturn:
		return on_sigreturn(a, t, &r);
	case SYS_execve:
	case SYS_execveat:
	case AERUN_X32_EXECVE:
	case AERUN_X32_EXECVEAT:
		exec_entry(t, &r);
		return 0;
	case SYS_ioctl:
		return on_runtime_ioctl(a, t, &r);
	case SYS_rt_sigaction:
		aerun_segv_entry(t, &r);
		return 0;
	}
	return 0;
}

/*
 * t's trace ends where aerun last knew its cursor, at its last marker (a
 * sequence boundary: markers are written at stops, after the rollback),
 * without an EXIT: its regeneration ends there as at the end of a
 * capture. A SIGRETURN whose call may not have run goes. What t ran after
 * is lost: said on stderr (why: @why) and counted in the capture's drops.
 * Returns 0 or -errno (the commit).
 */
static int end_at_last_marker(struct aerun *a, struct aerun_task *t, const char *why)
{
	uint32_t len = 0;

	sigreturn_drop(a, t);
	if (t->traced && t->nr_mk)
		len = t->mk[t->nr_mk - 1].offset;
	if (t->traced) {
		struct trbuf_marker last = t->nr_mk ? t->mk[t->nr_mk - 1] : (struct trbuf_marker){ 0 };

		fprintf(stderr, "aerun: task %d %s: its trace ends at its last marker (byte %u of its sub-buffer); what it ran after is not in it (counted in the capture's drops)\n",
			t->tid, why, len);
		a->lost_ends++;
		/* its end, as the kernel's detach says it: a START that
		 * reuses its tid (a thread's exec) is a new task */
		if (t->region)
			marker(a, t, TRBUF_MK_STOP, subbuf_addr(a, t->cur) + len, last.ip, last.sp,
			       last.cx, 0, 0);
	}
	return region_end(a, t, len);
}

/* PTRACE_EVENT_EXIT: commit the last partial sub-buffer. */
static int exiting(struct aerun *a, struct aerun_task *t)
{
	struct user_regs_struct r;
	unsigned long code = 0;
	int64_t off;
	int ret;

	ret = getregs(t->tid, &r);
	if (ret)
		return ret;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &code);
	if (t->tid == a->pid)
		a->final_ip = r.rip;
	if (!task_active(a, t)) {
		if (t->tid == a->pid && t->traced && t->execs == 1 && t->region) {
			fprintf(stderr, "aerun: %s never mapped the trace buffer (not built with aecc?): no trace\n",
				a->o.prog);
			/* its START has an end: an empty stream */
			marker(a, t, TRBUF_MK_EXIT, subbuf_addr(a, t->cur), r.rip, r.rsp, r.rcx, code, 0);
		}
		/* (an exec'd image that died before its runtime started: its
		 * region holds the old image's bytes, up to its EXEC) */
		return region_end(a, t, t->resume_off);
	}
	off = cursor_offset(a, t, r.r15);
	if (off < 0 && t->cursor_unset && t->nr_mk &&
	    t->mk[t->nr_mk - 1].type == TRBUF_MK_SUBBUF &&
	    t->mk[t->nr_mk - 1].seq == t->cur_seq && !t->mk[t->nr_mk - 1].offset) {
		/* killed at its overflow stop (by another thread's exec or
		 * exit, a SIGKILL) before its new cursor was written: it ran
		 * nothing after its SUBBUF marker, and ends there */
		struct trbuf_marker last = t->mk[t->nr_mk - 1];

		marker(a, t, TRBUF_MK_EXIT, subbuf_addr(a, t->cur), last.ip, last.sp, last.cx, code, 0);
		return region_end(a, t, 0);
	}
	if (off < 0) {
		/* a kill that left the start's new cursor unwritten; else r15
		 * clobbered, a failed capture */
		fprintf(stderr, "aerun: task %d exits with r15 %#llx outside sub-buffer %u%s\n",
			t->tid, (unsigned long long)r.r15, t->cur,
			t->cursor_unset ? " (killed before aerun gave it its new cursor)" :
			" (r15 clobbered?)");
		ret = end_at_last_marker(a, t, "exits without a cursor");
		return ret ? ret : t->cursor_unset ? 0 : -EFAULT;
	}
	marker(a, t, TRBUF_MK_EXIT, r.r15, r.rip, r.rsp, r.rcx, code, 0);
	return region_end(a, t, off);
}

static struct aerun_task *task_find(struct aerun *a, pid_t tid)
{
	for (struct aerun_task *t = a->tasks; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct aerun_task *task_new(struct aerun *a, pid_t tid)
{
	struct aerun_task *t = calloc(1, sizeof(*t));

	if (!t) {
		fprintf(stderr, "aerun: out of memory\n");
		return NULL;
	}
	t->tid = t->pid = tid;
	t->fresh = 1;
	t->execs = 1;	/* only the first program's first exec is aerun's own */
	t->next = a->tasks;
	a->tasks = t;
	a->nr_tasks++;
	return t;
}

/* A task of process pid, if any is left. */
static struct aerun_task *task_of_process(struct aerun *a, pid_t pid)
{
	for (struct aerun_task *t = a->tasks; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

/*
 * The task is gone (reaped). One that went without an exit stop (killed:
 * the kernel skips the stop where the kill finds the task in some system
 * calls, exit_group() from another thread included) has its sub-buffer
 * committed up to its last marker, the last place aerun knows the cursor
 * at, with its markers (a SIGRETURN whose call may not have run goes) and
 * a STOP there: its trace ends there, where its regeneration ends it as
 * at the end of a capture. What it ran after is lost, and aerun says so.
 */
static void task_free(struct aerun *a, struct aerun_task *t)
{
	if (t->region)
		end_at_last_marker(a, t, "was killed without an exit stop");
	for (struct aerun_task **pp = &a->tasks; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (!task_of_process(a, t->pid))
		aerun_segv_gone(a, t->pid);
	free(t->mk);
	free(t);
}

/* The "@key: N" line of /proc/@tid/status (Tgid, PPid), or -1. */
static pid_t status_field(pid_t tid, const char *key)
{
	char path[64], line[256];
	size_t n = strlen(key);
	pid_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%d", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Thread group id of @tid, or -1. */
static pid_t tgid_of(pid_t tid)
{
	return status_field(tid, "Tgid");
}

/*
 * A new process stopped before aerun saw its creator's fork event, whose
 * parent is no longer a task of aerun's (killed in the fork, its event
 * lost): nothing will ever give it a region, and it would stay stopped
 * with aerun waiting for it. It gets SIGKILL: its r15 still points into
 * its dead parent's sub-buffer, which may be another thread's by now.
 * Returns 1 when killed.
 */
static int orphan_kill(struct aerun *a, struct aerun_task *t)
{
	pid_t ppid;

	if (!t->fresh || !t->stopped || t->parent_known || tgid_of(t->tid) != t->tid)
		return 0;	/* threads die with their process */
	ppid = status_field(t->tid, "PPid");
	if (ppid == getpid() || task_find(a, ppid))
		return 0;	/* CLONE_PARENT of the first program; a live parent */
	fprintf(stderr, "aerun: task %d: its parent died before aerun saw its fork (killed in fork?): killed\n",
		t->tid);
	kill(t->tid, SIGKILL);
	return 1;
}

/* The image @path (cached): its sequence table and whether aecc built it. */
static struct aerun_img *img_get(struct aerun *a, const char *path)
{
	struct aerun_img *im;
	char err[512] = "";

	for (im = a->imgs; im; im = im->next)
		if (!strcmp(im->path, path))
			return im;
	im = calloc(1, sizeof(*im));
	if (!im || !(im->path = strdup(path))) {
		free(im);
		return NULL;
	}
	if (!aerun_seqtab_load(&im->seqtab, path, err, sizeof(err)))
		im->instrumented = im->seqtab.has_schema || im->seqtab.n;
	else if (a->o.verbose)
		fprintf(stderr, "aerun: %s\n", err);
	im->next = a->imgs;
	a->imgs = im;
	return im;
}

/*
 * First stop of a new thread or child, once its creator's event was seen:
 * it runs its creator's image; a traced one gets its region, r15 at the
 * region's start and a SWITCH_IN marker there.
 */
static int task_start(struct aerun *a, struct aerun_task *c)
{
	struct user_regs_struct r;
	int ret = 0;

	c->fresh = 0;
	c->stopped = 0;
	c->pid = tgid_of(c->tid);
	if (c->pid < 0)
		c->pid = c->tid;
	if (c->traced && c->active) {
		ret = region_new(a, c);
		if (!ret)
			ret = getregs(c->tid, &r);
		if (!ret) {
			r.r15 = subbuf_addr(a, c->cur);
			ret = setregs(c->tid, &r);
		}
		if (!ret)
			marker(a, c, TRBUF_MK_SWITCH_IN, r.r15, r.rip, r.rsp, r.rcx, 0, 0);
		a->nr_traced++;
	} else {
		c->traced = 0;
		a->nr_untraced++;
	}
	ptrace(PTRACE_CONT, c->tid, 0, 0);
	return ret;
}

/* PTRACE_EVENT_FORK/VFORK/CLONE in the creator @t. */
static int on_fork(struct aerun *a, struct aerun_task *t, int event)
{
	unsigned long child = 0;
	struct user_regs_struct r;
	struct aerun_task *c;
	uint32_t flags;
	int ret, clear_sighand = 0;

	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &child);
	ret = getregs(t->tid, &r);
	if (ret)
		return ret;
	/* the clone flags, from the system call the event stopped in (the
	 * regenerator decides by them what the child shares) */
	switch (r.orig_rax) {
	case AERUN_NR_CLONE:
		flags = (uint32_t)r.rdi;	/* clone(flags, ...) */
		break;
	case AERUN_NR_CLONE3: {
		long v;

		/* clone3(args, size): args->flags is its first u64 */
		errno = 0;
		v = ptrace(PTRACE_PEEKDATA, t->tid, r.rdi, 0);
		flags = errno ? AERUN_CLONE_VM : (uint32_t)v;
		clear_sighand = !errno && ((uint64_t)v & AERUN_CLONE_CLEAR_SIGHAND);
		break;
	}
	default:
		flags = event == PTRACE_EVENT_FORK ? SIGCHLD :
			event == PTRACE_EVENT_VFORK ? AERUN_CLONE_VM | AERUN_CLONE_VFORK | SIGCHLD :
			(uint32_t)r.rdi;
		break;
	}
	a->forks++;
	if (task_active(a, t))
		marker(a, t, TRBUF_MK_FORK, r.r15, r.rip, r.rsp, r.rcx, child, flags);
	c = task_find(a, (pid_t)child);
	if (!c && !(c = task_new(a, (pid_t)child)))
		return -ENOMEM;
	/* what the child inherits, decided now: t may be gone by its first stop */
	c->img = t->img;
	c->traced = t->traced;
	/* a fork in a handler returns from it in both */
	memcpy(c->frames, t->frames, sizeof(c->frames));
	c->nr_frames = t->nr_frames;
	c->active = task_active(a, t) ? 1 : 0;
	c->parent_known = 1;
	/* (CLONE_CLEAR_SIGHAND: the child's handlers reset, as by exec) */
	if (!(flags & AERUN_CLONE_THREAD) &&
	    (aerun_segv_fork(a, t->pid, (pid_t)child) ||
	     (clear_sighand && aerun_segv_exec(a, (pid_t)child))))
		return -ENOMEM;
	if (c->stopped)
		return task_start(a, c);
	return 0;
}

/* PTRACE_EVENT_EXEC: the old image is done, the new one may be traced. */
static int on_exec(struct aerun *a, struct aerun_task *t)
{
	char link[64], path[PATH_MAX];
	struct user_regs_struct r;
	struct aerun_img *im;
	int64_t off = 0;
	ssize_t n;
	int ret;

	pid_t tid = t->exec_tid ? t->exec_tid : t->tid;

	ret = getregs(tid, &r);
	if (ret)
		return ret;
	if (!t->execs++) {
		/* aerun's own execve of the first program */
		t->in_exec = 0;
		if (aerun_segv_start(a, t->pid))
			return -ENOMEM;
		marker(a, t, TRBUF_MK_START, subbuf_addr(a, 0), r.rip, r.rsp, r.rcx, 0, 0);
		return 0;
	}
	a->execs++;
	if (task_active(a, t) && !t->in_exec) {
		fprintf(stderr, "aerun: task %d exec'd without aerun seeing the call: where its old image's trace ends is unknown\n",
			t->tid);
		return -EFAULT;
	}
	if (task_active(a, t)) {
		off = cursor_offset(a, t, t->exec_r15);
		if (off < 0) {
			fprintf(stderr, "aerun: task %d execs with r15 %#llx outside sub-buffer %u\n",
				t->tid, (unsigned long long)t->exec_r15, t->cur);
			return -EFAULT;
		}
		marker(a, t, TRBUF_MK_EXEC, t->exec_r15, t->exec_ip, t->exec_sp, t->exec_cx, 0, 0);
	} else if (t->region) {
		off = t->resume_off;	/* exec'd again before its runtime started */
	}
	t->in_exec = 0;
	if (aerun_segv_exec(a, t->pid))
		return -ENOMEM;
	t->tid = tid;		/* the new image runs as the leader */
	t->exec_tid = 0;
	snprintf(link, sizeof(link), "/proc/%d/exe", t->tid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0) {
		fprintf(stderr, "aerun: %s: %s\n", link, strerror(errno));
		return -errno;
	}
	path[n] = 0;
	im = img_get(a, path);
	if (!im)
		return -ENOMEM;
	t->img = im;
	t->active = 0;
	t->nr_frames = 0;
	if (!im->instrumented) {
		if (!a->o.quiet)
			fprintf(stderr, "aerun: task %d exec'd %s, not built with aecc: left untraced\n",
				t->tid, path);
		a->nr_untraced++;
		t->traced = 0;
		return region_end(a, t, off);
	}
	a->nr_traced++;
	t->traced = 1;
	if (!t->region)
		return region_new(a, t);
	t->resume_off = off;
	return 0;
}

static void kill_all(struct aerun *a)
{
	for (struct aerun_task *t = a->tasks; t; t = t->next)
		kill(t->tid, SIGKILL);
	kill(a->pid, SIGKILL);
	a->failed = 1;
}

/* One ptrace event stop of @t; returns 0 or -errno. */
static int on_event(struct aerun *a, struct aerun_task *t, int event)
{
	if (t->in_sigreturn && event == PTRACE_EVENT_EXIT)
		sigreturn_killed(a, t);
	t->in_sigreturn = 0;
	t->in_sigaction = 0;
	switch (event) {
	case PTRACE_EVENT_SECCOMP:
		return on_seccomp(a, t);
	case PTRACE_EVENT_EXIT:
		return exiting(a, t);
	case PTRACE_EVENT_EXEC: {
		unsigned long former = t->tid;

		/*
		 * A thread other than the leader exec'd: it takes the leader's
		 * tid; the leader (killed by the exec) is done.
		 */
		ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
		if ((pid_t)former != t->tid) {
			struct aerun_task *x = task_find(a, (pid_t)former);

			if (x) {
				x->exec_tid = t->tid;
				task_free(a, t);
				t = x;
			}
		}
		return on_exec(a, t);
	}
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		return on_fork(a, t, event);
	}
	return 0;
}

/* Creates the first program's task (cpu 0, sub-buffer 0). */
static int root_task(struct aerun *a)
{
	struct aerun_task *t = task_new(a, a->pid);
	struct aerun_img *im = calloc(1, sizeof(*im));

	if (!t || !im || !(im->path = strdup(a->o.path)))
		return -ENOMEM;
	im->seqtab = a->seqtab;
	im->instrumented = 1;
	im->next = a->imgs;
	a->imgs = im;
	t->fresh = 0;
	t->execs = 0;
	t->img = im;
	t->traced = 1;
	t->active = -1;
	t->region = 1;
	t->cpu = 0;
	t->cur = 0;
	a->cpu_used = calloc(a->ctl.nr_subbufs, sizeof(*a->cpu_used));
	a->cpu_seq = calloc(a->ctl.nr_subbufs, sizeof(*a->cpu_seq));
	if (!a->cpu_used || !a->cpu_seq)
		return -ENOMEM;
	a->cpu_used[0] = 1;
	a->nr_traced = 1;
	return 0;
}

/* Runs the program and everything it starts to the end; a->status gets
 * the first program's wait status. A handler's -ESRCH is no failure: the
 * task was killed while aerun handled its stop (its process's exit, a
 * SIGKILL), and its end comes next. */
int aerun_trace(struct aerun *a)
{
	int status, have = 0, err = 0;
	pid_t p, have_pid = 0;

	err = root_task(a);
	if (err) {
		kill_all(a);
		return err;
	}
	for (;;) {
		struct aerun_task *t;
		siginfo_t si;
		int sig, event, ret = 0;

		if (have) {
			have = 0;
			p = have_pid;
		} else {
			p = waitpid(-1, &status, __WALL);
			if (p < 0) {
				if (errno == EINTR)
					continue;
				if (errno == ECHILD)
					break;
				fprintf(stderr, "aerun: waitpid: %s\n", strerror(errno));
				return -errno;
			}
		}
		t = task_find(a, p);
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (p == a->pid)
				a->status = status;
			if (t)
				task_free(a, t);
			/* a stopped child of the task just gone is an orphan */
			for (t = a->tasks; t; t = t->next)
				orphan_kill(a, t);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (!t && !(t = task_new(a, p))) {
			err = err ? err : -ENOMEM;
			kill_all(a);
			continue;
		}
		sig = WSTOPSIG(status);
		event = status >> 16;
		/* the step into a handler ended at the exit (a kill; the only
		 * stop that can come instead of the step's): the SIGNAL, if
		 * the kernel had entered the handler */
		if (t->sig_entering && sig == SIGTRAP && event == PTRACE_EVENT_EXIT)
			handler_entered(a, t);
		t->sig_entering = 0;
		if (t->fresh && !event) {
			/* a new thread or child in its first stop (SIGSTOP) */
			t->stopped = 1;
			if (t->parent_known)
				ret = task_start(a, t);
			else
				orphan_kill(a, t);
			if (ret && ret != -ESRCH && !err) {
				err = ret;
				kill_all(a);
			}
			continue;
		}
		if (sig == SIGTRAP && event) {
			ret = on_event(a, t, event);
			if (ret && ret != -ESRCH && !err) {
				err = ret;
				kill_all(a);
			}
			/* an rt_sigreturn or rt_sigaction stops again at its
			 * exit (t itself may be gone: a thread's exec frees the
			 * leader's) */
			t = task_find(a, p);
			ptrace(t && (t->in_sigreturn || t->in_sigaction) ? PTRACE_SYSCALL :
			       PTRACE_CONT, p, 0, 0);
			continue;
		}
		if (sig == (SIGTRAP | 0x80)) {
			/* a syscall-exit stop (PTRACE_O_TRACESYSGOOD) */
			if (t->in_sigreturn)
				sigreturn_done(t);
			if (t->in_sigaction && (ret = aerun_segv_exit(a, t)) && !err) {
				err = ret;
				kill_all(a);
			}
			ptrace(PTRACE_CONT, p, 0, 0);
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, p, 0, &si) < 0) {
			/* group-stop: resume (job control is not emulated) */
			ptrace(PTRACE_CONT, p, 0, 0);
			continue;
		}
		if (sig == SIGSEGV && si.si_code > 0 && task_active(a, t) &&
		    in_guard(a, (uint64_t)si.si_addr)) {
			/* the fault's SIGSEGV may have reset the program's,
			 * for every thread: first thing (a stop that came
			 * meanwhile goes first; the fault comes again) */
			ret = aerun_segv_restore(a, t, &status);
			if (!ret)
				ret = overflow(a, t, (uint64_t)si.si_addr);
			if (ret == 1) {
				have = 1;
				have_pid = p;
				continue;
			}
			if (ret && ret != -ESRCH && !err) {
				err = ret;
				kill_all(a);
			}
			ptrace(PTRACE_CONT, p, 0, 0);
			continue;
		}
		ret = deliver(a, t, sig, &status);
		if (ret == 1) {
			have = 1;
			have_pid = p;
		} else if (ret < 0 && ret != -ESRCH) {
			err = err ? err : ret;
			kill_all(a);
			ptrace(PTRACE_CONT, p, 0, 0);
		}
	}
	/* no child left: a task still listed was never seen to go (an exec
	 * from a thread that died before aerun took its tid) */
	while (a->tasks)
		task_free(a, a->tasks);
	aerun_segv_free(a);
	return err;
}
