/* SPDX-License-Identifier: MIT */
/* emit.h - writing the twin and the instrumented assembly of one object */
#ifndef AE_EMIT_H
#define AE_EMIT_H

#include "ir.h"

/*
 * Write the twin's assembly for c->a to `path`: the source unchanged, a
 * label .LaeiK before instruction K, and the .ae_imap table of them.
 * Returns 0, or -1 after one line on stderr naming the file.
 */
int ae_write_twin_asm(struct ae_ctx *c, const char *path);

/*
 * Write the instrumented assembly of c (events sorted) to `path`,
 * embedding the files `orig_o` (the twin object) and `schema_bin`.
 * Returns 0, or -1 after one line on stderr naming the file.
 */
int ae_write_instrumented_asm(struct ae_ctx *c, const char *path,
			      const char *orig_o, const char *schema_bin);

#endif
