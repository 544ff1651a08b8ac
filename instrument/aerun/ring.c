// SPDX-License-Identifier: MIT
/*
 * ring.c - the lossless ring of sub-buffers between the traced program and
 * the writer thread (invariant 7): a committed sub-buffer stays busy until
 * the writer has compressed it; the tracee waits (stays stopped) while the
 * next one is busy. With --discard there is no writer: a commit is only
 * counted and the sub-buffer is reused at once (the paper's dummy run).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "aerun.h"

uint8_t *aerun_subbuf(struct aerun *a, uint32_t i)
{
	return a->map + a->ctl.data_offset + (size_t)i * a->ctl.subbuf_size;
}

static void *aerun_writer_main(void *arg)
{
	struct aerun *a = arg;
	struct aerun_ring *r = &a->ring;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		uint32_t i = r->head;

		while (!r->busy[i] && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->busy[i])
			break;
		pthread_mutex_unlock(&r->lock);

		if (!ret && r->nr_mk[i])
			ret = ae_writer_chunk(a->w, AE_CHUNK_MARKERS, 0, 0, r->mk[i],
					      r->nr_mk[i] * sizeof(struct trbuf_marker), 0);
		if (!ret)
			ret = ae_writer_chunk(a->w, AE_CHUNK_DATA, 0, r->seq[i],
					      aerun_subbuf(a, i), r->len[i], 1);
		free(r->mk[i]);
		r->mk[i] = NULL;

		pthread_mutex_lock(&r->lock);
		if (ret && !r->err)
			r->err = ret;
		r->busy[i] = 0;
		r->head = (i + 1) % r->n;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int aerun_ring_init(struct aerun *a)
{
	struct aerun_ring *r = &a->ring;

	r->n = a->ctl.nr_subbufs;
	r->busy = calloc(r->n, sizeof(*r->busy));
	r->len = calloc(r->n, sizeof(*r->len));
	r->seq = calloc(r->n, sizeof(*r->seq));
	r->mk = calloc(r->n, sizeof(*r->mk));
	r->nr_mk = calloc(r->n, sizeof(*r->nr_mk));
	if (!r->busy || !r->len || !r->seq || !r->mk || !r->nr_mk)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (!a->w)
		return 0;
	if (pthread_create(&r->thread, NULL, aerun_writer_main, a))
		return -EAGAIN;
	r->have_thread = 1;
	return 0;
}

void aerun_add_marker(struct aerun *a, const struct trbuf_marker *m)
{
	if (a->nr_mk == a->cap_mk) {
		uint32_t cap = a->cap_mk ? 2 * a->cap_mk : 64;
		struct trbuf_marker *p = realloc(a->mk, cap * sizeof(*p));

		if (!p)
			return;	/* counted below as lost: markers != written */
		a->mk = p;
		a->cap_mk = cap;
	}
	a->mk[a->nr_mk++] = *m;
	a->markers++;
}

/* Commit the current sub-buffer with `len` bytes, with the pending markers. */
int aerun_ring_commit(struct aerun *a, uint32_t len)
{
	struct aerun_ring *r = &a->ring;
	uint32_t i = a->cur;
	int err;

	a->raw_bytes += len;
	a->commits++;
	if (!a->w) {
		a->nr_mk = 0;
		a->cur_seq++;
		return 0;
	}
	pthread_mutex_lock(&r->lock);
	r->len[i] = len;
	r->seq[i] = a->cur_seq++;
	r->mk[i] = a->mk;
	r->nr_mk[i] = a->nr_mk;
	r->busy[i] = 1;
	err = r->err;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	a->mk = NULL;
	a->nr_mk = a->cap_mk = 0;
	return err;
}

/* Move to the next sub-buffer, waiting until the writer has freed it. */
int aerun_ring_next(struct aerun *a)
{
	struct aerun_ring *r = &a->ring;
	int err;

	a->cur = (a->cur + 1) % r->n;
	if (!a->w)
		return 0;
	pthread_mutex_lock(&r->lock);
	while (r->busy[a->cur] && !r->err)
		pthread_cond_wait(&r->cond, &r->lock);
	err = r->err;
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* Drain the ring and stop the writer; returns its first error. */
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
