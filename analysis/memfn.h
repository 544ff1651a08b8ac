/* SPDX-License-Identifier: MIT */
/*
 * memfn.h - the expander of library routines traced by their arguments
 * (AE_EV_EXPAND, instrument/aecc/memfn.c): runs the twin's machine code
 * of the routine in an emulator (libunicorn) on synthetic memory that is
 * consistent with the recorded arguments and result, and reports every
 * instruction with the registers it starts with, from which the caller
 * derives the data records (dataflow.h).
 */
#ifndef AE_MEMFN_EMU_H
#define AE_MEMFN_EMU_H

#include <stddef.h>
#include <stdint.h>

#include <aetrace/dataflow.h>

struct ae_memfn_emu;

/* One executable range of the code to run (the twin's text). */
struct ae_memfn_code {
	uint64_t vaddr;
	const uint8_t *bytes;
	size_t len;
};

/* Synthetic memory: every byte is `fill` except, when has_mark, the byte
 * at mark_addr, which is `mark` (strlen: nonzero up to the terminator). */
struct ae_memfn_mem {
	uint8_t fill;
	uint8_t has_mark;
	uint8_t mark;
	uint64_t mark_addr;
};

/* Called before each instruction at pc with the registers it starts
 * with (all 16 known). Non-zero stops the run (returned by run()). */
typedef int (*ae_memfn_insn_fn)(void *ctx, uint64_t pc, const struct ae_df_state *regs);

/* A new emulator over the code ranges; NULL after a message in err. */
struct ae_memfn_emu *ae_memfn_emu_new(const struct ae_memfn_code *code, int ncode,
				      char *err, size_t errlen);
void ae_memfn_emu_free(struct ae_memfn_emu *e);

/*
 * Run from `entry` with the registers in *regs (rsp must be right; the
 * return address `ret` is written at it) until the routine returns to
 * `ret`, at most `limit` instructions. On return *regs holds the
 * registers after the routine's ret. Returns 0, the callback's non-zero
 * value, or -1 with a message in err.
 */
int ae_memfn_emu_run(struct ae_memfn_emu *e, uint64_t entry, uint64_t ret,
		     struct ae_df_state *regs, const struct ae_memfn_mem *mem,
		     uint64_t limit, ae_memfn_insn_fn fn, void *ctx,
		     char *err, size_t errlen);

#endif
