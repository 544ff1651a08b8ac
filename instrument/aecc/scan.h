/* SPDX-License-Identifier: MIT */
/*
 * scan.h - reading the assembled twin object: where each instruction was
 * placed (through the .ae_imap labels), the relocations that name direct
 * targets and jump tables, and the function symbols.
 */
#ifndef AE_SCAN_H
#define AE_SCAN_H

#include <libelf.h>
#include <stdint.h>

#include "ir.h"

struct reloc {
	int sec;		/* section the relocation applies to */
	uint64_t off;
	int symsec;		/* section of the symbol, 0 if undefined */
	uint64_t symval;
	int64_t addend;
	int sym_is_func;
	int sym_weak;		/* a weak definition: the link may pick another */
	uint32_t type;
};

struct ae_scan {
	int fd;
	Elf *elf;
	struct reloc *r;	/* sorted by (sec, off) */
	int nr;
	Elf_Data **secdata;	/* PROGBITS contents by section index */
	size_t nsec;
	int *sec_exec;
};

/*
 * Open the twin object `path` assembled from c->a and fill in c->in (one
 * per instruction statement: place, function starts, setjmp/longjmp/_Exit
 * entries) and c->by_place. Returns 0, or -1 after one line on stderr;
 * ae_scan_close() must be called either way.
 */
int ae_scan_twin(struct ae_ctx *c, const char *path, struct ae_scan *s);
/* Release what ae_scan_twin() holds. Returns nothing. */
void ae_scan_close(struct ae_scan *s);

/* Returns the relocation at (sec, off), or NULL. */
struct reloc *ae_find_reloc(const struct ae_scan *s, int sec, uint64_t off);
/* Returns the instruction placed at (sec, off), or -1. */
int ae_insn_at(const struct ae_ctx *c, int sec, uint64_t off);
/* Returns the number of jump-table entries (consecutive 8-byte
 * relocations to code, at most max unless max < 0: tables written one
 * after another are one run of them) at (sec, off), 0 if none. */
int ae_table_entries(const struct ae_scan *s, int sec, uint64_t off, int max);

#endif
