// SPDX-License-Identifier: MIT
/*
 * instrument.c - abstract-execution instrumentation of one assembly file
 * (paper §2.2, shared/DESIGN.md "Abstract execution on x86-64").
 *
 * 1. The uninstrumented source gets a local label before every instruction
 *    and an .ae_imap table of those labels; it is assembled into the twin
 *    object. The twin's relocations give every instruction's place, and
 *    capstone decodes it: the CFG comes from machine code, not from text.
 * 2. Witness placement on the instruction-level CFG: blocking witnesses on
 *    predicate -> call/value/exit paths first, then the complement of a
 *    maximum spanning tree (loop-depth weights; exits are tree leaves,
 *    see place_mst()), then a check of the tracing property (disjoint
 *    witness sets at every predicate) that adds witnesses where it fails.
 * 3. The instrumented source gets the witness sequences, value records,
 *    the sequence table __ae_seqtab, the schema and the embedded twin.
 */
#include <capstone/capstone.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <aetrace/schema.h>

#include "asmfile.h"
#include "instrument.h"

enum insn_kind {
	IK_PLAIN, IK_JCC, IK_JMP, IK_JMP_IND, IK_CALL, IK_CALL_IND, IK_RET,
	IK_STOP,
};

enum ind_kind { IND_NONE, IND_REG, IND_MEM, IND_TABLE };

struct insn {
	int stmt;
	int sec;
	uint64_t off;
	int len;
	enum insn_kind kind;
	int target;		/* internal direct target, -1 if none */
	int ext;		/* direct target outside the object */
	int next;		/* physical successor, -1 if none */
	int func_start;
	int rep;		/* 1 rep movs/stos, 2 repe/repne cmps/scas */
	enum ind_kind ind;
	int ind_reg;		/* capstone register (REG, TABLE index) */
	int jt_width;
	int tload_reg;		/* mov TABLE(,%i,8),%r: r (gpr index), else -1 */
	int tload;		/* this load feeds a later jmp *%r */
	int from_tload;		/* this jmp *%r takes its target from a load */
	uint32_t writes;	/* bitmask of gprs written */
	uint32_t mem_regs;	/* bitmask of regs used by a memory operand */
	int setjmp_entry;
	int in_longjmp;
	int in_sigsetjmp;
	int exit_entry;		/* first instruction of _Exit */
	int stack_mem;		/* 1 pop to memory, 2 push from memory */
	int depth;
	int nout;
	int out[2];		/* edge indices */
};

enum edge_kind { E_FALL, E_TAKEN, E_EXIT };
enum edge_state { S_FREE, S_TREE, S_FORCED, S_WIT };

struct edge {
	int from, to;		/* to == n means EXIT */
	enum edge_kind kind;
	enum edge_state state;
	double w;
	int id;
};

struct ctx {
	const char *src;
	const struct ae_instr_opts *o;
	struct ae_asm a;
	struct insn *in;
	int n;
	struct edge *e;
	int ne, cape;
	int *comp;		/* component of each insn */
	int *compw;		/* witness width per component */
	int *compn;		/* witnesses per component */
	uint32_t objid;
	/* events */
	struct ae_event *ev;
	int nev, capev;
	uint32_t *pool;
	int npool, cappool;
};

static int err(struct ctx *c, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aecc: %s", c->src);
	if (line > 0)
		fprintf(stderr, ":%d", line);
	fprintf(stderr, ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "aecc: out of memory\n");
		abort();
	}
	return p;
}

static int run(const char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "aecc: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* ---- registers --------------------------------------------------------- */

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
static const char *const reg32[16] = {
	"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	"r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d",
};
static const char *const reg16[16] = {
	"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
	"r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w",
};
static const char *const reg8[16] = {
	"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
	"r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b",
};

/* Index 0..15 of a capstone 64-bit GPR (or its sub-registers), -1 else. */
static int gpr_index(csh h, unsigned int reg)
{
	const char *name;

	if (reg == X86_REG_INVALID)
		return -1;
	name = cs_reg_name(h, reg);
	if (!name)
		return -1;
	for (int i = 0; i < 16; i++)
		if (!strcmp(name, reg64[i]) || !strcmp(name, reg32[i]) ||
		    !strcmp(name, reg16[i]) || !strcmp(name, reg8[i]))
			return i;
	return -1;
}

/* ---- scanning the twin object ------------------------------------------ */

struct reloc {
	int sec;		/* section the relocation applies to */
	uint64_t off;
	int symsec;		/* section of the symbol, 0 if undefined */
	uint64_t symval;
	int64_t addend;
	int sym_is_func;
	uint32_t type;
};

struct scan {
	struct reloc *r;
	int nr;
	Elf_Data **secdata;
	size_t nsec;
	int *sec_exec;
};

static int reloc_cmp(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec - y->sec;
	return x->off < y->off ? -1 : x->off > y->off;
}

static struct reloc *find_reloc(struct scan *s, int sec, uint64_t off)
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

/* Instruction at (sec, off), by binary search over insns sorted by place. */
static int *by_place;

static struct ctx *sort_ctx;

static int place_cmp(const void *a, const void *b)
{
	const struct insn *x = &sort_ctx->in[*(const int *)a];
	const struct insn *y = &sort_ctx->in[*(const int *)b];

	if (x->sec != y->sec)
		return x->sec - y->sec;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int insn_at(struct ctx *c, int sec, uint64_t off)
{
	int lo = 0, hi = c->n - 1;

	while (lo <= hi) {
		int m = (lo + hi) / 2;
		struct insn *x = &c->in[by_place[m]];

		if (x->sec == sec && x->off == off)
			return by_place[m];
		if (x->sec < sec || (x->sec == sec && x->off < off))
			lo = m + 1;
		else
			hi = m - 1;
	}
	return -1;
}

static int read_relocs(struct ctx *c, Elf *elf, struct scan *s, int *imap_sec)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf_Data *symd = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return err(c, 0, "libelf: %s", elf_errmsg(-1));
	elf_getshdrnum(elf, &s->nsec);
	s->secdata = calloc(s->nsec, sizeof(*s->secdata));
	s->sec_exec = calloc(s->nsec, sizeof(int));
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
		return err(c, 0, "assembled twin has no symbol table");
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_RELA)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela ra;
			GElf_Sym sym;
			struct reloc *r;

			gelf_getrela(d, i, &ra);
			gelf_getsym(symd, GELF_R_SYM(ra.r_info), &sym);
			if (s->nr % 1024 == 0)
				s->r = xrealloc(s->r, (s->nr + 1024) * sizeof(*s->r));
			r = &s->r[s->nr++];
			r->sec = sh.sh_info;
			r->off = ra.r_offset;
			r->type = GELF_R_TYPE(ra.r_info);
			r->addend = ra.r_addend;
			r->symsec = sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : 0;
			r->symval = sym.st_value;
			r->sym_is_func = GELF_ST_TYPE(sym.st_info) == STT_FUNC;
		}
	}
	qsort(s->r, s->nr, sizeof(*s->r), reloc_cmp);
	return 0;
}

