/* SPDX-License-Identifier: MIT */
/*
 * schema.h - what `aecc` tells the regenerator about each object
 * (docs/FORMAT.md, "Schema"). Written by instrument/, read by analysis/.
 *
 * Each instrumented object carries three non-allocated sections that the
 * linker concatenates in link order:
 *   .ae_schema  one struct ae_schema_obj record per object;
 *   .ae_imap    per object: u32 objid, u32 ninsn, then u32 address of every
 *               original instruction k (in prog: its instrumented address);
 *   .ae_orig    the uninstrumented twin object (used by aecc at link time).
 * The twin prog.orig carries .ae_imap too, with the same objects in the
 * same order, so entry i of both maps names the same instruction.
 * All integers are little endian.
 */
#ifndef AETRACE_SCHEMA_H
#define AETRACE_SCHEMA_H

#include <stdint.h>

#define AE_SCHEMA_MAGIC		0x43534541u	/* "AESC" */
#define AE_SCHEMA_VERSION	1
/* version 2: an object that carries AE_EV_EXPAND or AE_EV_ARGS_AT_CALL
 * events (older readers would walk such a routine's body without its
 * witnesses) */
#define AE_SCHEMA_VERSION_EXPAND	2
/* version 4: an object that carries AE_VAL_REG_VC or AE_VAL_REG_VC_SEXT
 * records (and anything a version 2 object may). Version 3 had another
 * value-cache coding (no 3-byte form, no 4-byte records): not read. */
#define AE_SCHEMA_VERSION_VC		4
/* version 5: an object that carries AE_VAL_REG_VC_LOW records */
#define AE_SCHEMA_VERSION_VC_LOW	5
/* version 6: an object that carries AE_VC_BY_ADDR records */
#define AE_SCHEMA_VERSION_VC_ADDR	6
/* version 7: an object that carries AE_VAL_JTIDX_KNOWN or
 * AE_VAL_JTLOAD_KNOWN (older readers would take the next bytes for the
 * index) */
#define AE_SCHEMA_VERSION_JT_KNOWN	7
/* version 8: an object that carries AE_EV_PRED_KNOWN (older readers
 * would find a conditional branch without its witness set) */
#define AE_SCHEMA_VERSION_PRED_KNOWN	8
/* version 9: an object that carries AE_EV_PRED with AE_PRED_VC_OTHER
 * (older readers would take a value-cache record for a witness) */
#define AE_SCHEMA_VERSION_PRED_VC	9
/* version 10: an object that carries AE_VAL_VSIB records (vector
 * gathers, which older versions of aecc refused) */
#define AE_SCHEMA_VERSION_VSIB		10
/* version 11: an object that carries AE_VC_GROUP records (older readers
 * would take a group's first byte for its first record's) */
#define AE_SCHEMA_VERSION_VC_GROUP	11
/* the newest version this header describes */
#define AE_SCHEMA_VERSION_MAX		AE_SCHEMA_VERSION_VC_GROUP

struct ae_schema_obj {
	uint32_t magic;
	uint32_t version;
	uint32_t size;		/* bytes of this record, header included */
	uint32_t objid;		/* also the first word of the object's imap */
	uint32_t ninsn;		/* original instructions in the object */
	uint32_t nev;		/* struct ae_event entries that follow */
	uint32_t npool;		/* u32 witness-set pool words after the events */
	uint32_t flags;		/* AE_SCHEMA_F_* */
};

/* the object was built with -fae-data: it records what data addresses need */
#define AE_SCHEMA_F_DATA	1u
/* and with the value cache (not -fno-ae-vcache): its plain register
 * records are where the cache could not or should not code (a hint for
 * the value-cache profile only; readers need not know it) */
#define AE_SCHEMA_F_VCACHE	2u

