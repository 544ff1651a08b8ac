// SPDX-License-Identifier: MIT
/*
 * source_synth.c - a self-checking synthetic producer standing in for
 * /dev/trbuf: sub-buffer (cpu, seq) holds witness-like bytes that are a pure
 * function of (seed, cpu, seq), so any capture can be verified byte for
 * byte (bdump --check) and two runs of the same spec produce the same chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "source.h"

#define SYNTH_BLOCKS	256
#define SYNTH_MARKERS	3	/* per sub-buffer: SUBBUF + 2 SWITCH_IN */

struct synth_source {
	struct bdump_source s;
	struct synth_spec sp;
	uint64_t next_g;	/* global sub-buffer index to produce next */
	uint64_t total;
	uint8_t *buf;
	struct trbuf_marker mk[SYNTH_MARKERS];
	int nr_mk;
	struct timespec t0;
	double due;		/* rate limit: seconds after t0 of the next one */
	int slept;		/* next() waited for the one to come */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 0);

	switch (*end) {
	case 'K': case 'k': n <<= 10; end++; break;
	case 'M': case 'm': n <<= 20; end++; break;
	case 'G': case 'g': n <<= 30; end++; break;
	}
	if (end == v || (*end && *end != ','))
		return -EINVAL;
	*out = n;
	return 0;
}

int synth_parse(const char *spec, struct synth_spec *sp)
{
	const char *p = spec;

	*sp = (struct synth_spec){ .bytes = 64 << 20, .cpus = 2, .subbuf = 1 << 20, .seed = 1 };
	while (*p) {
		const char *eq = strchr(p, '=');
		uint64_t v;

		if (!eq || parse_size(eq + 1, &v))
			return -EINVAL;
		if (!strncmp(p, "bytes=", 6))
			sp->bytes = v;
		else if (!strncmp(p, "cpus=", 5))
			sp->cpus = v;
		else if (!strncmp(p, "subbuf=", 7))
			sp->subbuf = v;
		else if (!strncmp(p, "rate=", 5))
			sp->rate = v;
		else if (!strncmp(p, "seed=", 5))
			sp->seed = v;
		else
			return -EINVAL;
		p = strchr(eq, ',');
		if (!p)
			break;
		p++;
	}
	if (sp->cpus < 1 || sp->cpus > 1024 || sp->subbuf < 8192 || sp->subbuf > AE_CHUNK_MAX_LEN)
		return -EINVAL;
	return 0;
}

uint64_t synth_nr_subbufs(const struct synth_spec *sp)
{
	uint64_t n = sp->bytes / sp->subbuf;

	return n ? n : 1;
}

uint32_t synth_len(const struct synth_spec *sp, uint32_t cpu, uint64_t seq)
{
	return sp->subbuf - mix64(sp->seed ^ (seq << 12) ^ cpu ^ 0x5a5a) % 4096;
}

/*
 * Witness-like bytes: 64-byte pieces drawn from 256 "loop bodies" of small
 * witness values, staying on the same body 3 times in 4 (hot loops), with
 * one piece in 8 carrying a recorded 8-byte value (indirect target, address).
 */
void synth_fill(const struct synth_spec *sp, uint32_t cpu, uint64_t seq,
		uint8_t *buf, uint32_t len)
{
	static __thread uint8_t blocks[SYNTH_BLOCKS][64];
	static __thread uint64_t blocks_seed = ~0ull;
	uint64_t x = mix64(sp->seed * 31 + seq * 1024 + cpu + 1) | 1;
	unsigned cur = 0;
	uint32_t i;

	if (blocks_seed != sp->seed) {
		uint64_t y = mix64(sp->seed) | 1;

		for (int b = 0; b < SYNTH_BLOCKS; b++)
			for (int k = 0; k < 64; k++) {
				y ^= y << 13; y ^= y >> 7; y ^= y << 17;
				blocks[b][k] = (y & 3) ? (uint8_t)(y >> 40) % 6 : (uint8_t)(y >> 32);
			}
		blocks_seed = sp->seed;
	}
	for (i = 0; i + 64 <= len; i += 64) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		if ((x & 3) == 0)
			cur = (x >> 8) & (SYNTH_BLOCKS - 1);
		memcpy(buf + i, blocks[cur], 64);
		if (((x >> 16) & 7) == 0) {
			uint64_t v = 0x7ffd00000000ull | ((x >> 24) & 0xfffff8);

			memcpy(buf + i + ((x >> 20) & 56), &v, 8);
		}
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)(i & 3);
}

