// SPDX-License-Identifier: MIT
/*
 * scan.c - the twin object as the instrumenter sees it: every instruction
 * has a local label listed in .ae_imap, so the relocations of .ae_imap give
 * each instruction's (section, offset); relocations in code give direct
 * targets and jump tables; the symbol table gives function entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfn.h"
#include "scan.h"
#include "xalloc.h"

static int reloc_cmp(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec - y->sec;
	return x->off < y->off ? -1 : x->off > y->off;
}

struct reloc *ae_find_reloc(const struct ae_scan *s, int sec, uint64_t off)
{
	int lo = 0, hi = s->nr - 1;

	while (lo <= hi) {
		int m = (lo + hi) / 2;
		struct reloc *r = &s->r[m];

		if (r->sec == sec && r->off == off)
			return r;
		if (r->sec < sec || (r->sec == sec && r->off < off))
			lo = m + 1;
		else
			hi = m - 1;
	}
	return NULL;
}

static int place_cmp(const void *a, const void *b, void *arg)
{
	const struct ae_ctx *c = arg;
	const struct insn *x = &c->in[*(const int *)a];
	const struct insn *y = &c->in[*(const int *)b];

	if (x->sec != y->sec)
		return x->sec - y->sec;
	return x->off < y->off ? -1 : x->off > y->off;
}

int ae_insn_at(const struct ae_ctx *c, int sec, uint64_t off)
{
	int lo = 0, hi = c->n - 1;

	while (lo <= hi) {
		int m = (lo + hi) / 2;
		const struct insn *x = &c->in[c->by_place[m]];

		if (x->sec == sec && x->off == off)
			return c->by_place[m];
		if (x->sec < sec || (x->sec == sec && x->off < off))
			lo = m + 1;
		else
			hi = m - 1;
	}
	return -1;
}

static int read_relocs(struct ae_ctx *c, Elf *elf, struct ae_scan *s, int *imap_sec)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf_Data *symd = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return ae_err(c, 0, "twin object: %s", elf_errmsg(-1));
	if (elf_getshdrnum(elf, &s->nsec))
		return ae_err(c, 0, "twin object: %s", elf_errmsg(-1));
	s->secdata = ae_xcalloc(s->nsec, sizeof(*s->secdata));
	s->sec_exec = ae_xcalloc(s->nsec, sizeof(int));
	*imap_sec = -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		gelf_getshdr(scn, &sh);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			symd = elf_getdata(scn, NULL);
		}
		if (sh.sh_type == SHT_PROGBITS) {
			s->secdata[elf_ndxscn(scn)] = elf_getdata(scn, NULL);
			s->sec_exec[elf_ndxscn(scn)] = !!(sh.sh_flags & SHF_EXECINSTR);
		}
		if (name && !strcmp(name, ".ae_imap"))
			*imap_sec = elf_ndxscn(scn);
	}
	if (!symd)
		return ae_err(c, 0, "assembled twin has no symbol table");
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_RELA)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela ra;
			GElf_Sym sym;
			struct reloc *r;

			if (!gelf_getrela(d, i, &ra) ||
			    !gelf_getsym(symd, GELF_R_SYM(ra.r_info), &sym))
				return ae_err(c, 0, "twin object: relocation %zu: %s", i,
					      elf_errmsg(-1));
			if (s->nr % 1024 == 0)
				s->r = ae_xrealloc(s->r, (s->nr + 1024) * sizeof(*s->r));
			r = &s->r[s->nr++];
			r->sec = sh.sh_info;
			r->off = ra.r_offset;
			r->type = GELF_R_TYPE(ra.r_info);
			r->addend = ra.r_addend;
			r->symsec = sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : 0;
			r->symval = sym.st_value;
			r->sym_is_func = GELF_ST_TYPE(sym.st_info) == STT_FUNC;
			r->sym_weak = GELF_ST_BIND(sym.st_info) == STB_WEAK;
		}
	}
	qsort(s->r, s->nr, sizeof(*s->r), reloc_cmp);
	return 0;
}

/* Mark instructions where a function symbol starts. */
static void mark_functions(struct ae_ctx *c, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int k;

			if (!gelf_getsym(d, i, &sym))
				continue;
			if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			/* another object may enter at any global name (an
			 * alias's too); the start-up code at an ifunc's */
			k = ae_insn_at(c, sym.st_shndx, sym.st_value);
			if (k >= 0 && (GELF_ST_BIND(sym.st_info) != STB_LOCAL ||
				       GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC))
				c->in[k].exported = 1;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			    !(GELF_ST_TYPE(sym.st_info) == STT_NOTYPE &&
			      GELF_ST_BIND(sym.st_info) != STB_LOCAL))
				continue;
			if (k < 0)
				continue;
			c->in[k].func_start = 1;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			/* GCC's NAME.cold parts are jumped to, mid-function */
			if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && name && !strstr(name, ".cold"))
				c->in[k].abi_entry = 1;
			if (name && (!strcmp(name, "setjmp") || !strcmp(name, "_setjmp") ||
				     !strcmp(name, "__setjmp")))
				c->in[k].setjmp_entry = 1;
			if (name && (!strcmp(name, "longjmp") || !strcmp(name, "_longjmp")))
				c->in[k].in_longjmp = 1;
			if (name && (!strcmp(name, "sigsetjmp") || !strcmp(name, "__sigsetjmp")))
				c->in[k].in_sigsetjmp = 1;
			if (name && !strcmp(name, "_start"))
				c->in[k].start_entry = 1;
			if (name && !strcmp(name, "_Exit"))
				c->in[k].exit_entry = 1;
			/* only the C library's own (global) routines: a
			 * program's function of the same name is its own;
			 * an alias (stpcpy) keeps its body's mark */
			if (name && c->data && !c->no_memfn && c->memfn_lib &&
			    GELF_ST_BIND(sym.st_info) != STB_LOCAL && ae_memfn_kind(name))
				c->in[k].memfn = ae_memfn_kind(name);
		}
	}
}

