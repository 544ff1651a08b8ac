// SPDX-License-Identifier: MIT
/*
 * dataflow - unit test of the transfer functions data tracing shares
 * between aecc and aetrace (dataflow/dataflow.c), on hand-assembled
 * instructions: the accesses (kind, address, size, lackey's order) and
 * the register values and known bits after each, checked against the
 * x86-64 semantics worked out by hand. TAP output.
 */
#include <stdio.h>
#include <string.h>

#include <aetrace/dataflow.h>

static csh h;
static int nt, failed;

static void ok(int c, const char *name)
{
	printf("%sok %d - %s\n", c ? "" : "not ", ++nt, name);
	failed |= !c;
}

/* Decode bytes b at pc into op; 0 or -1. */
static int dec(const uint8_t *b, size_t n, uint64_t pc, struct ae_df_op *op)
{
	cs_insn *ci = cs_malloc(h);
	const uint8_t *p = b;
	uint64_t a = pc;
	int r = -1;

	if (cs_disasm_iter(h, &p, &n, &a, ci))
		r = ae_df_decode(h, ci, op);
	cs_free(ci, 1);
	return r;
}

struct want {
	int acc;
	uint64_t addr;
	int size;
};

/* One instruction: its accesses must be exactly w[0..nw). */
static void check(const char *name, const uint8_t *b, size_t n, struct ae_df_state *s,
		  const struct want *w, int nw)
{
	struct ae_df_op op;
	struct ae_df_access a[4];
	int miss = -1, k, good;

	if (dec(b, n, 0x401000, &op)) {
		ok(0, name);
		return;
	}
	k = ae_df_accesses(&op, 0x401000, s, a, &miss);
	good = k == nw;
	for (int i = 0; good && i < k; i++)
		good = a[i].acc == w[i].acc && a[i].addr == w[i].addr && a[i].size == w[i].size;
	if (!good)
		for (int i = 0; i < k; i++)
			printf("# got %c %llx,%d\n", " LSM"[a[i].acc], (unsigned long long)a[i].addr,
			       a[i].size);
	ok(good, name);
	ae_df_step(&op, 0x401000, s);
}

#define B(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define W(...) (const struct want[]){ __VA_ARGS__ }, \
	sizeof((const struct want[]){ __VA_ARGS__ }) / sizeof(struct want)

/* Gather b with hand-built record rec (vex: --lackey-compat): its loads
 * must be exactly w[0..nw). %rax = 0x10000 (the base), %rsp = 0x7000. */
static void gather(const char *name, const uint8_t *b, size_t n, int bytes,
		   const uint8_t *rec, int vex, const struct want *w, int nw)
{
	struct ae_df_state s = { .known = (1u << 0) | (1u << AE_DF_RSP) };
	struct ae_df_access a[AE_DF_VSIB_MAX];
	struct ae_df_op op;
	int miss = 0, k, good;

	s.v[0] = 0x10000;
	s.v[AE_DF_RSP] = 0x7000;
	if (dec(b, n, 0x401000, &op) || ae_df_vsib_bytes(&op) != bytes ||
	    ae_df_accesses(&op, 0x401000, &s, a, &miss) != -1) {
		ok(0, name);
		return;
	}
	k = ae_df_vsib_accesses(&op, 0x401000, &s, rec, vex, a, &miss);
	good = k == nw;
	for (int i = 0; good && i < k; i++)
		good = a[i].acc == w[i].acc && a[i].addr == w[i].addr && a[i].size == w[i].size;
	for (int i = 0; !good && i < k; i++)
		printf("# got %c %llx,%d\n", " LSM"[a[i].acc], (unsigned long long)a[i].addr,
		       a[i].size);
	ok(good, name);
}

/* A dword index vector (n elements) and a dword vector mask from bits. */
static void rec_dd(uint8_t *rec, const int32_t *idx, int n, unsigned int on)
{
	memcpy(rec, idx, 4 * n);
	for (int i = 0; i < n; i++)
		memcpy(rec + 4 * n + 4 * i, &(int32_t){ (on >> i) & 1 ? -1 : 0x7fffffff }, 4);
}

