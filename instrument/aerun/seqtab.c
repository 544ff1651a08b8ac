// SPDX-License-Identifier: MIT
/*
 * seqtab.c - read the instrumentation-sequence table (__ae_seqtab) from
 * the traced program's ELF file through libelf, for rollback (invariant 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "aerun.h"

/* Largest __ae_seqtab accepted: far above any real program's. */
#define SEQTAB_MAX_BYTES	(256u << 20)

/*
 * Copy the __ae_seqtab section into t after checking its size and order.
 * Returns 0 or -ENOEXEC/-ENOMEM with err filled.
 */
static int seqtab_copy(struct aerun_seqtab *t, Elf_Scn *scn, const GElf_Shdr *sh,
		       const char *path, char *err, size_t errlen)
{
	Elf_Data *d;
	size_t n;

	if (sh->sh_type == SHT_NOBITS || sh->sh_size % sizeof(struct trbuf_seq_range) ||
	    sh->sh_size > SEQTAB_MAX_BYTES) {
		snprintf(err, errlen, "%s: section __ae_seqtab has a bad size %llu",
			 path, (unsigned long long)sh->sh_size);
		return -ENOEXEC;
	}
	n = sh->sh_size / sizeof(struct trbuf_seq_range);
	d = elf_rawdata(scn, NULL);
	if (!d || d->d_size != sh->sh_size) {
		snprintf(err, errlen, "%s: cannot read __ae_seqtab at offset %llu: %s",
			 path, (unsigned long long)sh->sh_offset,
			 d ? "section runs past the end of the file" : elf_errmsg(-1));
		return -ENOEXEC;
	}
	t->r = malloc(sh->sh_size + 1);
	if (!t->r) {
		snprintf(err, errlen, "%s: out of memory for __ae_seqtab", path);
		return -ENOMEM;
	}
	memcpy(t->r, d->d_buf, sh->sh_size);
	for (size_t k = 0; k < n; k++) {
		/* a twin keeps the section, zeroed: say what it is */
		if (!k && !t->r[0].start && !t->r[0].end) {
			snprintf(err, errlen, "%s: its __ae_seqtab is zeroed: a twin (PROG.orig)? trace the program aecc built beside it",
				 path);
			free(t->r);
			t->r = NULL;
			return -ENOEXEC;
		}
		if (t->r[k].start >= t->r[k].end ||
		    (k && t->r[k].start < t->r[k - 1].end)) {
			snprintf(err, errlen, "%s: __ae_seqtab entry %zu is not sorted or empty",
				 path, k);
			free(t->r);
			t->r = NULL;
			return -ENOEXEC;
		}
	}
	t->n = n;
	return 0;
}

/*
 * Load path's __ae_seqtab into t and note whether it has an .ae_schema.
 * Returns 0 (t->n may be 0 when the program has no table) or -errno with
 * one line naming path and the cause in err.
 */
int aerun_seqtab_load(struct aerun_seqtab *t, const char *path, char *err, size_t errlen)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct stat st;
	size_t shnum, strndx;
	int fd, ret = 0;

	t->r = NULL;
	t->n = 0;
	t->has_schema = 0;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "%s: not an x86-64 ELF64 file", path);
		ret = -ENOEXEC;
		goto err_end;
	}
	if (elf_getshdrnum(e, &shnum) || elf_getshdrstrndx(e, &strndx)) {
		snprintf(err, errlen, "%s: bad section headers at offset %llu: %s",
			 path, (unsigned long long)eh.e_shoff, elf_errmsg(-1));
		ret = -ENOEXEC;
		goto err_end;
	}
	/* libelf shows headers cut off by the end of the file as no sections */
	if (!shnum)
		shnum = eh.e_shnum;
	if (fstat(fd, &st) || (shnum && (eh.e_shoff > (uint64_t)st.st_size ||
	    shnum > ((uint64_t)st.st_size - eh.e_shoff) / sizeof(Elf64_Shdr)))) {
		snprintf(err, errlen, "%s: %zu section headers at offset %llu run past the end of the file",
			 path, shnum, (unsigned long long)eh.e_shoff);
		ret = -ENOEXEC;
		goto err_end;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh)) {
			snprintf(err, errlen, "%s: bad section header %zu: %s",
				 path, elf_ndxscn(scn), elf_errmsg(-1));
			ret = -ENOEXEC;
			break;
		}
		name = elf_strptr(e, strndx, sh.sh_name);
		if (!name) {
			snprintf(err, errlen, "%s: section %zu has a bad name offset %u: %s",
				 path, elf_ndxscn(scn), sh.sh_name, elf_errmsg(-1));
			ret = -ENOEXEC;
			break;
		}
		if (!strcmp(name, ".ae_schema"))
			t->has_schema = 1;
		else if (!strcmp(name, "__ae_seqtab") && !t->r) {
			ret = seqtab_copy(t, scn, &sh, path, err, errlen);
			if (ret)
				break;
		}
	}
	if (ret) {
		free(t->r);
		t->r = NULL;
		t->n = 0;
		t->has_schema = 0;
	}
err_end:
	elf_end(e);
	close(fd);
	return ret;
}

/* Returns the sequence start if ip is strictly inside a sequence, else ip. */
uint64_t aerun_seqtab_rollback(const struct aerun_seqtab *t, uint64_t ip)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < t->r[mid].start)
			hi = mid;
		else if (ip >= t->r[mid].end)
			lo = mid + 1;
		else
			return ip > t->r[mid].start ? t->r[mid].start : ip;
	}
	return ip;
}
