/* SPDX-License-Identifier: MIT */
/*
 * container_sink.h - extensions of the container writer (bdump):
 * a writer whose compressed bytes go to a callback instead of an fd (the
 * network transport keeps them for resending), and an explicit flush.
 */
#ifndef AETRACE_CONTAINER_SINK_H
#define AETRACE_CONTAINER_SINK_H

#include <aetrace/container.h>

/* Consume `len` compressed bytes; 0 or -errno (which fails the writer). */
typedef int (*ae_sink_fn)(void *ctx, const void *buf, size_t len);

int ae_writer_open_sink(struct ae_writer **wp, ae_sink_fn sink, void *ctx,
			const struct ae_writer_opts *o);
/* Flush the zstd stream now (all chunks so far become decodable). */
int ae_writer_flush(struct ae_writer *w);

#endif /* AETRACE_CONTAINER_SINK_H */
