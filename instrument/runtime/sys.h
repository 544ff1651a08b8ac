/* SPDX-License-Identifier: MIT */
/*
 * sys.h - raw system calls for the tracing runtime. The runtime may not
 * call libc: libc is instrumented and would write witnesses before r15 is
 * set up.
 */
#ifndef AE_RT_SYS_H
#define AE_RT_SYS_H

#include <asm/unistd.h>

static inline long ae_sys6(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define ae_sys0(n)			ae_sys6(n, 0, 0, 0, 0, 0, 0)
#define ae_sys1(n, a)			ae_sys6(n, (long)(a), 0, 0, 0, 0, 0)
#define ae_sys2(n, a, b)		ae_sys6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define ae_sys3(n, a, b, c)		ae_sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define ae_sys4(n, a, b, c, d)		ae_sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* Kernel ABI constants (the runtime does not include libc headers). */
#define AE_PROT_NONE		0x0
#define AE_PROT_RW		0x3
#define AE_MAP_SHARED		0x01
#define AE_MAP_PRIVATE		0x02
#define AE_MAP_FIXED		0x10
#define AE_MAP_ANONYMOUS	0x20
#define AE_MAP_NORESERVE	0x4000
#define AE_MAP_POPULATE		0x8000
#define AE_MAP_FIXED_NOREPLACE	0x100000
#define AE_F_GETFD		1
#define AE_SIGSEGV		11
#define AE_SA_SIGINFO		0x00000004
#define AE_SA_RESTORER		0x04000000
#define AE_SA_NODEFER		0x40000000
#define AE_SEGV_ACCERR		2
#define AE_EBADF		9
#define AE_PAGE_SIZE		4096UL

/* Kernel's struct sigaction for rt_sigaction (x86-64). */
struct ae_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

/* The parts of siginfo and ucontext the runtime reads (x86-64 layout,
 * see <sys/ucontext.h>: uc_mcontext.gregs starts at byte 40). */
#define AE_SI_ADDR_OFF		16
#define AE_UC_GREGS_OFF		40
/* struct ucontext: uc_sigmask, after uc_mcontext's 256 bytes; siginfo's si_code */
#define AE_UC_SIGMASK_OFF	296
#define AE_SI_CODE_OFF		8
#define AE_REG_R15		7
#define AE_REG_RIP		16

static inline long ae_write_str(int fd, const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return ae_sys3(__NR_write, fd, s, n);
}

static inline void __attribute__((noreturn)) ae_die(const char *msg)
{
	ae_write_str(2, msg);
	for (;;)
		ae_sys1(__NR_exit_group, 127);
}

/* Rollback helpers (seqtab.c). */
struct trbuf_seq_range;
unsigned long ae_seq_rollback(unsigned long ip);

/* Mode setup; each returns the initial r15, 0 when the mode is absent,
 * or does not return on a fatal error. */
unsigned long ae_standalone_setup(void);
unsigned long ae_discard_setup(void);
unsigned long ae_capture_setup(unsigned long *entry_sp);
void ae_capture_exit(unsigned long r15, unsigned long exit_entry);
void ae_rt_restorer(void);

#endif /* AE_RT_SYS_H */
