// SPDX-License-Identifier: MIT
/*
 * link.c - link the instrumented program and its uninstrumented twin.
 *
 * The twin is linked from the objects embedded (.ae_orig) in the
 * instrumented ones, in the same order, so both select the same archive
 * members (twin.c). Its read-only data segment is placed where the
 * instrumented program's is, and it carries a same-sized __ae_seqtab, so
 * every data address (and the program headers the C library reads) is
 * identical (layout.c checks it).
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aetrace/imgcheck.h>

#include "fail.h"
#include "layout.h"
#include "link.h"
#include "memfn.h"
#include "run.h"
#include "strv.h"
#include "twin.h"

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

/* The file of input @in (an object, an archive or -lname), and in
 * *archive whether it is an archive. Returns it (-l: a static buffer), or
 * NULL after one line on stderr. */
static const char *input_path(const struct ae_link_opts *o, const char *in, int *archive)
{
	const char *path = in;
	size_t l;

	if (!strncmp(in, "-l", 2)) {
		path = find_lib(o, in + 2);
		if (!path) {
			ae_fail("cannot find lib%s.a (traced programs link static libraries built by aecc)", in + 2);
			return NULL;
		}
	}
	l = strlen(path);
	*archive = l > 2 && !strcmp(path + l - 2, ".a");
	return path;
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
		return ae_fail("path too long: %.64s...", dst);
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
		return ae_fail("cannot create %s: %s", pad_s, strerror(errno));
	if (nseq)
		fprintf(f, "\t.section __ae_seqtab,\"a\",@progbits\n\t.balign 4\n\t.zero %u\n",
			nseq * 8);
	fprintf(f, "\t.section .note.GNU-stack,\"\",@progbits\n");
	werr = ferror(f);
	if (fclose(f) || werr)
		return ae_fail("cannot write %s: %s", pad_s, strerror(errno));
	{
		char *as[] = { "as", "--64", "-o", pad_o, pad_s, NULL };

		return ae_run(as, o->verbose);
	}
}

/* The .ae_check hash of the ELF file @path into *h. Returns 0, or -1
 * after one line on stderr. */
static int file_hash(const char *path, uint64_t *h)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	int ret;

	if (fd < 0)
		return ae_fail("cannot open %s: %s", path, strerror(errno));
	e = elf_begin(fd, ELF_C_READ, NULL);
	ret = e ? ae_elf_check_hash(e, h) : -1;
	if (e)
		elf_end(e);
	close(fd);
	if (ret)
		return ae_fail("%s: libelf: %s", path, elf_errmsg(-1));
	return 0;
}

/* Writes the .ae_check contents for @prog and @orig, whose own routines
 * are @own_memfn, to @chk. Returns 0, or -1 after one line on stderr. */
static int write_check(const char *prog, const char *orig, uint32_t own_memfn,
		       const char *chk)
{
	struct ae_check c = { .magic = AE_CHECK_MAGIC, .version = AE_CHECK_VERSION,
			      .own_memfn = own_memfn };
	FILE *f;
	int werr;

	if (file_hash(prog, &c.prog_hash) || file_hash(orig, &c.orig_hash))
		return -1;
	f = fopen(chk, "w");
	if (!f)
		return ae_fail("cannot create %s: %s", chk, strerror(errno));
	werr = fwrite(&c, sizeof(c), 1, f) != 1;
	if (fclose(f) || werr)
		return ae_fail("cannot write %s: %s", chk, strerror(errno));
	return 0;
}

/* What the program's own routines change in the link (own_memfns()). */
struct own {
	struct strv defs;	/* -Wl,--defsym=LABEL=ROUTINE */
	uint32_t mask;		/* bit k: routine k of enum ae_memfn is the program's */
	struct strv archives;	/* the archive (base name) and member of each */
	struct strv members;	/* object that defines such a routine */
	struct strv routines;	/* the routine each of them defines */
	char *user_map;		/* the link map the command line asked for */
};

/* Point routine @name's label (if it is one data tracing expands) at
 * @routine, the program's own code. Returns nothing. */
static void own_add(struct own *w, const char *name, const char *routine)
{
	char label[64], def[320];
	int kind = ae_memfn_kind(name);

	if (!kind)
		return;
	ae_memfn_args_label(kind, label, sizeof(label));
	snprintf(def, sizeof(def), "-Wl,--defsym=%s=%s", label, routine);
	strv_add(&w->defs, def);
	w->mask |= 1u << kind;
}

/* The routines data tracing expands that ELF object @e defines as global
 * or weak symbols, added to @w; returns 1 when @e defines the labels
 * itself (it holds the routines' bodies: -fae-memfn-lib), else 0. */
