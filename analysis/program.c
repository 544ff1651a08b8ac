// SPDX-License-Identifier: MIT
/*
 * program.c - the static knowledge the regenerator needs: the twin's code
 * (decoded with capstone, as aecc decoded it), the schema events placed at
 * the twin's addresses, and the map from instrumented to twin addresses.
 */
#include <capstone/capstone.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aetrace/imgcheck.h>
#include <aetrace/schema.h>

#include "memfn.h"
#include "program.h"

static int perr(const char *path, const char *msg)
{
	fprintf(stderr, "aetrace: %s: %s\n", path, msg);
	return -1;
}

struct imap {
	const uint32_t *w;
	size_t n;		/* words */
};

static int addr_cmp(const void *a, const void *b)
{
	const struct ae_amap *x = a, *y = b;

	return x->prog < y->prog ? -1 : x->prog > y->prog;
}

static int ev_addr_cmp(const void *a, const void *b)
{
	const struct ae_rev *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * A predicate's flags it cannot carry: AE_PRED_VC_OTHER outside a
 * -fae-data object, or with a pool value that does not begin with a
 * witness byte (a value-cache record could be taken for it).
 */
static int pred_event_bad(const struct ae_schema_obj *h, const struct ae_event *e,
			  const uint32_t *pool)
{
	if (e->kind != AE_EV_PRED)
		return 0;
	if (e->flag & ~(AE_PRED_TAKEN | AE_PRED_VC_OTHER))
		return 1;
	if (!(e->flag & AE_PRED_VC_OTHER))
		return 0;
	if (!(h->flags & AE_SCHEMA_F_DATA) || !e->width)
		return 1;
	for (uint32_t i = 0; i < e->b; i++)
		if (!ae_is_wit_byte(pool[e->a + i] & 0xff))
			return 1;
	return 0;
}

/*
 * Is e a value-cache record (AE_VAL_REG_VC, _SEXT, _LOW) that object h
 * cannot carry? Its slot, register, width, and the schema version that
 * brought its kind (and AE_VC_BY_ADDR, after loads only).
 */
static int vc_event_bad(const struct ae_schema_obj *h, const struct ae_event *e)
{
	int by_addr = !!(e->b & AE_VC_BY_ADDR);

	if ((e->kind != AE_EV_VAL && e->kind != AE_EV_VAL_AFTER) ||
	    (e->flag != AE_VAL_REG_VC && e->flag != AE_VAL_REG_VC_SEXT &&
	     e->flag != AE_VAL_REG_VC_LOW))
		return 0;
	if (!(h->flags & AE_SCHEMA_F_DATA) || e->a > 15 ||
	    (e->b & ~(AE_VC_BY_ADDR | AE_VC_GROUP(0x0f))) >= AE_VC_SLOTS ||
	    (AE_VC_GROUP_OF(e->b) &&
	     (e->kind != AE_EV_VAL || e->flag == AE_VAL_REG_VC_SEXT || by_addr ||
	      AE_VC_GROUP_OF(e->b) < 2)) ||
	    (by_addr && (e->kind != AE_EV_VAL_AFTER || e->flag == AE_VAL_REG_VC_LOW)))
		return 1;
	/* before an instruction: 64 bits or a low half; after: 64 bits, 32
	 * bits extended, or a low half */
	switch (e->flag) {
	case AE_VAL_REG_VC:
		return e->width != 8 && (e->kind == AE_EV_VAL || e->width != 4);
	case AE_VAL_REG_VC_SEXT:
		return e->kind != AE_EV_VAL_AFTER || e->width != 4;
	default:
		return e->width != 4;
	}
}

/* Is the group that event i of ev[0..n) begins (AE_VC_GROUP) incomplete:
 * fewer records after it, before the same instruction, than it counts? */
static int vc_group_bad(const struct ae_event *ev, uint32_t i, uint32_t n)
{
	uint32_t g = AE_VC_GROUP_OF(ev[i].b);

	if (ev[i].kind != AE_EV_VAL || !g)
		return 0;
	if (g > n - i)
		return 1;
	for (uint32_t j = i + 1; j < i + g; j++)
		if (ev[j].insn != ev[i].insn || ev[j].kind != AE_EV_VAL ||
		    (ev[j].flag != AE_VAL_REG_VC && ev[j].flag != AE_VAL_REG_VC_LOW) ||
		    AE_VC_GROUP_OF(ev[j].b))
			return 1;
	return 0;
}

static int load_maps(struct ae_program *p)
{
	size_t slen, plen, olen;
	const uint8_t *sch = ae_image_section(&p->prog, ".ae_schema", &slen, NULL);
	const uint32_t *pim = (const uint32_t *)ae_image_section(&p->prog, ".ae_imap", &plen, NULL);
	const uint32_t *oim = (const uint32_t *)ae_image_section(&p->orig, ".ae_imap", &olen, NULL);
	size_t so = 0, pi = 0, oi = 0, nev = 0, nmap = 0, order = 0;

	if (!sch || !pim || !oim)
		return perr(p->prog.path, "no aetrace schema (.ae_schema/.ae_imap): not built by aecc, or stripped");
	plen /= 4;
	olen /= 4;
	/* first pass: sizes */
	while (so + sizeof(struct ae_schema_obj) <= slen) {
		const struct ae_schema_obj *h = (const void *)(sch + so);

		if (h->magic == AE_SCHEMA_MAGIC && h->version == 3)
			return perr(p->prog.path, "built by an older aecc (schema version 3, another value-cache coding): build it again");
		if (h->magic == AE_SCHEMA_MAGIC && h->version > AE_SCHEMA_VERSION_MAX &&
		    h->version < 256)
			return perr(p->prog.path, "built by a newer aecc (a schema version this aetrace does not know): use that aecc's aetrace");
		if (h->magic != AE_SCHEMA_MAGIC ||
		    h->version < AE_SCHEMA_VERSION ||
		    h->version > AE_SCHEMA_VERSION_MAX ||
		    h->size < sizeof(*h) || so + h->size > slen)
			return perr(p->prog.path, "corrupt .ae_schema section");
		/* (counts the record cannot hold are corrupt, not an
		 * allocation to try) */
		if (sizeof(*h) + h->nev * (uint64_t)sizeof(struct ae_event) +
		    h->npool * 4ull > h->size || nmap + h->ninsn > plen)
			return perr(p->prog.path, "corrupt schema record");
		nev += h->nev;
		if (h->flags & AE_SCHEMA_F_DATA)
			p->data_objs++;
		nmap += h->ninsn;
		so += (h->size + 3) & ~3u;
	}
	p->ev = calloc(nev + 1, sizeof(*p->ev));
	p->amap = calloc(nmap + 1, sizeof(*p->amap));
	if (!p->ev || !p->amap)
		return perr(p->prog.path, "out of memory");
	so = 0;
	while (so + sizeof(struct ae_schema_obj) <= slen) {
		const struct ae_schema_obj *h = (const void *)(sch + so);
		const struct ae_event *ev = (const void *)(h + 1);
		const uint32_t *pool = (const uint32_t *)(ev + h->nev);

		if (sizeof(*h) + h->nev * sizeof(*ev) + h->npool * 4ull > h->size)
			return perr(p->prog.path, "corrupt schema record");
		if (pi + 2 + h->ninsn > plen || oi + 2 + h->ninsn > olen ||
		    pim[pi] != h->objid || oim[oi] != h->objid ||
		    pim[pi + 1] != h->ninsn || oim[oi + 1] != h->ninsn)
			return perr(p->prog.path, "schema and instruction maps of prog and prog.orig do not match (rebuild both with aecc)");
		for (uint32_t k = 0; k < h->ninsn; k++) {
			p->amap[p->namap].prog = pim[pi + 2 + k];
			p->amap[p->namap].orig = oim[oi + 2 + k];
			p->namap++;
		}
		for (uint32_t i = 0; i < h->nev; i++) {
			struct ae_rev *r = &p->ev[p->nev++];

			int vsib = ev[i].kind == AE_EV_VAL && ev[i].flag == AE_VAL_VSIB;

			if (ev[i].insn >= h->ninsn || (ev[i].width > 8 && !vsib) ||
			    (vsib && (ev[i].width < 18 || ev[i].width > 66 ||
				      !(h->flags & AE_SCHEMA_F_DATA))) ||
			    ev[i].kind < AE_EV_PRED || ev[i].kind > AE_EV_PRED_KNOWN ||
			    (ev[i].kind == AE_EV_PRED_KNOWN &&
			     (ev[i].width || !(h->flags & AE_SCHEMA_F_DATA))) ||
			    h->version < ae_event_version(&ev[i]) ||
			    (ev[i].kind == AE_EV_ARGS_AT_CALL && !ae_memfn_args(ev[i].a)) ||
			    (ev[i].kind == AE_EV_EXPAND &&
			     (!(h->flags & AE_SCHEMA_F_DATA) ||
			      !ae_memfn_args(ev[i].a) || ev[i].width != ae_memfn_result_width(ev[i].a))) ||
			    (ev[i].kind == AE_EV_PRED && ev[i].a + (uint64_t)ev[i].b > h->npool) ||
			    pred_event_bad(h, &ev[i], pool) ||
			    (ev[i].flag == AE_VAL_REG && (ev[i].kind == AE_EV_VAL ||
							  ev[i].kind == AE_EV_VAL_AFTER) &&
			     ev[i].a > 15) ||
			    vc_event_bad(h, &ev[i]) || vc_group_bad(ev, i, h->nev) ||
			    (ev[i].kind == AE_EV_VAL_AFTER && ev[i].flag != AE_VAL_REPCNT_AFTER &&
			     ev[i].flag != AE_VAL_REG && ev[i].flag != AE_VAL_REG_SEXT &&
			     ev[i].flag != AE_VAL_REG_VC && ev[i].flag != AE_VAL_REG_VC_SEXT &&
			     ev[i].flag != AE_VAL_REG_VC_LOW) ||
			    ((ev[i].flag == AE_VAL_JTIDX_KNOWN || ev[i].flag == AE_VAL_JTLOAD_KNOWN) &&
			     (ev[i].kind != AE_EV_VAL || ev[i].width || ev[i].a > 15 ||
			      !(h->flags & AE_SCHEMA_F_DATA))) ||
			    (ev[i].flag == AE_VAL_REG_SEXT && (ev[i].kind != AE_EV_VAL_AFTER ||
							       ev[i].a > 15 ||
							       (ev[i].width != 1 && ev[i].width != 2 &&
								ev[i].width != 4))))
				return perr(p->prog.path, "corrupt schema event");
			r->addr = oim[oi + 2 + ev[i].insn];
			r->order = order++;
			r->kind = ev[i].kind;
			r->width = ev[i].width;
			r->flag = ev[i].flag;
			r->a = ev[i].a;
			r->b = ev[i].b;
			r->pool = pool + (ev[i].kind == AE_EV_PRED ? ev[i].a : 0);
			r->objid = h->objid;
			r->insn = ev[i].insn;
			r->vcobj = !!(h->flags & AE_SCHEMA_F_VCACHE);
		}
		pi += 2 + h->ninsn;
		oi += 2 + h->ninsn;
		so += (h->size + 3) & ~3u;
	}
	qsort(p->ev, p->nev, sizeof(*p->ev), ev_addr_cmp);
	qsort(p->amap, p->namap, sizeof(*p->amap), addr_cmp);
	return 0;
}

/*
 * The hashes aecc recorded in .ae_check (imgcheck.h) must be those of the
 * files given now: a changed program or twin would regenerate a different
 * trace without any other sign. Programs linked before .ae_check existed
 * have none and are not checked. Returns 0 or -1 after naming the file.
 */
static int check_hashes(struct ae_program *p)
{
	const uint8_t *sec;
	struct ae_check c;
	size_t len, slen;
	uint64_t h;

	sec = ae_image_section(&p->prog, ".ae_check", &len, NULL);
	if (!sec || !ae_image_section(&p->prog, ".ae_schema", &slen, NULL))
		return 0;	/* load_maps() names a missing schema */
	memset(&c, 0, sizeof(c));
	memcpy(&c, sec, len < sizeof(c) ? len : sizeof(c));
	if (c.magic != AE_CHECK_MAGIC ||
	    !((c.version == 1 && len == offsetof(struct ae_check, own_memfn)) ||
	      (c.version == AE_CHECK_VERSION && len == sizeof(c))) ||
	    c.own_memfn & ~(((2u << AE_MEMFN_MAX) - 1) & ~1u) || c.reserved)
		return perr(p->prog.path, "corrupt .ae_check section");
	p->own_memfn = c.own_memfn;
	if (ae_elf_check_hash(p->prog.elf, &h) || h != c.prog_hash)
		return perr(p->prog.path, "changed since aecc linked it (its .ae_check hash differs): rebuild it with aecc");
	if (ae_elf_check_hash(p->orig.elf, &h) || h != c.orig_hash)
		return perr(p->orig.path, "changed since aecc linked it, or the twin of another build (.ae_check hash differs): rebuild both with aecc");
	return 0;
}

static int load_seqtab(struct ae_program *p)
{
	size_t len;
	const uint32_t *t = (const uint32_t *)ae_image_section(&p->prog, "__ae_seqtab", &len, NULL);

	p->seq = t;
	p->nseq = t ? len / 8 : 0;
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The value cache's stores (.ae_vcupd), sorted by address. */
static int load_vcupd(struct ae_program *p)
{
	size_t len;
	const uint32_t *t = (const uint32_t *)ae_image_section(&p->prog, ".ae_vcupd", &len, NULL);

	if (!t)
		return 0;
	if (len % 8)
		return perr(p->prog.path, "corrupt .ae_vcupd section");
	p->nvcupd = len / 8;
	p->vcupd = malloc(len + 8);
	if (!p->vcupd)
		return perr(p->prog.path, "out of memory");
	memcpy(p->vcupd, t, len);
	for (size_t i = 0; i < p->nvcupd; i++)
		if (p->vcupd[2 * i + 1] >= AE_VC_SLOTS && p->vcupd[2 * i + 1] != AE_VC_ADDR_STORE)
			return perr(p->prog.path, "corrupt .ae_vcupd section (slot out of range)");
	qsort(p->vcupd, p->nvcupd, 8, pair_cmp);
	return 0;
}

int ae_vc_update_at(const struct ae_program *p, uint64_t prog_addr)
{
	size_t lo = 0, hi = p->nvcupd;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (p->vcupd[2 * m] < prog_addr)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == p->nvcupd || p->vcupd[2 * lo] != prog_addr)
		return -1;
	return p->vcupd[2 * lo + 1] == AE_VC_ADDR_STORE ? AE_VC_SLOTS : (int)p->vcupd[2 * lo + 1];
}

int ae_program_load(struct ae_program **pp, const char *prog)
{
	struct ae_program *p = calloc(1, sizeof(*p));
	char *orig;

	if (!p)
		return -1;
	*pp = p;
	if (asprintf(&orig, "%s.orig", prog) < 0)
		return -1;
	p->orig_path = orig;
	/* a twin given for the program: say so, not "PROG.orig.orig" */
	{
		size_t n = strlen(prog);

		if (n > 5 && !strcmp(prog + n - 5, ".orig") && access(orig, F_OK))
			return perr(prog, "a twin (PROG.orig)? give the program aecc built beside it");
	}
	if (ae_image_load(&p->prog, prog) || ae_image_load(&p->orig, orig))
		return -1;
	if (check_hashes(p) || load_maps(p) || load_seqtab(p) || load_vcupd(p))
		return -1;
	p->ntab = p->orig.text_hi - p->orig.text_lo;
	p->tab = calloc(p->ntab, sizeof(*p->tab));
	if (!p->tab || cs_open(CS_ARCH_X86, CS_MODE_64, &p->cs) != CS_ERR_OK)
		return perr(prog, "cannot set up the decoder");
	cs_option(p->cs, CS_OPT_DETAIL, CS_OPT_ON);
	p->ci = cs_malloc(p->cs);
	p->restorer = ae_image_symbol(&p->orig, "__restore_rt");
	return 0;
}

int ae_program_vcprof_start(struct ae_program *p)
{
	if (!p->vcprof)
		p->vcprof = calloc(p->nev + 1, sizeof(*p->vcprof));
	return p->vcprof ? 0 : -1;
}

int ae_program_vcprof_write(const struct ae_program *p, FILE *f)
{
	for (size_t i = 0; p->vcprof && i < p->nev; i++) {
		const struct ae_vcprof_count *c = &p->vcprof[i];

		if (c->recs &&
		    fprintf(f, "%08x %u %c %u %llu %llu %llu %llu\n", p->ev[i].objid,
			    p->ev[i].insn, p->ev[i].kind == AE_EV_VAL_AFTER ? 'a' : 'b',
			    p->ev[i].a, (unsigned long long)c->recs,
			    (unsigned long long)c->lc_hits, (unsigned long long)c->one_byte,
			    (unsigned long long)c->bytes) < 0)
			return -1;
	}
	return 0;
}

void ae_program_free(struct ae_program *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->npool; i++) {
		size_t used = i + 1 == p->npool ? p->dused : 4096;

		for (size_t j = 0; p->dpool[i] && j < used; j++)
			free(p->dpool[i][j].df);
		free(p->dpool[i]);
	}
	free(p->dpool);
	free(p->vcprof);
	ae_memfn_emu_free(p->memfn);
	free(p->mfr);
	free(p->tab);
	free(p->ev);
	free(p->amap);
	free(p->vcupd);
	free(p->byorig);
	if (p->ci)
		cs_free(p->ci, 1);
	if (p->cs)
		cs_close(&p->cs);
	ae_image_free(&p->prog);
	ae_image_free(&p->orig);
	free(p->orig_path);
	free(p);
}

