/* SPDX-License-Identifier: MIT */
/* regs.h - x86-64 general-purpose registers by index (0 rax .. 15 r15) */
#ifndef AE_REGS_H
#define AE_REGS_H

#include <capstone/capstone.h>

/* AT&T names (without %) of each register's 8-, 4-, 2- and 1-byte forms. */
extern const char *const ae_reg64[16];
extern const char *const ae_reg32[16];
extern const char *const ae_reg16[16];
extern const char *const ae_reg8[16];

/*
 * Returns the index 0..15 of capstone register `reg` (a 64-bit GPR or one
 * of its sub-registers), or -1 for any other register.
 */
int ae_gpr_index(csh h, unsigned int reg);
/* Bytes of capstone register reg: 8, 4, 2, 1 for a GPR, else 0 (ah..dh too). */
int ae_gpr_width(csh h, unsigned int reg);

#endif
