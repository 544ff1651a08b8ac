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
 * order); then how many records the place wrote, how many of them were
 * address-cache hits and how many one-byte differences. A header line
 * may repeat (files joined with cat); '#' starts a comment line.
 */
#ifndef AETRACE_VCPROF_H
#define AETRACE_VCPROF_H

#include <stdint.h>

#define AE_VCPROF_HEADER	"aetrace-vcprof 1"

/*
 * Whether a place with these counts should try the address cache before
 * the one-byte difference: when more of its records hit the address cache
 * than took one byte. Both orders write the same number of bytes (where
 * both would hit, each writes one), so only the code run differs: a hit
 * tried first skips the other test.
 */
static inline int ae_vcprof_addr_first(uint64_t addr_hits, uint64_t one_byte)
{
	return addr_hits > one_byte;
}

#endif
