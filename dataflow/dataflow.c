// SPDX-License-Identifier: MIT
/*
 * dataflow.c - the transfer functions of data tracing (include/aetrace/
 * dataflow.h): which registers an instruction's addresses need, which
 * accesses it makes in lackey's order, and what it does to the registers
 * the regenerator can follow. Compiled into aecc (known bits only: where
 * to record) and aetrace (values: the addresses). Depends on neither.
 */
#include <string.h>

#include <aetrace/dataflow.h>

#define FS_BIT	(1u << 16)

/* Register number and width of capstone register reg; -1 if not a GPR. */
static int gpr(csh h, unsigned int reg, int *width)
{
	static const char *const names[4][16] = {
		{ "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		  "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" },
		{ "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
		  "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d" },
		{ "ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
		  "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w" },
		{ "al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
		  "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b" },
	};
	static const int widths[4] = { 8, 4, 2, 1 };
	const char *name;

	if (reg == X86_REG_INVALID)
		return -1;
	name = cs_reg_name(h, reg);
	if (!name)
		return -1;
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 16; i++)
			if (!strcmp(name, names[w][i])) {
				if (width)
					*width = widths[w];
				return i;
			}
	if (!strcmp(name, "ah") || !strcmp(name, "ch") || !strcmp(name, "dh") ||
	    !strcmp(name, "bh")) {
		if (width)
			*width = 0;
		return name[0] == 'a' ? 0 : name[0] == 'c' ? 1 : name[0] == 'd' ? 2 : 3;
	}
	return -1;
}

static int str_kind(uint8_t opc)
{
	switch (opc) {
	case 0xa4: case 0xa5: return AE_STR_MOVS;
	case 0xaa: case 0xab: return AE_STR_STOS;
	case 0xac: case 0xad: return AE_STR_LODS;
	case 0xa6: case 0xa7: return AE_STR_CMPS;
	case 0xae: case 0xaf: return AE_STR_SCAS;
	default: return 0;
	}
}

/* Bytes of vector register reg (xmm, ymm, zmm), 0 for any other. */
static int vector_bytes(unsigned int reg)
{
	if (reg >= X86_REG_XMM0 && reg <= X86_REG_XMM31)
		return 16;
	if (reg >= X86_REG_YMM0 && reg <= X86_REG_YMM31)
		return 32;
	if (reg >= X86_REG_ZMM0 && reg <= X86_REG_ZMM31)
		return 64;
	return 0;
}

static int vector_num(unsigned int reg)
{
	return reg >= X86_REG_ZMM0 ? (int)(reg - X86_REG_ZMM0) :
	       reg >= X86_REG_YMM0 ? (int)(reg - X86_REG_YMM0) : (int)(reg - X86_REG_XMM0);
}

/*
 * The VSIB operand o of ci into op->mem: the gathers, VEX (mask: a vector
 * register, the third operand) and EVEX (mask: an opmask). Scatters and
 * the gather/scatter prefetches are refused (capstone 4 decodes EVEX
 * scatters' index as a general register). Returns 0 or -1.
 */
static int vsib(const cs_insn *ci, const cs_x86_op *o, struct ae_df_op *op)
{
	const cs_x86 *x = &ci->detail->x86;
	struct ae_df_mem *m = &op->mem;
	const cs_x86_op *dst = &x->operands[0];
	int dw, iw, ew, mb = 0, k = -1, vm = -1;

	/* index and element sizes by name: capstone 4 gives an EVEX
	 * vpgatherqd's and vgatherqps's memory operand 8 bytes */
	switch (ci->id) {
	case X86_INS_VPGATHERDD: case X86_INS_VGATHERDPS:
		iw = 4, ew = 4;
		break;
	case X86_INS_VPGATHERDQ: case X86_INS_VGATHERDPD:
		iw = 4, ew = 8;
		break;
	case X86_INS_VPGATHERQD: case X86_INS_VGATHERQPS:
		iw = 8, ew = 4;
		break;
	case X86_INS_VPGATHERQQ: case X86_INS_VGATHERQPD:
		iw = 8, ew = 8;
		break;
	default:
		return -1;
	}
	/* (an address-size prefix would truncate the sum to 32 bits) */
	if (x->op_count != 3 || dst->type != X86_OP_REG || !vector_bytes(dst->reg) ||
	    x->prefix[3] == 0x67)
		return -1;
	for (int i = 1; i < 3; i++) {
		const cs_x86_op *t = &x->operands[i];

		if (t->type != X86_OP_REG)
			continue;
		if (t->reg >= X86_REG_K1 && t->reg <= X86_REG_K7)
			k = t->reg - X86_REG_K0;
		else if (vector_bytes(t->reg)) {
			vm = vector_num(t->reg);
			mb = vector_bytes(t->reg);
		}
	}
	if ((k < 0) == (vm < 0))
		return -1;
	dw = vector_bytes(dst->reg) / ew;
	m->size = ew;
	m->vsib = vector_bytes(o->mem.index);
	m->vidx = vector_num(o->mem.index);
	m->vidx_w = iw;
	m->vnel = m->vsib / iw < dw ? m->vsib / iw : dw;
	m->vmask_k = k >= 0;
	m->vmask = k >= 0 ? k : vm;
	m->vmask_w = k >= 0 ? 2 : mb;
	if (m->vnel > AE_DF_VSIB_MAX || (k < 0 && mb != vector_bytes(dst->reg)))
		return -1;
	return 0;
}

/*
 * Not followed: the scatters and the gather/scatter prefetches (AVX-512;
 * capstone 4 decodes a scatter's VSIB index as a general register); the
 * 16-bit pushf/popf (a 2-byte stack slot); the masked stores to (%rdi),
 * of which capstone 4 shows no memory operand; and the processor state
 * saves and restores, whose areas capstone 4 sizes 8 (fxsave) or 4
 * (fnsave) bytes, and which touch parts of them that depend on the mode
 * and, for the xsave family, on XCR0 and %edx:%eax (valgrind even splits
 * fxsave into 18 stores of its own). No C library routine the project
 * builds uses any of them.
 */
