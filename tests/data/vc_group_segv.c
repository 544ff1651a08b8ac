/* The SIGSEGV handler of vc_group.c, built with -fno-ae-vcache: a fault
 * on the page of the value cache main made inaccessible (vc_lo, vc_hi)
 * makes it accessible again. Where the interrupted code is a group's
 * compare, the handler runs call_take() with its own pointers (once for
 * each protection), changing the slots the group compares; if that
 * compare reads another page than the fault's, the fault came at a later
 * one, inside the sequence, which aerun rolled back to its first
 * (counted: the sequence must compare them all again). Installed here,
 * where its address is taken, so that its entry records %rsp. SIGALRM
 * waits while it runs. */
#define _GNU_SOURCE	/* REG_RIP */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

uintptr_t vc_lo, vc_hi;
volatile unsigned int vc_faults, vc_inside, vc_armed;

void handler_touch(void);

/* The slot a group's compare at ip reads, `cmp %fs:disp32, %reg`
 * (64 [REX] 3b, ModRM mod 00 rm 100, SIB 25, disp32), or 0 for any
 * other instruction. */
static uintptr_t group_cmp_slot(const unsigned char *ip)
{
	uintptr_t tp;
	uint32_t disp;

	if (*ip++ != 0x64)
		return 0;
	if ((*ip & 0xf0) == 0x40)
		ip++;
	if (ip[0] != 0x3b || (ip[1] & 0xc7) != 0x04 || ip[2] != 0x25)
		return 0;
	disp = ip[3] | (uint32_t)ip[4] << 8 | (uint32_t)ip[5] << 16 | (uint32_t)ip[6] << 24;
	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp + (intptr_t)(int32_t)disp;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	const ucontext_t *u = uc;
	uintptr_t a = (uintptr_t)si->si_addr, s;

	(void)sig;
	if (a < vc_lo || a >= vc_hi ||
	    mprotect((void *)(a & ~(uintptr_t)4095), 4096, PROT_READ | PROT_WRITE))
		_exit(3);
	vc_faults++;
	s = group_cmp_slot((const unsigned char *)u->uc_mcontext.gregs[REG_RIP]);
	if (s && (s & ~(uintptr_t)4095) != (a & ~(uintptr_t)4095))
		vc_inside++;
	if (s && vc_armed) {
		vc_armed = 0;
		handler_touch();
	}
}

void vc_catch_faults(void)
{
	struct sigaction sa = {
		.sa_sigaction = on_segv, .sa_flags = SA_RESTART | SA_SIGINFO | SA_NODEFER,
	};

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaction(SIGSEGV, &sa, NULL);
}
