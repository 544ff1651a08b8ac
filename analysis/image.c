// SPDX-License-Identifier: MIT
/* image.c - read a static ELF executable (segments, sections, symbols) */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"

static int bad(const char *path, const char *what)
{
	fprintf(stderr, "aetrace: %s: %s\n", path, what);
	return -1;
}

int ae_image_load(struct ae_image *im, const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	const Elf64_Ehdr *eh;

	memset(im, 0, sizeof(*im));
	im->path = path;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "aetrace: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	im->size = st.st_size;
	im->file = mmap(NULL, im->size ? im->size : 1, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (im->file == MAP_FAILED)
		return bad(path, "cannot map");
	eh = (const Elf64_Ehdr *)im->file;
	if (im->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64)
		return bad(path, "not an x86-64 ELF executable");
	if (eh->e_type != ET_EXEC)
		return bad(path, "not a static non-PIE executable (built by aecc?)");
	if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->size ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->size)
		return bad(path, "truncated ELF headers");
	im->entry = eh->e_entry;
	im->text_lo = UINT64_MAX;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(im->file + eh->e_phoff) + i;
		struct ae_seg *s;

		if (ph->p_type != PT_LOAD)
			continue;
		if (im->nseg == 16 || ph->p_offset + ph->p_filesz > im->size)
			return bad(path, "bad program headers");
		s = &im->seg[im->nseg++];
		s->vaddr = ph->p_vaddr;
		s->filesz = ph->p_filesz;
		s->memsz = ph->p_memsz;
		s->data = im->file + ph->p_offset;
		s->exec = !!(ph->p_flags & PF_X);
		if (s->exec) {
			if (s->vaddr < im->text_lo)
				im->text_lo = s->vaddr;
			if (s->vaddr + s->filesz > im->text_hi)
				im->text_hi = s->vaddr + s->filesz;
		}
	}
	if (im->text_lo == UINT64_MAX)
		return bad(path, "no executable segment");
	return 0;
}

void ae_image_free(struct ae_image *im)
{
	if (im->file && im->file != MAP_FAILED)
		munmap(im->file, im->size ? im->size : 1);
	memset(im, 0, sizeof(*im));
}

const uint8_t *ae_image_ptr(const struct ae_image *im, uint64_t vaddr, size_t len)
{
	for (int i = 0; i < im->nseg; i++) {
		const struct ae_seg *s = &im->seg[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr + len <= s->filesz)
			return s->data + (vaddr - s->vaddr);
	}
	return NULL;
}

static const Elf64_Shdr *shdrs(const struct ae_image *im, int *n, const char **strtab)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->file;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->file + eh->e_shoff);

	*n = eh->e_shnum;
	if (eh->e_shstrndx >= *n || sh[eh->e_shstrndx].sh_offset >= im->size)
		return NULL;
	*strtab = (const char *)im->file + sh[eh->e_shstrndx].sh_offset;
	return sh;
}

const uint8_t *ae_image_section(const struct ae_image *im, const char *name,
				size_t *len, uint64_t *addr)
{
	const char *str;
	int n;
	const Elf64_Shdr *sh = shdrs(im, &n, &str);

	for (int i = 0; sh && i < n; i++) {
		if (strcmp(str + sh[i].sh_name, name) || sh[i].sh_type == SHT_NOBITS)
			continue;
		if (sh[i].sh_offset + sh[i].sh_size > im->size)
			return NULL;
		*len = sh[i].sh_size;
		if (addr)
			*addr = sh[i].sh_addr;
		return im->file + sh[i].sh_offset;
	}
	return NULL;
}

uint64_t ae_image_symbol(const struct ae_image *im, const char *name)
{
	const char *str;
	int n;
	const Elf64_Shdr *sh = shdrs(im, &n, &str);

	for (int i = 0; sh && i < n; i++) {
		const Elf64_Sym *sym;
		const char *names;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= (unsigned)n)
			continue;
		sym = (const Elf64_Sym *)(im->file + sh[i].sh_offset);
		names = (const char *)im->file + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (sym[k].st_value && !strcmp(names + sym[k].st_name, name))
				return sym[k].st_value;
	}
	return 0;
}
