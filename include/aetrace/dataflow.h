/* SPDX-License-Identifier: MIT */
/*
 * dataflow.h - the address arithmetic both sides of data tracing share
 * (dataflow/dataflow.c): aecc decides statically which registers the
 * regenerator will know and records the others; aetrace emulates the
 * same transfer functions on values. One table, so they cannot disagree.
 *
 * Registers are numbered as in an x86-64 ModRM: 0 rax, 1 rcx, 2 rdx,
 * 3 rbx, 4 rsp, 5 rbp, 6 rsi, 7 rdi, 8-15 r8-r15.
 */
#ifndef AETRACE_DATAFLOW_H
#define AETRACE_DATAFLOW_H

#include <capstone/capstone.h>
#include <stdint.h>

#define AE_DF_RSP	4
#define AE_DF_RBP	5
/* rbx, rsp, rbp, r12-r15: kept across a call (SysV ABI) */
#define AE_DF_CALLEE_SAVED	((1u << 3) | (1u << 4) | (1u << 5) | (0xfu << 12))

enum ae_df_kind {
	AE_DF_OTHER,	/* written registers become unknown */
	AE_DF_NOP,	/* no register, no memory (nop, lea-free hints) */
	AE_DF_MOV, AE_DF_MOVZX, AE_DF_MOVSX, AE_DF_LEA,
	AE_DF_ADD, AE_DF_SUB, AE_DF_AND, AE_DF_OR, AE_DF_XOR,
	AE_DF_SHL, AE_DF_SHR, AE_DF_SAR, AE_DF_IMUL,
	AE_DF_INC, AE_DF_DEC, AE_DF_NEG, AE_DF_NOT, AE_DF_XCHG,
	AE_DF_CDQE, AE_DF_CQO,
	AE_DF_PUSH, AE_DF_POP, AE_DF_CALL, AE_DF_RET, AE_DF_LEAVE,
	AE_DF_CLD, AE_DF_STD, AE_DF_STR, AE_DF_SYSCALL,
	AE_DF_BTREG,	/* bt* %reg, %reg: VEX goes through rsp-288 (lackey sees it) */
	AE_DF_BTMEM,	/* bt* %reg, mem: the byte at mem + (bit >> 3) */
	AE_DF_ENTER,	/* enter $imm, $0: push %rbp, %rbp = %rsp, %rsp -= imm */
	AE_DF_XLAT,	/* xlatb: %al = the byte at %rbx + %al (capstone: no operand) */
};

/* string instructions (AE_DF_STR) */
enum ae_df_str { AE_STR_MOVS = 1, AE_STR_STOS, AE_STR_LODS, AE_STR_CMPS, AE_STR_SCAS };

/* access kinds, as lackey names them */
enum ae_df_acc { AE_ACC_L = 1, AE_ACC_S = 2, AE_ACC_M = 3 };

/* An explicit memory operand. */
struct ae_df_mem {
	int8_t base, index;	/* register numbers, -1 none */
	uint8_t scale;
	uint8_t rip;		/* rip-relative: disp is from the next insn */
	uint8_t fs;		/* %fs segment */
	uint8_t acc;		/* enum ae_df_acc; 0: no access (lea, nop) */
	uint16_t size;		/* bytes accessed (a gather: one element's) */
	int64_t disp;
	/* A vector gather's VSIB operand (index is -1): element i of
	 * vector register vidx, sign-extended, is an index, and the element
	 * is loaded when mask element i (vector register vmask's sign bits,
	 * or opmask k<vmask>'s bit i) says so. The registers' bytes come from
	 * an AE_VAL_VSIB record (ae_df_vsib_accesses()). */
	uint8_t vsib;		/* 0: none; else the index register's bytes */
	uint8_t vidx;		/* index register number (xmm/ymm/zmm 0-31) */
	uint8_t vidx_w;		/* index element bytes: 4 or 8 */
	uint8_t vnel;		/* elements the gather may load */
	uint8_t vmask;		/* mask register number (vector, or k) */
	uint8_t vmask_k;	/* the mask is an opmask (AVX-512) */
	uint8_t vmask_w;	/* the mask register's bytes (a vector mask: the
				 * destination's; an opmask: recorded as 2) */
};

/* One instruction, decoded once for both sides. */
struct ae_df_op {
	uint8_t kind;		/* enum ae_df_kind */
	uint8_t len;
	int8_t dst;		/* destination register, -1 none */
	uint8_t dw;		/* its width in bytes (8, 4, 2, 1; 0: high byte) */
	int8_t src;		/* source register, -1: immediate or memory */
	uint8_t sw;		/* source width */
	uint8_t has_mem;	/* mem is an operand */
	uint8_t str;		/* enum ae_df_str */
	uint8_t ssize;		/* string element size */
	uint8_t rep;		/* rep/repe/repne prefix */
	uint8_t mem_first;	/* call/push from memory: load before the push */
	uint8_t nops;		/* explicit operands */
	uint8_t modify;		/* bts/btr/btc */
	uint8_t locked;		/* VEX loads, then compare-and-swaps: L, then M */
	uint8_t fl;		/* enum ae_df_fl: what it does to the status flags */
	uint8_t fl_kind;	/* AE_FL_SET: the arithmetic (cmp: SUB, test: AND) */
	uint8_t cc;		/* a jcc on the flags: its condition (tttn) + 1 */
	uint8_t unfollowed;	/* data tracing cannot follow its accesses (only
				 * `writes` and `len` hold: an instruction trace
				 * still steps %rsp over it) */
	uint16_t retimm;	/* ret $n */
	int64_t imm;
	uint32_t writes;	/* registers this instruction may change */
	uint32_t uses;		/* registers its addresses are computed from */
	struct ae_df_mem mem;
};

