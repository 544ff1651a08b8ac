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
};

int ae_link(const struct ae_link_opts *o);

/* from aecc.c */
int ae_run(char *const argv[]);
const char *ae_musl_dir(void);
const char *ae_libae(void);
const char *ae_libaert(void);
const char *ae_tmpdir(void);
int ae_verbose(void);

#endif