/* Mark instructions where a function symbol starts. */
static void mark_functions(struct ctx *c, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int k;

			gelf_getsym(d, i, &sym);
			if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			    !(GELF_ST_TYPE(sym.st_info) == STT_NOTYPE &&
			      GELF_ST_BIND(sym.st_info) != STB_LOCAL))
				continue;
			k = insn_at(c, sym.st_shndx, sym.st_value);
			if (k < 0)
				continue;
			c->in[k].func_start = 1;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && (!strcmp(name, "setjmp") || !strcmp(name, "_setjmp") ||
				     !strcmp(name, "__setjmp")))
				c->in[k].setjmp_entry = 1;
			if (name && (!strcmp(name, "longjmp") || !strcmp(name, "_longjmp")))
				c->in[k].in_longjmp = 1;
			if (name && (!strcmp(name, "sigsetjmp") || !strcmp(name, "__sigsetjmp")))
				c->in[k].in_sigsetjmp = 1;
			if (name && !strcmp(name, "_Exit"))
				c->in[k].exit_entry = 1;
		}
	}
}

/* Number of jump-table entries at (sec, off): consecutive 8-byte relocs. */
static int table_entries(struct scan *s, int sec, uint64_t off)
{
	int n = 0;
	struct reloc *r;

	while ((r = find_reloc(s, sec, off + 8 * n)) && r->symsec &&
	       r->symsec < (int)s->nsec && s->sec_exec[r->symsec])
		n++;
	return n;
}

/* Bytes that record an index into a table of n entries (8: size unknown). */
static int index_width(int n)
{
	return n > 0 && n <= 256 ? 1 : n > 0 && n <= 65536 ? 2 : 8;
}

