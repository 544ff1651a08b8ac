// SPDX-License-Identifier: MIT
/*
 * twin.c - taking the twins out of aecc's objects and archives: each
 * object embeds its uninstrumented twin in .ae_orig; an archive's twin is
 * the archive of its members' twins, in the same order, so prog and
 * prog.orig select the same members.
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

#include "fail.h"
#include "run.h"
#include "strv.h"
#include "twin.h"

/* Write n bytes at p to the new file `path`. Returns 0, or -1 after one
 * line on stderr. */
static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return ae_fail("cannot create %s: %s", path, strerror(errno));
	ok = !n || fwrite(p, 1, n, f) == n;
	if (fclose(f) || !ok)
		return ae_fail("cannot write %s: %s", path, strerror(errno));
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

/* Returns nonzero when the section header table of elf (open on fd) lies
 * past the end of the file: libelf then just sees no sections. */
static int truncated(int fd, Elf *elf)
{
	GElf_Ehdr eh;
	struct stat st;

	if (!gelf_getehdr(elf, &eh) || fstat(fd, &st))
		return 1;
	return eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > (uint64_t)st.st_size;
}

int ae_twin_obj(const char *obj, const char *dst)
{
	int fd = open(obj, O_RDONLY);
	Elf *elf;
	const void *p;
	size_t n, shstrndx;
	int ret = -1;

	if (fd < 0)
		return ae_fail("cannot open %s: %s", obj, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		const char *m = elf_errno() ? elf_errmsg(-1) : NULL;

		ae_fail("cannot read %s: %s", obj, m ? m : "not an ELF object");
	} else if (truncated(fd, elf)) {
		ae_fail("cannot read %s: truncated (section headers past its end)", obj);
	} else if (!(p = elf_section(elf, ".ae_orig", &n))) {
		ae_fail("%s was not built by aecc (no .ae_orig section)", obj);
	} else {
		ret = write_all(dst, p, n);
	}
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
		return ae_fail("cannot open %s: %s", ar, strerror(errno));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/ar.%d.%ld", o->tmpdir, (int)getpid(),
			     random()) >= sizeof(dir)) {
		ae_fail("scratch directory name too long: %s", o->tmpdir);
		goto out_close;
	}
	if (mkdir(dir, 0700)) {
		ae_fail("cannot create %s: %s", dir, strerror(errno));
		goto out_close;
	}
	arf = elf_begin(fd, ELF_C_READ, NULL);
	if (!arf || elf_kind(arf) != ELF_K_AR) {
		ae_fail("%s is not an archive", ar);
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
				ae_fail("%s(%s) was not built by aecc (no .ae_orig section)", ar, h->ar_name);
				elf_end(m);
				goto out_end;
			}
			if ((size_t)snprintf(path, sizeof(path), "%s/%05d-%s", dir, nmem++,
					     h->ar_name) >= sizeof(path)) {
				ae_fail("%s(%s): member name too long", ar, h->ar_name);
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

int ae_twin_archive(const struct ae_link_opts *o, const char *ar, char *dst, size_t n)
{
	struct stat st;
	char cache[PATH_MAX], rp[PATH_MAX], tmp[PATH_MAX + 16];
	const char *home = getenv("HOME");
	uint32_t h = 2166136261u;
	int ok;

	if (stat(ar, &st) || !realpath(ar, rp))
		return ae_fail("cannot read %s: %s", ar, strerror(errno));
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
		return ae_fail("cache directory name too long");
	/* mkdir -p */
	for (char *p = cache + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(cache, 0755);
			*p = '/';
		}
	if (mkdir(cache, 0755) && errno != EEXIST)
		return ae_fail("cannot create %s: %s", cache, strerror(errno));
	if ((size_t)snprintf(dst, n, "%s/%08x-%s", cache, h, basename(rp)) >= n)
		return ae_fail("%s: twin archive name too long", ar);
	if (!access(dst, R_OK))
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d", dst, (int)getpid()) >= sizeof(tmp))
		return ae_fail("%s: twin archive name too long", ar);
	if (extract_twin_ar(o, ar, tmp)) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, dst))
		return ae_fail("cannot rename %s to %s: %s", tmp, dst, strerror(errno));
	return 0;
}
