// SPDX-License-Identifier: MIT
/*
 * decode.c - the machine code of the twin decoded by capstone: the CFG is
 * built from what the assembler produced, not from the text.
 */
#include <capstone/capstone.h>
#include <string.h>

#include "decode.h"
#include "regs.h"

/* Bytes that record an index into a table of n entries (8: size unknown). */
static int index_width(int n)
{
	return n > 0 && n <= 256 ? 1 : n > 0 && n <= 65536 ? 2 : 8;
}

/*
 * The entries of the table relocation r in instruction x names: the run
 * of code addresses there, cut where the assembly says the table ends
 * (x->jt_len, which data.c's table edges keep to).
 */
static int table_len(const struct ae_ctx *c, const struct ae_scan *s, struct insn *x,
		     const struct reloc *r)
{
	int n = ae_table_entries(s, r->symsec, r->symval + r->addend, -1);

	if (n > 0)
		x->jt_len = ae_asm_table_len(&c->a, c->a.st[x->stmt].text);
	return x->jt_len >= 0 && x->jt_len < n ? x->jt_len : n;
}

#define FL_R	(X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | \
		 X86_EFLAGS_TEST_PF | X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_AF | \
		 X86_EFLAGS_PRIOR_OF | X86_EFLAGS_PRIOR_SF | X86_EFLAGS_PRIOR_ZF | \
		 X86_EFLAGS_PRIOR_AF | X86_EFLAGS_PRIOR_PF | X86_EFLAGS_PRIOR_CF)

/* The gpr index of a high-byte register (%ah: rax), else -1. */
static int high_byte(unsigned int reg)
{
	switch (reg) {
	case X86_REG_AH: return 0;
	case X86_REG_CH: return 1;
	case X86_REG_DH: return 2;
	case X86_REG_BH: return 3;
	default: return -1;
	}
}

/*
 * Status flags and the registers capstone's tables leave out (for the
 * value cache's code, data.c): the flags' readers by capstone and by
 * name, in case an entry lacks them; the kernel's entries, xlat, and
 * the instructions that read their destination, read everything or
 * their destination. A shift or rotate by %cl leaves the flags alone
 * when the count is 0, so it never kills them. Unknown effects are taken
 * as none, which keeps the flags live across the instruction: the safe
 * side.
 */
static void flags_of(csh h, const cs_insn *ci, struct insn *x)
{
	static const char *const readers[] = {
		"cmov", "set", "j", "adc", "sbb", "rcl", "rcr", "pushf", "lahf",
		"fcmov", "loop", "cmc", "into", "salc",
	};
	uint64_t ef = ci->detail->x86.eflags;
	const char *m = cs_insn_name(h, ci->id);

	if (ef & FL_R)
		x->fl_rd = 1;
	for (size_t i = 0; m && i < sizeof(readers) / sizeof(readers[0]); i++)
		if (!strncmp(m, readers[i], strlen(readers[i])) && strcmp(m, "jmp"))
			x->fl_rd = 1;
	switch (ci->id) {
	case X86_INS_INT: case X86_INS_INT3: case X86_INS_INTO: case X86_INS_INT1:
	case X86_INS_SYSENTER: case X86_INS_SYSCALL: case X86_INS_XLATB:
		/* the kernel may read any register and the flags (xlat:
		 * capstone lists none of its registers) */
		x->rd_any = 0xffff;
		x->fl_rd = 1;
		return;
	case X86_INS_BSF: case X86_INS_BSR: case X86_INS_TZCNT: case X86_INS_LZCNT:
	case X86_INS_CMPXCHG:
		/* the destination may be kept, upper half included (a zero
		 * source; tzcnt and lzcnt run as bsf and bsr on older CPUs; a
		 * compare that fails): a 32-bit one is not zero-extended */
		x->keeps_dst = 1;
		x->rd_any |= x->writes;
		break;
	case X86_INS_ADOX: case X86_INS_ADCX:
		/* the destination is added to */
		x->rd_any |= x->writes;
		break;
	case X86_INS_SHL: case X86_INS_SAL: case X86_INS_SHR: case X86_INS_SAR:
	case X86_INS_ROL: case X86_INS_ROR: case X86_INS_RCL: case X86_INS_RCR:
	case X86_INS_SHLD: case X86_INS_SHRD:
		return;
	default:
		break;
	}
	x->fl_kill = !x->fl_rd && (ef & AE_DF_FL_W(OF)) && (ef & AE_DF_FL_W(SF)) &&
		     (ef & AE_DF_FL_W(ZF)) && (ef & AE_DF_FL_W(AF)) && (ef & AE_DF_FL_W(PF)) &&
		     (ef & AE_DF_FL_W(CF));
}

