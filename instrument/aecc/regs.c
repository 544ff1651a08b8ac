// SPDX-License-Identifier: MIT
/* regs.c - general-purpose register names and capstone's register ids */
#include <string.h>

#include "regs.h"

const char *const ae_reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
const char *const ae_reg32[16] = {
	"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	"r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d",
};
const char *const ae_reg16[16] = {
	"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
	"r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w",
};
const char *const ae_reg8[16] = {
	"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
	"r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b",
};

int ae_gpr_width(csh h, unsigned int reg)
{
	static const char *const *const names[4] = { ae_reg64, ae_reg32, ae_reg16, ae_reg8 };
	const char *name;

	if (reg == X86_REG_INVALID)
		return 0;
	name = cs_reg_name(h, reg);
	if (!name)
		return 0;
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 16; i++)
			if (!strcmp(name, names[w][i]))
				return 8 >> w;
	return 0;
}

int ae_gpr_index(csh h, unsigned int reg)
{
	const char *name;

	if (reg == X86_REG_INVALID)
		return -1;
	name = cs_reg_name(h, reg);
	if (!name)
		return -1;
	for (int i = 0; i < 16; i++)
		if (!strcmp(name, ae_reg64[i]) || !strcmp(name, ae_reg32[i]) ||
		    !strcmp(name, ae_reg16[i]) || !strcmp(name, ae_reg8[i]))
			return i;
	return -1;
}
