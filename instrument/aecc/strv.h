/* SPDX-License-Identifier: MIT */
/* strv.h - a growing NULL-terminated argument vector */
#ifndef AE_STRV_H
#define AE_STRV_H

struct strv {
	char **v;		/* NULL-terminated once anything was added */
	int n, cap;
};

/* Append a copy of x. Returns nothing (allocation failures abort). */
void strv_add(struct strv *s, const char *x);
/* Free the copies and the vector. Returns nothing. */
void strv_free(struct strv *s);

#endif
