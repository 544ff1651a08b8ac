// SPDX-License-Identifier: MIT
/*
 * seqtab.c - read the instrumentation-sequence table (__ae_seqtab) from
 * the traced program's ELF file, for rollback (invariant 3).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "aerun.h"

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t r = pread(fd, buf, len, off);

	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

/* Returns 0 (t->n may be 0 when the program has no table) or -errno. */
int aerun_seqtab_load(struct aerun_seqtab *t, const char *path, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, *strsh;
	char *names = NULL;
	int fd, ret;

	t->r = NULL;
	t->n = 0;
	t->has_schema = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	ret = read_at(fd, &eh, sizeof(eh), 0);
	if (ret || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
		snprintf(err, errlen, "%s: not an x86-64 ELF64 file with sections", path);
		ret = -ENOEXEC;
		goto err_close;
	}
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh) {
		ret = -ENOMEM;
		goto err_close;
	}
	ret = read_at(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff);
	if (ret) {
		snprintf(err, errlen, "%s: cannot read section headers at offset %llu",
			 path, (unsigned long long)eh.e_shoff);
		goto err_free_sh;
	}
	strsh = &sh[eh.e_shstrndx];
	if (strsh->sh_size > (1u << 24)) {
		ret = -ENOEXEC;
		snprintf(err, errlen, "%s: section name table too large", path);
		goto err_free_sh;
	}
	names = calloc(1, strsh->sh_size + 1);
	if (!names) {
		ret = -ENOMEM;
		goto err_free_sh;
	}
	ret = read_at(fd, names, strsh->sh_size, strsh->sh_offset);
	if (ret) {
		snprintf(err, errlen, "%s: cannot read section names at offset %llu",
			 path, (unsigned long long)strsh->sh_offset);
		goto err_free_names;
	}
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_name < strsh->sh_size &&
		    !strcmp(names + sh[i].sh_name, ".ae_schema"))
			t->has_schema = 1;
	for (int i = 0; i < eh.e_shnum; i++) {
		size_t n;

		if (sh[i].sh_name >= strsh->sh_size ||
		    strcmp(names + sh[i].sh_name, "__ae_seqtab"))
			continue;
		n = sh[i].sh_size / sizeof(struct trbuf_seq_range);
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_size % sizeof(struct trbuf_seq_range) ||
		    sh[i].sh_size > (256u << 20)) {
			snprintf(err, errlen, "%s: section __ae_seqtab has a bad size %llu",
				 path, (unsigned long long)sh[i].sh_size);
			ret = -ENOEXEC;
			goto err_free_names;
		}
		t->r = malloc(sh[i].sh_size + 1);
		if (!t->r) {
			ret = -ENOMEM;
			goto err_free_names;
		}
		ret = read_at(fd, t->r, sh[i].sh_size, sh[i].sh_offset);
		if (ret) {
			snprintf(err, errlen, "%s: cannot read __ae_seqtab at offset %llu",
				 path, (unsigned long long)sh[i].sh_offset);
			free(t->r);
			t->r = NULL;
			goto err_free_names;
		}
		for (size_t k = 0; k < n; k++) {
			if (t->r[k].start >= t->r[k].end ||
			    (k && t->r[k].start < t->r[k - 1].end)) {
				snprintf(err, errlen, "%s: __ae_seqtab entry %zu is not sorted or empty",
					 path, k);
				free(t->r);
				t->r = NULL;
				ret = -ENOEXEC;
				goto err_free_names;
			}
		}
		t->n = n;
		break;
	}
	ret = 0;
err_free_names:
	free(names);
err_free_sh:
	free(sh);
err_close:
	close(fd);
	return ret;
}

/* The sequence start if ip is strictly inside a sequence, else ip. */
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