static int decode(struct ctx *c, struct scan *s, csh h)
{
	for (int k = 0; k < c->n; k++) {
		struct insn *x = &c->in[k];
		Elf_Data *d = x->sec < (int)s->nsec ? s->secdata[x->sec] : NULL;
		const uint8_t *code;
		size_t size;
		uint64_t addr = x->off;
		cs_insn *ci = cs_malloc(h);
		cs_x86 *xd;
		int line = c->a.st[x->stmt].line;

		if (!d || x->off >= d->d_size) {
			cs_free(ci, 1);
			return err(c, line, "instruction outside its section");
		}
		code = (const uint8_t *)d->d_buf + x->off;
		size = d->d_size - x->off;
		if (!cs_disasm_iter(h, &code, &size, &addr, ci)) {
			cs_free(ci, 1);
			return err(c, line, "capstone cannot decode '%s'",
				   c->a.st[x->stmt].text);
		}
		x->len = ci->size;
		xd = &ci->detail->x86;
		x->kind = IK_PLAIN;
		x->target = -1;
		x->tload_reg = -1;
		/* r15 belongs to the instrumentation (invariant 1). */
		{
			cs_regs rr, ww;
			uint8_t nr, nw;

			if (!cs_regs_access(h, ci, rr, &nr, ww, &nw)) {
				for (int i = 0; i < nr + nw; i++) {
					int g = gpr_index(h, i < nr ? rr[i] : ww[i - nr]);

					if (g >= 0 && i >= nr)
						x->writes |= 1u << g;
					if (g == 15) {
						cs_free(ci, 1);
						return err(c, line, "'%s' uses %%r15, which is reserved for tracing (compile with -ffixed-r15)",
							   c->a.st[x->stmt].text);
					}
				}
			}
		}
		switch (ci->id) {
		case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD:
		case X86_INS_MOVSQ: case X86_INS_STOSB: case X86_INS_STOSW:
		case X86_INS_STOSD: case X86_INS_STOSQ: case X86_INS_LODSB:
		case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
			if (xd->prefix[0] == X86_PREFIX_REP || xd->prefix[0] == X86_PREFIX_REPNE)
				x->rep = 1;
			break;
		case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD:
		case X86_INS_CMPSQ: case X86_INS_SCASB: case X86_INS_SCASW:
		case X86_INS_SCASD: case X86_INS_SCASQ:
			if (xd->prefix[0] == X86_PREFIX_REP || xd->prefix[0] == X86_PREFIX_REPNE)
				x->rep = 2;
			break;
		case X86_INS_UD2: case X86_INS_HLT:
			x->kind = IK_STOP;
			break;
		case X86_INS_MOV:
			/* mov TABLE(,%i,8),%r64 from a table of code addresses */
			if (xd->op_count == 2 && xd->operands[0].type == X86_OP_REG &&
			    xd->operands[0].size == 8 && xd->operands[1].type == X86_OP_MEM &&
			    xd->operands[1].mem.base == X86_REG_INVALID &&
			    xd->operands[1].mem.segment == X86_REG_INVALID &&
			    xd->operands[1].mem.scale == 8 && xd->encoding.disp_offset) {
				struct reloc *r = find_reloc(s, x->sec, x->off + xd->encoding.disp_offset);
				int i = gpr_index(h, xd->operands[1].mem.index);
				int n = r && r->symsec ? table_entries(s, r->symsec, r->symval + r->addend) : 0;

				if (n > 0 && i >= 0) {
					x->tload_reg = gpr_index(h, xd->operands[0].reg);
					x->ind_reg = i;
					x->jt_width = index_width(n);
				}
			}
			break;
		case X86_INS_POP: case X86_INS_PUSH:
			if (xd->op_count == 1 && xd->operands[0].type == X86_OP_MEM) {
				int b = gpr_index(h, xd->operands[0].mem.base);
				int i = gpr_index(h, xd->operands[0].mem.index);

				x->stack_mem = ci->id == X86_INS_POP ? 1 : 2;
				if (b >= 0)
					x->mem_regs |= 1u << b;
				if (i >= 0)
					x->mem_regs |= 1u << i;
			}
			break;
		case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
			x->kind = IK_RET;
			break;
		default:
			break;
		}
		if (ci->id == X86_INS_JMP || ci->id == X86_INS_CALL ||
		    cs_insn_group(h, ci, CS_GRP_JUMP)) {
			int is_call = ci->id == X86_INS_CALL;
			int is_jmp = ci->id == X86_INS_JMP;
			cs_x86_op *op = &xd->operands[0];

			if (xd->op_count < 1)
				goto bad;
			if (op->type == X86_OP_IMM) {
				struct reloc *r = NULL;

				x->kind = is_call ? IK_CALL : is_jmp ? IK_JMP : IK_JCC;
				if (xd->encoding.imm_offset)
					r = find_reloc(s, x->sec, x->off + xd->encoding.imm_offset);
				if (r) {
					if (!r->symsec) {
						x->ext = 1;
					} else {
						int t = insn_at(c, r->symsec,
								r->symval + r->addend + 4);

						if (t < 0)
							x->ext = 1;
						else
							x->target = t;
					}
				} else {
					int t = insn_at(c, x->sec, (uint64_t)op->imm);

					if (t < 0)
						x->ext = 1;
					else
						x->target = t;
				}
				if (x->kind == IK_JCC && ci->id != X86_INS_JMP &&
				    (ci->id == X86_INS_LOOP || ci->id == X86_INS_LOOPE ||
				     ci->id == X86_INS_LOOPNE || ci->id == X86_INS_JRCXZ ||
				     ci->id == X86_INS_JECXZ || ci->id == X86_INS_JCXZ))
					x->rep = -1;	/* short-range only */
			} else if (is_call || is_jmp) {
				x->kind = is_call ? IK_CALL_IND : IK_JMP_IND;
				if (op->type == X86_OP_REG) {
					x->ind = IND_REG;
					x->ind_reg = gpr_index(h, op->reg);
				} else if (op->type == X86_OP_MEM) {
					int b = gpr_index(h, op->mem.base);
					int i = gpr_index(h, op->mem.index);
					struct reloc *r = NULL;

					if (xd->encoding.disp_offset)
						r = find_reloc(s, x->sec, x->off + xd->encoding.disp_offset);
					if (!is_call && b < 0 && i >= 0 && op->mem.scale == 8 &&
					    r && r->symsec && op->mem.segment == X86_REG_INVALID) {
						int n = table_entries(s, r->symsec, r->symval + r->addend);

						x->ind = IND_TABLE;
						x->ind_reg = i;
						x->jt_width = index_width(n);
					} else {
						x->ind = IND_MEM;
					}
					if (b >= 0)
						x->mem_regs |= 1u << b;
					if (i >= 0)
						x->mem_regs |= 1u << i;
				} else {
					goto bad;
				}
				if (x->ind_reg < 0 && x->ind != IND_MEM)
					goto bad;
			} else {
				goto bad;
			}
		}
		cs_free(ci, 1);
		continue;
bad:
		cs_free(ci, 1);
		return err(c, line, "unsupported control transfer '%s'",
			   c->a.st[x->stmt].text);
	}
	return 0;
}

/* ---- the graph ----------------------------------------------------------- */

static int add_edge(struct ctx *c, int from, int to, enum edge_kind k)
{
	struct edge *e;

	if (c->ne == c->cape) {
		c->cape = c->cape ? c->cape * 2 : 1024;
		c->e = xrealloc(c->e, c->cape * sizeof(*c->e));
	}
	e = &c->e[c->ne];
	e->from = from;
	e->to = to;
	e->kind = k;
	e->state = S_FREE;
	e->w = 0;
	e->id = -1;
	c->in[from].out[c->in[from].nout++] = c->ne;
	return c->ne++;
}

/* (add_edge may move c->e: index it only after the call) */
static void force_edge(struct ctx *c, int ei)
{
	c->e[ei].state = S_FORCED;
}

/* musl's sigsetjmp keeps its return address in the jmp_buf (pop to
 * memory, later push back): the regenerator's call stack must follow. */
static int moves_retaddr(const struct insn *x)
{
	return x->in_sigsetjmp && x->stack_mem;
}

static int is_block(const struct insn *x)
{
	return x->kind == IK_CALL || x->kind == IK_CALL_IND ||
	       x->kind == IK_JMP_IND || x->rep || x->setjmp_entry ||
	       moves_retaddr(x) || x->tload;
}

