/* SPDX-License-Identifier: MIT */
/* decode.h - what each instruction of the twin does to control flow */
#ifndef AE_DECODE_H
#define AE_DECODE_H

#include "ir.h"
#include "scan.h"

/*
 * Decode every instruction of c (placed by ae_scan_twin) with capstone and
 * classify it: branch kind and target, indirect operand, rep prefix,
 * table loads, registers written, and the setjmp/longjmp marks spread
 * over the files that define them. Returns 0, or -1 after one line on
 * stderr naming the statement (undecodable, uses r15, unsupported
 * control transfer).
 */
int ae_decode(struct ae_ctx *c, const struct ae_scan *s);

#endif
