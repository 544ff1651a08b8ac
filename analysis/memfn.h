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

/* The most data memory one run may touch: a call past it is an error
 * (a corrupt size, or a call to trace with aecc -fno-ae-memfn). */
#define AE_MEMFN_MAX_BYTES	(512ull << 20)

/* One executable range of the code to run (the twin's text). */
struct ae_memfn_code {
	uint64_t vaddr;
	const uint8_t *bytes;
	size_t len;
};

/* Synthetic memory: every byte is `fill` except the nmarks bytes
 * mark[i].addr, which are mark[i].val (the later one where two meet;
 * strlen: nonzero up to the terminator; a compare: equal bytes up to
 * where it stops, and there the recorded ones). */
struct ae_memfn_mem {
	uint8_t fill;
	uint8_t nmarks;
	struct {
		uint64_t addr;
		uint8_t val;
	} mark[2];
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

/*
 * The synthetic memory for compare `kind` (enum ae_memfn: memcmp, strcmp,
 * strncmp) of the areas at l and r (n: the bound, for memcmp and
 * strncmp) that stopped as `stop` records (schema.h AE_MEMFN_STOP_*):
 * a fill and the two recorded bytes, checked by scanning it as the
 * instrumentation scanned the real memory (overlapping areas may need
 * the fill to be one of the recorded bytes). *limit: how many bytes of
 * each area the routine reads; *result: what it returns (its low 32
 * bits). Returns 0, or -1 with a message in err (corrupt record, or no
 * memory reproduces it).
 */
int ae_memfn_cmp_mem(struct ae_memfn_emu *e, int kind, uint64_t l, uint64_t r, uint64_t n,
		     uint64_t stop, struct ae_memfn_mem *m, uint64_t *limit, uint32_t *result,
		     char *err, size_t errlen);

#endif
