/* SPDX-License-Identifier: MIT */
/*
 * vcprof.h - the value-cache profile: what `aetrace stats --vc-profile
 * FILE` writes and `aecc -fae-vc-profile=FILE` reads (docs/FORMAT.md,
 * "Value-cache profile"). Written by analysis/, read by instrument/.
 *
 * Text, one line per place whose register record may hit the address
 * cache (AE_VC_BY_ADDR), so that files made by several runs merge with
 * cat (counts of one place add up):
 *
 *   aetrace-vcprof 1
 *   OBJID INSN REG RECORDS ADDR_HITS ONE_BYTE
 *
 * OBJID is the object's id (8 hex digits, struct ae_schema_obj), INSN
 * the instruction's index in it, REG the register (0-15, x86 encoding
 * order); then how many records the place wrote, in how many of them the
 * address cache held the value, and in how many the value was within
 * the one-byte difference of the place's slot: what each test would
 * have found, whichever the build tried first (records coded against an
 * unknown cache count in RECORDS only). A header line may repeat (files
 * joined with cat); after the first, '#' starts a comment line.
 */
#ifndef AETRACE_VCPROF_H
#define AETRACE_VCPROF_H

#include <stdint.h>

#define AE_VCPROF_HEADER	"aetrace-vcprof 1"

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

#endif
