// SPDX-License-Identifier: MIT
/* image.c - read a static ELF executable (segments, sections, symbols)
 * through libelf */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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
	GElf_Ehdr eh;
	size_t phnum;
	Elf *e;

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
	if (elf_version(EV_CURRENT) == EV_NONE)
		return bad(path, "libelf is out of date");
	e = elf_memory((char *)im->file, im->size);
	im->elf = e;
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return bad(path, "not an x86-64 ELF executable");
	if (eh.e_type != ET_EXEC)
		return bad(path, "not a static non-PIE executable (built by aecc?)");
	if (elf_getphdrnum(e, &phnum) || eh.e_phoff > im->size ||
	    phnum > (im->size - eh.e_phoff) / sizeof(Elf64_Phdr) ||
	    eh.e_shoff > im->size || eh.e_shnum > (im->size - eh.e_shoff) / sizeof(Elf64_Shdr))
		return bad(path, "truncated ELF headers");
	im->entry = eh.e_entry;
	im->text_lo = UINT64_MAX;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct ae_seg *s;

		if (!gelf_getphdr(e, i, &ph))
			return bad(path, "truncated ELF headers");
		if (ph.p_type != PT_LOAD)
			continue;
		if (im->nseg == 16 || ph.p_offset > im->size || ph.p_filesz > im->size - ph.p_offset)
			return bad(path, "bad program headers");
		s = &im->seg[im->nseg++];
		s->vaddr = ph.p_vaddr;
		s->filesz = ph.p_filesz;
		s->memsz = ph.p_memsz;
		s->data = im->file + ph.p_offset;
		s->exec = !!(ph.p_flags & PF_X);
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
	if (im->elf)
		elf_end(im->elf);
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

const uint8_t *ae_image_section(const struct ae_image *im, const char *name,
				size_t *len, uint64_t *addr)
{
	Elf *e = im->elf;
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (!e || elf_getshdrstrndx(e, &strndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, strndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (sh.sh_offset > im->size || sh.sh_size > im->size - sh.sh_offset)
			return NULL;
		*len = sh.sh_size;
		if (addr)
			*addr = sh.sh_addr;
		return im->file + sh.sh_offset;
	}
	return NULL;
}

/* The first symbol for which match(sym, its name, arg) holds, into
 * *out. Returns 1, or 0 if none does. */
static int find_symbol(const struct ae_image *im,
		       int (*match)(const GElf_Sym *sym, const char *name, const void *arg),
		       const void *arg, GElf_Sym *out)
{
	Elf *e = im->elf;
	Elf_Scn *scn = NULL;

	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t k = 0; d && k < sh.sh_size / sh.sh_entsize; k++)
			if (gelf_getsym(d, k, out) &&
			    match(out, elf_strptr(e, sh.sh_link, out->st_name), arg))
				return 1;
	}
	return 0;
}

static int named(const GElf_Sym *sym, const char *name, const void *want)
{
	return sym->st_value && name && !strcmp(name, want);
}

uint64_t ae_image_symbol(const struct ae_image *im, const char *name)
{
	GElf_Sym sym;

	return find_symbol(im, named, name, &sym) ? sym.st_value : 0;
}

static int func_at(const GElf_Sym *sym, const char *name, const void *addr)
{
	(void)name;
	return sym->st_value == *(const uint64_t *)addr &&
	       GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_size;
}

uint64_t ae_image_func_size(const struct ae_image *im, uint64_t addr)
{
	GElf_Sym sym;

	return find_symbol(im, func_at, &addr, &sym) ? sym.st_size : 0;
}
