// SPDX-License-Identifier: MIT
/* fail.c - aecc's one-line error messages */
#include <stdarg.h>
#include <stdio.h>

#include "fail.h"

int ae_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aecc: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}
