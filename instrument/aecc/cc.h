/* SPDX-License-Identifier: MIT */
/* cc.h - the gcc command line aecc compiles traced code with */
#ifndef AE_CC_H
#define AE_CC_H

#include "strv.h"

enum ae_cc_mode {
	AE_CC_PREPROCESS,	/* -E, -M, -S: the user's output, as gcc would */
	AE_CC_TRACED,		/* assembly for the instrumenter */
};

/*
 * Append to cmd "gcc", the user's cflags, the tracing musl's headers
 * (musl_dir/include and gcc's own, unless the user gave -nostdinc) and
 * -ffixed-r15 (invariant 1); in AE_CC_TRACED mode also the code-generation
 * flags the instrumenter needs (no unwind tables, no PIE, no CET, no
 * IPA-RA: calls keep the calling convention) and, before the user's,
 * functions aligned to 64 bytes (a steadier speed). The
 * caller adds the mode, output and inputs. Returns nothing.
 */
void ae_cc_cmd(struct strv *cmd, const struct strv *cflags, int nostdinc,
	       const char *musl_dir, enum ae_cc_mode mode);

#endif