/* Twin address of an instrumented-code address; 0 if not an original
 * instruction. */
uint64_t ae_map_exact(const struct ae_program *p, uint64_t prog_addr)
{
	size_t lo = 0, hi = p->namap;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (p->amap[m].prog < prog_addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < p->namap && p->amap[lo].prog == prog_addr ? p->amap[lo].orig : 0;
}

static int in_seq(const struct ae_program *p, uint64_t a, uint64_t *end)
{
	size_t lo = 0, hi = p->nseq;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (p->seq[2 * m + 1] <= a)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo < p->nseq && p->seq[2 * lo] <= a && a < p->seq[2 * lo + 1]) {
		*end = p->seq[2 * lo + 1];
		return 1;
	}
	return 0;
}

/*
 * The original instruction that executes next when the instrumented
 * program is at prog_addr: instrumentation (sequences, scratch moves, the
 * jump back from a witness stub) is skipped forward.
 */
uint64_t ae_map_resume(struct ae_program *p, uint64_t prog_addr)
{
	return ae_map_resume_seq(p, prog_addr, NULL);
}

/* What instruction ci, inserted by aecc, adds to %rsp; 0 with *known
 * cleared when it writes %rsp otherwise. */
static int64_t sp_effect(struct ae_program *p, const cs_insn *ci, int *known)
{
	const cs_x86 *x = &ci->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	switch (ci->id) {
	case X86_INS_PUSH:
		return -8;
	case X86_INS_POP:
		if (x->operands[0].type == X86_OP_REG && x->operands[0].reg == X86_REG_RSP)
			break;
		return 8;
	case X86_INS_LEA:
		if (x->operands[0].reg == X86_REG_RSP && x->operands[1].mem.base == X86_REG_RSP &&
		    x->operands[1].mem.index == X86_REG_INVALID)
			return x->operands[1].mem.disp;
		break;
	default:
		if (cs_regs_access(p->cs, ci, rd, &nrd, wr, &nwr))
			break;
		for (int i = 0; i < nwr; i++)
			if (wr[i] == X86_REG_RSP || wr[i] == X86_REG_ESP || wr[i] == X86_REG_SP)
				goto other;
		return 0;
	}
other:
	*known = 0;
	return 0;
}