static int unfollowed(const cs_insn *ci)
{
	unsigned int id = ci->id;
	const cs_x86 *x = &ci->detail->x86;

	switch (id) {
	case X86_INS_PUSHF: case X86_INS_POPF:
	case X86_INS_MASKMOVQ: case X86_INS_MASKMOVDQU: case X86_INS_VMASKMOVDQU:
	case X86_INS_FXSAVE: case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
	case X86_INS_FNSAVE: case X86_INS_FRSTOR:
	case X86_INS_XSAVE: case X86_INS_XSAVE64: case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64: case X86_INS_XSAVEOPT: case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES: case X86_INS_XSAVES64: case X86_INS_XRSTOR:
	case X86_INS_XRSTOR64: case X86_INS_XRSTORS: case X86_INS_XRSTORS64:
		return 1;
	case X86_INS_XLATB:	/* (a segment or a 32-bit address: not followed) */
		return x->prefix[1] || x->prefix[3];
	default:
		break;
	}
	return (id >= X86_INS_VPSCATTERDD && id <= X86_INS_VPSCATTERQQ) ||
	       (id >= X86_INS_VSCATTERDPD && id <= X86_INS_VSCATTERQPS) ||
	       (id >= X86_INS_VGATHERPF0DPD && id <= X86_INS_VGATHERPF1QPS);
}

static int kind_of(unsigned int id)
{
	switch (id) {
	case X86_INS_MOV: case X86_INS_MOVABS: return AE_DF_MOV;
	case X86_INS_MOVZX: return AE_DF_MOVZX;
	case X86_INS_MOVSX: case X86_INS_MOVSXD: return AE_DF_MOVSX;
	case X86_INS_LEA: return AE_DF_LEA;
	case X86_INS_ADD: return AE_DF_ADD;
	case X86_INS_SUB: return AE_DF_SUB;
	case X86_INS_AND: return AE_DF_AND;
	case X86_INS_OR: return AE_DF_OR;
	case X86_INS_XOR: return AE_DF_XOR;
	case X86_INS_SHL: case X86_INS_SAL: return AE_DF_SHL;
	case X86_INS_SHR: return AE_DF_SHR;
	case X86_INS_SAR: return AE_DF_SAR;
	case X86_INS_IMUL: return AE_DF_IMUL;
	case X86_INS_INC: return AE_DF_INC;
	case X86_INS_DEC: return AE_DF_DEC;
	case X86_INS_NEG: return AE_DF_NEG;
	case X86_INS_NOT: return AE_DF_NOT;
	case X86_INS_XCHG: return AE_DF_XCHG;
	case X86_INS_CDQE: return AE_DF_CDQE;
	case X86_INS_CQO: return AE_DF_CQO;
	case X86_INS_PUSH: case X86_INS_PUSHFQ: return AE_DF_PUSH;
	case X86_INS_POP: case X86_INS_POPFQ: return AE_DF_POP;
	case X86_INS_CALL: return AE_DF_CALL;
	case X86_INS_RET: return AE_DF_RET;
	case X86_INS_LEAVE: return AE_DF_LEAVE;
	case X86_INS_ENTER: return AE_DF_ENTER;
	case X86_INS_CLD: return AE_DF_CLD;
	case X86_INS_STD: return AE_DF_STD;
	case X86_INS_SYSCALL: return AE_DF_SYSCALL;
	case X86_INS_XLATB: return AE_DF_XLAT;
	case X86_INS_NOP: case X86_INS_PREFETCH: case X86_INS_PREFETCHW:
	case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2:
	case X86_INS_ENDBR64: case X86_INS_PAUSE:
	case X86_INS_CLFLUSH: case X86_INS_CLFLUSHOPT:	/* no access (lackey: none) */
	case X86_INS_CLWB:
		return AE_DF_NOP;
	default: return AE_DF_OTHER;
	}
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/*
 * How an instruction uses its memory operand (index i of n operands), by
 * its semantics; capstone's own access flags are wrong for many SSE moves
 * and for compares. Returns an enum ae_df_acc.
 */
static int mem_access(const cs_insn *ci, int i, int n, int cs_acc)
{
	const char *m = ci->mnemonic;
	static const char *const stores1[] = {
		"fst", "fist", "fisttp", "fnst", "fbstp", "fnsave", "fxsave", "stmxcsr",
		"vstmxcsr", "set", "xsave", NULL,
	};
	static const char *const rmw1[] = {
		"inc", "dec", "neg", "not", "sh", "sa", "ro", "rc", NULL,
	};
	static const char *const reads0[] = {
		"cmp", "test", "bt", "ucomis", "comis", "vucomis", "vcomis", "ptest",
		"vptest", NULL,
	};
	int r;

	if (!strncmp(m, "lock ", 5))
		m += 5;
	if (starts(m, "cmpxchg") || starts(m, "xadd") || starts(m, "xchg"))
		return AE_ACC_M;	/* whichever operand is the memory one */
	if (i > 0)
		return AE_ACC_L;
	if (n == 1) {
		for (int j = 0; stores1[j]; j++)
			if (starts(m, stores1[j]))
				return AE_ACC_S;
		for (int j = 0; rmw1[j]; j++)
			if (starts(m, rmw1[j]))
				return AE_ACC_M;
		return AE_ACC_L;
	}
	for (int j = 0; reads0[j]; j++)
		if (starts(m, reads0[j]) && strcmp(m, "cmpxchg") && !starts(m, "cmpxchg") &&
		    !starts(m, "btc") && !starts(m, "btr") && !starts(m, "bts"))
			return AE_ACC_L;
	if (starts(m, "mov") || starts(m, "vmov") || starts(m, "pextr") ||
	    starts(m, "vpextr") || starts(m, "extractps") || starts(m, "vextract"))
		return AE_ACC_S;
	r = (cs_acc & CS_AC_READ ? AE_ACC_L : 0) | (cs_acc & CS_AC_WRITE ? AE_ACC_S : 0);
	return r ? r : AE_ACC_M;
}

/*
 * Scalar SSE operands in memory are 4 or 8 bytes; capstone reports 16
 * for some (comisd, addsd, cvtss2sd...). Returns the size to use.
 */
static int scalar_size(const char *m, int size)
{
	size_t n = strlen(m);

	/* (pminsd, pabsd...: packed integers) */
	if (size != 16 || n < 3 || strstr(m, "si2") || m[0] == 'p' || starts(m, "vp"))
		return size;
	if (strstr(m, "ss2") || (!strstr(m, "sd2") && !strcmp(m + n - 2, "ss")))
		return 4;
	if (strstr(m, "sd2") || !strcmp(m + n - 2, "sd"))
		return 8;
	return size;
}

#define STATUS_WRITES	(AE_DF_FL_W(CF) | AE_DF_FL_W(PF) | AE_DF_FL_W(AF) | AE_DF_FL_W(ZF) | \
			 AE_DF_FL_W(SF) | AE_DF_FL_W(OF))

