/* SPDX-License-Identifier: MIT */
/* bdump.h - options shared by bdump's parts. */
#ifndef BDUMP_BDUMP_H
#define BDUMP_BDUMP_H

#include <stddef.h>

struct bdump_opts {
	int level;
	int threads;
	int flush_ms;
	double duration;
	int quiet;
	const char *secret;
	const char *synthetic;
	const char *from;		/* --from: an existing capture */
	const char *device;
	size_t net_buffer;
};

/* bdump --check TRACE [SCHED] (check.c): 0 when the capture is complete. */
int bdump_check(const char *trace, const char *sched);

#endif /* BDUMP_BDUMP_H */