/* The instrumented program's instruction at addr, decoded into p->ci:
 * 1, or 0 where none decodes. */
static int decode_prog(struct ae_program *p, uint64_t addr)
{
	const uint8_t *code = ae_image_ptr(&p->prog, addr, 16);
	size_t size = 16;

	return code && cs_disasm_iter(p->cs, &code, &size, &addr, p->ci);
}

/* Is p->ci a direct jump (jmp imm)? */
static int is_jmp_imm(const struct ae_program *p)
{
	return p->ci->id == X86_INS_JMP && p->ci->detail->x86.op_count == 1 &&
	       p->ci->detail->x86.operands[0].type == X86_OP_IMM;
}

uint64_t ae_map_resume_seq(struct ae_program *p, uint64_t prog_addr, struct ae_resume *r)
{
	struct ae_resume dummy;

	if (!r)
		r = &dummy;
	*r = (struct ae_resume){ .sp_known = 1 };
	for (int steps = 0; steps < 64; steps++) {
		uint64_t o = ae_map_exact(p, prog_addr), end;

		if (o)
			return r->ip = o;
		/* a sequence moves no %rsp (a cut one re-runs from its start) */
		if (in_seq(p, prog_addr, &end)) {
			r->via_seq = 1;
			prog_addr = end;
			continue;
		}
		if (!decode_prog(p, prog_addr))
			return 0;
		if (is_jmp_imm(p)) {
			prog_addr = p->ci->detail->x86.operands[0].imm;
		} else {
			r->sp_adj += sp_effect(p, p->ci, &r->sp_known);
			prog_addr += p->ci->size;
		}
	}
	return 0;
}

