// SPDX-License-Identifier: MIT
/*
 * regrec.c - the registration record (include/aetrace/regrec.h): written
 * by _ae_start as the first bytes of the program's witness stream once r15
 * is set up, in every mode, so the regenerator can tell which program image
 * a task runs (a whole-system capture holds many; exec changes it).
 */
#include <linux/trbuf.h>
#include <aetrace/regrec.h>
#include "sys.h"

#define AE_AT_ENTRY	9
#define AE_AT_EXECFN	31

extern const struct trbuf_seq_range __start___ae_seqtab[] __attribute__((weak));
extern const struct trbuf_seq_range __stop___ae_seqtab[] __attribute__((weak));

/* ae_start.S: write n 8-byte words through r15, one restartable
 * sequence each. */
void ae_write_words(const unsigned long *w, unsigned long n);
void ae_write_regrec(unsigned long *entry_sp);

/* No library calls here (they would be instrumented code): plain loops
 * the compiler must not turn into memset/memcpy. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void ae_write_regrec(unsigned long *entry_sp)
{
	unsigned long words[(sizeof(struct ae_reg_record) + AE_REG_PATH_MAX) / 8];
	struct ae_reg_record *r = (struct ae_reg_record *)words;
	char *path = (char *)(r + 1);
	unsigned long argc = entry_sp[0], *p = entry_sp + 1 + argc + 1;
	const char *fn = 0;
	unsigned long entry = 0, nwords = 0, len = 0;

	while (*p)
		p++;
	for (p++; p[0]; p += 2) {
		if (p[0] == AE_AT_EXECFN)
			fn = (const char *)p[1];
		else if (p[0] == AE_AT_ENTRY)
			entry = p[1];
	}
	for (unsigned long i = 0; i < sizeof(words) / 8; i++)
		words[i] = 0;
	if (__start___ae_seqtab && __stop___ae_seqtab)
		nwords = (__stop___ae_seqtab - __start___ae_seqtab) * 2;
	r->magic = AE_REG_MAGIC;
	r->version = AE_REG_VERSION;
	r->image_id = ae_image_id((const __u32 *)__start___ae_seqtab, nwords, entry);
	r->entry = entry;
	while (fn && fn[len] && len < AE_REG_PATH_MAX - 1) {
		path[len] = fn[len];
		len++;
	}
	len = (len + 1 + 7) & ~7ul;		/* the NUL, padded */
	r->len = sizeof(*r) + len;
	ae_write_words(words, r->len / 8);
}