static void build_graph(struct ctx *c)
{
	int n = c->n;

	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int nx = insn_at(c, x->sec, x->off + x->len);

		if (x->rep < 0)
			x->rep = 0;
		x->next = nx;
		switch (x->kind) {
		case IK_PLAIN:
			add_edge(c, k, nx >= 0 ? nx : n, nx >= 0 ? E_FALL : E_EXIT);
			break;
		case IK_CALL:
		case IK_CALL_IND:
			if (nx >= 0 && !c->in[nx].func_start)
				force_edge(c, add_edge(c, k, nx, E_FALL));
			break;
		case IK_JCC:
			add_edge(c, k, x->target >= 0 ? x->target : n, E_TAKEN);
			add_edge(c, k, nx >= 0 ? nx : n, nx >= 0 ? E_FALL : E_EXIT);
			break;
		case IK_JMP:
			add_edge(c, k, x->target >= 0 ? x->target : n,
				 x->target >= 0 ? E_TAKEN : E_EXIT);
			break;
		case IK_JMP_IND:
			force_edge(c, add_edge(c, k, n, E_EXIT));
			break;
		case IK_RET:
			add_edge(c, k, n, E_EXIT);
			break;
		case IK_STOP:
			break;
		}
	}
	/* Loop depth estimate: backward jumps spanning an instruction. */
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];

		if ((x->kind == IK_JCC || x->kind == IK_JMP) && x->target >= 0) {
			struct insn *t = &c->in[x->target];

			if (t->sec == x->sec && t->off <= x->off)
				for (int j = 0; j < n; j++)
					if (c->in[j].sec == x->sec &&
					    c->in[j].off >= t->off && c->in[j].off <= x->off)
						c->in[j].depth++;
		}
	}
	for (int i = 0; i < c->ne; i++) {
		struct edge *e = &c->e[i];
		struct insn *f = &c->in[e->from];
		int d = f->depth > 6 ? 6 : f->depth;

		e->w = pow(10, d);
		if (f->kind == IK_JCC)
			e->w *= e->kind == E_TAKEN ? 0.51 : 0.49;
	}
}

/* ---- placement ----------------------------------------------------------- */

static int uf_find(int *p, int x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static int uf_union(int *p, int a, int b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a == b)
		return 0;
	p[a] = b;
	return 1;
}

static struct ctx *edge_sort_ctx;

static int edge_w_cmp(const void *a, const void *b)
{
	const struct edge *x = &edge_sort_ctx->e[*(const int *)a];
	const struct edge *y = &edge_sort_ctx->e[*(const int *)b];

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/*
 * Computed-goto dispatch (`mov TABLE(,%i,8),%r; ...; jmp *%r`, Lua's
 * interpreter loop): record the table index (1 byte for up to 256 labels)
 * at the load instead of the 8-byte target at the jump, when the load
 * reaches the jump on a straight line that nothing else enters and that
 * leaves %r alone.
 */
static void link_table_loads(struct ctx *c)
{
	int n = c->n;
	int *npred = calloc(n + 1, sizeof(int));

	for (int i = 0; i < c->ne; i++)
		if (c->e[i].to < n)
			npred[c->e[i].to]++;
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int v = k, ok = 0;

		if (x->tload_reg < 0)
			continue;
		for (int steps = 0; steps < 64; steps++) {
			struct insn *y = &c->in[v];

			if (y->kind != IK_PLAIN || y->rep || y->nout != 1)
				break;
			v = c->e[y->out[0]].to;
			if (v >= n || npred[v] != 1)
				break;
			y = &c->in[v];
			if (y->kind == IK_JMP_IND && y->ind == IND_REG &&
			    y->ind_reg == x->tload_reg && !y->in_longjmp) {
				ok = 1;
				break;
			}
			if (y->writes & (1u << x->tload_reg))
				break;
		}
		if (ok) {
			x->tload = 1;
			c->in[v].from_tload = 1;
		}
	}
	free(npred);
}

/* Blocking witnesses: no witness-free predicate -> call/value/exit path. */
static void place_blocking(struct ctx *c)
{
	int n = c->n;
	int *seen = calloc(n + 1, sizeof(int));
	int stamp = 0;

	for (int p = 0; p < n; p++) {
		if (c->in[p].kind != IK_JCC)
			continue;
		for (int j = 0; j < c->in[p].nout; j++) {
			struct edge *e = &c->e[c->in[p].out[j]];
			int v = e->to, block = 0;

			stamp++;
			for (;;) {
				struct insn *x;

				if (v == n) {
					block = 1;
					break;
				}
				x = &c->in[v];
				if (is_block(x)) {
					block = 1;
					break;
				}
				if (x->kind == IK_JCC || x->nout != 1 || seen[v] == stamp)
					break;
				seen[v] = stamp;
				if (c->e[x->out[0]].state == S_WIT)
					break;
				v = c->e[x->out[0]].to;
			}
			if (block)
				e->state = S_WIT;
		}
	}
	free(seen);
}

static void place_mst(struct ctx *c)
{
	int n = c->n;
	int *uf = malloc((n + 1) * sizeof(int));
	int *order = malloc(c->ne * sizeof(int));
	int no = 0;

	/*
	 * Exit edges lead to a fresh EXIT vertex each: a procedure is entered
	 * only through calls, which the regenerator follows itself, so (unlike
	 * edge profiling, where the imaginary EXIT -> ENTRY edge joins them)
	 * entries and exits need no witness of their own; blocking witnesses
	 * already cover predicate -> exit paths.
	 */
	for (int i = 0; i <= n; i++)
		uf[i] = i;
	for (int i = 0; i < c->ne; i++) {
		if (c->e[i].to == n && c->e[i].state == S_FREE)
			c->e[i].state = S_TREE;
		else if (c->e[i].state == S_FORCED && c->e[i].to < n)
			uf_union(uf, c->e[i].from, c->e[i].to);
		else if (c->e[i].state == S_FREE)
			order[no++] = i;
	}
	edge_sort_ctx = c;
	qsort(order, no, sizeof(int), edge_w_cmp);
	for (int i = 0; i < no; i++) {
		struct edge *e = &c->e[order[i]];

		e->state = uf_union(uf, e->from, e->to) ? S_TREE : S_WIT;
	}
	free(uf);
	free(order);
}

/* Witness-set of edge ei into `set` (ids); returns -1 if a witness-free
 * path reaches a blocking point or loops. */
