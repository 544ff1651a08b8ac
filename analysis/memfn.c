// SPDX-License-Identifier: MIT
/*
 * memfn.c - the expander's emulator (memfn.h): libunicorn runs the
 * twin's code of a routine traced by its arguments (memcpy, memmove,
 * memset, strlen, ..., the compares) so that the regenerator can report
 * exactly the instructions and accesses it executes natively.
 *
 * Why this is exact: the routines' control flow and addresses depend on
 * their arguments and, for strlen, on where the first zero byte is (a
 * compare: on which bytes of the two areas are equal or zero, up to where
 * it stops), never on other memory content. So any memory with the same
 * zero byte yields the same instructions and addresses: every page the
 * routine touches is mapped on first use and filled with a nonzero byte,
 * with the recorded marks (strlen's terminator; a compare's two bytes
 * where it stopped) in place. The code pages are the twin's
 * text, whose content never changes. Data memory is unmapped after each
 * run, so one call's writes (memset with zero) cannot reach the next.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicorn/unicorn.h>

#include <aetrace/schema.h>

#include "memfn.h"

#define PAGE	4096ull
/* Data memory is mapped in chunks (a page where a chunk would overlap
 * code): unicorn (QEMU) asserts beyond 4096 regions, so one run maps at
 * most MAX_MAPS chunks (AE_MEMFN_MAX_BYTES); more is an error, never an
 * abort. */
#define CHUNK	(256 * 1024ull)
#define MAX_MAPS	(AE_MEMFN_MAX_BYTES / CHUNK)

/* One data mapping of the current run, backed by buf (CHUNK bytes). */
struct map {
	uint64_t addr, len;
	uint8_t *buf;
};

/* unicorn's registers in dataflow.h order */
static const int uc_regs[16] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
	UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
	UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11,
	UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
};

struct ae_memfn_emu {
	uc_engine *uc;
	uc_hook code_hook, mem_hook;
	uint64_t *code_pages;	/* sorted first addresses of mapped code pages */
	size_t ncode_pages;
	struct map *maps;	/* data mapped during this run (MAX_MAPS) */
	size_t nmaps;
	uint8_t **pool;		/* free CHUNK buffers (MAX_MAPS) */
	size_t npool;
	const struct ae_memfn_mem *mem;
	ae_memfn_insn_fn fn;
	void *ctx;
	int stopped;		/* the callback's value */
	int failed;		/* a page could not be mapped */
	uint64_t fail_addr;
};

static int is_code_page(const struct ae_memfn_emu *e, uint64_t pg)
{
	size_t lo = 0, hi = e->ncode_pages;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (e->code_pages[m] < pg)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < e->ncode_pages && e->code_pages[lo] == pg;
}

/* Does a code page lie in [lo, hi)? */
static int code_in(const struct ae_memfn_emu *e, uint64_t lo, uint64_t hi)
{
	size_t l = 0, h = e->ncode_pages;

	while (l < h) {
		size_t m = (l + h) / 2;

		if (e->code_pages[m] < lo)
			l = m + 1;
		else
			h = m;
	}
	return l < e->ncode_pages && e->code_pages[l] < hi;
}

/* The data mapping holding addr, or one overlapping [lo, hi): NULL if none. */
static const struct map *mapped(const struct ae_memfn_emu *e, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < e->nmaps; i++)
		if (e->maps[i].addr < hi && lo < e->maps[i].addr + e->maps[i].len)
			return &e->maps[i];
	return NULL;
}

/* Map the chunk (or page) holding addr with the synthetic content. 0 or -1. */
static int map_at(struct ae_memfn_emu *e, uint64_t addr)
{
	const struct ae_memfn_mem *m = e->mem;
	uint64_t lo = addr / CHUNK * CHUNK, len = CHUNK;
	struct map *x;

	if (e->nmaps >= MAX_MAPS)
		return -1;
	if (code_in(e, lo, lo + len) || mapped(e, lo, lo + len)) {
		lo = addr / PAGE * PAGE;
		len = PAGE;
	}
	x = &e->maps[e->nmaps];
	x->buf = e->npool ? e->pool[--e->npool] : malloc(CHUNK);
	if (!x->buf)
		return -1;
	memset(x->buf, m->fill, len);
	for (int i = 0; i < m->nmarks; i++)
		if (m->mark[i].addr >= lo && m->mark[i].addr < lo + len)
			x->buf[m->mark[i].addr - lo] = m->mark[i].val;
	if (uc_mem_map_ptr(e->uc, lo, len, UC_PROT_READ | UC_PROT_WRITE, x->buf) != UC_ERR_OK) {
		e->pool[e->npool++] = x->buf;
		return -1;
	}
	x->addr = lo;
	x->len = len;
	e->nmaps++;
	return 0;
}

