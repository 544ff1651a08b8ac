/* SPDX-License-Identifier: MIT */
/* data.h - register records for exact data address traces (-fae-data) */
#ifndef AE_DATA_H
#define AE_DATA_H

#include "ir.h"
#include "scan.h"

/*
 * Decide which registers c records before and after each instruction
 * (rec_before, rec_after, drec) so that the regenerator knows every
 * address. Needs the graph (ae_build_graph) and x->df; runs before
 * witness placement, which must end witness paths at records. Returns 0,
 * or -1 after one line on stderr.
 */
int ae_data_plan(struct ae_ctx *c, const struct ae_scan *s);

/* Add instruction k's data record events through `add`, after its other
 * events. Returns nothing. */
void ae_data_events(struct ae_ctx *c, int k,
		    void (*add)(struct ae_ctx *c, int k, int kind, int width, int flag,
				uint32_t a, uint32_t b));

#endif
