/* SPDX-License-Identifier: MIT */
/* fail.h - aecc's one-line error messages */
#ifndef AE_FAIL_H
#define AE_FAIL_H

/* Print "aecc: message" and a newline on stderr. Returns -1. */
int ae_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
