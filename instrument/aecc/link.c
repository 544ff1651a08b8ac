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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "run.h"
#include "strv.h"
#include "xalloc.h"

/* Print "aecc: message" on stderr. Returns -1. */
static int __attribute__((format(printf, 1, 2))) lerr(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aecc: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* Write n bytes at p to the new file `path`. Returns 0, or -1 after one
 * line on stderr. */
static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return lerr("cannot create %s: %s", path, strerror(errno));
	ok = !n || fwrite(p, 1, n, f) == n;
	if (fclose(f) || !ok)
		return lerr("cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* Returns the bytes of section `name` of the ELF object (length in *len),
 * or NULL when it has none. */
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

/* Write the twin embedded in object `obj` to `dst`. Returns 0, or -1
 * after one line on stderr. */
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
		lerr("%s was not built by aecc (no .ae_orig section)", obj);
	else
		ret = write_all(dst, p, n);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Twin archive `dst`: the embedded objects of every member of `ar`, same
 * order. Returns 0, or -1 after one line on stderr. */
static int extract_twin_ar(const struct ae_link_opts *o, const char *ar, const char *dst)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int fd = open(ar, O_RDONLY), ret = -1, nmem = 0;
	Elf *arf, *m;
	struct strv argv = { 0 };

	if (fd < 0)
		return lerr("cannot open %s: %s", ar, strerror(errno));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/ar.%d.%ld", o->tmpdir, (int)getpid(),
			     random()) >= sizeof(dir)) {
		lerr("scratch directory name too long: %s", o->tmpdir);
		goto out_close;
	}
	if (mkdir(dir, 0700)) {
		lerr("cannot create %s: %s", dir, strerror(errno));
		goto out_close;
	}
	arf = elf_begin(fd, ELF_C_READ, NULL);
	if (!arf || elf_kind(arf) != ELF_K_AR) {
		lerr("%s is not an archive", ar);
		if (arf)
			elf_end(arf);
		goto out_close;
	}
	strv_add(&argv, "ar");
	strv_add(&argv, "qcS");
	strv_add(&argv, dst);
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
			if ((size_t)snprintf(path, sizeof(path), "%s/%05d-%s", dir, nmem++,
					     h->ar_name) >= sizeof(path)) {
				lerr("%s(%s): member name too long", ar, h->ar_name);
				elf_end(m);
				goto out_end;
			}
			if (write_all(path, p, n)) {
				elf_end(m);
				goto out_end;
			}
			strv_add(&argv, path);
		}
		elf_next(m);
		elf_end(m);
	}
	if (ae_run(argv.v, o->verbose) == 0) {
		char *rl[] = { "ranlib", (char *)dst, NULL };

		ret = ae_run(rl, o->verbose);
	}
out_end:
	elf_end(arf);
out_close:
	strv_free(&argv);
	close(fd);
	return ret;
}

/*
 * The twin of archive `ar`, in *dst: cached by path, size and mtime in
 * $AE_CACHE/twin-ar, since libc.a is large. Returns 0, or -1 after one
 * line on stderr.
 */
static int twin_archive(const struct ae_link_opts *o, const char *ar, char *dst, size_t n)
{
	struct stat st;
	char cache[PATH_MAX], rp[PATH_MAX], tmp[PATH_MAX + 16];
	const char *home = getenv("HOME");
	uint32_t h = 2166136261u;
	int ok;

	if (stat(ar, &st) || !realpath(ar, rp))
		return lerr("cannot read %s: %s", ar, strerror(errno));
	for (const char *p = rp; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ (uint32_t)st.st_size) * 16777619u;
	h = (h ^ (uint32_t)st.st_mtime) * 16777619u;
	h = (h ^ (uint32_t)st.st_mtim.tv_nsec) * 16777619u;
	if (getenv("AE_CACHE"))
		ok = (size_t)snprintf(cache, sizeof(cache), "%s/twin-ar",
				      getenv("AE_CACHE")) < sizeof(cache);
	else
		ok = (size_t)snprintf(cache, sizeof(cache), "%s/.cache/aetrace/twin-ar",
				      home ? home : "/tmp") < sizeof(cache);
	if (!ok)
		return lerr("cache directory name too long");
	/* mkdir -p */
	for (char *p = cache + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(cache, 0755);
			*p = '/';
		}
	if (mkdir(cache, 0755) && errno != EEXIST)
		return lerr("cannot create %s: %s", cache, strerror(errno));
	if ((size_t)snprintf(dst, n, "%s/%08x-%s", cache, h, basename(rp)) >= n)
		return lerr("%s: twin archive name too long", ar);
	if (!access(dst, R_OK))
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d", dst, (int)getpid()) >= sizeof(tmp))
		return lerr("%s: twin archive name too long", ar);
	if (extract_twin_ar(o, ar, tmp)) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, dst))
		return lerr("cannot rename %s to %s: %s", tmp, dst, strerror(errno));
	return 0;
}