static int witness_set(struct ctx *c, int ei, char *set, int *stack, char *color)
{
	int n = c->n, sp = 0, bad = 0;
	struct edge *e = &c->e[ei];

	if (e->state == S_WIT) {
		set[e->id] = 1;
		return 0;
	}
	memset(color, 0, n + 1);
	/* iterative DFS with colours to detect witness-free cycles */
	stack[sp++] = e->to;
	while (sp && !bad) {
		int v = stack[sp - 1];
		struct insn *x;

		if (v < 0) {	/* post-order marker */
			color[-v - 1] = 2;
			sp--;
			continue;
		}
		if (v == n || is_block(&c->in[v])) {
			bad = 1;
			break;
		}
		if (color[v] == 2) {
			sp--;
			continue;
		}
		if (color[v] == 1) {
			bad = 1;	/* witness-free cycle */
			break;
		}
		color[v] = 1;
		stack[sp - 1] = -v - 1;
		x = &c->in[v];
		for (int j = 0; j < x->nout; j++) {
			struct edge *f = &c->e[x->out[j]];

			if (f->state == S_WIT)
				set[f->id] = 1;
			else if (f->to == n || color[f->to] != 2)
				stack[sp++] = f->to;
		}
	}
	return bad ? -1 : 0;
}

static void assign_ids(struct ctx *c)
{
	int n = c->n;

	for (int i = 0; i < n + 1; i++)
		c->compn[i] = 0;
	for (int i = 0; i < c->ne; i++) {
		struct edge *e = &c->e[i];

		if (e->state == S_WIT && e->id < 0)
			e->id = c->compn[c->comp[e->from]]++;
	}
}