/* Make [addr, addr + len) mapped. 0 or -1. */
static int ensure(struct ae_memfn_emu *e, uint64_t addr, uint64_t len)
{
	for (uint64_t pg = addr / PAGE * PAGE; pg < addr + len; pg += PAGE) {
		if (is_code_page(e, pg) || mapped(e, pg, pg + 1))
			continue;
		if (map_at(e, pg)) {
			e->failed = 1;
			e->fail_addr = pg;
			return -1;
		}
	}
	return 0;
}

static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
			int64_t value, void *user)
{
	struct ae_memfn_emu *e = user;

	if (type != UC_MEM_READ_UNMAPPED && type != UC_MEM_WRITE_UNMAPPED)
		return false;
	return ensure(e, addr, size > 0 ? (uint64_t)size : 1) == 0;
}

static void read_regs(struct ae_memfn_emu *e, struct ae_df_state *s)
{
	void *vals[16];

	for (int r = 0; r < 16; r++)
		vals[r] = &s->v[r];
	uc_reg_read_batch(e->uc, (int *)uc_regs, vals, 16);
	s->known = 0xffff;
	s->df = 0;
	s->df_known = 1;
	s->fs_known = 0;
}

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
	struct ae_memfn_emu *e = user;
	struct ae_df_state s;
	int r;

	read_regs(e, &s);
	r = e->fn(e->ctx, addr, &s);
	if (r) {
		e->stopped = r;
		uc_emu_stop(uc);
	}
}

struct ae_memfn_emu *ae_memfn_emu_new(const struct ae_memfn_code *code, int ncode,
				      char *err, size_t errlen)
{
	struct ae_memfn_emu *e = calloc(1, sizeof(*e));
	uc_err u;

	if (e) {
		e->maps = calloc(MAX_MAPS, sizeof(*e->maps));
		e->pool = calloc(MAX_MAPS, sizeof(*e->pool));
	}
	if (!e || !e->maps || !e->pool) {
		snprintf(err, errlen, "out of memory");
		if (e) {
			free(e->maps);
			free(e->pool);
		}
		free(e);
		return NULL;
	}
	u = uc_open(UC_ARCH_X86, UC_MODE_64, &e->uc);
	if (u != UC_ERR_OK) {
		snprintf(err, errlen, "unicorn: %s", uc_strerror(u));
		free(e->maps);
		free(e->pool);
		free(e);
		return NULL;
	}
	for (int i = 0; i < ncode; i++) {
		uint64_t lo = code[i].vaddr / PAGE * PAGE;
		uint64_t hi = (code[i].vaddr + code[i].len + PAGE - 1) / PAGE * PAGE;
		uint64_t *n;

		u = uc_mem_map(e->uc, lo, hi - lo, UC_PROT_ALL);
		if (u == UC_ERR_OK)
			u = uc_mem_write(e->uc, code[i].vaddr, code[i].bytes, code[i].len);
		n = realloc(e->code_pages, (e->ncode_pages + (hi - lo) / PAGE) * sizeof(*n));
		if (u != UC_ERR_OK || !n) {
			snprintf(err, errlen, "unicorn: mapping code at %#llx: %s",
				 (unsigned long long)lo, n ? uc_strerror(u) : "out of memory");
			free(n ? n : e->code_pages);
			e->code_pages = NULL;
			ae_memfn_emu_free(e);
			return NULL;
		}
		e->code_pages = n;
		for (uint64_t pg = lo; pg < hi; pg += PAGE)
			e->code_pages[e->ncode_pages++] = pg;
	}
	for (size_t i = 1; i < e->ncode_pages; i++)
		if (e->code_pages[i] <= e->code_pages[i - 1]) {
			snprintf(err, errlen, "code ranges overlap or are not in address order");
			ae_memfn_emu_free(e);
			return NULL;
		}
	if (uc_hook_add(e->uc, &e->code_hook, UC_HOOK_CODE, on_code, e, 1, 0) != UC_ERR_OK ||
	    uc_hook_add(e->uc, &e->mem_hook, UC_HOOK_MEM_READ_UNMAPPED | UC_HOOK_MEM_WRITE_UNMAPPED,
			on_unmapped, e, 1, 0) != UC_ERR_OK) {
		snprintf(err, errlen, "unicorn: cannot add hooks");
		ae_memfn_emu_free(e);
		return NULL;
	}
	return e;
}

