// SPDX-License-Identifier: GPL-2.0
/*
 * ae-step --data: the data records of one instruction, computed from the
 * tracee's native registers before it runs, in valgrind lackey's
 * conventions (tests/oracle/README.md "lackey data conventions").
 * Included by ptrace-step.c; shares no code with aecc or the regenerator.
 */

#define STEP_DATA_MAX 24

struct step_rec {
	char kind;		/* 'L', 'S' or 'M' */
	uint64_t addr;
	unsigned int size;
};

struct step_data {
	int n;
	struct step_rec r[STEP_DATA_MAX];
};

static void sd_add(struct step_data *d, char kind, uint64_t addr, unsigned int size)
{
	if (d->n < STEP_DATA_MAX)
		d->r[d->n++] = (struct step_rec){ kind, addr, size };
}

/* Value of capstone register @reg in @r (sub-registers masked), 0 if none. */
static uint64_t sd_reg(const struct user_regs_struct *r, unsigned int reg, uint64_t next_rip)
{
	switch (reg) {
	case X86_REG_RAX: return r->rax;
	case X86_REG_RBX: return r->rbx;
	case X86_REG_RCX: return r->rcx;
	case X86_REG_RDX: return r->rdx;
	case X86_REG_RSI: return r->rsi;
	case X86_REG_RDI: return r->rdi;
	case X86_REG_RBP: return r->rbp;
	case X86_REG_RSP: return r->rsp;
	case X86_REG_R8: return r->r8;
	case X86_REG_R9: return r->r9;
	case X86_REG_R10: return r->r10;
	case X86_REG_R11: return r->r11;
	case X86_REG_R12: return r->r12;
	case X86_REG_R13: return r->r13;
	case X86_REG_R14: return r->r14;
	case X86_REG_R15: return r->r15;
	case X86_REG_RIP: return next_rip;
	case X86_REG_EAX: return (uint32_t)r->rax;
	case X86_REG_EBX: return (uint32_t)r->rbx;
	case X86_REG_ECX: return (uint32_t)r->rcx;
	case X86_REG_EDX: return (uint32_t)r->rdx;
	case X86_REG_ESI: return (uint32_t)r->rsi;
	case X86_REG_EDI: return (uint32_t)r->rdi;
	case X86_REG_EBP: return (uint32_t)r->rbp;
	case X86_REG_ESP: return (uint32_t)r->rsp;
	case X86_REG_R8D: return (uint32_t)r->r8;
	case X86_REG_R9D: return (uint32_t)r->r9;
	case X86_REG_R10D: return (uint32_t)r->r10;
	case X86_REG_R11D: return (uint32_t)r->r11;
	case X86_REG_R12D: return (uint32_t)r->r12;
	case X86_REG_R13D: return (uint32_t)r->r13;
	case X86_REG_R14D: return (uint32_t)r->r14;
	case X86_REG_R15D: return (uint32_t)r->r15;
	case X86_REG_EIP: return (uint32_t)next_rip;
	default: return 0;
	}
}

/* Effective address of memory operand @m (fs/gs bases added). */
static uint64_t sd_ea(const struct user_regs_struct *r, const x86_op_mem *m, uint64_t next_rip)
{
	uint64_t a = m->disp;

	a += sd_reg(r, m->base, next_rip);
	a += sd_reg(r, m->index, next_rip) * (uint64_t)m->scale;
	if (m->segment == X86_REG_FS)
		a += r->fs_base;
	else if (m->segment == X86_REG_GS)
		a += r->gs_base;
	return a;
}

/* First memory operand of @x, or NULL. */
static const cs_x86_op *sd_mem(const cs_x86 *x)
{
	int i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return &x->operands[i];
	return NULL;
}

