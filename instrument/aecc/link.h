/* SPDX-License-Identifier: MIT */
/* link.h - linking `prog` and its twin `prog.orig` */
#ifndef AE_LINK_H
#define AE_LINK_H

struct ae_link_opts {
	const char *out;
	char **inputs;		/* objects, archives, -lname, in order */
	int ninputs;
	char **ldflags;		/* -Wl,... */
	int nldflags;
	char **libdirs;		/* -L */
	int nlibdirs;
	const char *musl_dir;	/* the tracing musl (lib/crt1.o, lib/libc.a) */
	const char *libae;	/* the runtime archive */
	const char *libaert;	/* the libgcc helpers archive */
	const char *tmpdir;	/* scratch directory (exists) */
	int data;		/* -fae-data: the C library enters its
				 * routines past their argument records */
	int verbose;		/* print the commands run */
};

/*
 * Link o->out (instrumented, entry _ae_start, sorted __ae_seqtab) and
 * o->out.orig (the twin, linked from the embedded .ae_orig objects with
 * the same data layout), and check that every data section has the same
 * address and size in both. Returns 0, or -1 after one line on stderr
 * naming the cause.
 */
int ae_link(const struct ae_link_opts *o);

#endif
