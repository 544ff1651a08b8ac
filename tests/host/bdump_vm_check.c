// SPDX-License-Identifier: MIT
/*
 * bdump_vm_check.c - verify the producer records of a /dev/trbuf capture
 * made by bdump (tests/host/bdump-vm.sh).  Decodes the container chunk by
 * chunk, cuts every DATA chunk (one sub-buffer) into per-task segments with
 * the schedule markers of the MARKERS chunks (cpu, seq, offset, tid), and for
 * each segment owned by a producer process (PIDs on the command line) proves
 * that it holds only whole records of exactly that thread (tag = 0xae000000 |
 * tid, see bdump_vm_prod.c), consecutive within the segment.  Then every
 * producer thread must have delivered counters 0 .. N-1 exactly once and the
 * number of such threads must be NSTREAMS: no record lost, duplicated or
 * misattributed.
 *
 * usage: bdump_vm_check TRACE N NSTREAMS PID...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/trbuf.h>
#include "aetrace/container.h"

#define BDVM_TAG	0xae000000u
#define MAX_STREAMS	256
#define MAX_CPUS	64

struct mk {
	struct trbuf_marker m;
	uint64_t order;
};

struct stream {
	int32_t tid;
	uint8_t *seen;
	uint64_t got, dup, range;
};

static struct mk *mks;
static size_t nmk;
static struct stream streams[MAX_STREAMS];
static int nstreams;
static uint64_t nrec;
static int32_t *pids;
static int npids;
static uint64_t bad_len, foreign_tag, nonconsec, prod_segments, prod_bytes;
static uint64_t other_bytes, unattributed;

static int mk_cmp(const void *a, const void *b)
{
	const struct mk *x = a, *y = b;

	if (x->m.cpu != y->m.cpu)
		return x->m.cpu < y->m.cpu ? -1 : 1;
	if (x->m.seq != y->m.seq)
		return x->m.seq < y->m.seq ? -1 : 1;
	if (x->m.offset != y->m.offset)
		return x->m.offset < y->m.offset ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int is_producer(int32_t pid)
{
	for (int i = 0; i < npids; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

static struct stream *stream_of(int32_t tid)
{
	for (int i = 0; i < nstreams; i++)
		if (streams[i].tid == tid)
			return &streams[i];
	if (nstreams == MAX_STREAMS)
		return NULL;
	streams[nstreams].tid = tid;
	streams[nstreams].seen = calloc(nrec, 1);
	return &streams[nstreams++];
}

/* One task's stretch of a sub-buffer. */
static void segment(const uint8_t *p, uint32_t len, int32_t pid, int32_t tid)
{
	struct stream *s;
	uint64_t rec, v, prev = 0;

	if (!len)
		return;
	if (pid <= 0) {
		unattributed += len;
		return;
	}
	if (!is_producer(pid)) {
		other_bytes += len;
		return;
	}
	prod_segments++;
	prod_bytes += len;
	if (len % 8) {
		bad_len++;
		return;
	}
	s = stream_of(tid);
	if (!s || !s->seen) {
		fprintf(stderr, "too many streams\n");
		exit(1);
	}
	for (uint32_t i = 0; i < len; i += 8) {
		memcpy(&rec, p + i, 8);
		if (rec >> 32 != (BDVM_TAG | ((uint32_t)tid & 0xffffff))) {
			if (foreign_tag++ < 5)
				fprintf(stderr, "tid %d segment offset %u: record %#llx of another task\n",
					tid, i, (unsigned long long)rec);
			continue;
		}
		v = rec & 0xffffffff;
		if (i && v != prev + 1)
			nonconsec++;
		prev = v;
		if (v >= nrec) {
			s->range++;
			continue;
		}
		if (s->seen[v])
			s->dup++;
		s->seen[v] = 1;
		s->got++;
	}
}