static int memfn_defs(Elf *e, struct own *w)
{
	Elf_Scn *scn = NULL;
	int bodies = 0;

	while ((scn = elf_nextscn(e, scn))) {
		Elf64_Shdr *sh = elf64_getshdr(scn);
		Elf_Data *d;

		if (!sh || sh->sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < d->d_size / sizeof(Elf64_Sym); i++) {
			const Elf64_Sym *y = (const Elf64_Sym *)d->d_buf + i;
			unsigned int bind = ELF64_ST_BIND(y->st_info);
			const char *name;

			if (y->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK))
				continue;
			name = elf_strptr(e, sh->sh_link, y->st_name);
			if (!name)
				continue;
			if (ae_memfn_is_args_label(name))
				bodies = 1;
			own_add(w, name, name);
		}
	}
	return bodies;
}

/*
 * A program's own memcpy (or another routine data tracing expands) is
 * everyone's, as static linking makes it: the C library's callers enter
 * the routine by a label past its argument records, so for each one the
 * object @path defines, `-Wl,--defsym` (before every input, so that no
 * reference pulls the library's routine in first) points that label at
 * the program's routine, whose entry records its arguments itself; the
 * library's routine is then not linked at all, and the twin needs
 * nothing (its callers call the name). An archive member cannot get the
 * same: whether the link takes it depends on the references before the
 * archive, which differ between the program (labels) and the twin
 * (names), so such members are noted in @w, and refused if either link
 * takes them (map_check()). Returns 0, or -1 after one line on stderr.
 */
static int own_memfns(const char *path, int archive, struct own *w)
{
	int fd = open(path, O_RDONLY);
	int ret = 0;
	Elf *ar, *e;

	if (fd < 0)
		return ae_fail("cannot open %s: %s", path, strerror(errno));
	ar = elf_begin(fd, ELF_C_READ, NULL);
	if (!ar || elf_kind(ar) != (archive ? ELF_K_AR : ELF_K_ELF)) {
		ret = ae_fail("%s: not an ELF %s", path, archive ? "archive" : "object");
		goto err_end;
	}
	if (!archive) {
		struct own t = { 0 };

		if (!memfn_defs(ar, &t)) {
			for (int i = 0; i < t.defs.n; i++)
				strv_add(&w->defs, t.defs.v[i]);
			w->mask |= t.mask;
		}
		strv_free(&t.defs);
		goto err_end;
	}
	for (Elf_Cmd cmd = ELF_C_READ; (e = elf_begin(fd, cmd, ar)); ) {
		Elf_Arhdr *h = elf_getarhdr(e);
		struct own t = { 0 };

		if (elf_kind(e) == ELF_K_ELF && !memfn_defs(e, &t) && t.mask && h && h->ar_name) {
			const char *base = strrchr(path, '/');

			strv_add(&w->archives, base ? base + 1 : path);
			strv_add(&w->members, h->ar_name);
			strv_add(&w->routines, strrchr(t.defs.v[0], '=') + 1);
		}
		strv_free(&t.defs);
		cmd = elf_next(e);
		elf_end(e);
	}
err_end:
	elf_end(ar);
	close(fd);
	return ret;
}

/* Does linker option @tok name option @opt (ld takes "-opt", "--opt"
 * and any unambiguous abbreviation of at least @min letters)? */
static int ld_opt(const char *tok, const char *opt, size_t min)
{
	size_t n;

	tok += tok[0] == '-';
	tok += tok[0] == '-';
	n = strcspn(tok, "=");
	return n >= min && n <= strlen(opt) && !strncmp(tok, opt, n);
}

/*
 * The linker options (every -Wl argument, split at commas, in order) that
 * change where a routine data tracing expands resolves: `--wrap NAME`
 * sends every reference to NAME to the program's __wrap_NAME, so the
 * label goes there too; a `--defsym` of such a routine is refused (the
 * label would stay the library's); `-Map FILE` is noted, since aecc reads
 * the link map. Returns 0, or -1 after one line on stderr.
 */
