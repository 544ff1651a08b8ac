/* SPDX-License-Identifier: MIT */
/*
 * twin.h - the uninstrumented twins aecc embeds in its objects (.ae_orig),
 * taken out again for linking prog.orig.
 */
#ifndef AE_TWIN_H
#define AE_TWIN_H

#include <stddef.h>

#include "link.h"

/* Write the twin embedded in object `obj` to `dst`. Returns 0, or -1
 * after one line on stderr. */
int ae_twin_obj(const char *obj, const char *dst);

/*
 * The twin of archive `ar` (every member's embedded object, same order),
 * its path in dst (n bytes): cached by path, size and mtime in
 * $AE_CACHE/twin-ar, since libc.a is large. Returns 0, or -1 after one
 * line on stderr.
 */
int ae_twin_archive(const struct ae_link_opts *o, const char *ar, char *dst, size_t n);

#endif
