// SPDX-License-Identifier: MIT
/*
 * dataflow_flags - the status flags data tracing computes (dataflow/
 * dataflow.c: ae_df_step, ae_df_taken), against the CPU this test runs
 * on: each instruction runs natively on edge-case operands and its
 * RFLAGS is compared with what the transfer functions say; each jcc's
 * decision on every combination of the five flags with the native
 * jump's. The instruction bytes decoded are the very ones executed.
 * TAP output.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <aetrace/dataflow.h>

#define STATUS	(AE_DF_CF | AE_DF_PF | AE_DF_ZF | AE_DF_SF | AE_DF_OF)

/*
 * T(name, pre, insn): ae_t_name(a, b) runs `pre; insn` with %rax = a and
 * %rcx = b and returns RFLAGS after it; ae_i_name labels insn.
 */
#define T(name, pre, insn) \
	".globl ae_t_" #name "\n ae_t_" #name ":\n mov %rdi,%rax\n mov %rsi,%rcx\n" \
	pre "\n .globl ae_i_" #name "\n ae_i_" #name ":\n" insn "\n pushfq\n pop %rax\n ret\n"

#define INSNS(X) \
	X(cmp64, "", "cmp %rcx,%rax") X(cmp32, "", "cmp %ecx,%eax") \
	X(cmp16, "", "cmp %cx,%ax") X(cmp8, "", "cmp %cl,%al") \
	X(cmpi8, "", "cmp $0x7f,%al") X(cmpim, "", "cmp $-5,%rax") \
	X(cmpi32, "", "cmp $0x12345678,%eax") X(cmpself, "", "cmp %eax,%eax") \
	X(sub64, "", "sub %rcx,%rax") X(sub32, "", "sub %ecx,%eax") \
	X(sub8, "", "sub %cl,%al") X(subi, "", "sub $1,%eax") \
	X(subself, "", "sub %rax,%rax") \
	X(add64, "", "add %rcx,%rax") X(add32, "", "add %ecx,%eax") \
	X(add16, "", "add %cx,%ax") X(add8, "", "add %cl,%al") \
	X(addi, "", "add $1,%rax") \
	X(and64, "", "and %rcx,%rax") X(andi, "", "and $0xff,%eax") \
	X(or32, "", "or %ecx,%eax") X(xor64, "", "xor %rcx,%rax") \
	X(xorself, "", "xor %eax,%eax") \
	X(test64, "", "test %rcx,%rax") X(test32, "", "test %ecx,%eax") \
	X(test8, "", "test %cl,%al") X(testi, "", "test $0x80,%al") \
	X(testself, "", "test %eax,%eax") \
	X(inc32c, "stc", "inc %eax") X(inc64n, "clc", "inc %rax") \
	X(dec32c, "stc", "dec %eax") X(dec8n, "clc", "dec %al") \
	X(neg64, "", "neg %rax") X(neg32, "", "neg %eax") X(neg8, "", "neg %cl")

#define ASM(name, pre, insn) T(name, pre, insn)
__asm__(".text\n" INSNS(ASM));

#define DECL(name, pre, insn) \
	uint64_t ae_t_##name(uint64_t a, uint64_t b); extern const uint8_t ae_i_##name[];
INSNS(DECL)

struct insn {
	const char *name;
	uint64_t (*run)(uint64_t a, uint64_t b);
	const uint8_t *bytes;
	int carry_in;		/* stc (1) or clc (0) before it, -1 neither */
};

