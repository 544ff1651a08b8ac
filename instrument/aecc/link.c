// SPDX-License-Identifier: MIT
/*
 * link.c - link the instrumented program and its uninstrumented twin.
 *
 * The twin is linked from the objects embedded (.ae_orig) in the
 * instrumented ones, in the same order, so both select the same archive
 * members. Its read-only data segment is placed where the instrumented
 * program's is, and it carries a same-sized __ae_seqtab, so every data
 * address (and the program headers the C library reads) is identical.
 * The instrumented program's sequence table is sorted in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"

static int lerr(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "aecc: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -1;
}

static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (n && fwrite(p, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* The bytes of section `name` of the ELF object in memory, or NULL. */
static const void *elf_section(Elf *elf, const char *name, size_t *len)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		gelf_getshdr(scn, &sh);
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			Elf_Data *d = elf_rawdata(scn, NULL);

			if (!d)
				return NULL;
			*len = d->d_size;
			return d->d_buf;
		}
	}
	return NULL;
}

static int extract_twin_obj(const char *obj, const char *dst)
{
	int fd = open(obj, O_RDONLY);
	Elf *elf;
	const void *p;
	size_t n;
	int ret = -1;

	if (fd < 0)
		return lerr("cannot open %s: %s", obj, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	p = elf ? elf_section(elf, ".ae_orig", &n) : NULL;
	if (!p)
		lerr("%s was not built by aecc (no .ae_orig section)%s", obj, "");
	else if (write_all(dst, p, n))
		lerr("cannot write %s%s", dst, "");
	else
		ret = 0;
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Twin archive: the embedded objects of every member, same order. */
static int extract_twin_ar(const char *ar, const char *dst)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int fd = open(ar, O_RDONLY), ret = -1, nmem = 0;
	Elf *arf, *m;
	char **argv = NULL;
	int argc = 0;

	if (fd < 0)
		return lerr("cannot open %s: %s", ar, strerror(errno));
	snprintf(dir, sizeof(dir), "%s/ar.%d", ae_tmpdir(), (int)getpid());
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), ".%ld", random());
	if (mkdir(dir, 0700))
		goto out_close;
	arf = elf_begin(fd, ELF_C_READ, NULL);
	if (!arf || elf_kind(arf) != ELF_K_AR) {
		lerr("%s is not an archive%s", ar, "");
		goto out_close;
	}
	argv = calloc(8, sizeof(char *));
	argv[argc++] = "ar";
	argv[argc++] = "qcS";
	argv[argc++] = (char *)dst;
	unlink(dst);
	while ((m = elf_begin(fd, ELF_C_READ, arf))) {
		Elf_Arhdr *h = elf_getarhdr(m);
		const void *p;
		size_t n;

		if (h && h->ar_name[0] != '/' && elf_kind(m) == ELF_K_ELF) {
			p = elf_section(m, ".ae_orig", &n);
			if (!p) {
				lerr("%s(%s) was not built by aecc (no .ae_orig section)", ar, h->ar_name);
				elf_end(m);
				goto out_end;
			}
			snprintf(path, sizeof(path), "%s/%05d-%s", dir, nmem++, h->ar_name);
			if (write_all(path, p, n)) {
				elf_end(m);
				goto out_end;
			}
			argv = realloc(argv, (argc + 2) * sizeof(char *));
			argv[argc++] = strdup(path);
		}
		elf_next(m);
		elf_end(m);
	}
	argv[argc] = NULL;
	if (ae_run(argv) == 0) {
		char *rl[] = { "ranlib", (char *)dst, NULL };

		ret = ae_run(rl);
	}
out_end:
	elf_end(arf);
out_close:
	close(fd);
	return ret;
}