int ae_table_entries(const struct ae_scan *s, int sec, uint64_t off, int max)
{
	int n = 0;
	struct reloc *r;

	while ((max < 0 || n < max) && (r = ae_find_reloc(s, sec, off + 8 * n)) && r->symsec &&
	       r->symsec < (int)s->nsec && s->sec_exec[r->symsec])
		n++;
	return n;
}

int ae_scan_twin(struct ae_ctx *c, const char *path, struct ae_scan *s)
{
	int imap_sec = -1;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	c->n = c->a.ninsn;
	c->in = ae_xcalloc(c->n + 1, sizeof(*c->in));
	for (size_t si = 0; si < c->a.n; si++)
		if (c->a.st[si].insn >= 0)
			c->in[c->a.st[si].insn].stmt = si;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ae_err(c, 0, "libelf: %s", elf_errmsg(-1));
	s->fd = open(path, O_RDONLY);
	if (s->fd < 0)
		return ae_err(c, 0, "cannot open twin object %s: %s", path, strerror(errno));
	s->elf = elf_begin(s->fd, ELF_C_READ, NULL);
	if (!s->elf)
		return ae_err(c, 0, "cannot read twin object %s: %s", path, elf_errmsg(-1));
	if (read_relocs(c, s->elf, s, &imap_sec))
		return -1;
	for (int k = 0; k < c->n; k++) {
		struct reloc *r = ae_find_reloc(s, imap_sec, 8 + 4 * k);

		if (!r || !r->symsec)
			return ae_err(c, c->a.st[c->in[k].stmt].line, "instruction %d not placed", k);
		c->in[k].sec = r->symsec;
		c->in[k].off = r->symval + r->addend;
	}
	c->by_place = ae_xmalloc((c->n + 1) * sizeof(int));
	for (int k = 0; k < c->n; k++)
		c->by_place[k] = k;
	qsort_r(c->by_place, c->n, sizeof(int), place_cmp, c);
	mark_functions(c, s->elf);
	return 0;
}

void ae_scan_close(struct ae_scan *s)
{
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	free(s->r);
	free(s->secdata);
	free(s->sec_exec);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
