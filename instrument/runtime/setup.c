// SPDX-License-Identifier: MIT
/*
 * setup.c - choose the tracing mode at process entry (docs/INTERNALS.md,
 * "Runtime entry"): AE_CAPTURE (capture.c), kernel, then standalone
 * (aerun), then discard.
 */
#include "sys.h"

/*
 * Kernel mode (trbuf_mode.c): returns 0 when /dev/trbuf took the process,
 * in which case the kernel has loaded r15. The reference is strong when
 * trbuf_mode.c is built (runtime.mk defines AE_HAVE_TRBUF_MODE): a weak
 * undefined symbol would not pull trbuf_mode.o out of libae.a.
 */
#ifdef AE_HAVE_TRBUF_MODE
extern int ae_trbuf_register(void);
#define ae_have_trbuf_mode()	1
#else
extern int ae_trbuf_register(void) __attribute__((weak));
#define ae_have_trbuf_mode()	(ae_trbuf_register != 0)
#endif

unsigned long ae_runtime_setup(unsigned long *entry_sp);

unsigned long ae_runtime_setup(unsigned long *entry_sp)
{
	unsigned long r15;

	r15 = ae_capture_setup(entry_sp);
	if (r15)
		return r15;

	/*
	 * Kernel mode: the kernel owns r15 from now on (it reloads it at
	 * every switch-in); returning 0 tells _ae_start not to touch it. A
	 * copy taken here could be stale after a migration (invariant 1).
	 */
	if (ae_have_trbuf_mode() && ae_trbuf_register() == 0)
		return 0;
	r15 = ae_standalone_setup();
	if (r15)
		return r15;
	return ae_discard_setup();
}