enum ae_event_kind {
	/* conditional branch k: a = pool index, b = count of witness values
	 * whose presence as the next witness means the side in `flag`
	 * (AE_PRED_TAKEN set: taken, else fall through) was taken; any other
	 * value, the other. With AE_PRED_VC_OTHER (-fae-data), the other
	 * side may write no witness and begin with a value-cache record:
	 * every pool value's first byte is a witness byte (ae_is_wit_byte),
	 * and a next byte that is not one means the other side. */
	AE_EV_PRED		= 1,
	AE_EV_WIT_BEFORE	= 2,	/* witness a, written before k executes */
	AE_EV_WIT_TAKEN		= 3,	/* witness a, on k's taken edge */
	AE_EV_WIT_FALL		= 4,	/* witness a, on k's fall-through edge */
	AE_EV_VAL		= 5,	/* value of kind `flag`, width bytes, before k */
	AE_EV_VAL_AFTER		= 6,	/* value of kind `flag`, width bytes, after k */
	AE_EV_SHADOW_POP	= 7,	/* k pops a return address into memory */
	AE_EV_TARGET_LOADED	= 8,	/* indirect jump k goes where the last
					 * AE_VAL_JTLOAD said: no bytes here */
	/* k is the entry of library routine `a` (enum ae_memfn), traced by
	 * its arguments only (the AE_VAL_REG records before k); its body has
	 * no events and the regenerator expands it. width: bytes of its
	 * result record (%rax before every ret; a compare's stop record at
	 * k, past the argument records), 0 if none. (-fae-data) */
	AE_EV_EXPAND		= 9,
	/* direct call k enters routine `a` (enum ae_memfn) past its
	 * argument records: the caller's registers are the arguments (its
	 * own records made them known), so the entry writes nothing */
	AE_EV_ARGS_AT_CALL	= 10,
	/* conditional branch k tests status flags that arithmetic on
	 * registers the regenerator knows set (dataflow.h ae_df_taken): it
	 * computes the branch, and no witness set is read here; witnesses
	 * on k's edges are still read (-fae-data) */
	AE_EV_PRED_KNOWN	= 11,
};

/* Routines traced by their arguments (AE_EV_EXPAND), musl's C versions. */
enum ae_memfn {
	AE_MEMFN_MEMCPY		= 1,	/* rdi, rsi, rdx */
	AE_MEMFN_MEMMOVE	= 2,	/* rdi, rsi, rdx; may call memcpy */
	AE_MEMFN_MEMSET		= 3,	/* rdi, rdx (the fill byte is data) */
	AE_MEMFN_STRLEN		= 4,	/* rdi; result: the length */
	AE_MEMFN_STPCPY		= 5,	/* rdi, rsi; result: the end of dest */
	AE_MEMFN_MEMCHR		= 6,	/* rdi, rsi, rdx; result: the byte or 0 */
	/* compares: the record is their stop (AE_MEMFN_STOP_*), written at
	 * the entry, where the instrumentation scans both areas */
	AE_MEMFN_MEMCMP		= 7,	/* rdi, rsi, rdx */
	AE_MEMFN_STRCMP		= 8,	/* rdi, rsi */
	AE_MEMFN_STRNCMP	= 9,	/* rdi, rsi, rdx */
	AE_MEMFN_MAX		= 9,
};

/*
 * A compare's stop record (8 bytes): the index k where it stops (the
 * first pair of bytes that differ, or for strcmp and strncmp the first
 * terminator; memcmp: n when none differ; strncmp: at most n - 1) in
 * bits 0-47, and the two bytes at k, of the first and the second area,
 * in bits 48-55 and 56-63 (0 where the routine reads none: memcmp with
 * k = n, strncmp with n = 0).
 */
#define AE_MEMFN_STOP_K(v)	((v) & ((1ull << 48) - 1))
#define AE_MEMFN_STOP_L(v)	((uint8_t)((v) >> 48))
#define AE_MEMFN_STOP_R(v)	((uint8_t)((v) >> 56))

/* Is routine `kind` a compare (its record written at the entry)? */
static inline int ae_memfn_is_cmp(int kind)
{
	return kind == AE_MEMFN_MEMCMP || kind == AE_MEMFN_STRCMP ||
	       kind == AE_MEMFN_STRNCMP;
}

/* The registers (bit r: dataflow.h numbering) routine `kind` records at
 * its entry, 0 for no such routine; aecc and aetrace share this table. */
static inline uint32_t ae_memfn_args(int kind)
{
	switch (kind) {
	case AE_MEMFN_MEMCPY:
	case AE_MEMFN_MEMMOVE:
	case AE_MEMFN_MEMCHR:
	case AE_MEMFN_MEMCMP:
	case AE_MEMFN_STRNCMP:
		return (1u << 7) | (1u << 6) | (1u << 2);	/* rdi, rsi, rdx */
	case AE_MEMFN_STPCPY:
	case AE_MEMFN_STRCMP:
		return (1u << 7) | (1u << 6);			/* rdi, rsi */
	case AE_MEMFN_MEMSET:
		return (1u << 7) | (1u << 2);			/* rdi, rdx */
	case AE_MEMFN_STRLEN:
		return 1u << 7;					/* rdi */
	default:
		return 0;
	}
}

/* Bytes of the result record routine `kind` writes before every ret
 * (a compare: its stop record, at the entry). */
static inline int ae_memfn_result_width(int kind)
{
	return kind == AE_MEMFN_STRLEN || kind == AE_MEMFN_STPCPY ||
	       kind == AE_MEMFN_MEMCHR || ae_memfn_is_cmp(kind) ? 8 : 0;
}

