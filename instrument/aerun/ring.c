// SPDX-License-Identifier: MIT
/*
 * ring.c - the lossless pool of sub-buffers between the traced threads and
 * the writer thread (invariant 7): each traced thread owns one sub-buffer;
 * a committed one stays queued until the writer has compressed it (commit
 * order), and a thread that needs a new one stays stopped until one is
 * free. With --discard there is no writer: a commit is only counted and
 * the sub-buffer is free again at once (the paper's dummy run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aerun.h"

/* markers per MARKERS chunk: 4.5 MiB, well under AE_CHUNK_MAX_LEN (a
 * sub-buffer of a program that takes signals in a tight loop carries
 * millions) */
#define AERUN_MK_CHUNK	65536

int aerun_write_markers(struct aerun *a, const struct trbuf_marker *mk, size_t n)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i += AERUN_MK_CHUNK) {
		size_t k = n - i < AERUN_MK_CHUNK ? n - i : AERUN_MK_CHUNK;

		ret = ae_writer_chunk(a->w, AE_CHUNK_MARKERS, 0, 0, mk + i, k * sizeof(*mk), 0);
	}
	return ret;
}

uint8_t *aerun_subbuf(struct aerun *a, uint32_t i)
{
	return a->map + a->ctl.data_offset + (size_t)i * a->ctl.subbuf_size;
}

static void *aerun_writer_main(void *arg)
{
	struct aerun *a = arg;
	struct aerun_ring *r = &a->ring;
	int ret = 0, level_was = a->o.level, level;
	uint32_t qlen_was = 0, waiting;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		enum ae_pace pace = AE_PACE_STEADY;
		uint32_t i;

		if (!r->qlen && !r->stop)
			pace = AE_PACE_IDLE;
		while (!r->qlen && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->qlen)
			break;
		/*
		 * Behind: a thread stopped for a free sub-buffer, or a quarter
		 * of the pool queued and more than at the last chunk (the
		 * program committed more than one while the writer wrote one).
		 * A queue that keeps its length or drains is kept up with.
		 */
		waiting = r->waiting;
		if (waiting || (r->qlen > qlen_was && r->qlen > r->n / 4))
			pace = AE_PACE_BEHIND;
		qlen_was = r->qlen;
		i = r->q[r->qhead];
		pthread_mutex_unlock(&r->lock);

		level = ae_writer_pace(a->w, pace);
		if (level != level_was && a->o.verbose)
			fprintf(stderr, "aerun: zstd level %d after %llu MB (%s)\n", level,
				(unsigned long long)(ae_writer_in_bytes(a->w) >> 20),
				pace == AE_PACE_IDLE ? "the writer waited" :
				waiting ? "the program waited" : "the queue grew");
		level_was = level;
		if (!ret)
			ret = aerun_write_markers(a, r->mk[i], r->nr_mk[i]);
		if (!ret)
			ret = ae_writer_chunk(a->w, AE_CHUNK_DATA, r->cpu[i], r->seq[i],
					      aerun_subbuf(a, i), r->len[i], 1);
		free(r->mk[i]);
		r->mk[i] = NULL;

		pthread_mutex_lock(&r->lock);
		if (ret && !r->err)
			r->err = ret;
		r->state[i] = AERUN_SB_FREE;
		r->qhead = (r->qhead + 1) % r->n;
		r->qlen--;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int aerun_ring_init(struct aerun *a)
{
	struct aerun_ring *r = &a->ring;

	r->n = a->ctl.nr_subbufs;
	r->state = calloc(r->n, sizeof(*r->state));
	r->len = calloc(r->n, sizeof(*r->len));
	r->seq = calloc(r->n, sizeof(*r->seq));
	r->cpu = calloc(r->n, sizeof(*r->cpu));
	r->mk = calloc(r->n, sizeof(*r->mk));
	r->nr_mk = calloc(r->n, sizeof(*r->nr_mk));
	r->q = calloc(r->n, sizeof(*r->q));
	if (!r->state || !r->len || !r->seq || !r->cpu || !r->mk || !r->nr_mk || !r->q)
		return -ENOMEM;
	r->state[0] = AERUN_SB_OWNED;	/* the first program's, cpu 0 */
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (!a->w)
		return 0;
	if (pthread_create(&r->thread, NULL, aerun_writer_main, a))
		return -EAGAIN;
	r->have_thread = 1;
	return 0;
}

struct trbuf_marker *aerun_add_marker(struct aerun *a, struct aerun_task *t,
				      const struct trbuf_marker *m)
{
	struct trbuf_marker **mk = t ? &t->mk : &a->mk;
	uint32_t *nr = t ? &t->nr_mk : &a->nr_mk, *capp = t ? &t->cap_mk : &a->cap_mk;

	if (*nr == *capp) {
		uint32_t cap = *capp ? 2 * *capp : 64;
		struct trbuf_marker *p = realloc(*mk, cap * sizeof(*p));

		if (!p)
			return NULL;	/* counted as lost: markers != written */
		*mk = p;
		*capp = cap;
	}
	(*mk)[*nr] = *m;
	a->markers++;
	return &(*mk)[(*nr)++];
}

/* Commit t's sub-buffer with `len` bytes and t's pending markers. */
int aerun_ring_commit(struct aerun *a, struct aerun_task *t, uint32_t len)
{
	struct aerun_ring *r = &a->ring;
	uint32_t i = t->cur;
	int err;

	a->raw_bytes += len;
	a->commits++;
	if (!a->w) {
		t->nr_mk = 0;
		t->cur_seq++;
		r->state[i] = AERUN_SB_FREE;
		return 0;
	}
	pthread_mutex_lock(&r->lock);
	r->len[i] = len;
	r->seq[i] = t->cur_seq++;
	r->cpu[i] = t->cpu;
	r->mk[i] = t->mk;
	r->nr_mk[i] = t->nr_mk;
	r->state[i] = AERUN_SB_QUEUED;
	r->q[(r->qhead + r->qlen) % r->n] = i;
	r->qlen++;
	err = r->err;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	t->mk = NULL;
	t->nr_mk = t->cap_mk = 0;
	return err;
}

/*
 * Give t a free sub-buffer (the next one after t->cur in ring order),
 * waiting for the writer while sub-buffers are queued. Returns 0, the
 * writer's error, or -ENOSPC when every sub-buffer is owned by a live
 * thread (more traced threads than --subbufs allows).
 */
int aerun_ring_next(struct aerun *a, struct aerun_task *t)
{
	struct aerun_ring *r = &a->ring;
	int err = 0;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		uint32_t k, i = t->cur;

		for (k = 1; k <= r->n; k++) {
			i = (t->cur + k) % r->n;
			if (r->state[i] == AERUN_SB_FREE)
				break;
		}
		if (k <= r->n) {
			r->state[i] = AERUN_SB_OWNED;
			t->cur = i;
			break;
		}
		if (r->err || !r->qlen || !r->have_thread) {
			err = r->err ? r->err : -ENOSPC;
			break;
		}
		r->waiting++;
		pthread_cond_wait(&r->cond, &r->lock);
		r->waiting--;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* Drain the queue and stop the writer; returns its first error. */
int aerun_ring_finish(struct aerun *a)
{
	struct aerun_ring *r = &a->ring;
	int err;

	if (!r->have_thread)
		return 0;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	r->have_thread = 0;
	err = r->err;
	return err;
}
