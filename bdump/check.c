// SPDX-License-Identifier: MIT
/*
 * check.c - `bdump --check TRACE [SCHED]`: prove a capture is complete and
 * intact: SESSION first, END last with counters equal to what the chunks
 * hold, DATA sequence numbers contiguous per cpu, SCHED byte-equal to the
 * MARKERS chunks, and for synthetic captures every payload byte equal to
 * what the generator produces. A capture that stops early (killed sender,
 * no END) is reported as truncated, not as corrupt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdump.h"
#include "source.h"

#define MAX_CPUS 1024

int bdump_check_report(const char *trace, const char *sched, char *msg, size_t msglen)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	struct synth_spec sp;
	int synthetic = 0, have_end = 0, ret, bad = 0;
	uint32_t session_cpus = MAX_CPUS;
	uint64_t chunks = 0;
	struct ae_end tally = { 0 };	/* what END must count */
	int sched_short = 0;
	uint64_t *next_seq = calloc(MAX_CPUS, sizeof(*next_seq));
	uint8_t *expect = NULL;
	FILE *sf = NULL;
	struct ae_end end;

	if (sched) {
		sf = fopen(sched, "r");
		if (!sf) {
			snprintf(msg, msglen, "%s: %s", sched, strerror(errno));
			free(next_seq);
			return 1;
		}
	}
	ret = next_seq ? ae_reader_open(&r, trace) : -ENOMEM;
	if (ret) {
		snprintf(msg, msglen, "%s: %s", trace, strerror(-ret));
		if (sf)
			fclose(sf);
		free(next_seq);
		return 1;
	}