uint32_t ae_df_implicit_writes(unsigned int id)
{
	switch (id) {
	case X86_INS_CMPXCHG:		/* a failed compare loads the accumulator */
	case X86_INS_XLATB:
		return 1u << 0;
	case X86_INS_CMPXCHG8B:
	case X86_INS_CMPXCHG16B:
		return (1u << 0) | (1u << 2);
	case X86_INS_ENTER:		/* capstone 4.0 lists no write at all */
		return (1u << AE_DF_RSP) | (1u << AE_DF_RBP);
	default:
		return 0;
	}
}

/*
 * What ci does to the status flags. Only instructions known to leave them
 * alone keep them (a table entry capstone lacks must not make stale flags
 * look current): moves, stack and control transfers, sign extensions,
 * set/cmov, and SSE/AVX work other than its compares and tests.
 */
static int flags_effect(const cs_insn *ci)
{
	static const char *const prefixes[] = { "lock ", "rep ", "repe ", "repne ", "notrack ",
						"bnd ", NULL };
	static const char *const keep[] = {
		"mov", "vmov", "lea", "push", "pop", "cmov", "set", "not", "xchg", "bswap",
		"cbw", "cwd", "cdq", "cqo", "nop", "endbr", "prefetch", "j", "call", "ret",
		"cld", "std", "stos", "lods", "cvt", "vcvt", NULL,
	};
	static const char *const sse_sets[] = {
		"comis", "ucomis", "vcomis", "vucomis", "ptest", "vptest", "vtest",
		"pcmp", "vpcmp", "kortest", "ktest", NULL,
	};
	const char *m = ci->mnemonic;
	const cs_x86 *x = &ci->detail->x86;
	int sse = 0;

	for (int i = 0; prefixes[i]; i++)
		if (starts(m, prefixes[i]))
			m += strlen(prefixes[i]);
	/* both the name and capstone's table must say so */
	if ((x->eflags & STATUS_WRITES) || starts(m, "popf") || starts(m, "popcnt"))
		return AE_FL_LOST;
	for (int i = 0; keep[i]; i++)
		if (starts(m, keep[i]))
			return AE_FL_KEEP;
	for (int i = 0; i < ci->detail->groups_count; i++)
		switch (ci->detail->groups[i]) {
		case X86_GRP_SSE1: case X86_GRP_SSE2: case X86_GRP_SSE3: case X86_GRP_SSSE3:
		case X86_GRP_SSE41: case X86_GRP_SSE42: case X86_GRP_AVX: case X86_GRP_AVX2:
		case X86_GRP_FMA: case X86_GRP_F16C:
			sse = 1;
			break;
		default:
			break;
		}
	for (int i = 0; sse && sse_sets[i]; i++)
		if (starts(m, sse_sets[i]))
			sse = 0;
	return sse ? AE_FL_KEEP : AE_FL_LOST;
}

/* The condition (tttn) + 1 of a jcc that tests the status flags, else 0. */
static int cond_of(unsigned int id)
{
	static const unsigned int ids[16] = {
		X86_INS_JO, X86_INS_JNO, X86_INS_JB, X86_INS_JAE, X86_INS_JE, X86_INS_JNE,
		X86_INS_JBE, X86_INS_JA, X86_INS_JS, X86_INS_JNS, X86_INS_JP, X86_INS_JNP,
		X86_INS_JL, X86_INS_JGE, X86_INS_JLE, X86_INS_JG,
	};

	for (int i = 0; i < 16; i++)
		if (ids[i] == id)
			return i + 1;
	return 0;
}

/* Arithmetic on registers whose flags the transfer functions compute:
 * op->fl becomes AE_FL_SET with its fl_kind. */
static void decode_flags(const cs_insn *ci, struct ae_df_op *op)
{
	int k = op->kind;

	if (ci->id == X86_INS_CMP)
		k = AE_DF_SUB;
	else if (ci->id == X86_INS_TEST)
		k = AE_DF_AND;
	switch (k) {
	case AE_DF_ADD: case AE_DF_SUB: case AE_DF_AND: case AE_DF_OR: case AE_DF_XOR:
		if (op->src < 0 && op->nops != 2)
			return;
		/* fall through */
	case AE_DF_INC: case AE_DF_DEC: case AE_DF_NEG:
		/* register operands of a known width (not %ah...) */
		if (op->has_mem || op->dst < 0 || !op->dw || (op->src >= 0 && op->sw != op->dw) ||
		    (ci->detail->x86.op_count == 2 && ci->detail->x86.operands[1].type == X86_OP_REG &&
		     op->src < 0))
			return;
		op->fl = AE_FL_SET;
		op->fl_kind = k;
		return;
	default:
		return;
	}
}

