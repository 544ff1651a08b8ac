/* SPDX-License-Identifier: MIT */
/* events.h - the schema events (include/aetrace/schema.h) of one object */
#ifndef AE_EVENTS_H
#define AE_EVENTS_H

#include "ir.h"

/*
 * Derive c->ev (witnesses and value records per instruction) and c->pool
 * (predicate witness sets) from the placed witnesses. Returns nothing
 * (allocation failures abort).
 */
void ae_make_events(struct ae_ctx *c);

/*
 * Stable-sort c->ev by instruction: the order of the events of one
 * instruction is the order in which its trace bytes are written.
 * Returns nothing.
 */
void ae_sort_events(struct ae_ctx *c);

/*
 * Write the schema of c (struct ae_schema_obj, events, pool) to `path`.
 * Returns 0, or -1 after one line on stderr naming the file.
 */
int ae_write_schema(const struct ae_ctx *c, const char *path);

#endif