static int own_ldflags(const struct ae_link_opts *o, struct own *w)
{
	struct strv t = { 0 };
	int ret = 0;

	for (int i = 0; i < o->nldflags; i++) {
		char *copy, *tok, *save = NULL;

		if (strncmp(o->ldflags[i], "-Wl,", 4))
			continue;
		copy = strdup(o->ldflags[i] + 4);
		if (!copy)
			abort();
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			strv_add(&t, tok);
		free(copy);
	}
	for (int i = 0; !ret && i < t.n; i++) {
		const char *tok = t.v[i], *eq = strchr(tok, '='), *arg;
		char routine[300];

		if (tok[0] != '-')
			continue;
		arg = eq ? eq + 1 : i + 1 < t.n ? t.v[i + 1] : "";
		if (ld_opt(tok, "wrap", 2)) {
			if (snprintf(routine, sizeof(routine), "__wrap_%s", arg) < (int)sizeof(routine))
				own_add(w, arg, routine);
		} else if (ld_opt(tok, "defsym", 3)) {
			char name[300];

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
			if (ae_memfn_kind(name))
				ret = ae_fail("-Wl,%s: data tracing expands %s from the C library, which a --defsym would bypass: define the routine instead",
					      tok, name);
		} else if (ld_opt(tok, "Map", 3) && *arg) {
			free(w->user_map);
			w->user_map = strdup(arg);
			if (!w->user_map)
				abort();
		}
	}
	strv_free(&t);
	return ret;
}

/* Does a line of ld's map name member @member of archive @ar, as
 * "AR(MEMBER)" or, in a twin archive (twin.c), "HASH-AR(NNNNN-MEMBER)"? */
static int map_names(const char *line, const char *ar, const char *member)
{
	size_t la = strlen(ar), lm = strlen(member);

	for (const char *p = strstr(line, ar); p; p = strstr(p + 1, ar)) {
		const char *m = p + la, *end;

		if ((p != line && p[-1] != '/' && p[-1] != '-') || *m != '(')
			continue;
		end = strchr(++m, ')');
		if (end && (size_t)(end - m) >= lm && !strncmp(end - lm, member, lm) &&
		    (end - lm == m || end[-(long)lm - 1] == '-'))
			return 1;
	}
	return 0;
}

/*
 * After a link that wrote the map @map (ld's -Map: it names every archive
 * member taken, stripped program or not), refuse what the program's own
 * routines cannot survive: an archive member defining one (own_memfns()),
 * and in the program (@prog) an own memcpy beside the C library's memmove,
 * which calls memcpy (the one call between the routines data tracing
 * expands, musl 1.2.3) inside an expansion that cannot run the program's
 * code. Returns 0, or -1 after one line on stderr.
 */
static int map_check(const char *map, const struct own *w, int prog)
{
	FILE *f = fopen(map, "r");
	char line[8192];
	int ret = 0;

	if (!f)
		return ae_fail("cannot read the link map %s: %s", map, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		if (prog && (w->mask >> AE_MEMFN_MEMCPY & 1) && strstr(line, "/libc.a(memmove.o)"))
			ret = ae_fail("the program has its own memcpy but the C library's memmove, which calls memcpy and which data tracing expands offline without running the program's code: define memmove too");
		for (int i = 0; !ret && i < w->members.n; i++)
			if (map_names(line, w->archives.v[i], w->members.v[i]))
				ret = ae_fail("%s(%s) defines %s, which the data-traced C library has, and the %s takes it: link that object itself, not from an archive",
					      w->archives.v[i], w->members.v[i], w->routines.v[i],
					      prog ? "program" : "twin");
	}
	fclose(f);
	return ret;
}

/* Copy file @from to @to. Returns 0, or -1 after one line on stderr. */
static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out = in ? fopen(to, "w") : NULL;
	char buf[65536];
	size_t n;
	int err;

	if (!in || !out) {
		err = errno;
		if (in)
			fclose(in);
		return ae_fail("cannot copy the link map to %s: %s", to, strerror(err));
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) && fwrite(buf, 1, n, out) == n)
		;
	err = ferror(in) || ferror(out);
	fclose(in);
	if (fclose(out) || err)
		return ae_fail("cannot write the link map %s", to);
	return 0;
}

/* Link both programs; a and b are the two command lines being built.
 * Returns 0, or -1 after one line on stderr. */
static int link_both(const struct ae_link_opts *o, struct strv *a, struct strv *b,
		     struct own *w)
{
	char musl_lib[PATH_MAX], p[PATH_MAX], orig[PATH_MAX];
	struct seg_info si = { 0 };
	static const char *const crt[] = { "crt1.o", "crti.o", "crtn.o" };
	char twin_crt[3][PATH_MAX], map[PATH_MAX] = "", twin_map[PATH_MAX] = "";
	int tmpn = 0;

	if (path_fmt(musl_lib, sizeof(musl_lib), "%s/lib", o->musl_dir) ||
	    path_fmt(p, sizeof(p), "%s/libc.a", musl_lib) ||
	    path_fmt(orig, sizeof(orig), "%s.orig", o->out))
		return -1;
	if (access(p, R_OK))
		return ae_fail("tracing libc not found at %s (run `make musl` in the aetrace tree)", p);
	if (access(o->libae, R_OK))
		return ae_fail("tracing runtime not found at %s", o->libae);
	if (access(o->libaert, R_OK))
		return ae_fail("libgcc helpers for traced programs not found at %s", o->libaert);

