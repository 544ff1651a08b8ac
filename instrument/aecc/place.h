/* SPDX-License-Identifier: MIT */
/* place.h - choosing the edges that carry witnesses */
#ifndef AE_PLACE_H
#define AE_PLACE_H

#include "ir.h"

/*
 * Mark the witness edges (state S_WIT) of c's graph (ae_build_graph,
 * ae_link_table_loads done) so that the tracing property holds: at every
 * predicate the witnesses reachable along its two edges are disjoint, and
 * at most one side may begin with a value-cache record instead, the
 * other's witnesses then being witness bytes (schema.h ae_is_wit_byte).
 * Numbers them per component (c->comp, c->compn, c->compw). Returns 0, or
 * -1 after one line on stderr naming a branch that cannot be traced.
 */
int ae_place(struct ae_ctx *c);

/*
 * Collect into set[] (indexed by witness id) the first witnesses reached
 * from edge ei; *vc is set to 1 when a witness-free path reaches an
 * instruction whose first byte is a value-cache record's (insn.vc_first),
 * else 0. stack and color are scratch of (ne + n + 2) * 2 ints and n + 1
 * bytes. Returns 0, or -1 when a witness-free path reaches another block
 * point, an exit or a cycle.
 */
int ae_witness_set(struct ae_ctx *c, int ei, char *set, int *vc, int *stack, char *color);

#endif