/* Returns the path of lib`name`.a in the -L directories, or NULL. */
static const char *find_lib(const struct ae_link_opts *o, const char *name)
{
	static char p[PATH_MAX];

	for (int i = 0; i < o->nlibdirs; i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/lib%s.a", o->libdirs[i], name) >= sizeof(p))
			continue;
		if (!access(p, R_OK))
			return p;
	}
	return NULL;
}

static void av_add(struct strv *a, const char *s)
{
	strv_add(a, s);
}

static void av_start(struct strv *a, const char *out)
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

/* Sort the sequence table in place; find the read-only data segment.
 * Returns 0, or -1 after one line on stderr. */
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
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph)) {
		lerr("cannot read %s: %s", prog, elf_errmsg(-1));
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
				lerr("cannot read %s: __ae_seqtab: %s", prog, elf_errmsg(-1));
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
					lerr("%s: overlapping instrumentation sequences", prog);
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
		return lerr("cannot open %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		lerr("cannot read %s: %s", path, elf_errmsg(-1));
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

/* Invariant of the twin: every data section at the same address, same
 * size. Returns 0, or -1 after one line on stderr. */
static int check_layout(const char *prog, const char *orig)
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

/* dst = printf(fmt, ...). Returns 0, or -1 after one line when it does not fit. */
static int __attribute__((format(printf, 3, 4)))
path_fmt(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return lerr("path too long: %.64s...", dst);
	return 0;
}

/* The sequence-table padding object for the twin: nseq entries of zeros.
 * Returns 0, or -1 after one line on stderr. */
static int seqtab_pad(const struct ae_link_opts *o, uint32_t nseq, char *pad_o, size_t len)
{
	char pad_s[PATH_MAX];
	FILE *f;
	int werr;

	if (path_fmt(pad_s, sizeof(pad_s), "%s/seqpad.s", o->tmpdir) ||
	    path_fmt(pad_o, len, "%s/seqpad.o", o->tmpdir))
		return -1;
	f = fopen(pad_s, "w");
	if (!f)
		return lerr("cannot create %s: %s", pad_s, strerror(errno));
	if (nseq)
		fprintf(f, "\t.section __ae_seqtab,\"a\",@progbits\n\t.balign 4\n\t.zero %u\n",
			nseq * 8);
	fprintf(f, "\t.section .note.GNU-stack,\"\",@progbits\n");
	werr = ferror(f);
	if (fclose(f) || werr)
		return lerr("cannot write %s: %s", pad_s, strerror(errno));
	{
		char *as[] = { "as", "--64", "-o", pad_o, pad_s, NULL };

		return ae_run(as, o->verbose);
	}
}

/* Link both programs; a and b are the two command lines being built.
 * Returns 0, or -1 after one line on stderr. */
static int link_both(const struct ae_link_opts *o, struct strv *a, struct strv *b)
{
	char musl_lib[PATH_MAX], p[PATH_MAX], orig[PATH_MAX];
	struct seg_info si = { 0 };
	static const char *const crt[] = { "crt1.o", "crti.o", "crtn.o" };
	char twin_crt[3][PATH_MAX];
	int tmpn = 0;

	if (path_fmt(musl_lib, sizeof(musl_lib), "%s/lib", o->musl_dir) ||
	    path_fmt(p, sizeof(p), "%s/libc.a", musl_lib) ||
	    path_fmt(orig, sizeof(orig), "%s.orig", o->out))
		return -1;
	if (access(p, R_OK))
		return lerr("tracing libc not found at %s (run `make musl` in the aetrace tree)", p);
	if (access(o->libae, R_OK))
		return lerr("tracing runtime not found at %s", o->libae);
	if (access(o->libaert, R_OK))
		return lerr("libgcc helpers for traced programs not found at %s", o->libaert);

	for (int i = 0; i < 3; i++) {
		if (path_fmt(p, sizeof(p), "%s/%s", musl_lib, crt[i]) ||
		    path_fmt(twin_crt[i], sizeof(twin_crt[i]), "%s/twin-%s", o->tmpdir, crt[i]) ||
		    extract_twin_obj(p, twin_crt[i]))
			return -1;
	}

	/* the instrumented program */
	av_start(a, o->out);
	av_add(a, "-Wl,-e,_ae_start");
	if (path_fmt(p, sizeof(p), "%s/crt1.o", musl_lib))
		return -1;
	av_add(a, p);
	if (path_fmt(p, sizeof(p), "%s/crti.o", musl_lib))
		return -1;
	av_add(a, p);
	/* the twin */
	av_start(b, orig);
	av_add(b, twin_crt[0]);
	av_add(b, twin_crt[1]);

	for (int i = 0; i < o->ninputs; i++) {
		const char *in = o->inputs[i];
		const char *path = in;
		size_t l = strlen(in);

		if (!strncmp(in, "-l", 2)) {
			path = find_lib(o, in + 2);
			if (!path)
				return lerr("cannot find lib%s.a (traced programs link static libraries built by aecc)", in + 2);
			l = strlen(path);
		}
		av_add(a, path);
		if (l > 2 && !strcmp(path + l - 2, ".a")) {
			if (twin_archive(o, path, p, sizeof(p)))
				return -1;
		} else {
			if (path_fmt(p, sizeof(p), "%s/twin%d.o", o->tmpdir, tmpn++) ||
			    extract_twin_obj(path, p))
				return -1;
		}
		av_add(b, p);
	}
	for (int i = 0; i < o->nldflags; i++) {
		av_add(a, o->ldflags[i]);
		av_add(b, o->ldflags[i]);
	}
	av_add(a, "-Wl,--start-group");	/* libc calls __ae_exit_hook */
	av_add(a, o->libaert);
	av_add(a, o->libae);
	if (path_fmt(p, sizeof(p), "%s/libc.a", musl_lib))
		return -1;
	av_add(a, p);
	av_add(a, "-Wl,--end-group");
	if (path_fmt(p, sizeof(p), "%s/crtn.o", musl_lib))
		return -1;
	av_add(a, p);
	if (ae_run(a->v, o->verbose))
		return lerr("linking %s failed", o->out);
	if (fixup_prog(o->out, &si))
		return -1;

	/* the twin: same data addresses, same-sized sequence table */
	{
		char libc[PATH_MAX], seg[64];

		if (seqtab_pad(o, si.nseq, p, sizeof(p)))
			return -1;
		av_add(b, p);
		if (twin_archive(o, o->libaert, p, sizeof(p)))
			return -1;
		av_add(b, p);
		if (path_fmt(libc, sizeof(libc), "%s/libc.a", musl_lib) ||
		    twin_archive(o, libc, p, sizeof(p)))
			return -1;
		av_add(b, p);
		av_add(b, twin_crt[2]);
		if (si.rodata) {
			snprintf(seg, sizeof(seg), "-Wl,-Trodata-segment=%#lx",
				 (unsigned long)si.rodata);
			av_add(b, seg);
		}
		if (ae_run(b->v, o->verbose))
			return lerr("linking %s failed", orig);
	}
	if (check_layout(o->out, orig))
		return -1;
	{
		char *oc[] = { "objcopy", "--remove-section=.ae_orig", (char *)o->out, NULL };

		return ae_run(oc, o->verbose);
	}
}

int ae_link(const struct ae_link_opts *o)
{
	struct strv a = { 0 }, b = { 0 };
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return lerr("libelf: %s", elf_errmsg(-1));
	ret = link_both(o, &a, &b);
	strv_free(&a);
	strv_free(&b);
	return ret;
}