static struct ae_dinsn *new_dinsn(struct ae_program *p)
{
	if (p->dused == 4096 || !p->npool) {
		p->dpool = realloc(p->dpool, (p->npool + 1) * sizeof(*p->dpool));
		p->dpool[p->npool++] = calloc(4096, sizeof(struct ae_dinsn));
		p->dused = 0;
	}
	return &p->dpool[p->npool - 1][p->dused++];
}

/* ae_decode() the first time: decode and cache the instruction at addr. */
struct ae_dinsn *ae_decode_new(struct ae_program *p, uint64_t addr)
{
	struct ae_dinsn *d;
	const uint8_t *code;
	size_t size = 16;
	uint64_t a = addr;
	cs_x86 *x;
	size_t lo, hi;

	if (addr < p->orig.text_lo || addr >= p->orig.text_hi)
		return NULL;
	d = p->tab[addr - p->orig.text_lo];
	if (d)
		return d;
	code = ae_image_ptr(&p->orig, addr, 1);
	if (!code)
		return NULL;
	if (p->orig.text_hi - addr < 16)
		size = p->orig.text_hi - addr;
	if (!cs_disasm_iter(p->cs, &code, &size, &a, p->ci))
		return NULL;
	d = new_dinsn(p);
	d->len = p->ci->size;
	x = &p->ci->detail->x86;
	d->kind = AE_K_PLAIN;
	switch (p->ci->id) {
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
		d->kind = AE_K_RET;
		break;
	case X86_INS_SYSCALL:
		d->kind = AE_K_SYSCALL;
		d->enters_kernel = 1;
		break;
	case X86_INS_INT:
		d->enters_kernel = x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
				   x->operands[0].imm == 0x80;
		break;
	case X86_INS_UD2: case X86_INS_HLT:
		d->kind = AE_K_STOP;
		break;
	default:
		break;
	}
	/* the table of a dispatch load (AE_VAL_JTLOAD) */
	if (p->ci->id == X86_INS_MOV && x->op_count == 2 &&
	    x->operands[1].type == X86_OP_MEM) {
		d->disp = x->operands[1].mem.disp;
		d->scale = x->operands[1].mem.scale;
	}
	if (p->ci->id == X86_INS_JMP || p->ci->id == X86_INS_CALL ||
	    cs_insn_group(p->cs, p->ci, CS_GRP_JUMP)) {
		int call = p->ci->id == X86_INS_CALL, jmp = p->ci->id == X86_INS_JMP;
		cs_x86_op *op = &x->operands[0];

		if (op->type == X86_OP_IMM) {
			d->kind = call ? AE_K_CALL : jmp ? AE_K_JMP : AE_K_JCC;
			d->target = op->imm;
		} else {
			d->kind = call ? AE_K_CALL_IND : AE_K_JMP_IND;
			if (op->type == X86_OP_MEM) {
				d->disp = op->mem.disp;
				d->scale = op->mem.scale;
			}
		}
	}
	/* events at this address */
	lo = 0;
	hi = p->nev;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (p->ev[m].addr < addr)
			lo = m + 1;
		else
			hi = m;
	}
	d->ev = lo < p->nev && p->ev[lo].addr == addr ? &p->ev[lo] : NULL;
	while (lo < p->nev && p->ev[lo].addr == addr) {
		d->nev++;
		lo++;
	}
	p->tab[addr - p->orig.text_lo] = d;
	return d;
}

