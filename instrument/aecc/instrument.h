/* SPDX-License-Identifier: MIT */
/* instrument.h - turn one GCC/GNU as .s file into an instrumented object */
#ifndef AE_INSTRUMENT_H
#define AE_INSTRUMENT_H

struct ae_instr_opts {
	const char *as;		/* assembler command, default "as" */
	const char *tmpdir;	/* scratch directory (exists) */
	int verbose;
	int data;		/* -fae-data: exact data address traces */
	int no_memfn;		/* -fno-ae-memfn: no routine traced by its arguments */
	int memfn_lib;		/* -fae-memfn-lib: C library objects (expanded routines) */
	int no_vcache;		/* -fno-ae-vcache: register records written whole */
	/* -fae-vc-profile: which places try the address cache first and
	 * which write plain records (NULL: none) */
	const struct ae_vcprof *vcprof;
};

/*
 * Instrument `src_s` (assembly as produced by gcc -S -ffixed-r15, or
 * hand-written) into the object `out_o`, which embeds its uninstrumented
 * twin, the schema and the instruction map. Returns 0 or -1 with a message
 * on stderr naming the file and line.
 */
int ae_instrument_file(const char *src_s, const char *out_o,
		       const struct ae_instr_opts *o);

#endif