enum ae_value_kind {
	AE_VAL_TARGET		= 1,	/* indirect jump/call target (prog address) */
	AE_VAL_JTIDX		= 2,	/* jump-table index register */
	AE_VAL_SETJMP_SP	= 3,	/* %rsp at setjmp entry */
	AE_VAL_LONGJMP_SP	= 4,	/* %rsp restored by longjmp */
	AE_VAL_REPCNT		= 5,	/* %rcx before a rep instruction */
	AE_VAL_REPCNT_AFTER	= 6,	/* %rcx after a repe/repne instruction */
	AE_VAL_RETADDR		= 7,	/* return address k pushes from memory */
	AE_VAL_JTLOAD		= 8,	/* index of `mov TABLE(,%i,8),%r` whose
					 * %r a later `jmp *%r` uses */
	AE_VAL_REG		= 9,	/* general register a (dataflow.h
					 * numbering), for data addresses */
	AE_VAL_FSBASE		= 10,	/* %fs base (musl's %fs:0 self pointer) */
	AE_VAL_REG_SEXT		= 11,	/* register a after a sign-extending load
					 * (movsx/movslq): its low `width` bytes,
					 * sign-extended to 64 bits (VAL_AFTER) */
	/* register a, coded against slot b of the thread's value cache
	 * (AE_VC_*): 1, 2, 3 or 1 + width bytes; width 8, or 4 after a
	 * 32-bit write (the register is its low half, zero-extended) */
	AE_VAL_REG_VC		= 12,
	/* as AE_VAL_REG_VC, width 4, after a sign-extending load of 4 bytes
	 * to 64 bits: a full value is sign-extended */
	AE_VAL_REG_VC_SEXT	= 13,
	/* register a's low 4 bytes (width 4), where nothing reads its upper
	 * half, coded against slot b's low 4 bytes: the difference of the
	 * two as a signed 32-bit number; the slot's upper half stays */
	AE_VAL_REG_VC_LOW	= 14,
	/* no bytes (width 0): k's jump-table index (AE_VAL_JTIDX) or
	 * dispatch-table index (AE_VAL_JTLOAD) is register a, which k's
	 * table access makes known anyway (-fae-data); the regenerator
	 * reads it there, after k's register records */
	AE_VAL_JTIDX_KNOWN	= 15,
	AE_VAL_JTLOAD_KNOWN	= 16,
	/* vector gather k's index register, then its mask register (a
	 * vector mask whole, an opmask's low 16 bits): width bytes,
	 * dataflow.h ae_df_vsib_bytes() (-fae-data) */
	AE_VAL_VSIB		= 17,
};

/*
 * The value cache (-fae-data, docs/ARCHITECTURE.md item 23): a TLS array
 * of AE_VC_SLOTS 8-byte slots, the common symbol AE_VC_SYMBOL of every
 * data-traced object compiled from C (not the C library's start-up, which
 * runs before TLS exists), page-aligned, zero in every thread musl
 * creates. A record of the 64-bit register value v against slot s
 * holding c is (little-endian; >> shifts arithmetically, keeping the sign)
 *   one byte b, b & 1 == 0:     v = c + ((int8_t)b >> 1)   (-64 <= v - c < 64)
 *   two bytes w, w & 3 == 1:    v = c + ((int16_t)w >> 2)  (-2^13 <= v - c < 2^13)
 *   three bytes u, u & 7 == 3:  v = c + ((int24)u >> 3)    (-2^20 <= v - c < 2^20)
 *   the byte 7, then v's low `width` bytes (extended as the flag says)
 * and the slot then holds v. The store into the slot follows the record's
 * commit, outside its sequence: the section .ae_vcupd lists each such
 * store's address with its slot (u32 pairs), so that a signal taken
 * between the two can be given the slot's old value.
 *
 * A record after a load whose event has AE_VC_BY_ADDR in b also has the
 * address cache: AE_LC_SLOTS 8-byte slots in the TLS common symbol
 * AE_LC_SYMBOL, slot (address >> 2) % AE_LC_SLOTS of the load's address.
 * Where the one-byte difference does not reach, the byte AE_VC_BY_ADDR_HIT
 * says v is what that slot holds (Lua's bytecode word: a loop's loads of
 * one address); then, as after the two-, three-byte and full codings, both
 * slots take v (after the one-byte difference, the address slot is left
 * alone). The store into the address slot follows the value slot's; its
 * .ae_vcupd entry has the slot AE_VC_ADDR_STORE.
 */
#define AE_VC_SLOTS		4096
#define AE_VC_SYMBOL		"__ae_vc"
#define AE_VC_FULL		7
#define AE_VC_BY_ADDR		0x80000000u
#define AE_VC_BY_ADDR_HIT	0x0f
#define AE_VC_ADDR_STORE	0xffffffffu