static int place(struct ctx *c)
{
	int n = c->n, changed;
	int *uf = malloc((n + 1) * sizeof(int));
	char *set0, *set1, *color;
	int *stack;

	build_graph(c);
	/* components: instructions joined by real edges */
	for (int i = 0; i <= n; i++)
		uf[i] = i;
	for (int i = 0; i < c->ne; i++)
		if (c->e[i].to < n)
			uf_union(uf, c->e[i].from, c->e[i].to);
	c->comp = malloc((n + 1) * sizeof(int));
	c->compn = calloc(n + 1, sizeof(int));
	c->compw = calloc(n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		c->comp[i] = uf_find(uf, i);
	free(uf);

	link_table_loads(c);
	place_blocking(c);
	place_mst(c);

	/* Check the tracing property; instrument both edges where it fails. */
	stack = malloc((c->ne + n + 2) * sizeof(int) * 2);
	color = malloc(n + 1);
	do {
		changed = 0;
		assign_ids(c);
		for (int p = 0; p < n; p++) {
			struct insn *x = &c->in[p];
			int m, ok;

			if (x->kind != IK_JCC)
				continue;
			m = c->compn[c->comp[p]] + 1;
			set0 = calloc(m, 1);
			set1 = calloc(m, 1);
			ok = witness_set(c, x->out[0], set0, stack, color) == 0 &&
			     witness_set(c, x->out[1], set1, stack, color) == 0;
			for (int i = 0; ok && i < m; i++)
				if (set0[i] && set1[i])
					ok = 0;
			free(set0);
			free(set1);
			if (!ok) {
				for (int j = 0; j < 2; j++) {
					struct edge *e = &c->e[x->out[j]];

					if (e->state != S_WIT) {
						e->state = S_WIT;
						changed = 1;
					}
				}
				if (!changed)
					return err(c, c->a.st[x->stmt].line,
						   "cannot make branch '%s' traceable",
						   c->a.st[x->stmt].text);
			}
		}
	} while (changed);
	free(color);
	free(stack);

	for (int i = 0; i < n; i++) {
		int m = c->compn[c->comp[i]];

		c->compw[c->comp[i]] = m <= 256 ? 1 : m <= 65536 ? 2 : 4;
	}
	return 0;
}

/* ---- events and output --------------------------------------------------- */

static void add_event(struct ctx *c, int k, int kind, int width, int flag,
		      uint32_t a, uint32_t b)
{
	struct ae_event *ev;

	if (c->nev == c->capev) {
		c->capev = c->capev ? c->capev * 2 : 256;
		c->ev = xrealloc(c->ev, c->capev * sizeof(*c->ev));
	}
	ev = &c->ev[c->nev++];
	ev->insn = k;
	ev->kind = kind;
	ev->width = width;
	ev->flag = flag;
	ev->a = a;
	ev->b = b;
}

static int make_pred_events(struct ctx *c)
{
	int n = c->n;
	int *stack = malloc((c->ne + n + 2) * sizeof(int) * 2);
	char *color = malloc(n + 1);

	for (int p = 0; p < n; p++) {
		struct insn *x = &c->in[p];
		int m, cnt[2] = { 0, 0 }, side;
		char *set[2];

		if (x->kind != IK_JCC)
			continue;
		m = c->compn[c->comp[p]] + 1;
		for (int j = 0; j < 2; j++) {
			set[j] = calloc(m, 1);
			witness_set(c, x->out[j], set[j], stack, color);
			for (int i = 0; i < m; i++)
				cnt[j] += set[j][i];
		}
		/* out[0] is the taken edge; describe the smaller side */
		side = cnt[0] <= cnt[1] ? 0 : 1;
		add_event(c, p, AE_EV_PRED, c->compw[c->comp[p]], side == 0,
			  c->npool, cnt[side]);
		for (int i = 0; i < m; i++) {
			if (!set[side][i])
				continue;
			if (c->npool == c->cappool) {
				c->cappool = c->cappool ? c->cappool * 2 : 256;
				c->pool = xrealloc(c->pool, c->cappool * sizeof(uint32_t));
			}
			c->pool[c->npool++] = i;
		}
		free(set[0]);
		free(set[1]);
	}
	free(stack);
	free(color);
	return 0;
}

struct out {
	FILE *f;
	int nseq;
	int nstub;
	/* pending taken-edge stubs of the current section */
	char **stub;
	int nstubs, capstubs;
};

static void seq_begin(struct out *o)
{
	fprintf(o->f, ".Lss%d:\n", o->nseq);
}

static void seq_end(struct out *o)
{
	fprintf(o->f, ".Lse%d:\n", o->nseq++);
}

static void emit_witness(struct out *o, FILE *f, int id, int width)
{
	static const char sfx[] = { 0, 'b', 'w', 0, 'l' };

	fprintf(f, ".Lss%d:\n\tmov%c\t$%d, (%%r15)\n\tleaq\t%d(%%r15), %%r15\n.Lse%d:\n",
		o->nseq, sfx[width], id, width, o->nseq);
	o->nseq++;
}

static void emit_value_reg(struct out *o, int reg, int width)
{
	const char *name = width == 1 ? reg8[reg] : width == 2 ? reg16[reg] :
			   width == 4 ? reg32[reg] : reg64[reg];
	static const char sfx[] = { 0, 'b', 'w', 0, 'l', 0, 0, 0, 'q' };

	seq_begin(o);
	fprintf(o->f, "\tmov%c\t%%%s, (%%r15)\n\tleaq\t%d(%%r15), %%r15\n",
		sfx[width], name, width);
	seq_end(o);
}

static void flush_stubs(struct out *o)
{
	for (int i = 0; i < o->nstubs; i++) {
		fputs(o->stub[i], o->f);
		free(o->stub[i]);
	}
	o->nstubs = 0;
}

/*
 * A stub jumps to its branch's target from elsewhere in the section, so a
 * numeric local label reference ("1f", "2b") is resolved to the unique
 * name given to that label definition.
 */
static const char *stub_target(struct ctx *c, size_t si, const char *ops,
			       char *buf, size_t len)
{
	size_t n = strlen(ops);
	long dir;

	if (n < 2 || (ops[n - 1] != 'f' && ops[n - 1] != 'b'))
		return ops;
	for (size_t i = 0; i < n - 1; i++)
		if (!isdigit((unsigned char)ops[i]))
			return ops;
	dir = ops[n - 1] == 'f' ? 1 : -1;
	for (long i = (long)si + dir; i >= 0 && i < (long)c->a.n; i += dir) {
		struct ae_stmt *t = &c->a.st[i];

		if (t->kind == AE_ST_LABEL && strlen(t->text) == n - 1 &&
		    !strncmp(t->text, ops, n - 1)) {
			snprintf(buf, len, ".Laenum%ld", i);
			return buf;
		}
	}
	return ops;
}

static int write_instrumented(struct ctx *c, FILE *f, const char *orig_o,
			      const char *schema_bin)
{
	struct out o = { .f = f };
	int *ev_first = malloc((c->n + 1) * sizeof(int));
	char m[32], numbuf[48];

	/* events are sorted by instruction; index the first of each */
	for (int k = 0; k <= c->n; k++)
		ev_first[k] = -1;
	for (int i = c->nev - 1; i >= 0; i--)
		ev_first[c->ev[i].insn] = i;

	for (size_t si = 0; si < c->a.n; si++) {
		struct ae_stmt *s = &c->a.st[si];
		int k = s->insn;

		if (s->kind == AE_ST_LABEL) {
			fprintf(f, "%s:\n", s->text);
			/* a name for numeric labels that stubs can use */
			if (isdigit((unsigned char)s->text[0]))
				fprintf(f, ".Laenum%zu:\n", si);
			continue;
		}
		if (s->kind == AE_ST_DIRECTIVE) {
			if (!strncmp(s->text, ".size", 5) || !strncmp(s->text, ".section", 8) ||
			    !strcmp(s->text, ".text") || !strncmp(s->text, ".text ", 6) ||
			    !strncmp(s->text, ".data", 5) || !strncmp(s->text, ".bss", 4) ||
			    !strcmp(s->text, ".previous") || !strncmp(s->text, ".pushsection", 12) ||
			    !strcmp(s->text, ".popsection"))
				flush_stubs(&o);
			fprintf(f, "\t%s\n", s->text);
			continue;
		}
		if (k < 0) {
			fprintf(f, "\t%s\n", s->text);
			continue;
		}
		/* the program ends: the runtime may have to save the trace */
		if (c->in[k].exit_entry)
			fprintf(f, "\tcall\t__ae_exit_hook\n");
		/* before the instruction: witnesses, then value records */
		for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++) {
			struct ae_event *ev = &c->ev[i];
			struct insn *x = &c->in[k];

			if (ev->kind == AE_EV_WIT_BEFORE) {
				emit_witness(&o, f, ev->a, ev->width);
			} else if (ev->kind == AE_EV_VAL) {
				if ((ev->flag == AE_VAL_TARGET && x->ind == IND_MEM) ||
				    ev->flag == AE_VAL_RETADDR) {
					int scr = -1;
					static const int cand[] = { 1, 2, 6, 7, 8, 9, 10, 11 };

					for (int j = 0; j < 8; j++)
						if (!(x->mem_regs & (1u << cand[j]))) {
							scr = cand[j];
							break;
						}
					{
						const char *ops;

						ae_insn_split(s->text, m, sizeof(m), &ops);
						if (*ops == '*')
							ops++;
						fprintf(f, "\tmovq\t%%%s, -32(%%rsp)\n", reg64[scr]);
						seq_begin(&o);
						fprintf(f, "\tmovq\t%s, %%%s\n\tmovq\t%%%s, (%%r15)\n\tleaq\t8(%%r15), %%r15\n",
							ops, reg64[scr], reg64[scr]);
						seq_end(&o);
						fprintf(f, "\tmovq\t-32(%%rsp), %%%s\n", reg64[scr]);
					}
				} else {
					int reg = ev->flag == AE_VAL_REPCNT ? 1 :
						  ev->flag == AE_VAL_SETJMP_SP ||
						  ev->flag == AE_VAL_LONGJMP_SP ? 4 : x->ind_reg;

					emit_value_reg(&o, reg, ev->width);
				}
			}
		}
		fprintf(f, ".Laei%d:\n", k);
		/* the instruction itself (taken edge may go through a stub) */
		{
			int stub = -1;

			for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++)
				if (c->ev[i].kind == AE_EV_WIT_TAKEN)
					stub = i;
			if (stub >= 0) {
				struct ae_event *ev = &c->ev[stub];
				const char *ops;
				char *buf;
				size_t bl;
				FILE *sf;

				ae_insn_split(s->text, m, sizeof(m), &ops);
				fprintf(f, "\t%s\t.Laestub%d\n", m, o.nstub);
				sf = open_memstream(&buf, &bl);
				fprintf(sf, ".Laestub%d:\n", o.nstub++);
				emit_witness(&o, sf, ev->a, ev->width);
				fprintf(sf, "\tjmp\t%s\n", stub_target(c, si, ops, numbuf, sizeof(numbuf)));
				fclose(sf);
				if (o.nstubs == o.capstubs) {
					o.capstubs = o.capstubs ? o.capstubs * 2 : 64;
					o.stub = xrealloc(o.stub, o.capstubs * sizeof(char *));
				}
				o.stub[o.nstubs++] = buf;
			} else {
				fprintf(f, "\t%s\n", s->text);
			}
		}
		/* after the instruction: fall-through witness, value-after */
		for (int i = ev_first[k]; i >= 0 && i < c->nev && c->ev[i].insn == (uint32_t)k; i++) {
			struct ae_event *ev = &c->ev[i];

			if (ev->kind == AE_EV_WIT_FALL)
				emit_witness(&o, f, ev->a, ev->width);
			else if (ev->kind == AE_EV_VAL_AFTER)
				emit_value_reg(&o, 1, 8);
		}
	}
	flush_stubs(&o);
	free(o.stub);
	free(ev_first);

	fprintf(f, "\t.section\t.ae_imap,\"\",@progbits\n\t.balign 4\n\t.long\t%u, %d\n",
		c->objid, c->n);
	for (int k = 0; k < c->n; k++)
		fprintf(f, "\t.long\t.Laei%d\n", k);
	if (o.nseq) {
		fprintf(f, "\t.section\t__ae_seqtab,\"a\",@progbits\n\t.balign 4\n");
		for (int i = 0; i < o.nseq; i++)
			fprintf(f, "\t.long\t.Lss%d, .Lse%d\n", i, i);
	}
	fprintf(f, "\t.section\t.ae_schema,\"\",@progbits\n\t.balign 4\n\t.incbin\t\"%s\"\n",
		schema_bin);
	fprintf(f, "\t.section\t.ae_orig,\"\",@progbits\n\t.balign 8\n\t.incbin\t\"%s\"\n",
		orig_o);
	fprintf(f, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
	return 0;
}

