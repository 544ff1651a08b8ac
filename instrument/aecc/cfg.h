/* SPDX-License-Identifier: MIT */
/* cfg.h - the instruction-level control-flow graph of one object */
#ifndef AE_CFG_H
#define AE_CFG_H

#include "ir.h"

/*
 * Add the edges of every decoded instruction of c (exits go to vertex
 * c->n), estimate loop depths and weigh the edges for the spanning tree.
 * Returns nothing (allocation failures abort).
 */
void ae_build_graph(struct ae_ctx *c);

/*
 * Find computed-goto dispatch (a table load feeding `jmp *%r`), whose
 * table index is recorded at the load instead of the target at the jump;
 * sets tload/from_tload. Returns nothing.
 */
void ae_link_table_loads(struct ae_ctx *c);

/*
 * Returns nonzero when x moves a return address through memory (musl's
 * sigsetjmp keeps it in the jmp_buf), which the regenerator must follow.
 */
int ae_moves_retaddr(const struct insn *x);

/*
 * Returns nonzero when reaching x ends a witness path: the regenerator
 * needs the path decided there (calls, indirect jumps, rep, setjmp,
 * return-address moves, table loads).
 */
int ae_is_block(const struct insn *x);

#endif