int main(int argc, char **argv)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	int32_t cur_pid[MAX_CPUS] = { 0 }, cur_tid[MAX_CPUS] = { 0 };
	uint64_t chunks = 0, data = 0;
	size_t cap = 0;
	int ret, bad = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: %s TRACE N NSTREAMS PID...\n", argv[0]);
		return 2;
	}
	nrec = strtoull(argv[2], NULL, 0);
	npids = argc - 4;
	pids = calloc(npids, sizeof(*pids));
	for (int i = 0; i < npids; i++)
		pids[i] = atoi(argv[4 + i]);

	/* pass 1: every marker */
	if ((ret = ae_reader_open(&r, argv[1]))) {
		fprintf(stderr, "%s: cannot open (%d)\n", argv[1], ret);
		return 1;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		size_t n = h.len / sizeof(struct trbuf_marker);

		if (h.type != AE_CHUNK_MARKERS)
			continue;
		if (nmk + n > cap) {
			cap = (nmk + n) * 2;
			mks = realloc(mks, cap * sizeof(*mks));
		}
		for (size_t i = 0; i < n; i++, nmk++) {
			memcpy(&mks[nmk].m, (const char *)pl + i * sizeof(struct trbuf_marker),
			       sizeof(struct trbuf_marker));
			mks[nmk].order = nmk;
		}
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", ae_reader_error(r));
		return 1;
	}
	ae_reader_close(r);
	qsort(mks, nmk, sizeof(*mks), mk_cmp);

	/* pass 2: cut every sub-buffer at its markers */
	if ((ret = ae_reader_open(&r, argv[1])))
		return 1;
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		uint32_t pos = 0;
		int c = h.cpu;

		chunks++;
		if (h.type != AE_CHUNK_DATA)
			continue;
		data++;
		if (c >= MAX_CPUS) {
			fprintf(stderr, "cpu %d out of range\n", c);
			return 1;
		}
		for (size_t k = 0; k < nmk; k++) {
			const struct trbuf_marker *m = &mks[k].m;

			if (m->cpu != c || m->seq != h.seq)
				continue;
			if (m->offset > h.len) {
				fprintf(stderr, "marker offset %u beyond sub-buffer %d/%llu (%u bytes)\n",
					m->offset, c, (unsigned long long)h.seq, h.len);
				bad = 1;
				continue;
			}
			segment((const uint8_t *)pl + pos, m->offset - pos, cur_pid[c], cur_tid[c]);
			pos = m->offset;
			switch (m->type) {
			case TRBUF_MK_SWITCH_OUT:
			case TRBUF_MK_EXIT:
			case TRBUF_MK_EXEC:
			case TRBUF_MK_STOP:
				cur_pid[c] = cur_tid[c] = 0;
				break;
			default:
				if (m->tid > 0) {
					cur_pid[c] = m->pid;
					cur_tid[c] = m->tid;
				}
			}
		}
		segment((const uint8_t *)pl + pos, h.len - pos, cur_pid[c], cur_tid[c]);
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", ae_reader_error(r));
		return 1;
	}
	ae_reader_close(r);

	uint64_t total = 0, missing = 0, dup = 0, range = 0, full = 0;

	for (int i = 0; i < nstreams; i++) {
		struct stream *s = &streams[i];

		for (uint64_t v = 0; v < nrec; v++)
			missing += !s->seen[v];
		total += s->got;
		dup += s->dup;
		range += s->range;
		full += s->got == nrec && !s->dup;
	}
	printf("chunks %llu data %llu markers %zu producer_segments %llu producer_bytes %llu "
	       "other_bytes %llu unattributed %llu streams %d/%s complete %llu records %llu "
	       "missing %llu dup %llu out_of_range %llu foreign %llu nonconsecutive %llu bad_len %llu\n",
	       (unsigned long long)chunks, (unsigned long long)data, nmk,
	       (unsigned long long)prod_segments, (unsigned long long)prod_bytes,
	       (unsigned long long)other_bytes, (unsigned long long)unattributed,
	       nstreams, argv[3], (unsigned long long)full, (unsigned long long)total,
	       (unsigned long long)missing, (unsigned long long)dup,
	       (unsigned long long)range, (unsigned long long)foreign_tag,
	       (unsigned long long)nonconsec, (unsigned long long)bad_len);
	if (bad || nstreams != atoi(argv[3]) || (int)full != nstreams || missing || dup ||
	    range || foreign_tag || nonconsec || bad_len || unattributed)
		return 1;
	return 0;
}