/*
 * Groups. The first of n (2..AE_VC_GROUP_MAX) consecutive AE_VAL_REG_VC or
 * _LOW records before one instruction may carry AE_VC_GROUP(n) in b. Its
 * first byte is then AE_VC_GROUP_HIT(c) when the first c of them (1..n)
 * equal their slots: they take no more bytes, the slots stay, and the
 * others follow coded one by one; any other byte is the first record's
 * own. Spill slots reloaded for a call (bzip2's mainGtU: four of six
 * arguments) cost one byte, not four. The tags are witness bytes for
 * AE_PRED_VC_OTHER, so no branch side begins with a group (insn.vc_first).
 */
#define AE_VC_GROUP_SHIFT	24
#define AE_VC_GROUP_MAX		15
#define AE_VC_GROUP(n)		((uint32_t)(n) << AE_VC_GROUP_SHIFT)
#define AE_VC_GROUP_OF(b)	(((b) >> AE_VC_GROUP_SHIFT) & 0x0fu)
#define AE_VC_SLOT_OF(b)	((b) & (AE_VC_SLOTS - 1))
#define AE_VC_GROUP_HIT(c)	(0x17 + (((c) - 1) << 3))

/* AE_EV_PRED flags */
#define AE_PRED_TAKEN		1u
#define AE_PRED_VC_OTHER	2u

/*
 * Can byte b begin a witness that must not be taken for a value-cache
 * record (AE_PRED_VC_OTHER)? No coding above begins with b & 7 == 7 but
 * AE_VC_FULL and AE_VC_BY_ADDR_HIT: 30 values (0x17, 0x1f, ... 0xff).
 */
static inline int ae_is_wit_byte(uint8_t b)
{
	return (b & 7) == 7 && b != AE_VC_FULL && b != AE_VC_BY_ADDR_HIT;
}
#define AE_LC_SLOTS		4096
#define AE_LC_SYMBOL		"__ae_lc"

/* The address cache's slot of a load from address a. */
static inline uint32_t ae_lc_slot(uint64_t a)
{
	return (uint32_t)(a >> 2) % AE_LC_SLOTS;
}

/* The slot of register r's record before (after: 1) instruction k of
 * object objid. Places that share a slot cost hits, not correctness. */
static inline uint32_t ae_vc_slot(uint32_t objid, uint32_t k, uint32_t r, int after)
{
	uint64_t h = ((uint64_t)objid << 32 | (k << 5 | (uint32_t)after << 4 | r)) *
		     0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 52) % AE_VC_SLOTS;
}

struct ae_event {
	uint32_t insn;		/* instruction index in the object */
	uint16_t kind;		/* enum ae_event_kind */
	uint8_t width;		/* bytes in the trace */
	uint8_t flag;
	uint32_t a;
	uint32_t b;
};

/* The schema version an object carrying event e needs. Returns it (1
 * for events every version has). */
static inline uint32_t ae_event_version(const struct ae_event *e)
{
	if (e->kind == AE_EV_EXPAND || e->kind == AE_EV_ARGS_AT_CALL)
		return AE_SCHEMA_VERSION_EXPAND;
	if (e->kind == AE_EV_PRED_KNOWN)
		return AE_SCHEMA_VERSION_PRED_KNOWN;
	if (e->kind == AE_EV_PRED && (e->flag & AE_PRED_VC_OTHER))
		return AE_SCHEMA_VERSION_PRED_VC;
	if (e->kind != AE_EV_VAL && e->kind != AE_EV_VAL_AFTER)
		return AE_SCHEMA_VERSION;
	if (e->flag == AE_VAL_REG_VC || e->flag == AE_VAL_REG_VC_SEXT ||
	    e->flag == AE_VAL_REG_VC_LOW)
		return AE_VC_GROUP_OF(e->b) ? AE_SCHEMA_VERSION_VC_GROUP :
		       e->b & AE_VC_BY_ADDR ? AE_SCHEMA_VERSION_VC_ADDR :
		       e->flag == AE_VAL_REG_VC_LOW ? AE_SCHEMA_VERSION_VC_LOW :
		       AE_SCHEMA_VERSION_VC;
	if (e->flag == AE_VAL_JTIDX_KNOWN || e->flag == AE_VAL_JTLOAD_KNOWN)
		return AE_SCHEMA_VERSION_JT_KNOWN;
	if (e->flag == AE_VAL_VSIB)
		return AE_SCHEMA_VERSION_VSIB;
	return AE_SCHEMA_VERSION;
}

#endif /* AETRACE_SCHEMA_H */
