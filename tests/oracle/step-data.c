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
	int gather;	/* a gather: a page fault on an element may stop it
			 * part done, rip still on it (ptrace-step.c) */
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
 * Vector gathers (VSIB addressing) need the vector and opmask registers,
 * which only the XSAVE area has: PTRACE_GETREGSET NT_X86_XSTATE, in the
 * standard (non-compacted) format (Intel SDM vol. 1, 13.4). It is read
 * only for a gather: a system call and a copy of a few KiB per read.
 */
enum sd_xcomp {
	SD_XC_SSE = 1,		/* xmm0-15: legacy area, byte 160 */
	SD_XC_YMM = 2,		/* upper 128 bits of ymm0-15 */
	SD_XC_OPMASK = 5,	/* k0-7, 8 bytes each */
	SD_XC_ZMM_HI256 = 6,	/* upper 256 bits of zmm0-15 */
	SD_XC_HI16_ZMM = 7,	/* zmm16-31, 64 bytes each */
	SD_XC_N
};

#define SD_XS_LEGACY_XMM	160	/* xmm0 in the legacy area */
#define SD_XS_XCR0		464	/* ptrace puts XCR0 in the software bytes (asm/user.h) */
#define SD_XS_HDR		512	/* XSAVE header: xstate_bv first */

static const char *const sd_xcomp_name[SD_XC_N] = {
	[SD_XC_SSE] = "SSE", [SD_XC_YMM] = "YMM_Hi128", [SD_XC_OPMASK] = "opmask",
	[SD_XC_ZMM_HI256] = "ZMM_Hi256", [SD_XC_HI16_ZMM] = "Hi16_ZMM",
};

struct sd_xstate {
	uint8_t *buf;
	size_t cap;		/* CPUID.(0xD,0).ECX: the largest XSAVE area */
	size_t len;		/* bytes the kernel wrote */
	uint64_t bv;		/* xstate_bv: components not in their init state */
	uint64_t saved;		/* XCR0: the components the kernel saves */
	unsigned int off[SD_XC_N], size[SD_XC_N];	/* CPUID leaf 0xD */
};

static struct sd_xstate sd_xs;

/* Reads task @pid's XSAVE area into sd_xs. Returns 0 or -EIO. */
static int sd_xstate_read(pid_t pid)
{
	struct sd_xstate *xs = &sd_xs;
	unsigned int a, b, c, dx, i;
	struct iovec iov;

	if (!xs->buf) {
		if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &dx) || c < SD_XS_HDR + 64) {
			fprintf(stderr, "ae-step: --data: CPUID leaf 0xD: no XSAVE area\n");
			return -EIO;
		}
		xs->cap = c;
		xs->buf = malloc(c);
		if (!xs->buf)
			return -EIO;
		xs->off[SD_XC_SSE] = SD_XS_LEGACY_XMM;
		xs->size[SD_XC_SSE] = 16 * 16;
		/* sub-leaf n >= 2: EAX = size, EBX = offset (0, 0: unsupported);
		 * the offsets differ between CPUs (AMD Zen 4, no MPX: opmask
		 * at 832, not 1088) */
		for (i = SD_XC_YMM; i < SD_XC_N; i++)
			if (__get_cpuid_count(0xd, i, &a, &b, &c, &dx)) {
				xs->size[i] = a;
				xs->off[i] = b;
			}
	}
	iov.iov_base = xs->buf;
	iov.iov_len = xs->cap;
	if (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) < 0) {
		fprintf(stderr, "ae-step: --data: PTRACE_GETREGSET NT_X86_XSTATE: %s\n",
			strerror(errno));
		return -EIO;
	}
	xs->len = iov.iov_len;
	if (xs->len < SD_XS_HDR + 64) {
		fprintf(stderr, "ae-step: --data: XSAVE area of %zu bytes, no header\n", xs->len);
		return -EIO;
	}
	memcpy(&xs->bv, xs->buf + SD_XS_HDR, 8);
	memcpy(&xs->saved, xs->buf + SD_XS_XCR0, 8);
	return 0;
}

/*
 * Copies @n bytes at byte @at of XSAVE component @c into @v. A component
 * whose xstate_bv bit is clear is in its init state, all zeros (XSAVE's
 * init optimization: its bytes in the area mean nothing). Returns 0, or -EIO
 * when the kernel does not save the component for this task.
 */
