/* SPDX-License-Identifier: MIT */
/*
 * frame.h - spill slots the regenerator knows (-fae-data): a register
 * stored to a slot of its procedure's frame with a known value and loaded
 * back is known again without a record, as long as nothing the
 * regenerator does not see can have written the slot (frame.c).
 */
#ifndef AE_FRAME_H
#define AE_FRAME_H

#include <stdint.h>

#include "ir.h"

struct ae_frames {
	int nkeys;		/* slots followed (at most 64), by frame offset */
	int32_t *key_off;
	uint8_t *key_size;
	uint64_t *kill;		/* per insn: slots it may overwrite or expose */
	int8_t *gen;		/* per insn: the slot a known store fills, or -1 */
	int8_t *gen_reg;	/* the register it stores, -1: an immediate */
	int8_t *load;		/* per insn: the slot a reload reads, or -1 */
};

/*
 * Find the slots of object c (graph: predecessors of k are
 * preds[pstart[k]..pstart[k + 1]), entry[k] where a procedure may be
 * entered) into f. Returns nothing.
 */
void ae_frames_build(struct ae_frames *f, const struct ae_ctx *c, const int *pstart,
		    const int *preds, const char *entry);

/*
 * Slots known after instruction k when `in` are known before it and the
 * registers `known` (records included). Returns the set.
 */
uint64_t ae_frames_out(const struct ae_frames *f, int k, uint64_t in, uint32_t known);

/* Free what f holds. Returns nothing. */
void ae_frames_free(struct ae_frames *f);

#endif