static void vsib_checks(void)
{
	static const int32_t idx[8] = { 0, 7, -3, 100, 1, 2, 3, -1 };
	static const int64_t qidx[4] = { -2, 5, 0x100000000ll, 1 };
	uint8_t rec[128];
	struct ae_df_op op;

	/* vpgatherdd %ymm5,16(%rax,%ymm1,4),%ymm0: all eight */
	rec_dd(rec, idx, 8, 0xff);
	gather("vpgatherdd ymm, full mask: eight loads in element order",
	       B(0xc4, 0xe2, 0x55, 0x90, 0x44, 0x88, 0x10), 64, rec, 0,
	       W({ 1, 0x10010, 4 }, { 1, 0x1002c, 4 }, { 1, 0x10004, 4 }, { 1, 0x101a0, 4 },
		 { 1, 0x10014, 4 }, { 1, 0x10018, 4 }, { 1, 0x1001c, 4 }, { 1, 0x1000c, 4 }));
	/* the mask's sign bits choose (0x7fffffff: set bits, clear sign) */
	rec_dd(rec, idx, 8, 0x82);
	gather("vpgatherdd ymm, partial mask: the sign bits choose",
	       B(0xc4, 0xe2, 0x55, 0x90, 0x44, 0x88, 0x10), 64, rec, 0,
	       W({ 1, 0x1002c, 4 }, { 1, 0x1000c, 4 }));
	gather("and with --lackey-compat, VEX's loads of the others from %rsp",
	       B(0xc4, 0xe2, 0x55, 0x90, 0x44, 0x88, 0x10), 64, rec, 1,
	       W({ 1, 0x7000, 4 }, { 1, 0x1002c, 4 }, { 1, 0x7000, 4 }, { 1, 0x7000, 4 },
		 { 1, 0x7000, 4 }, { 1, 0x7000, 4 }, { 1, 0x7000, 4 }, { 1, 0x1000c, 4 }));
	/* vgatherqpd %xmm2,(%rax,%xmm3,8),%xmm4: two qword indices, 8-byte
	 * elements, the mask's qword sign bits */
	memcpy(rec, qidx, 16);
	memset(rec + 16, 0, 16);
	rec[16 + 7] = 0x80;
	rec[16 + 15] = 0x80;
	gather("vgatherqpd xmm: qword indices, sign-extended",
	       B(0xc4, 0xe2, 0xe9, 0x93, 0x24, 0xd8), 32, rec, 0,
	       W({ 1, 0x10000 - 16, 8 }, { 1, 0x10028, 8 }));
	/* vpgatherqd %xmm5,(%rax,%ymm1,4),%xmm0: four qword indices (ymm),
	 * four dword elements (xmm), a 16-byte mask */
	memcpy(rec, qidx, 32);
	memset(rec + 32, 0xff, 16);
	gather("vpgatherqd xmm, ymm index: four elements",
	       B(0xc4, 0xe2, 0x55, 0x91, 0x04, 0x88), 48, rec, 0,
	       W({ 1, 0x10000 - 8, 4 }, { 1, 0x10014, 4 }, { 1, 0x10000 + 0x400000000ull, 4 },
		 { 1, 0x10004, 4 }));
	/* vpgatherdd 8(%rax,%zmm1,4),%zmm0{%k1}: sixteen indices, the
	 * opmask's low 16 bits */
	for (int i = 0; i < 16; i++)
		memcpy(rec + 4 * i, &(int32_t){ i - 8 }, 4);
	rec[64] = 0x01;
	rec[65] = 0x80;
	gather("vpgatherdd zmm{k1}: the opmask's bits choose",
	       B(0x62, 0xf2, 0x7d, 0x49, 0x90, 0x44, 0x88, 0x02), 66, rec, 0,
	       W({ 1, 0x10000 + 8 - 32, 4 }, { 1, 0x10000 + 8 + 28, 4 }));
	/* vpgatherqd (%rax,%zmm1,4),%ymm0{%k1}: eight qword indices, dword
	 * elements (capstone 4 says the operand is 8 bytes) */
	memcpy(rec, (const int64_t[]){ 0, 1, 2, 3, 4, 5, 6, -7 }, 64);
	rec[64] = 0x81;
	rec[65] = 0;
	gather("vpgatherqd ymm{k1}, zmm index: 4-byte elements",
	       B(0x62, 0xf2, 0x7d, 0x49, 0x91, 0x04, 0x88), 66, rec, 0,
	       W({ 1, 0x10000, 4 }, { 1, 0x10000 - 28, 4 }));
	/* vpgatherqq (%rax,%zmm9,8),%zmm20{%k3}: eight qwords */
	ok(dec(B(0x62, 0xa2, 0xfd, 0x4b, 0x91, 0x24, 0xc8), 0x401000, &op) == 0 &&
	   op.mem.vsib == 64 && op.mem.vidx == 9 && op.mem.vnel == 8 && op.mem.vmask_k &&
	   op.mem.vmask == 3 && op.mem.size == 8 && op.uses == 1u,
	   "vpgatherqq zmm20{k3}: index zmm9, eight elements, base %rax used");
	/* addr32 vpgatherdd: the CPU truncates the sum to 32 bits */
	ok(dec(B(0x67, 0xc4, 0xe2, 0x55, 0x90, 0x44, 0x88, 0x10), 0x401000, &op) < 0,
	   "a gather with an address-size prefix is refused");
	/* vpscatterdd %zmm0,8(%rax,%zmm1,4){%k1}: refused (capstone 4 reads
	 * its index as %rcx) */
	ok(dec(B(0x62, 0xf2, 0x7d, 0x49, 0xa0, 0x44, 0x88, 0x02), 0x401000, &op) == 0 &&
	   op.unfollowed && !(op.writes & 0xffff),
	   "a scatter is not followed (and writes no general register)");
	/* fxsave (%rax): capstone 4 sizes its area 8 bytes; not followed,
	 * %rsp untouched (an instruction trace steps over it) */
	ok(dec(B(0x0f, 0xae, 0x00), 0x401000, &op) == 0 && op.unfollowed &&
	   !(op.writes & (1u << AE_DF_RSP)), "fxsave is not followed and leaves %rsp");
	/* xlatb: the byte at %rbx + %al; with %fs: not followed */
	ok(dec(B(0xd7), 0x401000, &op) == 0 && !op.unfollowed && op.kind == AE_DF_XLAT &&
	   op.uses == ((1u << 0) | (1u << 3)), "xlatb uses %rax and %rbx");
	ok(dec(B(0x64, 0xd7), 0x401000, &op) == 0 && op.unfollowed, "%fs xlatb is not followed");
}