/* Twin archives are cached by path, size and mtime: libc.a is large. */
static int twin_archive(const char *ar, char *dst, size_t n)
{
	struct stat st;
	char cache[PATH_MAX], rp[PATH_MAX], tmp[PATH_MAX + 16];
	const char *home = getenv("HOME");
	uint32_t h = 2166136261u;

	if (stat(ar, &st) || !realpath(ar, rp))
		return lerr("cannot read %s: %s", ar, strerror(errno));
	for (const char *p = rp; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ (uint32_t)st.st_size) * 16777619u;
	h = (h ^ (uint32_t)st.st_mtime) * 16777619u;
	h = (h ^ (uint32_t)st.st_mtim.tv_nsec) * 16777619u;
	if (getenv("AE_CACHE"))
		snprintf(cache, sizeof(cache), "%s/twin-ar", getenv("AE_CACHE"));
	else
		snprintf(cache, sizeof(cache), "%s/.cache/aetrace/twin-ar", home ? home : "/tmp");
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "%s", cache);
		for (char *p = cmd + 1; *p; p++)
			if (*p == '/') {
				*p = 0;
				mkdir(cmd, 0755);
				*p = '/';
			}
		mkdir(cmd, 0755);
	}
	{
		char b[PATH_MAX];

		snprintf(b, sizeof(b), "%s", rp);
		snprintf(dst, n, "%s/%08x-%s", cache, h, basename(b));
	}
	if (!access(dst, R_OK))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.%d", dst, (int)getpid());
	if (extract_twin_ar(ar, tmp)) {
		unlink(tmp);
		return -1;
	}
	return rename(tmp, dst);
}

static const char *find_lib(const struct ae_link_opts *o, const char *name)
{
	static char p[PATH_MAX];

	for (int i = 0; i < o->nlibdirs; i++) {
		snprintf(p, sizeof(p), "%s/lib%s.a", o->libdirs[i], name);
		if (!access(p, R_OK))
			return p;
	}
	return NULL;
}

struct argv {
	char **v;
	int n;
};

static void av_add(struct argv *a, const char *s)
{
	a->v = realloc(a->v, (a->n + 2) * sizeof(char *));
	a->v[a->n++] = strdup(s);
	a->v[a->n] = NULL;
}

static void av_start(struct argv *a, const char *out)
{
	av_add(a, "gcc");
	av_add(a, "-static");
	av_add(a, "-nostdlib");
	av_add(a, "-no-pie");
	av_add(a, "-Wl,--build-id=none");
	av_add(a, "-Wl,-z,noexecstack");
	av_add(a, "-o");
	av_add(a, out);
}

struct seg_info {
	uint64_t rodata;	/* first read-only PT_LOAD above the text */
	uint32_t nseq;
};