static void synth_markers(struct synth_source *ss, uint32_t cpu, uint64_t seq, uint32_t len)
{
	uint64_t h = mix64(ss->sp.seed ^ (seq << 16) ^ cpu);
	uint64_t t = (seq * ss->sp.cpus + cpu) * 1000;

	ss->mk[0] = (struct trbuf_marker){ .time_ns = t, .type = TRBUF_MK_SUBBUF,
		.cpu = cpu, .pid = 100 + cpu, .tid = 100 + cpu, .seq = seq };
	for (int k = 1; k < SYNTH_MARKERS; k++) {
		h = mix64(h);
		ss->mk[k] = (struct trbuf_marker){ .time_ns = t + k, .type = TRBUF_MK_SWITCH_IN,
			.cpu = cpu, .pid = 1000 + h % 7, .tid = 1000 + h % 13, .seq = seq,
			.offset = (h >> 20) % len, .ip = 0x400000 + (h >> 40) % 65536,
			.sp = 0x7ffd0000 };
	}
	ss->nr_mk = SYNTH_MARKERS;
}

static int synth_next(struct bdump_source *s, struct bdump_subbuf *sb, int timeout_ms)
{
	struct synth_source *ss = (struct synth_source *)s;
	uint64_t g = ss->next_g;
	enum ae_pace pace = AE_PACE_STEADY;
	uint32_t cpu, len;
	uint64_t seq;

	if (g >= ss->total)
		return -ENODATA;
	if (ss->nr_mk)
		return 0;	/* markers of the previous one not read yet */
	if (ss->sp.rate) {
		/* steady rate from the last sub-buffer on: no catch-up burst
		 * after bdump was blocked (by a full network buffer) */
		struct timespec now;
		double el, w;

		clock_gettime(CLOCK_MONOTONIC, &now);
		el = now.tv_sec - ss->t0.tv_sec + (now.tv_nsec - ss->t0.tv_nsec) / 1e9;
		if (el < ss->due) {
			w = ss->due - el;
			if (w * 1000 > timeout_ms)
				w = timeout_ms / 1000.0;
			nanosleep(&(struct timespec){ (time_t)w, (long)((w - (time_t)w) * 1e9) }, NULL);
			ss->slept = 1;
			return 0;
		}
		/* more than 50 ms late: a real producer would have waited */
		if (el > ss->due + 0.05)
			pace = AE_PACE_BEHIND;
		else if (ss->slept)
			pace = AE_PACE_IDLE;
		ss->slept = 0;
		ss->due = (el > ss->due + 0.05 ? el : ss->due) + (double)ss->sp.subbuf / ss->sp.rate;
	}
	cpu = g % ss->sp.cpus;
	seq = g / ss->sp.cpus;
	len = synth_len(&ss->sp, cpu, seq);
	synth_fill(&ss->sp, cpu, seq, ss->buf, len);
	synth_markers(ss, cpu, seq, len);
	*sb = (struct bdump_subbuf){ .cpu = cpu, .seq = seq, .data = ss->buf, .len = len,
				     .pace = pace };
	ss->next_g++;
	return 1;
}

static int synth_put(struct bdump_source *s, const struct bdump_subbuf *sb)
{
	return 0;
}

static ssize_t synth_read_markers(struct bdump_source *s, struct trbuf_marker *m, size_t max)
{
	struct synth_source *ss = (struct synth_source *)s;
	size_t n = ss->nr_mk < max ? ss->nr_mk : max;

	memcpy(m, ss->mk, n * sizeof(*m));
	memmove(ss->mk, ss->mk + n, (ss->nr_mk - n) * sizeof(*m));
	ss->nr_mk -= n;
	return n;
}

static int synth_flush(struct bdump_source *s)
{
	return 0;
}

static uint64_t synth_drops(struct bdump_source *s)
{
	return 0;
}

static void synth_close(struct bdump_source *s)
{
	struct synth_source *ss = (struct synth_source *)s;

	free(ss->buf);
	free(ss);
}

int bdump_source_synth_open(struct bdump_source **sp, const char *spec)
{
	struct synth_source *ss = calloc(1, sizeof(*ss));
	int ret;

	if (!ss)
		return -ENOMEM;
	ret = synth_parse(spec, &ss->sp);
	if (ret)
		goto err_free_ss;
	ss->buf = malloc(ss->sp.subbuf);
	if (!ss->buf) {
		ret = -ENOMEM;
		goto err_free_ss;
	}
	ss->total = synth_nr_subbufs(&ss->sp);
	clock_gettime(CLOCK_MONOTONIC, &ss->t0);
	ss->s.session = (struct ae_session){
		.version = AE_FORMAT_VERSION, .mode = AE_MODE_KERNEL,
		.nr_cpus = ss->sp.cpus, .subbuf_size = ss->sp.subbuf, .nr_subbufs = 8,
	};
	snprintf(ss->s.strings, sizeof(ss->s.strings), "synthetic=%s", spec);
	ss->s.next = synth_next;
	ss->s.put = synth_put;
	ss->s.markers = synth_read_markers;
	ss->s.flush = synth_flush;
	ss->s.drops = synth_drops;
	ss->s.close = synth_close;
	*sp = &ss->s;
	return 0;

err_free_ss:
	free(ss);
	return ret;
}