/* ae_decode_df() the first time */
const struct ae_df_op *ae_decode_df_new(struct ae_program *p, struct ae_dinsn *d, uint64_t addr)
{
	const uint8_t *code;
	size_t size = d->len;
	uint64_t a = addr;

	if (d->df)
		return d->df;
	code = ae_image_ptr(&p->orig, addr, d->len);
	if (!code || !cs_disasm_iter(p->cs, &code, &size, &a, p->ci))
		return NULL;
	d->df = malloc(sizeof(*d->df));
	if (!d->df)
		return NULL;
	if (ae_df_decode(p->cs, p->ci, d->df)) {
		free(d->df);
		d->df = NULL;
	}
	return d->df;
}

static int orig_cmp(const void *a, const void *b)
{
	const struct ae_amap *x = a, *y = b;

	return x->orig < y->orig ? -1 : x->orig > y->orig;
}

/* The map entry of twin address addr, or NULL (also without memory). */
static const struct ae_amap *by_orig(struct ae_program *p, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!p->byorig) {
		p->byorig = malloc((p->namap + 1) * sizeof(*p->byorig));
		if (!p->byorig)
			return NULL;
		memcpy(p->byorig, p->amap, p->namap * sizeof(*p->byorig));
		qsort(p->byorig, p->namap, sizeof(*p->byorig), orig_cmp);
	}
	hi = p->namap;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (p->byorig[m].orig < addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < p->namap && p->byorig[lo].orig == addr ? &p->byorig[lo] : NULL;
}