#define ENTRY(name, pre, insn) \
	{ insn, ae_t_##name, ae_i_##name, !strcmp(pre, "stc") ? 1 : !strcmp(pre, "clc") ? 0 : -1 },

/* C(n): ae_c_n(flags) is 1 when jcc n (tttn) jumps with RFLAGS = flags */
#define C(n) \
	".globl ae_c_" #n "\n ae_c_" #n ":\n push %rdi\n popfq\n .globl ae_j_" #n "\n ae_j_" #n ":\n" \
	" .byte 0x70 + " #n ", 3\n xor %eax,%eax\n ret\n mov $1,%eax\n ret\n"
#define CONDS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
	X(14) X(15)
__asm__(".text\n" CONDS(C));
#define CDECL(n) int ae_c_##n(uint64_t flags); extern const uint8_t ae_j_##n[];
CONDS(CDECL)
#define CENTRY(n) { ae_c_##n, ae_j_##n },

static csh h;
static int nt, failed;

static void ok(int c, const char *name)
{
	printf("%sok %d - %s\n", c ? "" : "not ", ++nt, name);
	failed |= !c;
}

static int dec(const uint8_t *b, struct ae_df_op *op)
{
	cs_insn *ci = cs_malloc(h);
	const uint8_t *p = b;
	size_t n = 15;
	uint64_t a = 0x401000;
	int r = -1;

	if (cs_disasm_iter(h, &p, &n, &a, ci))
		r = ae_df_decode(h, ci, op);
	cs_free(ci, 1);
	return r;
}

static const uint64_t vals[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
	0xffffffff, 0x100000000, 0x7fffffffffffffff, 0x8000000000000000, ~0ull, ~0ull - 1,
	0x123456789abcdef0, 0xfedcba9876543210, 0x12345678, 0x5a5a5a5a5a5a5a5a,
};
#define NV (sizeof(vals) / sizeof(vals[0]))

/* Every operand pair: the flags ae_df_step computes equal the CPU's. */
static void check_insn(const struct insn *t)
{
	struct ae_df_op op;
	int bad = 0;
	char name[96];

	if (dec(t->bytes, &op) || op.fl != AE_FL_SET) {
		snprintf(name, sizeof(name), "%s: decoded as setting the flags", t->name);
		ok(0, name);
		return;
	}
	for (size_t i = 0; i < NV && !bad; i++)
		for (size_t j = 0; j < NV && !bad; j++) {
			struct ae_df_state s;
			uint64_t native = t->run(vals[i], vals[j]) & STATUS;

			memset(&s, 0, sizeof(s));
			s.v[0] = vals[i];
			s.v[1] = vals[j];
			s.known = 3;
			if (t->carry_in >= 0) {
				s.fl = t->carry_in ? AE_DF_CF : 0;
				s.known |= AE_DF_K_CARRY;
			}
			ae_df_step(&op, 0x401000, &s);
			if ((s.known & (AE_DF_K_FLAGS | AE_DF_K_CARRY)) !=
			    (AE_DF_K_FLAGS | AE_DF_K_CARRY) || (s.fl & STATUS) != native) {
				printf("# %s a=%#llx b=%#llx: cpu %#llx, computed %#x (known %#x)\n",
				       t->name, (unsigned long long)vals[i],
				       (unsigned long long)vals[j], (unsigned long long)native,
				       s.fl, s.known);
				bad = 1;
			}
		}
	snprintf(name, sizeof(name), "%s: flags equal the CPU's on %zu operand pairs", t->name,
		 NV * NV);
	ok(!bad, name);
}

int main(void)
{
	static const struct insn insns[] = { INSNS(ENTRY) };
	static const struct {
		int (*run)(uint64_t flags);
		const uint8_t *bytes;
	} conds[16] = { CONDS(CENTRY) };
	struct ae_df_op op, mov, shl, jne;
	struct ae_df_state s;
	int bad = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK ||
	    cs_option(h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		printf("not ok 1 - capstone\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++)
		check_insn(&insns[i]);

	/* every condition on all 32 combinations of CF PF ZF SF OF */
	for (int n = 0; n < 16; n++) {
		if (dec(conds[n].bytes, &op) || !ae_df_cond_needs(&op)) {
			printf("# jcc %d not decoded as a flags test\n", n);
			bad = 1;
			continue;
		}
		for (int m = 0; m < 32; m++) {
			static const uint16_t bits[5] = { AE_DF_CF, AE_DF_PF, AE_DF_ZF, AE_DF_SF,
							  AE_DF_OF };
			uint64_t f = 2;	/* bit 1 is always set */

			for (int b = 0; b < 5; b++)
				if (m >> b & 1)
					f |= bits[b];
			memset(&s, 0, sizeof(s));
			s.fl = f;
			s.known = AE_DF_K_FLAGS | AE_DF_K_CARRY;
			if (ae_df_taken(&op, &s) != conds[n].run(f)) {
				printf("# jcc %d flags %#llx: cpu %d, computed %d\n", n,
				       (unsigned long long)f, conds[n].run(f), ae_df_taken(&op, &s));
				bad = 1;
			}
		}
	}
	ok(!bad, "each of the 16 conditions decides as the CPU on all 32 flag combinations");

	/* what keeps the flags known, what loses them */
	dec(conds[5].bytes, &jne);
	dec((const uint8_t[]){ 0x48, 0x89, 0xc2, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &mov);	/* mov %rax,%rdx */
	dec((const uint8_t[]){ 0x48, 0xc1, 0xe0, 0x03, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &shl);	/* shl $3,%rax */
	dec(insns[0].bytes, &op);				/* cmp %rcx,%rax */
	memset(&s, 0, sizeof(s));
	s.v[0] = 5;
	s.v[1] = 5;
	s.known = 3;
	ae_df_step(&op, 0, &s);
	ae_df_step(&mov, 0, &s);
	ok(ae_df_taken(&jne, &s) == 0, "a mov between cmp and jne keeps the flags");
	ae_df_step(&shl, 0, &s);
	ok(ae_df_taken(&jne, &s) == -1, "a shift loses them (its count may leave them)");
	memset(&s, 0, sizeof(s));
	s.known = 1;			/* %rcx unknown */
	ae_df_step(&op, 0, &s);
	ok(ae_df_taken(&jne, &s) == -1, "cmp with an unknown operand: unknown");
	dec(insns[28].bytes, &op);	/* inc %eax: CF stays */
	memset(&s, 0, sizeof(s));
	s.known = 1;
	ae_df_step(&op, 0, &s);
	ok((s.known & AE_DF_K_FLAGS) && !(s.known & AE_DF_K_CARRY),
	   "inc leaves CF unknown when it was");
	dec((const uint8_t[]){ 0x66, 0x0f, 0x2e, 0xc1, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &op);	/* ucomisd %xmm1,%xmm0 */
	ok(op.fl == AE_FL_LOST, "ucomisd sets the flags in a way not followed");
	dec((const uint8_t[]){ 0xf2, 0x0f, 0x58, 0xc1, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &op);	/* addsd %xmm1,%xmm0 */
	ok(op.fl == AE_FL_KEEP, "addsd leaves them");
	dec((const uint8_t[]){ 0x48, 0x39, 0x08, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &op);	/* cmp %rcx,(%rax) */
	ok(op.fl == AE_FL_LOST, "cmp with memory: the operand is not known");
	dec((const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xb8, 0xc1, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &op);	/* popcnt %rcx,%rax */
	ok(op.fl == AE_FL_LOST, "popcnt sets them (it is no pop)");
	dec((const uint8_t[]){ 0x9d, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
			       0x90, 0x90, 0x90, 0x90 }, &op);	/* popfq */
	ok(op.fl == AE_FL_LOST, "popf sets them");
	printf("1..%d\n", nt);
	cs_close(&h);
	return failed;
}