int ae_df_decode(csh h, const cs_insn *ci, struct ae_df_op *op)
{
	const cs_x86 *x = &ci->detail->x86;
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;
	int nreg = 0;

	memset(op, 0, sizeof(*op));
	op->len = ci->size;
	op->dst = op->src = -1;
	op->mem.base = op->mem.index = -1;
	op->kind = kind_of(ci->id);
	op->nops = x->op_count;
	op->fl = flags_effect(ci);
	op->cc = cond_of(ci->id);
	if (!cs_regs_access(h, ci, rr, &nr, ww, &nw))
		for (int i = 0; i < nw; i++) {
			int g = gpr(h, ww[i], NULL);

			if (g >= 0)
				op->writes |= 1u << g;
		}
	op->writes |= ae_df_implicit_writes(ci->id);
	if (unfollowed(ci)) {
		op->kind = AE_DF_OTHER;
		op->unfollowed = 1;
		return 0;
	}
	/* string instructions by opcode (capstone shares names with SSE) */
	if (x->opcode[0] != 0x0f && str_kind(x->opcode[0]) && ci->id != X86_INS_NOP) {
		op->kind = AE_DF_STR;
		op->str = str_kind(x->opcode[0]);
		op->ssize = !(x->opcode[0] & 1) ? 1 : (x->rex & 8) ? 8 :
			    x->prefix[2] == 0x66 ? 2 : 4;
		op->rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
		switch (op->str) {
		case AE_STR_MOVS: case AE_STR_CMPS: op->uses = (1u << 6) | (1u << 7); break;
		case AE_STR_LODS: op->uses = 1u << 6; break;
		default: op->uses = 1u << 7; break;
		}
		op->writes |= op->uses | (op->rep ? 1u << 1 : 0);
		return 0;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];
		int w = 8;

		if (o->type == X86_OP_MEM) {
			struct ae_df_mem *m = &op->mem;

			if (op->has_mem)
				return -1;	/* two explicit memory operands */
			op->has_mem = 1;
			if (op->kind == AE_DF_NOP)
				continue;	/* nopw %cs:0(%rax,%rax): no access */
			if (o->mem.segment == X86_REG_FS)
				m->fs = 1;
			else if (o->mem.segment == X86_REG_GS)
				return -1;	/* cs/ds/es/ss: base 0 in 64-bit mode */
			if (o->mem.base == X86_REG_RIP) {
				m->rip = 1;
			} else if (o->mem.base != X86_REG_INVALID) {
				m->base = gpr(h, o->mem.base, &w);
				if (m->base < 0 || w != 8)
					return -1;
			}
			if (vector_bytes(o->mem.index)) {
				if (vsib(ci, o, op))
					return -1;
			} else if (o->mem.index != X86_REG_INVALID) {
				m->index = gpr(h, o->mem.index, &w);
				if (m->index < 0 || w != 8)
					return -1;
			}
			m->scale = o->mem.scale;
			m->disp = o->mem.disp;
			if (m->vsib) {
				m->acc = AE_ACC_L;	/* m->size: vsib()'s */
			} else {
				m->size = o->size;
				m->acc = mem_access(ci, i, x->op_count, o->access);
				m->size = scalar_size(ci->mnemonic, m->size);
			}
			/* a locked read-modify-write (xchg is one): VEX loads the
			 * old value, then compare-and-swaps (lackey: L, M);
			 * cmpxchg only compare-and-swaps (M) */
			if (m->acc == AE_ACC_M && (x->prefix[0] == X86_PREFIX_LOCK ||
						   ci->id == X86_INS_XCHG) &&
			    ci->id != X86_INS_CMPXCHG && ci->id != X86_INS_CMPXCHG8B &&
			    ci->id != X86_INS_CMPXCHG16B)
				op->locked = 1;
			if (i == 0 && x->op_count == 1)
				op->mem_first = 1;
		} else if (o->type == X86_OP_REG) {
			int g = gpr(h, o->reg, &w);

			if (nreg == 0 && i == 0) {
				op->dst = g;
				op->dw = w;
			} else if (op->src < 0) {
				op->src = g;
				op->sw = w;
				if (g < 0)
					op->kind = op->kind == AE_DF_MOV ? AE_DF_OTHER : op->kind;
			}
			nreg++;
		} else if (o->type == X86_OP_IMM) {
			op->imm = o->imm;
		}
	}
	if ((ci->id == X86_INS_BT || ci->id == X86_INS_BTS || ci->id == X86_INS_BTR ||
	     ci->id == X86_INS_BTC) && x->op_count == 2 && x->operands[1].type == X86_OP_REG) {
		op->modify = ci->id != X86_INS_BT;
		if (op->src < 0)
			return -1;
		if (x->operands[0].type == X86_OP_REG) {
			op->kind = AE_DF_BTREG;
			op->uses |= (1u << AE_DF_RSP) | (1u << op->src);
			return 0;
		}
		op->kind = AE_DF_BTMEM;
		op->mem.acc = op->modify ? AE_ACC_M : AE_ACC_L;
		op->mem.size = 1;
		op->uses |= 1u << op->src;
	}
	if (op->has_mem && op->dst >= 0 && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && op->src < 0)
		op->src = -1;		/* reg, mem: a load */
	switch (op->kind) {
	case AE_DF_LEA: case AE_DF_NOP:
		op->mem.acc = 0;
		break;
	case AE_DF_PUSH: case AE_DF_POP: case AE_DF_CALL: case AE_DF_RET:
		op->uses |= 1u << AE_DF_RSP;
		op->writes |= 1u << AE_DF_RSP;
		if (op->kind == AE_DF_RET)
			op->retimm = x->op_count ? (uint16_t)op->imm : 0;
		if (op->kind == AE_DF_CALL)
			op->writes |= 0x0fc7u | (1u << AE_DF_RSP);	/* caller-saved */
		break;
	case AE_DF_LEAVE:
		op->uses |= 1u << AE_DF_RBP;
		break;
	case AE_DF_XLAT:
		op->uses |= (1u << 0) | (1u << 3);
		break;
	case AE_DF_ENTER:
		/* a nesting level copies frame pointers: not followed */
		if (x->op_count != 2 || x->operands[1].imm != 0)
			return -1;
		op->imm = x->operands[0].imm;
		op->uses |= 1u << AE_DF_RSP;
		op->writes |= (1u << AE_DF_RSP) | (1u << AE_DF_RBP);
		break;
	case AE_DF_SYSCALL:
		op->writes |= (1u << 0) | (1u << 1) | (1u << 11) | FS_BIT;
		break;
	default:
		break;
	}
	if (op->has_mem && op->mem.acc) {
		if (op->mem.base >= 0)
			op->uses |= 1u << op->mem.base;
		if (op->mem.index >= 0)
			op->uses |= 1u << op->mem.index;
		if (op->mem.fs)
			op->uses |= FS_BIT;
	}
	decode_flags(ci, op);
	return 0;
}

