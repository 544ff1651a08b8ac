// SPDX-License-Identifier: MIT
/* cc.c - the one place the traced-compile command is built */
#include <limits.h>
#include <stdio.h>

#include "cc.h"

void ae_cc_cmd(struct strv *cmd, const struct strv *cflags, int nostdinc,
	       const char *musl_dir, enum ae_cc_mode mode)
{
	strv_add(cmd, "gcc");
	/* Instrumented functions are large, and where one starts within a
	 * cache line moved Lua's traced time by 6-20% from one build to the
	 * next (docs/ARCHITECTURE.md item 23); before the user's flags, so
	 * that their -falign-functions=N wins (gcc 12 keeps 64 for a bare
	 * -falign-functions or -fno-align-functions after it; =1 turns it
	 * off). The twin is assembled from the same code. */
	if (mode == AE_CC_TRACED)
		strv_add(cmd, "-falign-functions=64");
	for (int i = 0; i < cflags->n; i++)
		strv_add(cmd, cflags->v[i]);
	if (!nostdinc) {
		char inc[PATH_MAX + 16];

		strv_add(cmd, "-nostdinc");
		snprintf(inc, sizeof(inc), "%s/include", musl_dir);
		strv_add(cmd, "-isystem");
		strv_add(cmd, inc);
		strv_add(cmd, "-isystem");
		strv_add(cmd, GCC_INCLUDE_DIR);
	}
	strv_add(cmd, "-ffixed-r15");
	if (mode == AE_CC_TRACED) {
		strv_add(cmd, "-fno-asynchronous-unwind-tables");
		strv_add(cmd, "-fno-unwind-tables");
		strv_add(cmd, "-fno-pie");
		strv_add(cmd, "-fcf-protection=none");
		/* every call may clobber the caller-saved registers: the
		 * value cache's code (-fae-data) uses one that is dead by the
		 * calling convention, so no caller may keep a value there
		 * because it knows the callee leaves it alone */
		strv_add(cmd, "-fno-ipa-ra");
	}
}