#define FAIL(...) do { int k_ = snprintf(msg, msglen, "%s: offset %llu: ", trace, \
		(unsigned long long)ae_reader_offset(r)); \
		if (k_ >= 0 && (size_t)k_ < msglen) \
			snprintf(msg + k_, msglen - k_, __VA_ARGS__); \
		bad = 1; goto out; } while (0)
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (have_end)
			FAIL("chunk type %u after END", h.type);
		if (chunks == 0 && h.type != AE_CHUNK_SESSION)
			FAIL("first chunk is type %u, not SESSION", h.type);
		switch (h.type) {
		case AE_CHUNK_SESSION: {
			struct ae_session s;
			const char *str, *e;

			if (chunks)
				FAIL("second SESSION chunk");
			if (h.len < sizeof(s))
				FAIL("SESSION chunk too short (%u bytes)", h.len);
			memcpy(&s, pl, sizeof(s));
			if (s.version != AE_FORMAT_VERSION || s.strings_len != h.len - sizeof(s))
				FAIL("SESSION version %u strings_len %u does not match", s.version, s.strings_len);
			/* (aerun's regions are its threads, as many as it had) */
			if (s.mode != AE_MODE_STANDALONE)
				session_cpus = s.nr_cpus ? s.nr_cpus : 1;
			str = (const char *)pl + sizeof(s);
			e = str + s.strings_len;
			for (; str < e; str += strlen(str) + 1) {
				if (!memchr(str, 0, e - str))
					FAIL("SESSION strings not NUL terminated");
				if (!strncmp(str, "synthetic=", 10)) {
					if (synth_parse(str + 10, &sp))
						FAIL("bad synthetic spec '%s'", str + 10);
					synthetic = 1;
					free(expect);	/* a second spec replaces the first */
					expect = malloc(sp.subbuf);
					if (!expect)
						FAIL("out of memory");
				}
			}
			break;
		}
		case AE_CHUNK_DATA:
			if (h.cpu >= MAX_CPUS || h.cpu >= session_cpus)
				FAIL("DATA cpu %u out of range (the capture has %u cpus)", h.cpu,
				     session_cpus < MAX_CPUS ? session_cpus : MAX_CPUS);
			if (h.seq != next_seq[h.cpu])
				FAIL("DATA cpu %u seq %llu, expected %llu (lost sub-buffer)", h.cpu,
				     (unsigned long long)h.seq, (unsigned long long)next_seq[h.cpu]);
			next_seq[h.cpu]++;
			if (synthetic) {
				uint32_t len = synth_len(&sp, h.cpu, h.seq);

				if (h.cpu >= sp.cpus || h.len != len)
					FAIL("DATA cpu %u seq %llu: length %u, generator made %u",
					     h.cpu, (unsigned long long)h.seq, h.len, len);
				synth_fill(&sp, h.cpu, h.seq, expect, len);
				if (memcmp(expect, pl, len))
					FAIL("DATA cpu %u seq %llu: payload differs from the generator's",
					     h.cpu, (unsigned long long)h.seq);
			}
			ae_end_tally(&tally, &h);
			break;
		case AE_CHUNK_MARKERS:
			if (h.len % sizeof(struct trbuf_marker))
				FAIL("MARKERS length %u not a multiple of %zu", h.len,
				     sizeof(struct trbuf_marker));
			ae_end_tally(&tally, &h);
			if (sf && !sched_short) {
				uint8_t mbuf[4096];
				size_t done = 0;

				while (done < h.len) {
					size_t n = h.len - done < sizeof(mbuf) ? h.len - done : sizeof(mbuf);
					size_t got = fread(mbuf, 1, n, sf);

					if (memcmp(mbuf, (const char *)pl + done, got))
						FAIL("%s: differs from the MARKERS chunk (marker %llu)", sched,
						     (unsigned long long)(tally.markers - h.len / sizeof(struct trbuf_marker)));
					if (got < n) {
						/* a cut capture: decided below */
						sched_short = 1;
						break;
					}
					done += n;
				}
			}
			break;
		case AE_CHUNK_END:
			if (h.len != sizeof(end))
				FAIL("END chunk has %u bytes", h.len);
			memcpy(&end, pl, sizeof(end));
			if (!ae_end_matches(&end, &tally))
				FAIL("END counters (raw %llu, data %llu, markers %llu) differ from the chunks (%llu, %llu, %llu)",
				     (unsigned long long)end.raw_bytes, (unsigned long long)end.data_chunks,
				     (unsigned long long)end.markers, (unsigned long long)tally.raw_bytes,
				     (unsigned long long)tally.data_chunks, (unsigned long long)tally.markers);
			have_end = 1;
			break;
		}
		chunks++;
	}
	if (ret < 0 && ae_reader_truncated(r)) {
		/* the stream stops inside a chunk or frame: a sender that died */
		snprintf(msg, msglen, "%s: truncated at chunk %llu (incomplete session): %s",
			 trace, (unsigned long long)chunks, ae_reader_error(r));
		bad = 1;
		goto out;
	}
	if (ret < 0) {
		snprintf(msg, msglen, "%s", ae_reader_error(r));
		bad = 1;
		goto out;
	}
	if (!have_end) {
		snprintf(msg, msglen, "%s: truncated at chunk %llu (incomplete session): no END chunk",
			 trace, (unsigned long long)chunks);
		bad = 1;
		goto out;
	}
	if (sched_short)
		FAIL("%s: shorter than the MARKERS chunks", sched);
	if (synthetic) {
		/* the generator goes round the cpus: a stopped run is a prefix */
		for (uint32_t c = 0; c < sp.cpus; c++)
			if (next_seq[c] != (tally.data_chunks + sp.cpus - 1 - c) / sp.cpus)
				FAIL("synthetic run is not a prefix: cpu %u has %llu sub-buffers of %llu in all",
				     c, (unsigned long long)next_seq[c], (unsigned long long)tally.data_chunks);
	}
	if (sf && fgetc(sf) != EOF)
		FAIL("%s: longer than the MARKERS chunks", sched);
	snprintf(msg, msglen, "%s: ok: %llu chunks, %llu data chunks, %llu raw bytes, %llu markers, %llu drops%s",
		 trace, (unsigned long long)chunks, (unsigned long long)tally.data_chunks,
		 (unsigned long long)tally.raw_bytes, (unsigned long long)tally.markers,
		 (unsigned long long)end.drops, synthetic ? ", synthetic payloads verified" : "");
out:
#undef FAIL
	ae_reader_close(r);
	if (sf)
		fclose(sf);
	free(expect);
	free(next_seq);
	return bad;
}

int bdump_check(const char *trace, const char *sched)
{
	char msg[1024];
	int bad = bdump_check_report(trace, sched, msg, sizeof(msg));

	if (bad)
		fprintf(stderr, "bdump: %s\n", msg);
	else
		printf("%s\n", msg);
	return bad;
}
