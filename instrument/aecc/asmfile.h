/* SPDX-License-Identifier: MIT */
/* asmfile.h - GNU as source (.s) split into statements */
#ifndef AE_ASMFILE_H
#define AE_ASMFILE_H

#include <stddef.h>

enum ae_stmt_kind {
	AE_ST_LABEL,		/* "name:" */
	AE_ST_DIRECTIVE,	/* ".xxx ..." */
	AE_ST_INSN,		/* an instruction (prefixes merged) */
};

struct ae_stmt {
	enum ae_stmt_kind kind;
	char *text;		/* trimmed statement, label without ':' */
	int line;		/* 1-based source line */
	int exec;		/* in an executable section */
	int insn;		/* instruction index, or -1 */
};

struct ae_asm {
	const char *path;
	struct ae_stmt *st;
	size_t n, cap;
	int ninsn;
};

/*
 * Split buf (len bytes of the file `path`) into a->st: comments dropped,
 * prefix-only lines merged into the next instruction, each statement
 * marked with whether it lies in an executable section, instructions
 * there numbered. Returns 0, or -1 when out of memory (a holds what was
 * parsed; free it with ae_asm_free()).
 */
int ae_asm_parse(struct ae_asm *a, const char *path, const char *buf, size_t len);
/* Free what ae_asm_parse() allocated. Returns nothing. */
void ae_asm_free(struct ae_asm *a);
/*
 * Split an instruction statement into its mnemonic after any prefixes
 * (into mnem, empty when longer than mlen - 1) and its operands (*ops
 * points into text). Returns nothing.
 */
void ae_insn_split(const char *text, char *mnem, size_t mlen, const char **ops);
/*
 * The memory operand of a two-operand load "mov SRC, DST" (its text up
 * to the first comma outside parentheses), into buf of len bytes.
 * Returns buf, or NULL when that is no register-based memory operand
 * (or longer than len - 1, with a segment, or naming a numeric label).
 */
const char *ae_load_operand(const char *text, char *buf, size_t len);
#define AE_LOAD_OPERAND_MAX	128
/*
 * The table an instruction's memory operand names by a bare symbol
 * (`jmp *.L38(,%rax,8)`, `mov disptab.0(,%rax,8), %rax`): how many
 * `.quad` values follow that symbol's label, where GCC's shape shows
 * that the table ends there: the text then leaves the section, and what
 * the section holds next in the file is another table an instruction
 * indexes, or nothing. The object's relocations cannot tell where one
 * table ends and the next begins. Returns the number, or -1 when the
 * operand is no bare symbol or the table may go on (another label or
 * directive inside it; before its end, section stacks, subsections,
 * repetition, macros, conditions, section groups or unique ids, or any
 * section directive but GCC's own spelling).
 */
int ae_asm_table_len(const struct ae_asm *a, const char *insn_text);

#endif
