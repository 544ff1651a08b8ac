// SPDX-License-Identifier: MIT
/*
 * discard.c - neither /dev/trbuf nor aerun: witnesses go to a private,
 * pre-faulted buffer that wraps on overflow. A store into the guard page
 * after it faults; the SIGSEGV handler rolls back a cut sequence and
 * resets r15 to the buffer start.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/trbuf.h>
#include "sys.h"

#ifndef __NR_seccomp
#define __NR_seccomp 317
#endif
#define AE_PR_SET_NO_NEW_PRIVS	38

/*
 * The discard buffer's guard page needs our SIGSEGV handler, and programs
 * (bzip2, for one) install their own. In this mode only, a seccomp filter
 * turns the program's attempts to set a SIGSEGV handler into no-ops that
 * succeed (with aerun or the tracing kernel, overflow needs no handler).
 * The filter outlives an exec: the runtime's own install carries
 * AE_DISCARD_TAG in the upper half of the signal number, which the kernel
 * ignores (sig is an int) and the filter lets through, so that a traced
 * program exec'd by another installs its handler too (it used to die at
 * its buffer's first wrap).
 */
#define AE_DISCARD_TAG		0x41450000UL	/* "AE" */

static void ae_discard_keep_handler(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4),			/* arch */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 10),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),			/* nr */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, 0, 8),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),			/* signal */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AE_SIGSEGV, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20),			/* its tag */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AE_DISCARD_TAG, 4, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 24),			/* act, low */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 28),			/* act, high */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (ae_sys2(157 /* prctl */, AE_PR_SET_NO_NEW_PRIVS, 1) < 0 ||
	    ae_sys3(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		ae_write_str(2, "aetrace: cannot protect the discard SIGSEGV handler; a program that sets its own may crash\n");
}

#define AE_DISCARD_SIZE		(1UL << 20)
#define AE_DISCARD_GUARD	AE_PAGE_SIZE

static void ae_discard_segv(int sig, void *si, void *uc)
{
	unsigned long addr = *(unsigned long *)((char *)si + AE_SI_ADDR_OFF);
	unsigned long *gregs = (unsigned long *)((char *)uc + AE_UC_GREGS_OFF);
	unsigned long guard = TRBUF_MAP_ADDR + AE_DISCARD_SIZE;

	if (addr >= guard && addr < guard + AE_DISCARD_GUARD) {
		gregs[AE_REG_RIP] = ae_seq_rollback(gregs[AE_REG_RIP]);
		gregs[AE_REG_R15] = TRBUF_MAP_ADDR;
		return;
	}
	/*
	 * A real fault of the program: the default action on the re-fault.
	 * The seccomp filter makes resetting the handler a no-op, so the
	 * handler also returns with SIGSEGV blocked: a fault's SIGSEGV that
	 * finds it blocked takes the default action (the kernel unblocks it
	 * and resets the handler). A SIGSEGV sent by kill() is ignored.
	 */
	struct ae_ksigaction dfl = { 0 };

	ae_sys4(__NR_rt_sigaction, AE_SIGSEGV, &dfl, 0, 8);
	if (*(int *)((char *)si + AE_SI_CODE_OFF) > 0)
		*(unsigned long *)((char *)uc + AE_UC_SIGMASK_OFF) |= 1UL << (AE_SIGSEGV - 1);
}

unsigned long ae_discard_setup(void)
{
	struct ae_ksigaction sa = {
		.handler = (void *)ae_discard_segv,
		.flags = AE_SA_SIGINFO | AE_SA_RESTORER | AE_SA_NODEFER,
		.restorer = (void *)ae_rt_restorer,
		.mask = 0,
	};
	unsigned long addr;

	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, AE_DISCARD_SIZE + AE_DISCARD_GUARD,
		       AE_PROT_NONE,
		       AE_MAP_PRIVATE | AE_MAP_ANONYMOUS | AE_MAP_NORESERVE |
		       AE_MAP_FIXED_NOREPLACE, -1, 0);
	if (addr != TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: cannot reserve the discard buffer at 0x500000000000\n");
	addr = ae_sys6(__NR_mmap, TRBUF_MAP_ADDR, AE_DISCARD_SIZE, AE_PROT_RW,
		       AE_MAP_PRIVATE | AE_MAP_ANONYMOUS | AE_MAP_FIXED |
		       AE_MAP_POPULATE, -1, 0);
	if (addr != TRBUF_MAP_ADDR)
		ae_die("aetrace runtime: cannot map the discard buffer\n");
	if (ae_sys4(__NR_rt_sigaction, AE_SIGSEGV | AE_DISCARD_TAG << 32, &sa, 0, 8) < 0)
		ae_die("aetrace runtime: cannot install the discard SIGSEGV handler\n");
	ae_discard_keep_handler();
	ae_write_str(2, "aetrace: no /dev/trbuf and not under aerun: witnesses are discarded\n");
	return TRBUF_MAP_ADDR;
}
