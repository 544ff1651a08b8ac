/* SPDX-License-Identifier: MIT */
/*
 * source.h - where bdump gets full sub-buffers and schedule markers from:
 * /dev/trbuf (source_trbuf.c) or the self-checking synthetic producer
 * (source_synth.c, for tests and benchmarks).
 */
#ifndef BDUMP_SOURCE_H
#define BDUMP_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/trbuf.h>
#include <aetrace/container.h>

struct bdump_subbuf {
	uint16_t cpu;
	uint32_t index;		/* source private (ring slot) */
	uint64_t seq;
	const void *data;
	uint32_t len;
	/*
	 * How the producer stands (ae_writer_pace()): AE_PACE_BEHIND when
	 * it waited for a free sub-buffer since the last one or half the
	 * buffer is full, AE_PACE_IDLE when the source found none since
	 * the last one.
	 */
	enum ae_pace pace;
};

struct bdump_source {
	/* geometry for the SESSION chunk, strings_len = strlen(strings) + 1 */
	struct ae_session session;
	char strings[512];
	/* 1: *sb filled; 0: nothing within timeout_ms; -ENODATA: source ended */
	int (*next)(struct bdump_source *s, struct bdump_subbuf *sb, int timeout_ms);
	int (*put)(struct bdump_source *s, const struct bdump_subbuf *sb);
	/* markers queued so far, at most max; never blocks */
	ssize_t (*markers)(struct bdump_source *s, struct trbuf_marker *m, size_t max);
	/* close every non-empty sub-buffer now (end of capture / flush timer);
	 * how many stayed open (their ring is full: put, flush again), or
	 * -errno */
	int (*flush)(struct bdump_source *s);
	uint64_t (*drops)(struct bdump_source *s);
	void (*close)(struct bdump_source *s);
	int drain_on_stop;	/* take remaining sub-buffers at the end */
	/*
	 * Forwarding an existing capture (source_file.c; NULL otherwise): its
	 * chunks unchanged and in order, SESSION first and END last. 1: *h and
	 * *payload (valid until the next call) filled; 0: end; <0: error,
	 * message already printed.
	 */
	int (*chunk)(struct bdump_source *s, struct ae_chunk_hdr *h, const void **payload);
};

int bdump_source_trbuf_open(struct bdump_source **sp, const char *dev);
/* An existing capture, sent again (forwarding a standalone trace). */
int bdump_source_file_open(struct bdump_source **sp, const char *path);

/* Synthetic producer: SPEC is "bytes=64M,cpus=2,subbuf=1M,rate=0,seed=1". */
struct synth_spec {
	uint64_t bytes;		/* total witness bytes (approx., whole sub-buffers) */
	uint32_t cpus;
	uint32_t subbuf;
	uint64_t rate;		/* bytes per second, 0 = as fast as possible */
	uint64_t seed;
};
int synth_parse(const char *spec, struct synth_spec *sp);
uint64_t synth_nr_subbufs(const struct synth_spec *sp);
uint32_t synth_len(const struct synth_spec *sp, uint32_t cpu, uint64_t seq);
void synth_fill(const struct synth_spec *sp, uint32_t cpu, uint64_t seq, uint8_t *buf, uint32_t len);
int bdump_source_synth_open(struct bdump_source **sp, const char *spec);

#endif /* BDUMP_SOURCE_H */
