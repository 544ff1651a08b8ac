/* SPDX-License-Identifier: MIT */
/* vcprof.h - the value-cache profile aecc -fae-vc-profile=FILE reads */
#ifndef AE_VCPROF_H
#define AE_VCPROF_H

#include <stdint.h>

struct ae_vcprof;

/*
 * Read the profile at path (include/aetrace/vcprof.h; the counts of a
 * place given more than once add up) into *out. Returns 0, or -1 after
 * one line on stderr naming the file and line.
 */
int ae_vcprof_load(const char *path, struct ae_vcprof **out);
/* Whether the record of register reg after instruction insn of object
 * objid should try the address cache first (ae_vcprof_addr_first() of
 * its counts; no: a place the profile does not name). p may be NULL. */
int ae_vcprof_lookup(const struct ae_vcprof *p, uint32_t objid, uint32_t insn, uint32_t reg);
/* Whether the record of register reg before (before != 0) or after
 * instruction insn of object objid, plain bytes wide uncoded, should be
 * a plain record (ae_vcprof_plain() of its counts; no: a place the
 * profile does not name). p may be NULL. */
int ae_vcprof_plain_at(const struct ae_vcprof *p, uint32_t objid, uint32_t insn, int before,
		       uint32_t reg, unsigned int plain);
/* Free it (NULL is fine). Returns nothing. */
void ae_vcprof_free(struct ae_vcprof *p);

#endif
