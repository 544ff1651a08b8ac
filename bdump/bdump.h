/* SPDX-License-Identifier: MIT */
/* bdump.h - options shared by bdump's parts. */
#ifndef BDUMP_BDUMP_H
#define BDUMP_BDUMP_H

#include <stddef.h>

struct bdump_opts {
	int level;
	int adapt;		/* pacing (ae_writer_pace), off with --fixed-level */
	int threads;
	int flush_ms;
	double duration;
	int quiet;
	const char *secret;
	const char *synthetic;
	const char *from;		/* --from: an existing capture */
	const char *device;
	size_t net_buffer;
	const char *ready;		/* --ready: created once consuming */
};

/* bdump --check TRACE [SCHED] (check.c): 0 when the capture is complete. */
int bdump_check(const char *trace, const char *sched);
/*
 * The same check, quietly: returns 0 (complete and intact) or 1, and puts
 * the one-line verdict in msg ("TRACE: ok: ..." or what is wrong, naming
 * the file and offset; a cut capture reads "truncated at chunk N
 * (incomplete session)"). bdump-recv runs it on finished sessions.
 */
int bdump_check_report(const char *trace, const char *sched, char *msg, size_t msglen);

#endif /* BDUMP_BDUMP_H */
