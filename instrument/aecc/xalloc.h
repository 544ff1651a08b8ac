/* SPDX-License-Identifier: MIT */
/*
 * xalloc.h - allocation for a short-lived compiler driver: on failure
 * print "aecc: out of memory" and abort, so callers need no NULL checks.
 */
#ifndef AE_XALLOC_H
#define AE_XALLOC_H

#include <stddef.h>

/* realloc(p, n) (n == 0 counts as 1). Returns the block, never NULL. */
void *ae_xrealloc(void *p, size_t n);
/* malloc(n). Returns the block, never NULL. */
void *ae_xmalloc(size_t n);
/* calloc(n, size). Returns the zeroed block, never NULL. */
void *ae_xcalloc(size_t n, size_t size);
/* strdup(s). Returns the copy, never NULL. */
char *ae_xstrdup(const char *s);

#endif