static int decode_all(struct ae_ctx *c, const struct ae_scan *s, csh h)
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

		if (!ci)
			return ae_err(c, line, "capstone: out of memory");
		if (!d || x->off >= d->d_size) {
			cs_free(ci, 1);
			return ae_err(c, line, "instruction outside its section");
		}
		code = (const uint8_t *)d->d_buf + x->off;
		size = d->d_size - x->off;
		if (!cs_disasm_iter(h, &code, &size, &addr, ci)) {
			cs_free(ci, 1);
			return ae_err(c, line, "capstone cannot decode '%s'",
				   c->a.st[x->stmt].text);
		}
		x->len = ci->size;
		xd = &ci->detail->x86;
		x->kind = IK_PLAIN;
		x->target = -1;
		x->tload_reg = -1;
		x->jt_len = -1;
		/* r15 belongs to the instrumentation (invariant 1). */
		{
			cs_regs rr, ww;
			uint8_t nr, nw;

			x->rd64 = 0xffff;
			x->rd_any = 0xffff;	/* unless capstone says what it reads */
			x->fl_rd = 1;
			if (!cs_regs_access(h, ci, rr, &nr, ww, &nw)) {
				x->rd_any = 0;
				x->fl_rd = 0;
				x->rd64 = 0;
				for (int i = 0; i < nr + nw; i++) {
					unsigned int reg = i < nr ? rr[i] : ww[i - nr];
					int g = ae_gpr_index(h, reg), w = ae_gpr_width(h, reg);
					/* %ah..%dh: bits 8-15 of rax..rdx */
					int gr = g >= 0 ? g : high_byte(reg);

					if (g >= 0 && i >= nr)
						x->writes |= 1u << g;
					if (gr >= 0 && i < nr)
						x->rd_any |= 1u << gr;
					if (i < nr && reg == X86_REG_EFLAGS)
						x->fl_rd = 1;
					if (g >= 0 && i < nr && w == 8)
						x->rd64 |= 1u << g;
					if (g >= 0 && i >= nr && w >= 4)
						x->wr_full |= 1u << g;
					if (g == 15) {
						cs_free(ci, 1);
						return ae_err(c, line, "'%s' uses %%r15, which is reserved for tracing (compile with -ffixed-r15)",
							   c->a.st[x->stmt].text);
					}
				}
				/* a 32-bit lea's result depends on the low halves of
				 * its base and index only (mod 2^32) */
				if (ci->id == X86_INS_LEA && xd->op_count == 2 &&
				    xd->operands[0].type == X86_OP_REG &&
				    ae_gpr_width(h, xd->operands[0].reg) <= 4)
					x->rd64 = 0;
			}
			x->writes |= ae_df_implicit_writes(ci->id);
		}
		flags_of(h, ci, x);
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
				struct reloc *r = ae_find_reloc(s, x->sec, x->off + xd->encoding.disp_offset);
				int i = ae_gpr_index(h, xd->operands[1].mem.index);
				int n = r && r->symsec ? table_len(c, s, x, r) : 0;

				if (n > 0 && i >= 0) {
					x->tload_reg = ae_gpr_index(h, xd->operands[0].reg);
					x->ind_reg = i;
					x->jt_width = index_width(n);
				}
			}
			break;
		case X86_INS_POP: case X86_INS_PUSH:
			if (xd->op_count == 1 && xd->operands[0].type == X86_OP_MEM) {
				int b = ae_gpr_index(h, xd->operands[0].mem.base);
				int i = ae_gpr_index(h, xd->operands[0].mem.index);

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
					r = ae_find_reloc(s, x->sec, x->off + xd->encoding.imm_offset);
				if (r) {
					/* a weak definition here may lose to
					 * another object's at the link */
					if (!r->symsec || r->sym_weak) {
						x->ext = EXT_SYMBOL;
					} else {
						int t = ae_insn_at(c, r->symsec,
								r->symval + r->addend + 4);

						if (t < 0)
							x->ext = EXT_ELSEWHERE;
						else
							x->target = t;
					}
				} else {
					int t = ae_insn_at(c, x->sec, (uint64_t)op->imm);

					if (t < 0)
						x->ext = EXT_ELSEWHERE;
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
					x->ind_reg = ae_gpr_index(h, op->reg);
				} else if (op->type == X86_OP_MEM) {
					int b = ae_gpr_index(h, op->mem.base);
					int i = ae_gpr_index(h, op->mem.index);
					struct reloc *r = NULL;

					if (xd->encoding.disp_offset)
						r = ae_find_reloc(s, x->sec, x->off + xd->encoding.disp_offset);
					if (!is_call && b < 0 && i >= 0 && op->mem.scale == 8 &&
					    r && r->symsec && op->mem.segment == X86_REG_INVALID) {
						int n = table_len(c, s, x, r);

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
		/* a retpoline thunk takes its target in a register */
		if ((x->kind == IK_CALL || x->kind == IK_JMP) &&
		    strstr(c->a.st[x->stmt].text, "__x86_indirect_thunk"))
			x->rd_any = 0xffff;
		if (c->data && (ae_df_decode(h, ci, &x->df) || x->df.unfollowed)) {
			cs_free(ci, 1);
			return ae_err(c, line, "data tracing cannot follow '%s' (%s)",
				      c->a.st[x->stmt].text, AE_DF_UNFOLLOWED_KINDS);
		}
		/* an address register is read whole (xlatb's %rbx: capstone
		 * 4 lists no register of it) */
		if (c->data)
			x->rd64 |= x->df.uses & 0xffff;
		cs_free(ci, 1);
		continue;
bad:
		cs_free(ci, 1);
		return ae_err(c, line, "unsupported control transfer '%s'",
			   c->a.st[x->stmt].text);
	}
	return 0;
}

int ae_decode(struct ae_ctx *c, const struct ae_scan *s)
{
	csh h;
	int lj = 0, ssj = 0, ret;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return ae_err(c, 0, "capstone: cs_open failed");
	if (cs_option(h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(&h);
		return ae_err(c, 0, "capstone: cannot turn on instruction details");
	}
	ret = decode_all(c, s, h);
	cs_close(&h);
	if (ret)
		return ret;
	/* longjmp: every indirect jump in a file defining longjmp */
	for (int k = 0; k < c->n; k++) {
		lj |= c->in[k].in_longjmp;
		ssj |= c->in[k].in_sigsetjmp;
	}
	for (int k = 0; k < c->n; k++) {
		c->in[k].in_longjmp |= lj;
		c->in[k].in_sigsetjmp |= ssj;
	}
	return 0;
}
