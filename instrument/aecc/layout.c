// SPDX-License-Identifier: MIT
/*
 * layout.c - after linking: the instrumented program's sequence table
 * sorted in place, its read-only segment found (the twin is linked with
 * it at the same address), and the twin's data layout checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fail.h"
#include "layout.h"
#include "xalloc.h"

int ae_fixup_prog(const char *prog, struct seg_info *si)
{
	int fd = open(prog, O_RDWR);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph;
	uint64_t text = 0;
	int ret = -1;

	if (fd < 0)
		return ae_fail("cannot open %s: %s", prog, strerror(errno));
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph)) {
		ae_fail("cannot read %s: %s", prog, elf_errmsg(-1));
		goto out;
	}
	si->rodata = 0;
	si->nseq = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		gelf_getphdr(elf, i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_flags & PF_X)
			text = ph.p_vaddr;
		else if (text && !(ph.p_flags & PF_W) && !si->rodata)
			si->rodata = ph.p_vaddr;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		gelf_getshdr(scn, &sh);
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, "__ae_seqtab")) {
			Elf_Data *d = elf_getdata(scn, NULL);
			uint32_t *t;
			size_t cnt;

			if (!d) {
				ae_fail("cannot read %s: __ae_seqtab: %s", prog, elf_errmsg(-1));
				goto out;
			}
			t = d->d_buf;
			cnt = d->d_size / 8;

			/* insertion sort is too slow for libc-sized tables */
			for (size_t gap = cnt / 2; gap > 0; gap /= 2)
				for (size_t i = gap; i < cnt; i++) {
					uint32_t a = t[2 * i], b = t[2 * i + 1];
					size_t j = i;

					for (; j >= gap && t[2 * (j - gap)] > a; j -= gap) {
						t[2 * j] = t[2 * (j - gap)];
						t[2 * j + 1] = t[2 * (j - gap) + 1];
					}
					t[2 * j] = a;
					t[2 * j + 1] = b;
				}
			for (size_t i = 1; i < cnt; i++)
				if (t[2 * i] < t[2 * i - 1]) {
					ae_fail("%s: overlapping instrumentation sequences", prog);
					goto out;
				}
			si->nseq = cnt;
			elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
		}
	}
	elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
	if (elf_update(elf, ELF_C_WRITE) < 0) {
		ae_fail("cannot update %s: %s", prog, elf_errmsg(-1));
		goto out;
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

struct sec {
	char name[64];
	uint64_t addr, size;
};

/* The allocated, non-executable sections of `path` into *out (*n of them).
 * Returns 0, or -1 after one line on stderr. */
static int alloc_data_sections(const char *path, struct sec **out, int *n)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*n = 0;
	*out = NULL;
	if (fd < 0)
		return ae_fail("cannot open %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		ae_fail("cannot read %s: %s", path, elf_errmsg(-1));
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		gelf_getshdr(scn, &sh);
		if (!(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		*out = ae_xrealloc(*out, (*n + 1) * sizeof(**out));
		snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", nm ? nm : "?");
		(*out)[*n].addr = sh.sh_addr;
		(*out)[*n].size = sh.sh_size;
		(*n)++;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

int ae_check_layout(const char *prog, const char *orig)
{
	struct sec *a, *b;
	int na, nb, ret = 0;

	if (alloc_data_sections(prog, &a, &na))
		return -1;
	if (alloc_data_sections(orig, &b, &nb)) {
		free(a);
		return -1;
	}
	if (na != nb)
		ret = ae_fail("%s and %s have different data sections", prog, orig);
	for (int i = 0; !ret && i < na; i++)
		if (strcmp(a[i].name, b[i].name) || a[i].addr != b[i].addr ||
		    a[i].size != b[i].size) {
			fprintf(stderr, "aecc: data layout differs: %s %s@%#lx+%#lx vs %s@%#lx+%#lx\n",
				prog, a[i].name, (unsigned long)a[i].addr, (unsigned long)a[i].size,
				b[i].name, (unsigned long)b[i].addr, (unsigned long)b[i].size);
			ret = -1;
		}
	free(a);
	free(b);
	return ret;
}