	for (int i = 0; i < 3; i++) {
		if (path_fmt(p, sizeof(p), "%s/%s", musl_lib, crt[i]) ||
		    path_fmt(twin_crt[i], sizeof(twin_crt[i]), "%s/twin-%s", o->tmpdir, crt[i]) ||
		    ae_twin_obj(p, twin_crt[i]))
			return -1;
	}

	/* the program's own routines, before every input */
	for (int i = 0; o->data && i < o->ninputs; i++) {
		int archive;
		const char *path = input_path(o, o->inputs[i], &archive);

		if (!path || own_memfns(path, archive, w))
			return -1;
	}
	if (o->data && own_ldflags(o, w))
		return -1;
	if (((w->mask >> AE_MEMFN_MEMCPY & 1) || w->members.n || w->user_map) &&
	    path_fmt(map, sizeof(map), "%s/prog.map", o->tmpdir))
		return -1;
	if (w->members.n && path_fmt(twin_map, sizeof(twin_map), "%s/twin.map", o->tmpdir))
		return -1;

	/* the instrumented program */
	av_start(a, o->out);
	av_add(a, "-Wl,-e,_ae_start");
	for (int i = 0; i < w->defs.n; i++)
		av_add(a, w->defs.v[i]);
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
		int archive;
		const char *path = input_path(o, o->inputs[i], &archive);

		if (!path)
			return -1;
		av_add(a, path);
		if (archive) {
			if (ae_twin_archive(o, path, p, sizeof(p)))
				return -1;
		} else {
			if (path_fmt(p, sizeof(p), "%s/twin%d.o", o->tmpdir, tmpn++) ||
			    ae_twin_obj(path, p))
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
	if (map[0]) {	/* last: a -Map of the command line's would win */
		if (path_fmt(p, sizeof(p), "-Wl,-Map=%s", map))
			return -1;
		av_add(a, p);
	}
	if (ae_run(a->v, o->verbose))
		return ae_fail("linking %s failed", o->out);
	if (map[0] && map_check(map, w, 1)) {
		unlink(o->out);
		return -1;
	}
	if (ae_fixup_prog(o->out, &si))
		return -1;

	/* the twin: same data addresses, same-sized sequence table */
	{
		char libc[PATH_MAX], seg[64];

		if (seqtab_pad(o, si.nseq, p, sizeof(p)))
			return -1;
		av_add(b, p);
		if (ae_twin_archive(o, o->libaert, p, sizeof(p)))
			return -1;
		av_add(b, p);
		if (path_fmt(libc, sizeof(libc), "%s/libc.a", musl_lib) ||
		    ae_twin_archive(o, libc, p, sizeof(p)))
			return -1;
		av_add(b, p);
		av_add(b, twin_crt[2]);
		if (si.rodata) {
			snprintf(seg, sizeof(seg), "-Wl,-Trodata-segment=%#lx",
				 (unsigned long)si.rodata);
			av_add(b, seg);
		}
		if (twin_map[0]) {
			if (path_fmt(p, sizeof(p), "-Wl,-Map=%s", twin_map))
				return -1;
			av_add(b, p);
		}
		if (ae_run(b->v, o->verbose))
			return ae_fail("linking %s failed", orig);
		if (twin_map[0] && map_check(twin_map, w, 0)) {
			unlink(o->out);
			unlink(orig);
			return -1;
		}
		/* the map the command line asked for: the program's */
		if (w->user_map && copy_file(map, w->user_map))
			return -1;
	}
	if (ae_check_layout(o->out, orig))
		return -1;
	/* neither hash covers .ae_orig (not loaded), removed here */
	if (path_fmt(p, sizeof(p), "%s/check.bin", o->tmpdir) ||
	    write_check(o->out, orig, w->mask, p))
		return -1;
	{
		char add[PATH_MAX + 16];
		char *oc[] = { "objcopy", "--remove-section=.ae_orig", "--add-section", add,
			       (char *)o->out, NULL };

		if (path_fmt(add, sizeof(add), ".ae_check=%s", p))
			return -1;
		return ae_run(oc, o->verbose);
	}
}

int ae_link(const struct ae_link_opts *o)
{
	struct strv a = { 0 }, b = { 0 };
	struct own w = { 0 };
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return ae_fail("libelf: %s", elf_errmsg(-1));
	ret = link_both(o, &a, &b, &w);
	strv_free(&a);
	strv_free(&b);
	strv_free(&w.defs);
	strv_free(&w.archives);
	strv_free(&w.members);
	strv_free(&w.routines);
	free(w.user_map);
	return ret;
}