/* String instructions: element size, or 0 when @id is none. */
static unsigned int sd_string(unsigned int id, char *op)
{
	switch (id) {
	case X86_INS_MOVSB: *op = 'm'; return 1;
	case X86_INS_MOVSW: *op = 'm'; return 2;
	case X86_INS_MOVSD: *op = 'm'; return 4;
	case X86_INS_MOVSQ: *op = 'm'; return 8;
	case X86_INS_STOSB: *op = 's'; return 1;
	case X86_INS_STOSW: *op = 's'; return 2;
	case X86_INS_STOSD: *op = 's'; return 4;
	case X86_INS_STOSQ: *op = 's'; return 8;
	case X86_INS_LODSB: *op = 'l'; return 1;
	case X86_INS_LODSW: *op = 'l'; return 2;
	case X86_INS_LODSD: *op = 'l'; return 4;
	case X86_INS_LODSQ: *op = 'l'; return 8;
	case X86_INS_SCASB: *op = 'a'; return 1;
	case X86_INS_SCASW: *op = 'a'; return 2;
	case X86_INS_SCASD: *op = 'a'; return 4;
	case X86_INS_SCASQ: *op = 'a'; return 8;
	case X86_INS_CMPSB: *op = 'c'; return 1;
	case X86_INS_CMPSW: *op = 'c'; return 2;
	case X86_INS_CMPSD: *op = 'c'; return 4;
	case X86_INS_CMPSQ: *op = 'c'; return 8;
	default: return 0;
	}
}

static int sd_prefix(const char *m, const char *p)
{
	return !strncmp(m, p, strlen(p));
}

/*
 * capstone 4's operand access flags are wrong for some instructions (a
 * ymm vmovdqu store is "read", fstps is "read", test is "read|write"):
 * the kind by mnemonic where it is certain. @dst: the memory operand is
 * the first (Intel destination). Returns 'L', 'S' or 0 (use capstone's).
 */
static char sd_kind_of(const cs_insn *in, int dst)
{
	const char *m = in->mnemonic;

	if (!strcmp(m, "test") || !strcmp(m, "cmp") || !strcmp(m, "bt") ||
	    sd_prefix(m, "ucomis") || sd_prefix(m, "comis") ||
	    sd_prefix(m, "vucomis") || sd_prefix(m, "vcomis") ||
	    sd_prefix(m, "fld") || sd_prefix(m, "fild") || sd_prefix(m, "fbld") ||
	    sd_prefix(m, "fcom") || sd_prefix(m, "fucom") || sd_prefix(m, "ficom"))
		return 'L';
	if (sd_prefix(m, "fst") || sd_prefix(m, "fist") || sd_prefix(m, "fnst") ||
	    sd_prefix(m, "fbstp") || sd_prefix(m, "set"))
		return 'S';
	if (sd_prefix(m, "mov") || sd_prefix(m, "vmov") || sd_prefix(m, "cmov"))
		return dst && !sd_prefix(m, "cmov") ? 'S' : 'L';
	return 0;
}

/*
 * capstone 4 gives a scalar SSE memory operand the xmm width (comisd
 * m64 reads 8 bytes, not 16). Returns the scalar's size (4 or 8) for a
 * scalar single/double instruction, by the source type in its mnemonic,
 * or 0 to use capstone's size.
 */
static unsigned int sd_scalar_size(const char *m)
{
	size_t n = strlen(m);

	if (strstr(m, "ss2"))
		return 4;
	if (strstr(m, "sd2"))
		return 8;
	if (sd_prefix(m, "cvtsi2") || sd_prefix(m, "vcvtsi2") || n < 3)
		return 0;
	if (!strcmp(m + n - 2, "sd"))
		return 8;
	if (!strcmp(m + n - 2, "ss"))
		return 4;
	return 0;
}

/*
 * Fills @d with the data records of @in (decoded with detail) about to run
 * with registers @r. Returns 0, or -EINVAL for an instruction whose
 * accesses the oracle does not know (it then refuses rather than guess).
 */