static int64_t sext(uint64_t v, int w)
{
	int sh = 64 - 8 * w;

	return w >= 8 ? (int64_t)v : (int64_t)(v << sh) >> sh;
}

static int have(const struct ae_df_state *s, int r, int *missing)
{
	if (s->known & (1u << r))
		return 1;
	*missing = r;
	return 0;
}

/* Effective address of op's memory operand; 0 when a register is missing. */
static int mem_addr(const struct ae_df_op *op, uint64_t pc, const struct ae_df_state *s,
		    uint64_t *a, int *missing)
{
	const struct ae_df_mem *m = &op->mem;
	uint64_t v = (uint64_t)m->disp;

	if (m->rip)
		v += pc + op->len;
	if (m->base >= 0) {
		if (!have(s, m->base, missing))
			return 0;
		v += s->v[m->base];
	}
	if (m->index >= 0) {
		if (!have(s, m->index, missing))
			return 0;
		v += s->v[m->index] * m->scale;
	}
	if (m->fs) {
		if (!s->fs_known) {
			*missing = 16;
			return 0;
		}
		v += s->fs;
	}
	*a = v;
	return 1;
}

static void put(struct ae_df_access *out, int *n, int acc, uint64_t addr, int size)
{
	out[*n].acc = acc;
	out[*n].addr = addr;
	out[*n].size = size;
	(*n)++;
}

int ae_df_vsib_accesses(const struct ae_df_op *op, uint64_t pc, const struct ae_df_state *s,
			const uint8_t *rec, int vex, struct ae_df_access *out, int *missing)
{
	const struct ae_df_mem *m = &op->mem;
	const uint8_t *mask = rec + m->vsib;
	uint64_t a;
	int n = 0;

	if (!mem_addr(op, pc, s, &a, missing) || (vex && !have(s, AE_DF_RSP, missing)))
		return -1;
	for (int i = 0; i < m->vnel; i++) {
		uint64_t v = 0;
		int on;

		memcpy(&v, rec + i * m->vidx_w, m->vidx_w);
		if (m->vmask_k)
			on = ((mask[0] | mask[1] << 8) >> i) & 1;
		else
			on = mask[(i + 1) * m->size - 1] >> 7;
		if (on)
			put(out, &n, AE_ACC_L, a + (uint64_t)sext(v, m->vidx_w) * m->scale, m->size);
		else if (vex)
			put(out, &n, AE_ACC_L, s->v[AE_DF_RSP], m->size);
	}
	return n;
}

int ae_df_accesses(const struct ae_df_op *op, uint64_t pc, const struct ae_df_state *s,
		   struct ae_df_access *out, int *missing)
{
	uint64_t a = 0, sp = s->v[AE_DF_RSP];
	int n = 0;
	int mem = op->has_mem && op->mem.acc;

	if ((op->has_mem && op->mem.vsib) || op->unfollowed) {
		*missing = -1;		/* the record's: ae_df_vsib_accesses() */
		return -1;
	}
	if (mem && !mem_addr(op, pc, s, &a, missing))
		return -1;
	switch (op->kind) {
	case AE_DF_BTREG: {
		uint64_t t = sp - 288;
		int w = op->dw ? op->dw : 8;

		if (!have(s, AE_DF_RSP, missing) || !have(s, op->src, missing))
			return -1;
		put(out, &n, AE_ACC_S, t, w);
		put(out, &n, op->modify ? AE_ACC_M : AE_ACC_L,
		    t + ((s->v[op->src] & (w * 8 - 1)) >> 3), 1);
		if (op->modify)
			put(out, &n, AE_ACC_L, t, w);
		return n;
	}
	case AE_DF_BTMEM:
		if (!have(s, op->src, missing))
			return -1;
		put(out, &n, op->mem.acc, a + (uint64_t)(sext(s->v[op->src], op->sw) >> 3), 1);
		return n;
	case AE_DF_PUSH:
	case AE_DF_CALL:
		if (!have(s, AE_DF_RSP, missing))
			return -1;
		if (mem)
			put(out, &n, AE_ACC_L, a, op->mem.size);
		put(out, &n, AE_ACC_S, sp - 8, 8);
		return n;
	case AE_DF_POP:
		if (!have(s, AE_DF_RSP, missing))
			return -1;
		put(out, &n, AE_ACC_L, sp, 8);
		if (mem)
			put(out, &n, AE_ACC_S, a, op->mem.size);
		return n;
	case AE_DF_RET:
		if (!have(s, AE_DF_RSP, missing))
			return -1;
		put(out, &n, AE_ACC_L, sp, 8);
		return n;
	case AE_DF_LEAVE:
		if (!have(s, AE_DF_RBP, missing))
			return -1;
		put(out, &n, AE_ACC_L, s->v[AE_DF_RBP], 8);
		return n;
	case AE_DF_ENTER:
		if (!have(s, AE_DF_RSP, missing))
			return -1;
		put(out, &n, AE_ACC_S, sp - 8, 8);
		return n;
	case AE_DF_XLAT:
		if (!have(s, 0, missing) || !have(s, 3, missing))
			return -1;
		put(out, &n, AE_ACC_L, s->v[3] + (s->v[0] & 0xff), 1);
		return n;
	case AE_DF_STR:
		/* (a popfq set it from the stack: the next addresses depend on it) */
		if (!s->df_known) {
			*missing = 17;
			return -1;
		}
		if ((op->uses & (1u << 6)) && !have(s, 6, missing))
			return -1;
		if ((op->uses & (1u << 7)) && !have(s, 7, missing))
			return -1;
		switch (op->str) {
		case AE_STR_MOVS:
			put(out, &n, AE_ACC_L, s->v[6], op->ssize);
			put(out, &n, AE_ACC_S, s->v[7], op->ssize);
			break;
		case AE_STR_STOS:
			put(out, &n, AE_ACC_S, s->v[7], op->ssize);
			break;
		case AE_STR_LODS:
			put(out, &n, AE_ACC_L, s->v[6], op->ssize);
			break;
		case AE_STR_CMPS:	/* VEX loads (%rdi) first */
			put(out, &n, AE_ACC_L, s->v[7], op->ssize);
			put(out, &n, AE_ACC_L, s->v[6], op->ssize);
			break;
		default:
			put(out, &n, AE_ACC_L, s->v[7], op->ssize);
			break;
		}
		return n;
	default:
		if (mem && op->locked)
			put(out, &n, AE_ACC_L, a, op->mem.size);
		if (mem)
			put(out, &n, op->mem.acc, a, op->mem.size);
		return n;
	}
}

