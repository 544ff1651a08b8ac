// SPDX-License-Identifier: MIT
/* strv.c - a growing NULL-terminated argument vector */
#include <stdlib.h>

#include "strv.h"
#include "xalloc.h"

void strv_add(struct strv *s, const char *x)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = ae_xrealloc(s->v, s->cap * sizeof(char *));
	}
	s->v[s->n++] = ae_xstrdup(x);
	s->v[s->n] = NULL;
}

void strv_free(struct strv *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