static int step_data_of(const cs_insn *in, const struct user_regs_struct *r, struct step_data *d)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *mop = sd_mem(x);
	uint64_t next = in->address + in->size;
	uint64_t ea = mop ? sd_ea(r, &mop->mem, next) : 0;
	int rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	int lock = x->prefix[0] == X86_PREFIX_LOCK;
	unsigned int esz, msz, i;
	char sop;

	d->n = 0;
	esz = sd_string(in->id, &sop);
	/* "movsd"/"cmpsd" with an xmm operand (either side: a store to
	 * memory has it second) are SSE, not string ops. */
	for (i = 0; esz && i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG &&
		    x->operands[i].reg >= X86_REG_XMM0 && x->operands[i].reg <= X86_REG_XMM31)
			esz = 0;
	if (esz) {
		if (rep && r->rcx == 0)
			return 0;
		switch (sop) {
		case 'm':
			sd_add(d, 'L', r->rsi, esz);
			sd_add(d, 'S', r->rdi, esz);
			break;
		case 's':
			sd_add(d, 'S', r->rdi, esz);
			break;
		case 'l':
			sd_add(d, 'L', r->rsi, esz);
			break;
		case 'a':
			sd_add(d, 'L', r->rdi, esz);
			break;
		default:
			sd_add(d, 'L', r->rdi, esz);
			sd_add(d, 'L', r->rsi, esz);
		}
		return 0;
	}
	switch (in->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH:
	case X86_INS_CLFLUSHOPT:
	case X86_INS_SYSCALL:
		return 0;
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
	case X86_INS_CALL:
		if (mop)
			sd_add(d, 'L', ea, 8);
		sd_add(d, 'S', r->rsp - 8, 8);
		return 0;
	case X86_INS_ENTER:
		sd_add(d, 'S', r->rsp - 8, 8);
		return 0;
	case X86_INS_POP:
		sd_add(d, 'L', r->rsp, 8);
		if (mop)
			sd_add(d, 'S', ea, 8);
		return 0;
	case X86_INS_POPFQ:
	case X86_INS_RET:
		sd_add(d, 'L', r->rsp, 8);
		return 0;
	case X86_INS_LEAVE:
		sd_add(d, 'L', r->rbp, 8);
		return 0;
	case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR:
	case X86_INS_FXRSTOR64: {
		char k = (in->id == X86_INS_FXSAVE || in->id == X86_INS_FXSAVE64) ? 'S' : 'L';

		sd_add(d, k, ea, 160);
		sd_add(d, k, ea + 24, 8);
		for (i = 0; i < 16; i++)
			sd_add(d, k, ea + 160 + 16 * i, 16);
		return 0;
	}
	case X86_INS_XCHG:
		if (mop) {
			sd_add(d, 'L', ea, mop->size);
			sd_add(d, 'M', ea, mop->size);
		}
		return 0;
	default:
		break;
	}
	if (!mop)
		return 0;
	if (in->id == X86_INS_CMPXCHG || in->id == X86_INS_CMPXCHG8B ||
	    in->id == X86_INS_CMPXCHG16B) {
		sd_add(d, 'M', ea, mop->size);
		return 0;
	}
	/*
	 * bt/bts/btr/btc with a register bit offset on memory: lackey (VEX)
	 * reports the one byte holding the bit, at ea + (offset >> 3), the
	 * offset a signed value of the register's width.
	 */
	if ((in->id == X86_INS_BT || in->id == X86_INS_BTS || in->id == X86_INS_BTR ||
	     in->id == X86_INS_BTC) && x->op_count == 2 && x->operands[1].type == X86_OP_REG) {
		const cs_x86_op *src = &x->operands[1];
		int64_t off;

		if (src->size == 8)
			off = (int64_t)sd_reg(r, src->reg, next);
		else if (src->size == 4)
			off = (int32_t)sd_reg(r, src->reg, next);
		else
			return -EINVAL;
		ea += (uint64_t)(off >> 3);
		if (in->id == X86_INS_BT) {
			sd_add(d, 'L', ea, 1);
		} else {
			if (lock)
				sd_add(d, 'L', ea, 1);
			sd_add(d, 'M', ea, 1);
		}
		return 0;
	}
	msz = sd_scalar_size(in->mnemonic);
	if (!msz)
		msz = mop->size;
	switch (sd_kind_of(in, mop == &x->operands[0])) {
	case 'L':
		sd_add(d, 'L', ea, msz);
		return 0;
	case 'S':
		sd_add(d, 'S', ea, msz);
		return 0;
	default:
		break;
	}
	if ((mop->access & CS_AC_READ) && (mop->access & CS_AC_WRITE)) {
		if (lock)
			sd_add(d, 'L', ea, msz);
		sd_add(d, 'M', ea, msz);
	} else if (mop->access & CS_AC_WRITE) {
		sd_add(d, 'S', ea, msz);
	} else if (mop->access & CS_AC_READ) {
		sd_add(d, 'L', ea, msz);
	} else {
		return -EINVAL;
	}
	return 0;
}
