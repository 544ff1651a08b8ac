/* The SIGSEGV handler of vc_signal.c, built with -fno-ae-vcache: a fault
 * on a store into the cache main made read-only (or elsewhere on its
 * pages: vc_lo, vc_hi) makes it writable again, then runs touch() as the interrupted
 * code did. Installed here, where its address is taken, so that its entry
 * records %rsp. SIGALRM waits while it runs: that handler's stores would
 * fault again. */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

uintptr_t vc_lo, vc_hi;
volatile unsigned int vc_faults;

void handler_touch(void);

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)sig;
	(void)uc;
	if (a < vc_lo || a >= vc_hi || mprotect((void *)vc_lo, vc_hi - vc_lo, PROT_READ | PROT_WRITE))
		_exit(3);
	vc_faults++;
	handler_touch();
}

void vc_catch_faults(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_RESTART | SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaction(SIGSEGV, &sa, NULL);
}