static uint64_t mask_of(int w)
{
	return w >= 8 ? ~0ull : (1ull << (8 * w)) - 1;
}

void ae_df_set(struct ae_df_state *s, int r, uint64_t v, int w)
{
	if (w == 8 || w == 4) {
		s->v[r] = v & mask_of(w);
		s->known |= 1u << r;
	} else if (w == 2 || w == 1) {
		s->v[r] = (s->v[r] & ~mask_of(w)) | (v & mask_of(w));
	} else {
		s->known &= ~(1u << r);
	}
}

static void forget(struct ae_df_state *s, int r)
{
	if (r >= 0)
		s->known &= ~(1u << r);
}


/* dst op= src for the ALU kinds; 0 when the result is not known. */
static int alu(const struct ae_df_op *op, const struct ae_df_state *s, uint64_t *res)
{
	int d = op->dst, w = op->dw;
	uint64_t a, b;
	int bk;

	if (d < 0 || w == 0 || (op->src >= 0 && op->sw == 0))
		return 0;	/* %ah... as a source: not followed */
	a = s->v[d] & mask_of(w);
	if (op->src >= 0) {
		b = s->v[op->src] & mask_of(op->sw ? op->sw : w);
		bk = (s->known >> op->src) & 1;
	} else if (op->has_mem) {
		return 0;
	} else {
		b = (uint64_t)op->imm;
		bk = 1;
	}
	if ((op->kind == AE_DF_XOR || op->kind == AE_DF_SUB) && op->src == d && op->sw == w) {
		*res = 0;
		return 1;
	}
	switch (op->kind) {
	case AE_DF_INC: case AE_DF_DEC: case AE_DF_NEG: case AE_DF_NOT:
		bk = 1;
		break;
	case AE_DF_SHL: case AE_DF_SHR: case AE_DF_SAR:
		if (op->src < 0 && op->nops == 1)
			b = 1;	/* shift by one, where the decoder lists no count */
		break;
	default:
		break;
	}
	if (!((s->known >> d) & 1) || !bk)
		return 0;
	switch (op->kind) {
	case AE_DF_ADD: *res = a + b; return 1;
	case AE_DF_SUB: *res = a - b; return 1;
	case AE_DF_AND: *res = a & b; return 1;
	case AE_DF_OR: *res = a | b; return 1;
	case AE_DF_XOR: *res = a ^ b; return 1;
	case AE_DF_INC: *res = a + 1; return 1;
	case AE_DF_DEC: *res = a - 1; return 1;
	case AE_DF_NEG: *res = -a; return 1;
	case AE_DF_NOT: *res = ~a; return 1;
	case AE_DF_SHL:
		*res = a << (b & (w == 8 ? 63 : 31));
		return 1;
	case AE_DF_SHR:
		*res = a >> (b & (w == 8 ? 63 : 31));
		return 1;
	case AE_DF_SAR:
		*res = (uint64_t)(sext(a, w) >> (b & (w == 8 ? 63 : 31)));
		return 1;
	default:
		return 0;
	}
}