/* what an instruction does to the status flags (CF PF ZF SF OF) */
enum ae_df_fl {
	AE_FL_KEEP,	/* leaves them alone */
	AE_FL_LOST,	/* sets them in a way the transfer functions do not follow */
	AE_FL_SET,	/* sets them from fl_kind's result on its register operands */
};

/* capstone's eflags bits that say an instruction writes status flag f
 * (CF, PF, AF, ZF, SF, OF), in whatever way */
#define AE_DF_FL_W(f)	(X86_EFLAGS_MODIFY_##f | X86_EFLAGS_RESET_##f | \
			 X86_EFLAGS_SET_##f | X86_EFLAGS_UNDEFINED_##f)

/* the status flags in ae_df_state.fl, at their RFLAGS bits */
#define AE_DF_CF	0x001u
#define AE_DF_PF	0x004u
#define AE_DF_ZF	0x040u
#define AE_DF_SF	0x080u
#define AE_DF_OF	0x800u
/* ae_df_state.known bits past the registers: fl is known */
#define AE_DF_K_FLAGS	(1u << 17)	/* PF, ZF, SF, OF */
#define AE_DF_K_CARRY	(1u << 18)	/* CF (inc and dec leave it) */

/* What the regenerator (values) or aecc (known bits only) knows. */
struct ae_df_state {
	uint64_t v[16];
	uint32_t known;		/* bit r: v[r] is the register's value;
				 * AE_DF_K_*: fl's flags are known */
	uint16_t fl;		/* status flags (AE_DF_CF...) */
	uint64_t fs;		/* %fs base */
	uint8_t fs_known;
	uint8_t df;		/* direction flag (1: std) */
	uint8_t df_known;
};

/* An access one instruction makes. */
struct ae_df_access {
	uint8_t acc;		/* enum ae_df_acc */
	uint16_t size;
	uint64_t addr;
};

/* What ae_df_decode() refuses or leaves unfollowed, for the messages of
 * aecc and the regenerator. */
#define AE_DF_UNFOLLOWED_KINDS \
	"%gs, two memory operands, a scatter, a 16-bit pushf or popf, a state save or restore, a masked store"

/*
 * Decode capstone's instruction ci (detail on, handle h) into op.
 * Returns 0, or -1 when it uses %gs or another form data tracing cannot
 * follow (the caller names the instruction); 0 with op->unfollowed for
 * an instruction whose accesses are not followed but which touches no
 * general register but those in op->writes (a scatter, a state save).
 */
int ae_df_decode(csh h, const cs_insn *ci, struct ae_df_op *op);

/*
 * The accesses of op at address pc in state s (one iteration of a string
 * instruction), in lackey's order, into out[] (room for 4). Returns how
 * many, or -1 when an address needs a register s does not know
 * (*missing = that register, 16 for %fs base, 17 for the direction flag;
 * -1 for a gather, whose addresses ae_df_vsib_accesses() computes, and
 * for an unfollowed instruction).
 */
int ae_df_accesses(const struct ae_df_op *op, uint64_t pc, const struct ae_df_state *s,
		   struct ae_df_access *out, int *missing);

/* Most elements one gather loads (a zmm of dwords). */
#define AE_DF_VSIB_MAX	16

/* Bytes of op's AE_VAL_VSIB record: its index register, then its mask
 * register (a vector mask whole, an opmask's low 16 bits). 0: no VSIB. */
static inline int ae_df_vsib_bytes(const struct ae_df_op *op)
{
	return op->has_mem && op->mem.vsib ? op->mem.vsib + op->mem.vmask_w : 0;
}

/*
 * The loads of gather op in state s, in element order, into out[] (room
 * for AE_DF_VSIB_MAX), from rec, the ae_df_vsib_bytes(op) bytes of its
 * AE_VAL_VSIB record. vex: also valgrind VEX's load of each masked-off
 * element, from %rsp (lackey logs it). Returns how many, or -1 when a
 * register is not known (*missing = that register).
 */
int ae_df_vsib_accesses(const struct ae_df_op *op, uint64_t pc, const struct ae_df_state *s,
			const uint8_t *rec, int vex, struct ae_df_access *out, int *missing);

/*
 * Apply op to s (one iteration of a string instruction; a call only
 * pushes, the regenerator enters the callee itself). Returns nothing.
 */
void ae_df_step(const struct ae_df_op *op, uint64_t pc, struct ae_df_state *s);

#define AE_DF_NOT_AFFINE	0xffffffffu
/*
 * The registers that make register r known after op when they are known
 * before it (constant arithmetic on them), or AE_DF_NOT_AFFINE when r
 * comes from memory or from arithmetic the transfer functions do not
 * follow. Returns the mask.
 */
uint32_t ae_df_inputs(const struct ae_df_op *op, int r);

/*
 * The known bits (AE_DF_K_*) a conditional jump op decides on, or 0 when
 * op is not one that tests the status flags (jrcxz, loop: not followed).
 * Returns the mask.
 */
uint32_t ae_df_cond_needs(const struct ae_df_op *op);

/*
 * Whether conditional jump op is taken in state s: 1 taken, 0 not, -1
 * when s does not know the flags it tests (or op tests none).
 */
int ae_df_taken(const struct ae_df_op *op, const struct ae_df_state *s);

/*
 * Registers instruction `id` (capstone's) writes that capstone's access
 * lists leave out: cmpxchg's accumulator, xlat's %al, enter's %rsp and
 * %rbp. Returns the mask.
 */
uint32_t ae_df_implicit_writes(unsigned int id);

/* Set register r of s to v with width w bytes (4 zero-extends). */
void ae_df_set(struct ae_df_state *s, int r, uint64_t v, int w);

#endif /* AETRACE_DATAFLOW_H */
