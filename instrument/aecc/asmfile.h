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

int ae_asm_parse(struct ae_asm *a, const char *path, const char *buf, size_t len);
void ae_asm_free(struct ae_asm *a);
/* Mnemonic of an instruction statement (after prefixes) and its operands. */
void ae_insn_split(const char *text, char *mnem, size_t mlen, const char **ops);

#endif
