/* SPDX-License-Identifier: MIT */
/*
 * regrec.h - the registration record (docs/FORMAT.md "Registration
 * record"): the first bytes every instrumented program writes into its own
 * witness stream, right after it registered (kernel, aerun or any other
 * mode), so a reader knows which program image a task runs — after an
 * exec too. Written through a restartable sequence of __ae_seqtab, 8 bytes
 * per commit. Freestanding (the runtime includes it).
 */
#ifndef AETRACE_REGREC_H
#define AETRACE_REGREC_H

#include <linux/types.h>

#define AE_REG_MAGIC	0x31474552544541aeull	/* 0xae "AETREG1" */
#define AE_REG_VERSION	1
#define AE_REG_PATH_MAX	256

struct ae_reg_record {
	__u64 magic;		/* AE_REG_MAGIC */
	__u32 version;		/* AE_REG_VERSION */
	__u32 len;		/* bytes of the record, path included; multiple of 8 */
	__u64 image_id;		/* ae_image_id() of the program's __ae_seqtab */
	__u64 entry;		/* the program's ELF entry point */
	/* then the path the program was started as (AT_EXECFN), NUL
	 * terminated, zero padded to a multiple of 8 */
};

/*
 * Identity of an instrumented program: FNV-1a over the 64-bit words of its
 * sorted sequence table (every instrumentation sequence's address: a
 * fingerprint of the instrumented code), then the entry point.
 */
static inline __u64 ae_image_id(const __u32 *seqtab, unsigned long nwords, __u64 entry)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (unsigned long i = 0; i < nwords; i++) {
		h ^= seqtab[i];
		h *= 0x100000001b3ull;
	}
	h ^= entry;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

#endif /* AETRACE_REGREC_H */
