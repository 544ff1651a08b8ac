/* SPDX-License-Identifier: MIT */
/* regen.h - regenerate instruction traces by abstract execution */
#ifndef AE_REGEN_H
#define AE_REGEN_H

#include <stddef.h>
#include <stdint.h>

#include <linux/trbuf.h>

struct ae_program;

/* Load `prog` (schema, instrumented code) and `prog.orig` (the twin whose
 * addresses the trace is expressed in). 0 or -1 with a message. */
int ae_program_load(struct ae_program **pp, const char *prog);
void ae_program_free(struct ae_program *p);

/* trbuf_marker.flags of an EXIT marker: ip is the entry of _Exit and the
 * program ends after the next system call (raw captures). */
#define AE_MK_EXIT_AT_SYSCALL	1

/* One thread's witness stream with the markers that fall inside it. */
struct ae_stream {
	uint8_t *data;
	uint64_t len;
	struct trbuf_marker *mk;
	uint64_t *mkpos;	/* byte position of each marker in data */
	size_t nmk;
	int exited;		/* an EXIT marker or chunk was seen */
	int32_t exit_status;	/* wait(2) status */
};

/* Read a standalone trace (aerun) into one stream. */
int ae_stream_load(struct ae_stream *s, const char *path);
void ae_stream_free(struct ae_stream *s);

struct ae_regen_sink {
	/* one executed instruction; return non-zero to stop */
	int (*insn)(void *ctx, uint64_t addr, unsigned int size);
	void *ctx;
};

struct ae_regen_stats {
	uint64_t insns;
	uint64_t blocks;	/* control transfers taken + 1 */
	uint64_t witness_bytes;
	uint64_t value_bytes;
	uint64_t signals;
};

int ae_regen(struct ae_program *p, struct ae_stream *s,
	     const struct ae_regen_sink *sink, struct ae_regen_stats *st);

#endif
