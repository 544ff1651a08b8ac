/* SPDX-License-Identifier: MIT */
/*
 * imgcheck.h - the .ae_check section: what aecc saw when it linked a
 * traced program and its twin, so that aetrace refuses either file once it
 * has been changed (a patched byte of the twin's code would otherwise
 * decode into a different, silently wrong trace).
 *
 * Both hashes cover, in section-header order, every section that is
 * loaded (SHF_ALLOC, not NOBITS) and the two aetrace tables (.ae_schema,
 * .ae_imap): name, size and contents, FNV-1a 64. Symbols, debug info and
 * .ae_check itself are not covered (strip -g leaves a program usable).
 * An accidental change is caught; a deliberate one that rewrites
 * .ae_check too is not (this is an integrity check, not a signature).
 */
#ifndef AETRACE_IMGCHECK_H
#define AETRACE_IMGCHECK_H

#include <gelf.h>
#include <stdint.h>
#include <string.h>

#define AE_CHECK_MAGIC		0x6b686361u	/* "achk" */
#define AE_CHECK_VERSION	2u	/* 1: without own_memfn (24 bytes) */

struct ae_check {
	uint32_t magic;
	uint32_t version;
	uint64_t prog_hash;	/* the traced program */
	uint64_t orig_hash;	/* its twin, prog.orig */
	/* bit k: the program defines (or wraps) routine k of enum ae_memfn
	 * itself, and the label the C library's callers enter by is that
	 * routine's entry, not a place past argument records */
	uint32_t own_memfn;
	uint32_t reserved;	/* 0 */
};

static inline uint64_t ae_fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/*
 * ae_elf_check_hash - the .ae_check hash of an ELF file open in libelf.
 * Returns 0 and the hash in *out, or -1 when libelf cannot read a section
 * header or its contents.
 */
static inline int ae_elf_check_hash(Elf *e, uint64_t *out)
{
	uint64_t h = 0xcbf29ce484222325ull;
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(e, &shstr))
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		Elf_Data *d = NULL;
		GElf_Shdr sh;
		uint64_t sz;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		name = elf_strptr(e, shstr, sh.sh_name);
		if (!name)
			return -1;
		if (!((sh.sh_flags & SHF_ALLOC) && sh.sh_type != SHT_NOBITS) &&
		    strcmp(name, ".ae_schema") && strcmp(name, ".ae_imap"))
			continue;
		sz = sh.sh_size;
		h = ae_fnv1a64(h, name, strlen(name) + 1);
		h = ae_fnv1a64(h, &sz, sizeof(sz));
		while ((d = elf_rawdata(scn, d)))
			if (d->d_buf)
				h = ae_fnv1a64(h, d->d_buf, d->d_size);
	}
	*out = h;
	return 0;
}

#endif
