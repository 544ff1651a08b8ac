// SPDX-License-Identifier: MIT
/* xalloc.c - allocation that aborts with a message instead of failing */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void *check(void *p)
{
	if (!p) {
		fprintf(stderr, "aecc: out of memory\n");
		abort();
	}
	return p;
}

void *ae_xrealloc(void *p, size_t n)
{
	return check(realloc(p, n ? n : 1));
}

void *ae_xmalloc(size_t n)
{
	return check(malloc(n ? n : 1));
}

void *ae_xcalloc(size_t n, size_t size)
{
	return check(calloc(n ? n : 1, size ? size : 1));
}

char *ae_xstrdup(const char *s)
{
	return check(strdup(s));
}