static int sd_xpart(enum sd_xcomp c, unsigned int at, unsigned int n, uint8_t *v)
{
	const struct sd_xstate *xs = &sd_xs;

	if (!(xs->saved & (1ull << c)) || !xs->size[c] || at + n > xs->size[c] ||
	    xs->off[c] + xs->size[c] > xs->len) {
		fprintf(stderr, "ae-step: --data: XSAVE component %d (%s) is not in the task's xstate\n",
			c, sd_xcomp_name[c]);
		return -EIO;
	}
	if (xs->bv & (1ull << c))
		memcpy(v, xs->buf + xs->off[c] + at, n);
	else
		memset(v, 0, n);
	return 0;
}

/* Width in bytes of vector register @reg (xmm/ymm/zmm), its number in @num; 0 if none. */
static unsigned int sd_vreg(unsigned int reg, unsigned int *num)
{
	if (reg >= X86_REG_XMM0 && reg <= X86_REG_XMM31) {
		*num = reg - X86_REG_XMM0;
		return 16;
	}
	if (reg >= X86_REG_YMM0 && reg <= X86_REG_YMM31) {
		*num = reg - X86_REG_YMM0;
		return 32;
	}
	if (reg >= X86_REG_ZMM0 && reg <= X86_REG_ZMM31) {
		*num = reg - X86_REG_ZMM0;
		return 64;
	}
	return 0;
}

/* The low @n bytes (16, 32 or 64) of vector register @num into @v. */
static int sd_vec(unsigned int num, unsigned int n, uint8_t *v)
{
	if (num >= 16)
		return sd_xpart(SD_XC_HI16_ZMM, 64 * (num - 16), n, v);
	if (sd_xpart(SD_XC_SSE, 16 * num, 16, v))
		return -EIO;
	if (n > 16 && sd_xpart(SD_XC_YMM, 16 * num, 16, v + 16))
		return -EIO;
	if (n > 32 && sd_xpart(SD_XC_ZMM_HI256, 32 * num, 32, v + 32))
		return -EIO;
	return 0;
}

/*
 * Gathers: element size @esz and index element size @isz by mnemonic
 * (capstone 4 gives vpgatherqd/vgatherqps with a zmm index a memory size
 * of 8). Returns 1 for a gather, 0 otherwise.
 */
static int sd_gather_kind(unsigned int id, unsigned int *esz, unsigned int *isz)
{
	switch (id) {
	case X86_INS_VPGATHERDD:
	case X86_INS_VGATHERDPS:
		*esz = 4;
		*isz = 4;
		return 1;
	case X86_INS_VPGATHERDQ:
	case X86_INS_VGATHERDPD:
		*esz = 8;
		*isz = 4;
		return 1;
	case X86_INS_VPGATHERQD:
	case X86_INS_VGATHERQPS:
		*esz = 4;
		*isz = 8;
		return 1;
	case X86_INS_VPGATHERQQ:
	case X86_INS_VGATHERQPD:
		*esz = 8;
		*isz = 8;
		return 1;
	default:
		return 0;
	}
}

/*
 * The loads of a gather: element i < min(destination elements, index
 * elements) is loaded iff it is active, from base + disp + sign-extended
 * index element i * scale, in ascending element order, one L of the
 * element size each. Active: AVX2 (VEX: dst, mem, mask vector) the sign
 * bit of mask element i (elements of the destination's size); AVX-512
 * (EVEX: dst, k, mem) bit i of the opmask. Inactive elements are not
 * accessed (lackey differs: see tests/oracle/README.md).
 */