void ae_memfn_emu_free(struct ae_memfn_emu *e)
{
	if (!e)
		return;
	if (e->uc)
		uc_close(e->uc);
	for (size_t i = 0; i < e->nmaps; i++)
		free(e->maps[i].buf);
	for (size_t i = 0; i < e->npool; i++)
		free(e->pool[i]);
	free(e->code_pages);
	free(e->maps);
	free(e->pool);
	free(e);
}

/* Unmap this run's data memory; its buffers go back to the pool. */
static void reset(struct ae_memfn_emu *e)
{
	for (size_t i = 0; i < e->nmaps; i++) {
		uc_mem_unmap(e->uc, e->maps[i].addr, e->maps[i].len);
		e->pool[e->npool++] = e->maps[i].buf;
	}
	e->nmaps = 0;
}

int ae_memfn_emu_run(struct ae_memfn_emu *e, uint64_t entry, uint64_t ret,
		     struct ae_df_state *regs, const struct ae_memfn_mem *mem,
		     uint64_t limit, ae_memfn_insn_fn fn, void *ctx,
		     char *err, size_t errlen)
{
	uint64_t sp = regs->v[4], rip = 0, flags = 0x2;
	uint8_t saved[2] = { 0, 0 };
	int in_code[2] = { 0, 0 }, ret_val = 0;
	uc_err u;

	e->mem = mem;
	e->fn = fn;
	e->ctx = ctx;
	e->stopped = 0;
	e->failed = 0;
	/* a mark in a code page (a string in the text): the bytes there
	 * are the real ones; it is written anyway and put back after */
	for (int i = 0; i < mem->nmarks && i < 2; i++)
		if (is_code_page(e, mem->mark[i].addr / PAGE * PAGE)) {
			in_code[i] = 1;
			uc_mem_read(e->uc, mem->mark[i].addr, &saved[i], 1);
			uc_mem_write(e->uc, mem->mark[i].addr, &mem->mark[i].val, 1);
		}
	if (ensure(e, sp, 8) || uc_mem_write(e->uc, sp, &ret, 8) != UC_ERR_OK) {
		snprintf(err, errlen, "cannot map the stack at %#llx", (unsigned long long)sp);
		ret_val = -1;
		goto out;
	}
	for (int r = 0; r < 16; r++) {
		uint64_t v = (regs->known >> r) & 1 ? regs->v[r] : 0;

		uc_reg_write(e->uc, uc_regs[r], &v);
	}
	uc_reg_write(e->uc, UC_X86_REG_EFLAGS, &flags);
	u = uc_emu_start(e->uc, entry, ret, 0, limit);
	if (e->stopped) {
		ret_val = e->stopped;
		goto out;
	}
	uc_reg_read(e->uc, UC_X86_REG_RIP, &rip);
	if (e->failed) {
		snprintf(err, errlen, "cannot map memory at %#llx: an expanded call may touch at most %llu MiB (the expander's limit: corrupt arguments, or a larger copy; build with aecc -fno-ae-memfn to trace it)",
			 (unsigned long long)e->fail_addr, AE_MEMFN_MAX_BYTES >> 20);
		ret_val = -1;
	} else if (u != UC_ERR_OK) {
		snprintf(err, errlen, "emulation failed at %#llx: %s",
			 (unsigned long long)rip, uc_strerror(u));
		ret_val = -1;
	} else if (rip != ret) {
		snprintf(err, errlen, "the routine did not return within %llu instructions (at %#llx)",
			 (unsigned long long)limit, (unsigned long long)rip);
		ret_val = -1;
	} else {
		read_regs(e, regs);
	}
out:
	for (int i = 1; i >= 0; i--)
		if (in_code[i])
			uc_mem_write(e->uc, mem->mark[i].addr, &saved[i], 1);
	reset(e);
	return ret_val;
}