/* Is addr one of the program's own instructions (not assembler padding)? */
int ae_is_original(struct ae_program *p, uint64_t addr)
{
	if (by_orig(p, addr))
		return 1;
	return !p->byorig;	/* no memory to tell: every address counts */
}

/*
 * Walk the instrumented code from `from` (the first address of a branch
 * side) through instrumentation to the next original instruction: does
 * it hold `ip`, and does that instruction map to twin address `want`?
 */
static int stub_holds(struct ae_program *p, uint64_t from, uint64_t ip, uint64_t want)
{
	int holds = 0, jumped = 0;

	for (int steps = 0; steps < 32; steps++) {
		uint64_t o = ae_map_exact(p, from), end;

		if (o)
			return holds && o == want;
		if (in_seq(p, from, &end)) {
			holds |= from <= ip && ip < end;
			from = end;
			continue;
		}
		holds |= from == ip;
		if (!decode_prog(p, from))
			return 0;
		if (is_jmp_imm(p)) {
			if (jumped++)
				return 0;
			from = p->ci->detail->x86.operands[0].imm;
		} else if (cs_insn_group(p->cs, p->ci, CS_GRP_JUMP) ||
			   cs_insn_group(p->cs, p->ci, CS_GRP_CALL) ||
			   cs_insn_group(p->cs, p->ci, CS_GRP_RET)) {
			return 0;
		} else {
			from += p->ci->size;
		}
	}
	return 0;
}

