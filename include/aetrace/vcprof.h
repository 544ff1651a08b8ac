/* SPDX-License-Identifier: MIT */
/*
 * vcprof.h - the value-cache profile: what `aetrace stats --vc-profile
 * FILE` writes and `aecc -fae-vc-profile=FILE` reads (docs/FORMAT.md,
 * "Value-cache profile"). Written by analysis/, read by instrument/.
 *
 * Text, one line per place whose register record ran (coded, or plain of
 * 4 or 8 bytes in an object built with the cache: AE_SCHEMA_F_VCACHE), so
 * that files made by several runs merge with cat (counts of one place add
 * up):
 *
 *   aetrace-vcprof 2
 *   OBJID INSN WHEN REG RECORDS ADDR_HITS ONE_BYTE BYTES
 *
 * OBJID is the object's id (8 hex digits, struct ae_schema_obj), INSN
 * the instruction's index in it, WHEN `b` for a record before the
 * instruction or `a` for one after it, REG the register (0-15, x86
 * encoding order); then how many records the place wrote, in how many of
 * them the address cache held the value (a place that may hit it,
 * AE_VC_BY_ADDR; else 0), in how many the value was within the one-byte
 * difference of the place's slot: what each test would have found,
 * whichever the build tried first (records coded against an unknown
 * cache count in RECORDS and BYTES only); and the trace bytes they took
 * (a plain record: its width; a group's tag byte: its first record's).
 * A header line may repeat (files joined with cat); after the first, '#'
 * starts a comment line.
 */
#ifndef AETRACE_VCPROF_H
#define AETRACE_VCPROF_H

#include <stdint.h>

#define AE_VCPROF_HEADER	"aetrace-vcprof 2"

/*
 * Whether a place with these counts should try the address cache before
 * the one-byte difference: when more of its records would hit the
 * address cache than the difference, that is, more hit it alone than
 * the difference alone (a record that hits one test tried first skips
 * the other; where both hit, either order writes one byte). Both orders
 * code a value in as many bytes and leave the slots the same, so only
 * the code run differs.
 */
static inline int ae_vcprof_addr_first(uint64_t addr_hits, uint64_t one_byte)
{
	return addr_hits > one_byte;
}

/*
 * Whether a place whose records of plain bytes each (a plain record's
 * width: 8, or 4 for a 32-bit value or a low half) took these bytes in
 * all should be a plain record instead: where the cache saves less than
 * AE_VCPROF_MIN_SAVED_16THS sixteenths of a byte a record on average.
 * The cache's code runs about eight instructions at a hit and more at a
 * miss, a plain record's two, and the written trace pays for the bytes
 * (docs/ARCHITECTURE.md item 23, "Where the cache does not pay"). A
 * place with fewer than AE_VCPROF_MIN_RECORDS records keeps the cache.
 */
#define AE_VCPROF_MIN_SAVED_16THS	40
#define AE_VCPROF_MIN_RECORDS		64

static inline int ae_vcprof_plain(uint64_t recs, uint64_t bytes, unsigned int plain)
{
	/* (counts past 2^57 wrap: a wrong hint, never a wrong trace) */
	return recs >= AE_VCPROF_MIN_RECORDS &&
	       16 * bytes + AE_VCPROF_MIN_SAVED_16THS * recs > 16 * (uint64_t)plain * recs;
}

#endif