/* The byte a run on memory m reads at addr (the later mark wins, as in
 * map_at() and ae_memfn_emu_run()). */
static uint8_t mem_byte(struct ae_memfn_emu *e, const struct ae_memfn_mem *m, uint64_t addr)
{
	uint8_t b = m->fill;

	if (is_code_page(e, addr / PAGE * PAGE))
		uc_mem_read(e->uc, addr, &b, 1);
	for (int i = 0; i < m->nmarks; i++)
		if (m->mark[i].addr == addr)
			b = m->mark[i].val;
	return b;
}

/* Scan m as the instrumentation scans real memory (aecc emit.c
 * emit_cmp_stop()), at most max + 1 bytes: the stop record. */
static uint64_t cmp_scan(struct ae_memfn_emu *e, const struct ae_memfn_mem *m, int kind,
			 uint64_t l, uint64_t r, uint64_t n, uint64_t max)
{
	uint64_t k = 0, bl = 0, br = 0;

	if (kind == AE_MEMFN_STRNCMP && !n)
		return 0;
	for (;; k++) {
		if (kind == AE_MEMFN_MEMCMP && k >= n) {
			bl = br = 0;
			break;
		}
		bl = mem_byte(e, m, l + k);
		br = mem_byte(e, m, r + k);
		if (kind == AE_MEMFN_STRNCMP && k + 1 >= n)
			break;
		if (kind != AE_MEMFN_MEMCMP && !bl)
			break;
		if (bl != br || k > max)
			break;
	}
	return k | bl << 48 | br << 56;
}

int ae_memfn_cmp_mem(struct ae_memfn_emu *e, int kind, uint64_t l, uint64_t r, uint64_t n,
		     uint64_t stop, struct ae_memfn_mem *m, uint64_t *limit, uint32_t *result,
		     char *err, size_t errlen)
{
	uint64_t k = AE_MEMFN_STOP_K(stop);
	uint8_t bl = AE_MEMFN_STOP_L(stop), br = AE_MEMFN_STOP_R(stop);
	uint8_t fills[3] = { 1, bl, br };
	int reads_k = kind == AE_MEMFN_MEMCMP ? k < n : kind == AE_MEMFN_STRNCMP ? n != 0 : 1;

	if (kind != AE_MEMFN_MEMCMP && kind != AE_MEMFN_STRCMP && kind != AE_MEMFN_STRNCMP) {
		snprintf(err, errlen, "routine %d is not a compare", kind);
		return -1;
	}
	/* both areas must fit the expander's memory */
	if (k >= AE_MEMFN_MAX_BYTES / 2) {
		snprintf(err, errlen, "a compare of %llu bytes: an expanded call may touch at most %llu MiB (the expander's limit: corrupt record, or a larger compare; build with aecc -fno-ae-memfn to trace it)",
			 (unsigned long long)k, AE_MEMFN_MAX_BYTES >> 20);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	if (reads_k) {
		m->nmarks = 2;
		m->mark[0].addr = l + k;
		m->mark[0].val = bl;
		m->mark[1].addr = r + k;
		m->mark[1].val = br;
	}
	for (int i = 0; i < 3; i++) {
		m->fill = fills[i];
		if (!m->fill && kind != AE_MEMFN_MEMCMP)
			continue;
		if (cmp_scan(e, m, kind, l, r, n, k) != stop)
			continue;
		*limit = k + 1;
		*result = reads_k ? (uint32_t)((int)bl - (int)br) : 0;
		return 0;
	}
	snprintf(err, errlen, "corrupt trace: no memory stops a compare (routine %d) of %#llx and %#llx, n %llu, at byte %llu with %#x, %#x as recorded",
		 kind, (unsigned long long)l, (unsigned long long)r, (unsigned long long)n,
		 (unsigned long long)k, bl, br);
	return -1;
}