static int write_orig(struct ctx *c, FILE *f)
{
	for (size_t si = 0; si < c->a.n; si++) {
		struct ae_stmt *s = &c->a.st[si];

		if (s->kind == AE_ST_LABEL)
			fprintf(f, "%s:\n", s->text);
		else if (s->insn >= 0)
			fprintf(f, ".Laei%d:\n\t%s\n", s->insn, s->text);
		else
			fprintf(f, "\t%s\n", s->text);
	}
	fprintf(f, "\t.section\t.ae_imap,\"\",@progbits\n\t.balign 4\n\t.long\t%u, %d\n",
		c->objid, c->a.ninsn);
	for (int k = 0; k < c->a.ninsn; k++)
		fprintf(f, "\t.long\t.Laei%d\n", k);
	fprintf(f, "\t.section\t.note.GNU-stack,\"\",@progbits\n");
	return 0;
}

static void make_events(struct ctx *c)
{
	int n = c->n;

	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];
		int w = c->compw[c->comp[k]];

		/* before-witnesses: single-successor transfers */
		for (int j = 0; j < x->nout; j++) {
			struct edge *e = &c->e[x->out[j]];

			if (e->state != S_WIT)
				continue;
			if (x->kind == IK_JMP || x->kind == IK_RET)
				add_event(c, k, AE_EV_WIT_BEFORE, w, 0, e->id, 0);
		}
		if (x->setjmp_entry)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_SETJMP_SP, 0, 0);
		if (x->rep)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_REPCNT, 0, 0);
		if (x->tload)
			add_event(c, k, AE_EV_VAL, x->jt_width, AE_VAL_JTLOAD, 0, 0);
		if (moves_retaddr(x) && x->stack_mem == 1)
			add_event(c, k, AE_EV_SHADOW_POP, 0, 0, 0, 0);
		if (moves_retaddr(x) && x->stack_mem == 2)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_RETADDR, 0, 0);
		if (x->kind == IK_JMP_IND && x->in_longjmp)
			add_event(c, k, AE_EV_VAL, 8, AE_VAL_LONGJMP_SP, 0, 0);
		if (x->kind == IK_JMP_IND || x->kind == IK_CALL_IND) {
			if (x->from_tload)
				add_event(c, k, AE_EV_TARGET_LOADED, 0, 0, 0, 0);
			else if (x->ind == IND_TABLE)
				add_event(c, k, AE_EV_VAL, x->jt_width, AE_VAL_JTIDX, 0, 0);
			else
				add_event(c, k, AE_EV_VAL, 8, AE_VAL_TARGET, 0, 0);
		}
		if (x->kind == IK_JCC) {
			for (int j = 0; j < 2; j++) {
				struct edge *e = &c->e[x->out[j]];

				if (e->state == S_WIT)
					add_event(c, k, e->kind == E_TAKEN ?
						  AE_EV_WIT_TAKEN : AE_EV_WIT_FALL, w, 0, e->id, 0);
			}
		} else if (x->kind == IK_PLAIN) {
			struct edge *e = &c->e[x->out[0]];

			if (e->state == S_WIT)
				add_event(c, k, AE_EV_WIT_FALL, w, 0, e->id, 0);
		}
		if (x->rep == 2)
			add_event(c, k, AE_EV_VAL_AFTER, 8, AE_VAL_REPCNT_AFTER, 0, 0);
	}
	make_pred_events(c);
}

