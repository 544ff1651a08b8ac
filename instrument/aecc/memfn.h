/* SPDX-License-Identifier: MIT */
/*
 * memfn.h - library routines traced by their arguments only (issue 12,
 * item 3; the paper's section 5.1 on bcopy): with -fae-data, musl's
 * memcpy, memmove, memset, strlen, stpcpy and memchr record the argument
 * registers at their entry (and a result their control flow depends on
 * before every ret), nothing in their body; the regenerator expands them
 * (analysis/memfn.c).
 */
#ifndef AE_MEMFN_H
#define AE_MEMFN_H

#include "ir.h"

/* The enum ae_memfn of a routine traced by its arguments, else 0. */
int ae_memfn_kind(const char *name);

/*
 * Find the body of every marked routine entry (instructions reachable
 * from it inside the object) and check it can be expanded offline: only
 * plain instructions, branches inside the body, calls or tail jumps to
 * other such routines and returns; nothing else in the object jumps into
 * it. A routine that fails the check loses its mark and is instrumented
 * like any code. Before ae_data_plan(). Returns nothing.
 */
void ae_memfn_plan(struct ae_ctx *c);

/* The symbol a routine's callers that made its arguments known call
 * (after the argument records), into buf. Returns buf. */
const char *ae_memfn_args_label(int kind, char *buf, size_t len);
/* Is symbol @name such a label (its object holds a routine's body)? */
int ae_memfn_is_args_label(const char *name);

/* After ae_data_plan(): the records of the routines' bodies replaced by
 * the argument records at their entry. Returns nothing. */
void ae_memfn_records(struct ae_ctx *c);

#endif