uint32_t ae_df_inputs(const struct ae_df_op *op, int r)
{
	uint32_t d = op->dst >= 0 ? 1u << op->dst : 0;
	uint32_t s = op->src >= 0 ? 1u << op->src : 0;
	uint32_t part = op->dw == 1 || op->dw == 2 ? d : 0;
	const uint32_t sp = 1u << AE_DF_RSP;

	switch (op->kind) {
	case AE_DF_PUSH: case AE_DF_CALL: case AE_DF_RET:
		return r == AE_DF_RSP ? sp : AE_DF_NOT_AFFINE;
	case AE_DF_POP:
		return r == AE_DF_RSP && op->dst != AE_DF_RSP ? sp : AE_DF_NOT_AFFINE;
	case AE_DF_LEAVE:
		return r == AE_DF_RSP ? 1u << AE_DF_RBP : AE_DF_NOT_AFFINE;
	case AE_DF_ENTER:
		return r == AE_DF_RSP || r == AE_DF_RBP ? sp : AE_DF_NOT_AFFINE;
	case AE_DF_STR:
		if (r == 6 || r == 7 || (r == 1 && op->rep))
			return 1u << r;
		return AE_DF_NOT_AFFINE;
	case AE_DF_CDQE:
		return r == 0 ? 1u : AE_DF_NOT_AFFINE;
	case AE_DF_CQO:
		return r == 2 ? 1u : AE_DF_NOT_AFFINE;
	default:
		break;
	}
	if (op->dst != r || op->dw == 0)
		return AE_DF_NOT_AFFINE;
	switch (op->kind) {
	case AE_DF_MOV:
		if (op->has_mem || op->src < 0)
			return op->has_mem ? AE_DF_NOT_AFFINE : part;
		return op->sw ? s | part : AE_DF_NOT_AFFINE;
	case AE_DF_MOVZX: case AE_DF_MOVSX:
		if (op->has_mem || op->src < 0 || op->sw == 0)
			return AE_DF_NOT_AFFINE;
		return s | part;
	case AE_DF_LEA:
		if (op->mem.fs)
			return AE_DF_NOT_AFFINE;
		return (op->mem.base >= 0 ? 1u << op->mem.base : 0) |
		       (op->mem.index >= 0 ? 1u << op->mem.index : 0) | part;
	case AE_DF_ADD: case AE_DF_SUB: case AE_DF_AND: case AE_DF_OR:
	case AE_DF_XOR: case AE_DF_SHL: case AE_DF_SHR: case AE_DF_SAR:
		if (op->has_mem || (op->src < 0 && op->sw) || (op->src >= 0 && !op->sw))
			return AE_DF_NOT_AFFINE;
		if ((op->kind == AE_DF_XOR || op->kind == AE_DF_SUB) && op->src == op->dst &&
		    op->sw == op->dw)
			return part;
		return d | s;
	case AE_DF_INC: case AE_DF_DEC: case AE_DF_NEG: case AE_DF_NOT:
		return op->has_mem ? AE_DF_NOT_AFFINE : d;
	case AE_DF_IMUL:
		if (op->has_mem || op->src < 0 || op->nops < 2)
			return AE_DF_NOT_AFFINE;
		return s | (op->nops == 3 ? part : d);
	case AE_DF_XCHG:
		if (op->src >= 0 && op->dw == op->sw && (op->dw == 8 || op->dw == 4))
			return s;
		return AE_DF_NOT_AFFINE;
	default:
		return AE_DF_NOT_AFFINE;
	}
}

/*
 * The status flags of fl_kind's result, on op's operands in s (same
 * register: sub and xor give 0 whatever it holds). inc and dec leave CF.
 */
static void step_flags(const struct ae_df_op *op, struct ae_df_state *s)
{
	const uint32_t both = AE_DF_K_FLAGS | AE_DF_K_CARRY;
	int d = op->dst, k = op->fl_kind, cf = 0, of = 0;
	int same = op->src == d && (k == AE_DF_SUB || k == AE_DF_XOR);
	int keep_cf = k == AE_DF_INC || k == AE_DF_DEC;
	uint64_t m, top, a = 0, b = 0, r;

	if (op->fl == AE_FL_KEEP)
		return;
	if (op->fl != AE_FL_SET ||
	    (!same && (!((s->known >> d) & 1) ||
		       (op->src >= 0 && !((s->known >> op->src) & 1))))) {
		s->known &= keep_cf && op->fl == AE_FL_SET ? ~AE_DF_K_FLAGS : ~both;
		return;
	}
	m = mask_of(op->dw);
	top = 1ull << (8 * op->dw - 1);
	if (!same) {
		a = s->v[d] & m;
		b = (op->src >= 0 ? s->v[op->src] : (uint64_t)op->imm) & m;
	}
	switch (k) {
	case AE_DF_ADD:
		r = (a + b) & m;
		cf = r < a;
		of = !!((a ^ r) & (b ^ r) & top);
		break;
	case AE_DF_SUB:
		r = (a - b) & m;
		cf = a < b;
		of = !!((a ^ b) & (a ^ r) & top);
		break;
	case AE_DF_AND: r = a & b; break;
	case AE_DF_OR: r = a | b; break;
	case AE_DF_XOR: r = a ^ b; break;
	case AE_DF_INC:
		r = (a + 1) & m;
		of = r == top;
		break;
	case AE_DF_DEC:
		r = (a - 1) & m;
		of = a == top;
		break;
	default:	/* AE_DF_NEG */
		r = -a & m;
		cf = a != 0;
		of = a == top;
		break;
	}
	s->fl = (keep_cf ? s->fl & AE_DF_CF : cf ? AE_DF_CF : 0) |
		(!(__builtin_popcountll(r & 0xff) & 1) ? AE_DF_PF : 0) |
		(!r ? AE_DF_ZF : 0) | (r & top ? AE_DF_SF : 0) | (of ? AE_DF_OF : 0);
	s->known |= keep_cf ? AE_DF_K_FLAGS : both;
}

uint32_t ae_df_cond_needs(const struct ae_df_op *op)
{
	int t = (op->cc - 1) >> 1;

	if (!op->cc)
		return 0;
	return t == 1 ? AE_DF_K_CARRY : t == 3 ? AE_DF_K_CARRY | AE_DF_K_FLAGS : AE_DF_K_FLAGS;
}

int ae_df_taken(const struct ae_df_op *op, const struct ae_df_state *s)
{
	uint32_t need = ae_df_cond_needs(op);
	int cf = !!(s->fl & AE_DF_CF), zf = !!(s->fl & AE_DF_ZF);
	int sf = !!(s->fl & AE_DF_SF), of = !!(s->fl & AE_DF_OF), r;

	if (!need || (s->known & need) != need)
		return -1;
	switch ((op->cc - 1) >> 1) {
	case 0: r = of; break;
	case 1: r = cf; break;
	case 2: r = zf; break;
	case 3: r = cf || zf; break;
	case 4: r = sf; break;
	case 5: r = !!(s->fl & AE_DF_PF); break;
	case 6: r = sf != of; break;
	default: r = zf || sf != of; break;
	}
	return (op->cc - 1) & 1 ? !r : r;
}