/* Sort the sequence table in place; find the read-only data segment. */
static int fixup_prog(const char *prog, struct seg_info *si)
{
	int fd = open(prog, O_RDWR);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph;
	uint64_t text = 0;
	int ret = -1;

	if (fd < 0)
		return lerr("cannot open %s: %s", prog, strerror(errno));
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph))
		goto out;
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
			uint32_t *t = d->d_buf;
			size_t cnt = d->d_size / 8;

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
					lerr("%s: overlapping instrumentation sequences%s", prog, "");
					goto out;
				}
			si->nseq = cnt;
			elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
		}
	}
	elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
	if (elf_update(elf, ELF_C_WRITE) < 0) {
		lerr("cannot update %s: %s", prog, elf_errmsg(-1));
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

static int alloc_data_sections(const char *path, struct sec **out, int *n)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*n = 0;
	*out = NULL;
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
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
		*out = realloc(*out, (*n + 1) * sizeof(**out));
		snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", nm ? nm : "?");
		(*out)[*n].addr = sh.sh_addr;
		(*out)[*n].size = sh.sh_size;
		(*n)++;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

/* Invariant of the twin: every data section at the same address, same size. */
static int check_layout(const char *prog, const char *orig)
{
	struct sec *a, *b;
	int na, nb, ret = 0;

	if (alloc_data_sections(prog, &a, &na) || alloc_data_sections(orig, &b, &nb))
		return lerr("cannot read %s or %s", prog, orig);
	if (na != nb)
		ret = lerr("%s and %s have different data sections", prog, orig);
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

int ae_link(const struct ae_link_opts *o)
{
	char musl_lib[PATH_MAX], p[PATH_MAX + 64], orig[PATH_MAX + 8];
	struct argv a = { 0 }, b = { 0 };
	struct seg_info si;
	static const char *const crt[] = { "crt1.o", "crti.o", "crtn.o" };
	char twin_crt[3][PATH_MAX + 64];
	int tmpn = 0;

	elf_version(EV_CURRENT);
	snprintf(musl_lib, sizeof(musl_lib), "%s/lib", ae_musl_dir());
	snprintf(p, sizeof(p), "%s/libc.a", musl_lib);
	if (access(p, R_OK))
		return lerr("tracing libc not found at %s (run `make musl` in the aetrace tree)%s", p, "");
	if (access(ae_libae(), R_OK))
		return lerr("tracing runtime not found at %s%s", ae_libae(), "");
	if (access(ae_libaert(), R_OK))
		return lerr("libgcc helpers for traced programs not found at %s%s", ae_libaert(), "");
	snprintf(orig, sizeof(orig), "%s.orig", o->out);

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", musl_lib, crt[i]);
		snprintf(twin_crt[i], sizeof(twin_crt[i]), "%s/twin-%s", ae_tmpdir(), crt[i]);
		if (extract_twin_obj(p, twin_crt[i]))
			return -1;
	}

	/* the instrumented program */
	av_start(&a, o->out);
	av_add(&a, "-Wl,-e,_ae_start");
	snprintf(p, sizeof(p), "%s/crt1.o", musl_lib);
	av_add(&a, p);
	snprintf(p, sizeof(p), "%s/crti.o", musl_lib);
	av_add(&a, p);
	/* the twin */
	av_start(&b, orig);
	av_add(&b, twin_crt[0]);
	av_add(&b, twin_crt[1]);

	for (int i = 0; i < o->ninputs; i++) {
		const char *in = o->inputs[i];
		const char *path = in;
		size_t l = strlen(in);

		if (!strncmp(in, "-l", 2)) {
			path = find_lib(o, in + 2);
			if (!path)
				return lerr("cannot find lib%s.a (traced programs link static libraries built by aecc)%s", in + 2, "");
			l = strlen(path);
		}
		av_add(&a, path);
		if (l > 2 && !strcmp(path + l - 2, ".a")) {
			if (twin_archive(path, p, sizeof(p)))
				return -1;
		} else {
			snprintf(p, sizeof(p), "%s/twin%d.o", ae_tmpdir(), tmpn++);
			if (extract_twin_obj(path, p))
				return -1;
		}
		av_add(&b, p);
	}
	for (int i = 0; i < o->nldflags; i++) {
		av_add(&a, o->ldflags[i]);
		av_add(&b, o->ldflags[i]);
	}
	av_add(&a, "-Wl,--start-group");	/* libc calls __ae_exit_hook */
	av_add(&a, ae_libaert());
	av_add(&a, ae_libae());
	snprintf(p, sizeof(p), "%s/libc.a", musl_lib);
	av_add(&a, p);
	av_add(&a, "-Wl,--end-group");
	snprintf(p, sizeof(p), "%s/crtn.o", musl_lib);
	av_add(&a, p);
	if (ae_run(a.v))
		return lerr("linking %s failed%s", o->out, "");
	if (fixup_prog(o->out, &si))
		return -1;

	/* the twin: same data addresses, same-sized sequence table */
	{
		char pad_s[PATH_MAX + 16], pad_o[PATH_MAX + 16], seg[64];
		char libc[PATH_MAX];
		FILE *f;

		snprintf(pad_s, sizeof(pad_s), "%s/seqpad.s", ae_tmpdir());
		snprintf(pad_o, sizeof(pad_o), "%s/seqpad.o", ae_tmpdir());
		f = fopen(pad_s, "w");
		if (!f)
			return -1;
		if (si.nseq)
			fprintf(f, "\t.section __ae_seqtab,\"a\",@progbits\n\t.balign 4\n\t.zero %u\n",
				si.nseq * 8);
		fprintf(f, "\t.section .note.GNU-stack,\"\",@progbits\n");
		fclose(f);
		{
			char *as[] = { "as", "--64", "-o", pad_o, pad_s, NULL };

			if (ae_run(as))
				return -1;
		}
		av_add(&b, pad_o);
		if (twin_archive(ae_libaert(), p, sizeof(p)))
			return -1;
		av_add(&b, p);
		snprintf(libc, sizeof(libc), "%s/libc.a", musl_lib);
		if (twin_archive(libc, p, sizeof(p)))
			return -1;
		av_add(&b, p);
		av_add(&b, twin_crt[2]);
		if (si.rodata) {
			snprintf(seg, sizeof(seg), "-Wl,-Trodata-segment=%#lx",
				 (unsigned long)si.rodata);
			av_add(&b, seg);
		}
		if (ae_run(b.v))
			return lerr("linking %s failed%s", orig, "");
	}
	if (check_layout(o->out, orig))
		return -1;
	{
		char *oc[] = { "objcopy", "--remove-section=.ae_orig", (char *)o->out, NULL };

		return ae_run(oc);
	}
}