/* Stable sort by instruction: the order of events at one instruction is
 * the order in which the trace bytes are written. */
static void sort_events(struct ctx *c)
{
	int *cnt = calloc(c->n + 2, sizeof(int));
	struct ae_event *out = xrealloc(NULL, (c->nev + 1) * sizeof(*out));

	for (int i = 0; i < c->nev; i++)
		cnt[c->ev[i].insn + 1]++;
	for (int k = 0; k <= c->n; k++)
		cnt[k + 1] += cnt[k];
	for (int i = 0; i < c->nev; i++)
		out[cnt[c->ev[i].insn]++] = c->ev[i];
	free(c->ev);
	c->ev = out;
	c->capev = c->nev + 1;
	free(cnt);
}

static uint32_t fnv1a(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

int ae_instrument_file(const char *src_s, const char *out_o,
		       const struct ae_instr_opts *o)
{
	struct ctx c = { .src = src_s, .o = o };
	struct scan sc = { 0 };
	char orig_s[4096], orig_o[4096], inst_s[4096], schema_bin[4096];
	const char *as = o->as ? o->as : "as";
	size_t len;
	char *buf = read_file(src_s, &len);
	FILE *f;
	int fd = -1, ret = -1, imap_sec = -1;
	Elf *elf = NULL;
	csh h = 0;

	if (!buf)
		return err(&c, 0, "cannot read: %s", strerror(errno));
	if (ae_asm_parse(&c.a, src_s, buf, len)) {
		free(buf);
		return err(&c, 0, "cannot parse");
	}
	c.objid = fnv1a(buf, len, 2166136261u);
	free(buf);
	snprintf(orig_s, sizeof(orig_s), "%s/orig.s", o->tmpdir);
	snprintf(orig_o, sizeof(orig_o), "%s/orig.o", o->tmpdir);
	snprintf(inst_s, sizeof(inst_s), "%s/inst.s", o->tmpdir);
	snprintf(schema_bin, sizeof(schema_bin), "%s/schema.bin", o->tmpdir);

	/* 1. the twin */
	f = fopen(orig_s, "w");
	if (!f)
		goto out;
	write_orig(&c, f);
	if (fclose(f))
		goto out;
	{
		const char *argv[] = { as, "--64", "-o", orig_o, orig_s, NULL };

		if (run(argv)) {
			err(&c, 0, "assembling the uninstrumented twin failed");
			goto out;
		}
	}

	/* 2. scan it */
	c.n = c.a.ninsn;
	c.in = calloc(c.n + 1, sizeof(*c.in));
	for (size_t si = 0; si < c.a.n; si++)
		if (c.a.st[si].insn >= 0)
			c.in[c.a.st[si].insn].stmt = si;
	elf_version(EV_CURRENT);
	fd = open(orig_o, O_RDONLY);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!elf) {
		err(&c, 0, "cannot read twin object");
		goto out;
	}
	if (read_relocs(&c, elf, &sc, &imap_sec))
		goto out;
	for (int k = 0; k < c.n; k++) {
		struct reloc *r = find_reloc(&sc, imap_sec, 8 + 4 * k);

		if (!r || !r->symsec) {
			err(&c, c.a.st[c.in[k].stmt].line, "instruction %d not placed", k);
			goto out;
		}
		c.in[k].sec = r->symsec;
		c.in[k].off = r->symval + r->addend;
	}
	by_place = malloc((c.n + 1) * sizeof(int));
	for (int k = 0; k < c.n; k++)
		by_place[k] = k;
	sort_ctx = &c;
	qsort(by_place, c.n, sizeof(int), place_cmp);
	mark_functions(&c, elf);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		goto out;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (decode(&c, &sc, h))
		goto out;
	/* longjmp: every indirect jump in a file defining longjmp */
	{
		int lj = 0;

		int ssj = 0;

		for (int k = 0; k < c.n; k++) {
			lj |= c.in[k].in_longjmp;
			ssj |= c.in[k].in_sigsetjmp;
		}
		for (int k = 0; k < c.n; k++) {
			c.in[k].in_longjmp |= lj;
			c.in[k].in_sigsetjmp |= ssj;
		}
	}

	/* 3. placement and events */
	if (place(&c))
		goto out;
	make_events(&c);
	sort_events(&c);

	/* 4. schema */
	f = fopen(schema_bin, "wb");
	if (!f)
		goto out;
	{
		struct ae_schema_obj hd = {
			.magic = AE_SCHEMA_MAGIC, .version = AE_SCHEMA_VERSION,
			.objid = c.objid, .ninsn = c.n, .nev = c.nev,
			.npool = c.npool,
		};

		hd.size = sizeof(hd) + c.nev * sizeof(struct ae_event) +
			  c.npool * sizeof(uint32_t);
		fwrite(&hd, sizeof(hd), 1, f);
		fwrite(c.ev, sizeof(struct ae_event), c.nev, f);
		fwrite(c.pool, sizeof(uint32_t), c.npool, f);
	}
	if (fclose(f))
		goto out;

	/* 5. the instrumented object */
	f = fopen(inst_s, "w");
	if (!f)
		goto out;
	write_instrumented(&c, f, orig_o, schema_bin);
	if (fclose(f))
		goto out;
	{
		const char *argv[] = { as, "--64", "-o", out_o, inst_s, NULL };

		if (run(argv)) {
			err(&c, 0, "assembling the instrumented file failed (kept in %s)", inst_s);
			goto out;
		}
	}
	ret = 0;
out:
	if (h)
		cs_close(&h);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(sc.r);
	free(sc.secdata);
	free(sc.sec_exec);
	free(by_place);
	by_place = NULL;
	free(c.in);
	free(c.e);
	free(c.comp);
	free(c.compn);
	free(c.compw);
	free(c.ev);
	free(c.pool);
	ae_asm_free(&c.a);
	return ret;
}