static int sd_gather(const cs_insn *in, const struct user_regs_struct *r, pid_t pid,
		     unsigned int esz, unsigned int isz, struct step_data *d)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *dst = &x->operands[0], *mop, *msk;
	unsigned int dw, iw, mw = 0, dn, inum, mn = 0, n, i;
	uint8_t idx[64], mask[64];
	uint64_t base, k = 0;
	int evex;

	if (x->op_count != 3 || dst->type != X86_OP_REG)
		return -EINVAL;
	evex = x->operands[1].type == X86_OP_REG;
	mop = &x->operands[evex ? 2 : 1];
	msk = &x->operands[evex ? 1 : 2];
	if (mop->type != X86_OP_MEM || msk->type != X86_OP_REG)
		return -EINVAL;
	dw = sd_vreg(dst->reg, &dn);
	iw = sd_vreg(mop->mem.index, &inum);
	if (!dw || !iw)
		return -EINVAL;
	if (evex) {
		/* k0 cannot be a gather's mask (#UD) */
		if (msk->reg < X86_REG_K1 || msk->reg > X86_REG_K7)
			return -EINVAL;
	} else {
		mw = sd_vreg(msk->reg, &mn);
		if (mw != dw)
			return -EINVAL;
	}
	n = dw / esz < iw / isz ? dw / esz : iw / isz;
	if (sd_xstate_read(pid) || sd_vec(inum, iw, idx))
		return -EIO;
	if (evex ? sd_xpart(SD_XC_OPMASK, 8 * (msk->reg - X86_REG_K0), 8, (uint8_t *)&k) :
		   sd_vec(mn, mw, mask))
		return -EIO;
	base = (uint64_t)mop->mem.disp + sd_reg(r, mop->mem.base, in->address + in->size);
	for (i = 0; i < n; i++) {
		uint64_t a;
		int64_t ix;

		if (evex ? !((k >> i) & 1) : !(mask[(i + 1) * esz - 1] & 0x80))
			continue;
		if (isz == 4) {
			int32_t v;

			memcpy(&v, idx + 4 * i, 4);
			ix = v;
		} else {
			memcpy(&ix, idx + 8 * i, 8);
		}
		a = base + (uint64_t)ix * mop->mem.scale;
		if (x->addr_size == 4)	/* 0x67: a 32-bit effective address */
			a = (uint32_t)a;
		if (mop->mem.segment == X86_REG_FS)
			a += r->fs_base;
		else if (mop->mem.segment == X86_REG_GS)
			a += r->gs_base;
		sd_add(d, 'L', a, esz);
	}
	return 0;
}

/* A vector register as the index of memory operand @mop (VSIB). */
static int sd_vsib(const cs_x86_op *mop)
{
	unsigned int num;

	return mop && sd_vreg(mop->mem.index, &num);
}

/*
 * Fills @d with the data records of @in (decoded with detail) about to run
 * in task @pid with registers @r. Returns 0; -EINVAL for an instruction
 * whose accesses the oracle does not know, -EOPNOTSUPP for one capstone 4
 * decodes wrongly (an EVEX scatter or gather/scatter prefetch: its vector
 * index as a general register), -EIO when a gather's registers cannot be
 * read (the oracle then refuses rather than guess).
 */
static int step_data_of(const cs_insn *in, const struct user_regs_struct *r, pid_t pid,
			struct step_data *d)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *mop = sd_mem(x);
	uint64_t next = in->address + in->size;
	uint64_t ea = mop ? sd_ea(r, &mop->mem, next) : 0;
	int rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	int lock = x->prefix[0] == X86_PREFIX_LOCK;
	unsigned int esz, isz, msz, i;
	char sop;

	d->n = 0;
	d->gather = sd_gather_kind(in->id, &esz, &isz);
	if (d->gather)
		return sd_gather(in, r, pid, esz, isz, d);
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
	case X86_INS_VPSCATTERDD:
	case X86_INS_VPSCATTERDQ:
	case X86_INS_VPSCATTERQD:
	case X86_INS_VPSCATTERQQ:
	case X86_INS_VSCATTERDPS:
	case X86_INS_VSCATTERDPD:
	case X86_INS_VSCATTERQPS:
	case X86_INS_VSCATTERQPD:
	case X86_INS_VGATHERPF0DPD:
	case X86_INS_VGATHERPF0DPS:
	case X86_INS_VGATHERPF0QPD:
	case X86_INS_VGATHERPF0QPS:
	case X86_INS_VGATHERPF1DPD:
	case X86_INS_VGATHERPF1DPS:
	case X86_INS_VGATHERPF1QPD:
	case X86_INS_VGATHERPF1QPS:
	case X86_INS_VSCATTERPF0DPD:
	case X86_INS_VSCATTERPF0DPS:
	case X86_INS_VSCATTERPF0QPD:
	case X86_INS_VSCATTERPF0QPS:
	case X86_INS_VSCATTERPF1DPD:
	case X86_INS_VSCATTERPF1DPS:
	case X86_INS_VSCATTERPF1QPD:
	case X86_INS_VSCATTERPF1QPS:
		return -EOPNOTSUPP;
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
	case X86_INS_XLATB:
		sd_add(d, 'L', r->rbx + (r->rax & 0xff), 1);
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
	/* any other VSIB operand: the generic path would take the vector
	 * index for a general register */
	if (sd_vsib(mop))
		return -EINVAL;
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