int main(void)
{
	struct ae_df_state s;
	struct ae_df_op op;
	int miss = -1;
	struct ae_df_access a[4];

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK ||
	    cs_option(h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		printf("not ok 1 - capstone\n");
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.df_known = 1;
	ae_df_set(&s, AE_DF_RSP, 0x7ffe0000, 8);
	ae_df_set(&s, 3, 0x1000, 8);	/* rbx */

	/* push %rbx: S at rsp-8; rsp -= 8 */
	check("push stores below rsp", B(0x53), &s, W({ AE_ACC_S, 0x7ffdfff8, 8 }));
	ok(s.v[AE_DF_RSP] == 0x7ffdfff8, "push moves rsp");
	/* pushfq, popfq: a store and a load at the stack; after popfq the
	 * direction flag is what the stack held (unknown) until a call */
	check("pushfq stores below rsp", B(0x9c), &s, W({ AE_ACC_S, 0x7ffdfff0, 8 }));
	check("popfq loads at rsp", B(0x9d), &s, W({ AE_ACC_L, 0x7ffdfff0, 8 }));
	ok(s.v[AE_DF_RSP] == 0x7ffdfff8 && (s.known >> AE_DF_RSP & 1) && !s.df_known,
	   "popfq moves rsp back and leaves the direction flag unknown");
	ok(dec(B(0xaa), 0x401000, &op) == 0 && ae_df_accesses(&op, 0x401000, &s, a, &miss) < 0 &&
	   miss == 17, "a string instruction then names the direction flag");
	/* a plain pop leaves the direction flag as it was */
	s.df_known = 1;
	check("push %rcx", B(0x51), &s, W({ AE_ACC_S, 0x7ffdfff0, 8 }));
	check("pop %rcx", B(0x59), &s, W({ AE_ACC_L, 0x7ffdfff0, 8 }));
	ok(s.df_known, "a plain pop keeps the direction flag known");
	s.df_known = 0;
	/* xlatb: L 1 at %rbx + %al, the upper bits of %rax ignored */
	ae_df_set(&s, 0, 0x1234567890abcd05ull, 8);
	check("xlatb loads the byte at rbx + al", B(0xd7), &s, W({ AE_ACC_L, 0x1005, 1 }));
	s.v[AE_DF_RSP] += 8;	/* (room for a call's push) */
	check("call pushes", B(0xe8, 0, 0, 0, 0), &s, W({ AE_ACC_S, 0x7ffdfff8, 8 }));
	ok(s.df_known && !s.df, "a call clears the direction flag (the ABI)");
	/* lea 0x10(%rbx,%rbx,2),%rax: no access; rax = 0x3010 */
	check("lea touches nothing", B(0x48, 0x8d, 0x44, 0x5b, 0x10), &s, NULL, 0);
	ok((s.known & 1) && s.v[0] == 0x3010, "lea computes rax");
	/* movzbl (%rax),%ecx: L 1; rcx unknown (a load) */
	check("movzbl loads one byte", B(0x0f, 0xb6, 0x08), &s, W({ AE_ACC_L, 0x3010, 1 }));
	ok(!(s.known & 2), "a loaded register is unknown");
	/* the next address needs rcx: missing */
	ok(dec(B(0x8b, 0x04, 0x8b), 0x401000, &op) == 0 &&
	   ae_df_accesses(&op, 0x401000, &s, a, &miss) < 0 && miss == 1,
	   "an address with an unknown register is refused, naming it");
	/* addl $1,(%rax): M 4 */
	check("add to memory is a modify", B(0x83, 0x00, 0x01), &s, W({ AE_ACC_M, 0x3010, 4 }));
	/* lock xadd %ecx,(%rax): VEX loads, then compare-and-swaps: L, M */
	check("lock xadd: L then M", B(0xf0, 0x0f, 0xc1, 0x08), &s,
	      W({ AE_ACC_L, 0x3010, 4 }, { AE_ACC_M, 0x3010, 4 }));
	/* cmpb $0,(%rax): L 1, not M */
	check("cmp reads", B(0x80, 0x38, 0x00), &s, W({ AE_ACC_L, 0x3010, 1 }));
	/* movups %xmm0,8(%rax): S 16 */
	check("movups to memory stores 16", B(0x0f, 0x11, 0x40, 0x08), &s,
	      W({ AE_ACC_S, 0x3018, 16 }));
	/* comisd 8(%rax),%xmm0: L 8 */
	check("comisd reads 8", B(0x66, 0x0f, 0x2f, 0x40, 0x08), &s, W({ AE_ACC_L, 0x3018, 8 }));
	/* fldt (%rax): L 10 */
	check("fldt reads 10", B(0xdb, 0x28), &s, W({ AE_ACC_L, 0x3010, 10 }));
	/* vmovdqu %ymm0,(%rax): S 32 */
	check("vmovdqu ymm stores 32", B(0xc5, 0xfe, 0x7f, 0x00), &s, W({ AE_ACC_S, 0x3010, 32 }));
	/* mov 0x100(%rip),%rdx: L at next insn + 0x100 */
	check("rip-relative load", B(0x48, 0x8b, 0x15, 0x00, 0x01, 0x00, 0x00), &s,
	      W({ AE_ACC_L, 0x401107, 8 }));
	/* mov %fs:0,%rdx needs the fs base */
	ok(dec(B(0x64, 0x48, 0x8b, 0x14, 0x25, 0, 0, 0, 0), 0x401000, &op) == 0 &&
	   ae_df_accesses(&op, 0x401000, &s, a, &miss) < 0 && miss == 16,
	   "an %fs access needs the fs base");
	s.fs = 0x4000;
	s.fs_known = 1;
	check("%fs:8 with the base", B(0x64, 0x48, 0x8b, 0x14, 0x25, 8, 0, 0, 0), &s,
	      W({ AE_ACC_L, 0x4008, 8 }));
	/* rep movsq iteration: L rsi, S rdi, both += 8, rcx -= 1 */
	ae_df_set(&s, 6, 0x5000, 8);
	ae_df_set(&s, 7, 0x6000, 8);
	ae_df_set(&s, 1, 2, 8);
	check("movsq: L rsi then S rdi", B(0xf3, 0x48, 0xa5), &s,
	      W({ AE_ACC_L, 0x5000, 8 }, { AE_ACC_S, 0x6000, 8 }));
	ok(s.v[6] == 0x5008 && s.v[7] == 0x6008 && s.v[1] == 1, "movsq steps rsi, rdi, rcx");
	/* cmpsb: VEX (lackey) loads (%rdi), then (%rsi) */
	check("cmpsb: L rdi then L rsi", B(0xa6), &s,
	      W({ AE_ACC_L, 0x6008, 1 }, { AE_ACC_L, 0x5008, 1 }));
	/* std; stosb: S rdi, rdi -= 1 */
	check("std", B(0xfd), &s, NULL, 0);
	check("stosb stores at rdi", B(0xaa), &s, W({ AE_ACC_S, 0x6009, 1 }));
	ok(s.v[7] == 0x6008, "stosb with DF set steps down");
	check("cld", B(0xfc), &s, NULL, 0);
	/* call rel32: S at rsp-8; ret: L at rsp */
	check("call pushes", B(0xe8, 0, 0, 0, 0), &s, W({ AE_ACC_S, 0x7ffdfff0, 8 }));
	check("ret pops", B(0xc3), &s, W({ AE_ACC_L, 0x7ffdfff0, 8 }));
	ok(s.v[AE_DF_RSP] == 0x7ffdfff8, "ret moves rsp back");
	/* mov %rsp,%rbp; sub $0x20,%rsp; and $-16,%rsp; leave: L at rbp */
	check("mov %rsp,%rbp", B(0x48, 0x89, 0xe5), &s, NULL, 0);
	check("sub $0x20,%rsp", B(0x48, 0x83, 0xec, 0x20), &s, NULL, 0);
	check("and $-16,%rsp", B(0x48, 0x83, 0xe4, 0xf0), &s, NULL, 0);
	ok(s.v[AE_DF_RSP] == 0x7ffdffd0, "rsp arithmetic is followed");
	check("leave loads at rbp", B(0xc9), &s, W({ AE_ACC_L, 0x7ffdfff8, 8 }));
	ok(s.v[AE_DF_RSP] == 0x7ffe0000 && !(s.known & (1u << AE_DF_RBP)),
	   "leave: rsp = rbp + 8, rbp loaded");
	/* enter $0x20,$0: S at rsp-8, rbp = rsp-8, rsp = rbp-0x20 (capstone
	 * lists none of its writes); a nesting level is not followed */
	check("enter $0x20,$0 pushes rbp", B(0xc8, 0x20, 0x00, 0x00), &s,
	      W({ AE_ACC_S, 0x7ffdfff8, 8 }));
	ok(s.v[AE_DF_RBP] == 0x7ffdfff8 && (s.known & (1u << AE_DF_RBP)) &&
	   s.v[AE_DF_RSP] == 0x7ffdffd8, "enter: rbp = rsp - 8, rsp = rbp - 0x20");
	ok(dec(B(0xc8, 0x20, 0x00, 0x00), 0x401000, &op) == 0 &&
	   (op.writes & ((1u << AE_DF_RSP) | (1u << AE_DF_RBP))) ==
	   ((1u << AE_DF_RSP) | (1u << AE_DF_RBP)), "enter writes rsp and rbp");
	ok(dec(B(0xc8, 0x20, 0x00, 0x01), 0x401000, &op) < 0, "enter $0x20,$1 is refused");
	check("leave after enter", B(0xc9), &s, W({ AE_ACC_L, 0x7ffdfff8, 8 }));
	ok(s.v[AE_DF_RSP] == 0x7ffe0000, "leave after enter: rsp back");
	/* 32-bit writes zero-extend; xor reg,reg is known zero */
	ae_df_set(&s, 0, 0xffffffff00000005ull, 8);
	check("add $3,%eax", B(0x83, 0xc0, 0x03), &s, NULL, 0);
	ok(s.v[0] == 8, "32-bit add zero-extends");
	ae_df_set(&s, 2, 0, 8);
	s.known &= ~(1u << 2);
	check("xor %edx,%edx", B(0x31, 0xd2), &s, NULL, 0);
	ok((s.known & 4) && s.v[2] == 0, "xor of a register with itself is known");
	/* movslq %eax,%rcx; shl $3,%rcx; imul $24,%rcx,%rsi */
	ae_df_set(&s, 0, 0xfffffffe, 8);
	check("movslq", B(0x48, 0x63, 0xc8), &s, NULL, 0);
	ok(s.v[1] == (uint64_t)-2, "movslq sign-extends");
	check("imul $24", B(0x48, 0x6b, 0xf1, 0x18), &s, NULL, 0);
	ok(s.v[6] == (uint64_t)-48, "imul by a constant");
	/* bt %ecx,%esi: VEX stores esi at rsp-288 and loads the bit's byte */
	ae_df_set(&s, 1, 13, 8);
	check("bt reg,reg goes through rsp-288", B(0x0f, 0xa3, 0xce), &s,
	      W({ AE_ACC_S, 0x7ffe0000 - 288, 4 }, { AE_ACC_L, 0x7ffe0000 - 288 + 1, 1 }));
	/* xchg %rax,(%rbx): implicitly locked: L, M */
	check("xchg with memory: L then M", B(0x48, 0x87, 0x03), &s,
	      W({ AE_ACC_L, 0x1000, 8 }, { AE_ACC_M, 0x1000, 8 }));
	/* lock cmpxchg %rcx,(%rbx): M only */
	check("lock cmpxchg: M", B(0xf0, 0x48, 0x0f, 0xb1, 0x0b), &s, W({ AE_ACC_M, 0x1000, 8 }));
	/* nopw %cs:0(%rax,%rax): no access even with rax unknown */
	s.known &= ~1u;
	check("padding nop touches nothing", B(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0), &s,
	      NULL, 0);
	/* %gs is refused */
	ok(dec(B(0x65, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0), 0x401000, &op) < 0,
	   "a %gs operand is refused");
	/* affine inputs: add $8,%rdi needs rdi; a load needs memory */
	ok(dec(B(0x48, 0x83, 0xc7, 0x08), 0x401000, &op) == 0 &&
	   ae_df_inputs(&op, 7) == 1u << 7, "add $8,%rdi follows rdi");
	ok(dec(B(0x48, 0x8b, 0x07), 0x401000, &op) == 0 &&
	   ae_df_inputs(&op, 0) == AE_DF_NOT_AFFINE, "a load is not affine");
	/* what capstone's lists leave out or read wrong */
	memset(&s, 0, sizeof(s));
	s.known = 0xf;
	ok(dec(B(0xf0, 0x0f, 0xb1, 0x0b), 0x401000, &op) == 0 && (op.writes & 1),
	   "lock cmpxchg %ecx,(%rbx) may write %rax (a failed compare loads it)");
	ae_df_step(&op, 0x401000, &s);
	ok(!(s.known & 1), "so %rax is unknown after it");
	s.known = 0xf;
	s.v[0] = 0x0304;
	ok(dec(B(0x00, 0xe0), 0x401000, &op) == 0 && ae_df_inputs(&op, 0) == AE_DF_NOT_AFFINE,
	   "add %ah,%al: a high byte as source is not followed");
	ae_df_step(&op, 0x401000, &s);
	ok(!(s.known & 1), "so %rax is unknown after it (not 0x0308)");
	s.known = 0xf;
	s.v[0] = 0x0304;
	dec(B(0x30, 0xe0), 0x401000, &op);	/* xor %ah,%al: not the same register */
	ae_df_step(&op, 0x401000, &s);
	ok(!(s.known & 1), "xor %ah,%al is no xor of a register with itself");
	s.known = 0xf;
	s.v[0] = 5;
	dec(B(0xc1, 0xe0, 0x00), 0x401000, &op);	/* shl $0,%eax */
	ae_df_step(&op, 0x401000, &s);
	ok((s.known & 1) && s.v[0] == 5, "shl $0,%eax leaves it (no shift by one)");
	dec(B(0xd1, 0xe0), 0x401000, &op);		/* shl %eax */
	ae_df_step(&op, 0x401000, &s);
	ok((s.known & 1) && s.v[0] == 10, "shl %eax shifts by one");
	vsib_checks();
	cs_close(&h);
	printf("1..%d\n", nt);
	return failed;
}
