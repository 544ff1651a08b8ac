/* SPDX-License-Identifier: MIT */
/* layout.h - the linked programs' segments and data sections */
#ifndef AE_LAYOUT_H
#define AE_LAYOUT_H

#include <stdint.h>

struct seg_info {
	uint64_t rodata;	/* first read-only PT_LOAD above the text */
	uint32_t nseq;		/* entries in __ae_seqtab */
};

/*
 * Sort prog's __ae_seqtab in place (the kernel and aerun search it) and
 * find its read-only data segment. Returns 0, or -1 after one line on
 * stderr (unreadable, overlapping sequences).
 */
int ae_fixup_prog(const char *prog, struct seg_info *si);

/*
 * Check the twin's invariant: every data section of prog and orig at the
 * same address, with the same size. Returns 0, or -1 after one line on
 * stderr naming the first difference.
 */
int ae_check_layout(const char *prog, const char *orig);

#endif