void ae_df_step(const struct ae_df_op *op, uint64_t pc, struct ae_df_state *s)
{
	int d = op->dst, miss;
	uint64_t v, *sp = &s->v[AE_DF_RSP];

	step_flags(op, s);
	switch (op->kind) {
	case AE_DF_NOP:
		return;
	case AE_DF_MOV:
		if (d < 0)
			return;		/* a store */
		if (op->has_mem || (op->src >= 0 && !op->sw))
			forget(s, d);	/* %ah... as a source: not followed */
		else if (op->src >= 0 && ((s->known >> op->src) & 1))
			ae_df_set(s, d, s->v[op->src], op->dw);
		else if (op->src >= 0)
			forget(s, d);
		else
			ae_df_set(s, d, (uint64_t)op->imm, op->dw);
		if (op->dw == 0)
			forget(s, d);
		return;
	case AE_DF_MOVZX:
	case AE_DF_MOVSX:
		if (d < 0)
			return;
		if (op->has_mem || op->src < 0 || !((s->known >> op->src) & 1) ||
		    op->sw == 0) {
			forget(s, d);
			return;
		}
		v = s->v[op->src] & mask_of(op->sw);
		if (op->kind == AE_DF_MOVSX)
			v = (uint64_t)sext(v, op->sw);
		ae_df_set(s, d, v, op->dw);
		return;
	case AE_DF_LEA:
		if (d < 0)
			return;
		{
			struct ae_df_op m = *op;

			m.mem.fs = 0;
			if (mem_addr(&m, pc, s, &v, &miss))
				ae_df_set(s, d, v, op->dw);
			else
				forget(s, d);
		}
		return;
	case AE_DF_ADD: case AE_DF_SUB: case AE_DF_AND: case AE_DF_OR:
	case AE_DF_XOR: case AE_DF_SHL: case AE_DF_SHR: case AE_DF_SAR:
	case AE_DF_INC: case AE_DF_DEC: case AE_DF_NEG: case AE_DF_NOT:
		if (d < 0 || op->has_mem)
			break;	/* memory destination: registers as OTHER */
		if (alu(op, s, &v))
			ae_df_set(s, d, v, op->dw);
		else
			forget(s, d);
		return;
	case AE_DF_IMUL:
		if (d < 0 || op->has_mem || op->src < 0 || op->dw == 0 || op->nops < 2)
			break;
		if (((s->known >> d) & 1) && ((s->known >> op->src) & 1)) {
			/* imul r, r/m, imm has imm; imul r, r multiplies both */
			uint64_t b = op->nops == 3 ? (uint64_t)op->imm : s->v[d];

			ae_df_set(s, d, s->v[op->src] * b, op->dw);
		} else {
			forget(s, d);
		}
		return;
	case AE_DF_XCHG:
		if (d >= 0 && op->src >= 0 && op->dw == op->sw && op->dw) {
			uint64_t a = s->v[d], b = s->v[op->src];
			uint32_t ka = (s->known >> d) & 1, kb = (s->known >> op->src) & 1;

			if (op->dw != 8) {
				/* 32-bit exchange zero-extends both */
				if (op->dw != 4)
					break;
				a &= 0xffffffffu;
				b &= 0xffffffffu;
			}
			s->v[d] = b;
			s->v[op->src] = a;
			s->known &= ~((1u << d) | (1u << op->src));
			s->known |= (kb << d) | (ka << op->src);
			return;
		}
		break;
	case AE_DF_CDQE:
		if ((s->known & 1))
			s->v[0] = (uint64_t)(int64_t)(int32_t)s->v[0];
		return;
	case AE_DF_CQO:
		if (s->known & 1)
			ae_df_set(s, 2, (int64_t)s->v[0] < 0 ? ~0ull : 0, 8);
		else
			forget(s, 2);
		return;
	case AE_DF_PUSH:
		*sp -= 8;
		return;
	case AE_DF_CALL:
		*sp -= 8;
		s->df = 0;	/* the ABI: clear at every call and return */
		s->df_known = 1;
		return;
	case AE_DF_POP:
		forget(s, d);
		*sp += 8;
		if (d == AE_DF_RSP)
			forget(s, d);
		/* popfq (a pop that sets the flags): the direction flag is
		 * what the stack held */
		if (op->fl == AE_FL_LOST)
			s->df_known = 0;
		return;
	case AE_DF_RET:
		*sp += 8 + op->retimm;
		return;
	case AE_DF_LEAVE:
		if ((s->known >> AE_DF_RBP) & 1) {
			ae_df_set(s, AE_DF_RSP, s->v[AE_DF_RBP] + 8, 8);
		} else {
			forget(s, AE_DF_RSP);
		}
		forget(s, AE_DF_RBP);
		return;
	case AE_DF_ENTER:
		if ((s->known >> AE_DF_RSP) & 1) {
			ae_df_set(s, AE_DF_RBP, s->v[AE_DF_RSP] - 8, 8);
			*sp -= 8 + (uint64_t)op->imm;
		} else {
			forget(s, AE_DF_RBP);
		}
		return;
	case AE_DF_CLD:
	case AE_DF_STD:
		s->df = op->kind == AE_DF_STD;
		s->df_known = 1;
		return;
	case AE_DF_STR: {
		uint64_t dl = s->df ? -(uint64_t)op->ssize : op->ssize;

		if (!s->df_known)
			s->known &= ~((1u << 6) | (1u << 7));
		if (op->uses & (1u << 6))
			s->v[6] += dl;
		if (op->uses & (1u << 7))
			s->v[7] += dl;
		if (op->str == AE_STR_LODS)
			forget(s, 0);	/* the loaded element */
		if (op->rep)
			s->v[1] -= 1;
		return;
	}
	case AE_DF_SYSCALL:
		break;
	default:
		break;
	}
	/* anything else: what it writes is no longer known */
	s->known &= ~(op->writes & 0xffffu);
	if (op->writes & FS_BIT)
		s->fs_known = 0;
}