int ae_edge_stub_holds(struct ae_program *p, uint64_t orig, int taken, uint64_t ip,
		       uint64_t want)
{
	const struct ae_amap *m = by_orig(p, orig);
	uint64_t from;
	const cs_x86 *x;

	if (!m || !decode_prog(p, m->prog))
		return 0;
	x = &p->ci->detail->x86;
	if (!cs_insn_group(p->cs, p->ci, CS_GRP_JUMP) || p->ci->id == X86_INS_JMP ||
	    x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	from = taken ? (uint64_t)x->operands[0].imm : m->prog + p->ci->size;
	return stub_holds(p, from, ip, want);
}

struct ae_memfn_emu *ae_program_memfn(struct ae_program *p)
{
	struct ae_memfn_code code[16];
	char err[160];
	int n = 0;

	if (p->memfn || p->memfn_failed)
		return p->memfn;
	for (int i = 0; i < p->orig.nseg && n < 16; i++)
		if (p->orig.seg[i].exec) {
			code[n].vaddr = p->orig.seg[i].vaddr;
			code[n].bytes = p->orig.seg[i].data;
			code[n].len = p->orig.seg[i].filesz;
			n++;
		}
	p->memfn = ae_memfn_emu_new(code, n, err, sizeof(err));
	if (!p->memfn) {
		fprintf(stderr, "aetrace: %s: the library-routine expander: %s\n", p->orig.path, err);
		p->memfn_failed = 1;
	}
	return p->memfn;
}

int ae_program_in_memfn(struct ae_program *p, uint64_t ip)
{
	if (!p->mfr_done) {
		p->mfr_done = 1;
		for (size_t i = 0; i < p->nev; i++) {
			struct ae_range *n;
			uint64_t size;

			if (p->ev[i].kind != AE_EV_EXPAND)
				continue;
			size = ae_image_func_size(&p->orig, p->ev[i].addr);
			n = size ? realloc(p->mfr, (p->nmfr + 1) * sizeof(*n)) : NULL;
			if (!n) {
				p->mfr_unknown = 1;
				continue;
			}
			p->mfr = n;
			p->mfr[p->nmfr].start = p->ev[i].addr;
			p->mfr[p->nmfr++].end = p->ev[i].addr + size;
		}
	}
	if (p->mfr_unknown)
		return 1;
	for (size_t i = 0; i < p->nmfr; i++)
		if (ip >= p->mfr[i].start && ip < p->mfr[i].end)
			return 1;
	return 0;
}
