// SPDX-License-Identifier: MIT
/*
 * source_trbuf.c - the real source: /dev/trbuf as consumer
 * (include/uapi/linux/trbuf.h): map the whole buffer read-only at
 * TRBUF_MAP_ADDR (sub-buffer offsets are relative to it), take full
 * sub-buffers with GET_SUBBUF, give them back with PUT_SUBBUF.  Schedule
 * markers travel with their sub-buffer: GET_MARKERS right after GET_SUBBUF
 * fetches them, and markers() hands them to bdump, which writes them
 * (MARKERS chunk, SCHED file) before that sub-buffer's DATA chunk.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "source.h"

struct trbuf_source {
	struct bdump_source s;
	int fd;
	struct trbuf_info info;
	uint8_t *map;
	struct trbuf_marker *mk;	/* markers of the last sub-buffer taken */
	size_t nmk, mk_taken, mk_cap;
	uint64_t taken;			/* sub-buffers handed to bdump */
	uint64_t full0;			/* the driver's subbufs_full at the start */
	uint64_t overflow_waits;	/* the driver's count at the last one */
	int waited;			/* found none since the last one */
};

/*
 * How the traced tasks stand (source.h): did one sleep for a free
 * sub-buffer since the last one, or are half of them full? Idle when
 * bdump found none since the last one (also when this one came with
 * others at a flush).
 */
static enum ae_pace trbuf_pace(struct trbuf_source *ts)
{
	uint64_t total = (uint64_t)ts->info.nr_cpus * ts->info.nr_subbufs;
	struct trbuf_status st;
	enum ae_pace pace = ts->waited ? AE_PACE_IDLE : AE_PACE_STEADY;

	ts->waited = 0;

	if (ioctl(ts->fd, TRBUF_IOC_STATUS, &st))
		return pace;
	if (st.overflow_waits != ts->overflow_waits ||
	    (st.subbufs_full - ts->full0 > ts->taken &&
	     st.subbufs_full - ts->full0 - ts->taken > total / 2))
		pace = AE_PACE_BEHIND;
	ts->overflow_waits = st.overflow_waits;
	return pace;
}

/* Fetch every marker of the handed-out sub-buffer @k into ts->mk. */
static int fetch_markers(struct trbuf_source *ts, const struct trbuf_subbuf *k)
{
	struct trbuf_sb_markers req = { .cpu = k->cpu, .index = k->index, .seq = k->seq };

	ts->nmk = ts->mk_taken = 0;
	do {
		if (ts->nmk == ts->mk_cap) {
			size_t cap = ts->mk_cap ? 2 * ts->mk_cap : 1024;
			struct trbuf_marker *m = realloc(ts->mk, cap * sizeof(*m));

			if (!m)
				return -ENOMEM;
			ts->mk = m;
			ts->mk_cap = cap;
		}
		req.start = ts->nmk;
		req.markers = (uintptr_t)(ts->mk + ts->nmk);
		req.max = ts->mk_cap - ts->nmk;
		if (ioctl(ts->fd, TRBUF_IOC_GET_MARKERS, &req))
			return -errno;
		if (req.count > req.max)
			return -EPROTO;
		ts->nmk += req.count;
	} while (ts->nmk < req.total && req.count);
	return ts->nmk == req.total ? 0 : -EPROTO;
}

static int trbuf_next(struct bdump_source *s, struct bdump_subbuf *sb, int timeout_ms)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	struct trbuf_subbuf k;

	for (int tries = 0; tries < 2; tries++) {
		struct pollfd pfd = { .fd = ts->fd, .events = POLLIN };

		if (ioctl(ts->fd, TRBUF_IOC_GET_SUBBUF, &k) == 0) {
			int ret;

			if (k.offset + k.len > ts->info.map_size || k.len > AE_CHUNK_MAX_LEN)
				return -EPROTO;
			ret = fetch_markers(ts, &k);
			if (ret)
				return ret;
			*sb = (struct bdump_subbuf){ .cpu = k.cpu, .index = k.index,
				.seq = k.seq, .data = ts->map + k.offset, .len = k.len };
			ts->taken++;
			sb->pace = trbuf_pace(ts);
			return 1;
		}
		if (errno != EAGAIN)
			return -errno;
		ts->waited = 1;
		if (tries || poll(&pfd, 1, timeout_ms) <= 0)
			break;
	}
	return 0;
}

static int trbuf_put(struct bdump_source *s, const struct bdump_subbuf *sb)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	struct trbuf_subbuf k = { .cpu = sb->cpu, .index = sb->index, .seq = sb->seq,
				  .len = sb->len };

	return ioctl(ts->fd, TRBUF_IOC_PUT_SUBBUF, &k) ? -errno : 0;
}

static ssize_t trbuf_markers(struct bdump_source *s, struct trbuf_marker *m, size_t max)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	size_t n = ts->nmk - ts->mk_taken;

	if (n > max)
		n = max;
	memcpy(m, ts->mk + ts->mk_taken, n * sizeof(*m));
	ts->mk_taken += n;
	return n;
}

static int trbuf_flush(struct bdump_source *s)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	int kept = ioctl(ts->fd, TRBUF_IOC_FLUSH);

	return kept < 0 ? -errno : kept;
}

static uint64_t trbuf_drops(struct bdump_source *s)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	struct trbuf_status st;

	if (ioctl(ts->fd, TRBUF_IOC_STATUS, &st))
		return 0;
	return st.markers_lost + st.discarded;
}

static void trbuf_close(struct bdump_source *s)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;

	munmap(ts->map, ts->info.map_size);
	close(ts->fd);
	free(ts->mk);
	free(ts);
}

int bdump_source_trbuf_open(struct bdump_source **sp, const char *dev)
{
	struct trbuf_source *ts = calloc(1, sizeof(*ts));
	struct trbuf_status st;
	int ret;

	if (!ts)
		return -ENOMEM;
	ts->fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (ts->fd < 0) {
		ret = -errno;
		goto err_free_ts;
	}
	if (ioctl(ts->fd, TRBUF_IOC_CONSUMER, &ts->info)) {
		ret = -errno;
		goto err_close_fd;
	}
	/* the driver accepts the buffer only at its fixed address */
	ts->map = mmap((void *)TRBUF_MAP_ADDR, ts->info.map_size, PROT_READ,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, ts->fd, 0);
	if (ts->map == MAP_FAILED) {
		ret = -errno;
		goto err_close_fd;
	}
	if (ts->map != (void *)TRBUF_MAP_ADDR) {	/* kernel without NOREPLACE */
		munmap(ts->map, ts->info.map_size);
		ret = -EEXIST;
		goto err_close_fd;
	}
	if (!ioctl(ts->fd, TRBUF_IOC_STATUS, &st)) {
		ts->full0 = st.subbufs_full;
		ts->overflow_waits = st.overflow_waits;
	}
	ts->s.session = (struct ae_session){
		.version = AE_FORMAT_VERSION, .mode = AE_MODE_KERNEL,
		.nr_cpus = ts->info.nr_cpus, .subbuf_size = ts->info.subbuf_size,
		.nr_subbufs = ts->info.nr_subbufs,
	};
	snprintf(ts->s.strings, sizeof(ts->s.strings), "device=%s", dev);
	ts->s.next = trbuf_next;
	ts->s.put = trbuf_put;
	ts->s.markers = trbuf_markers;
	ts->s.flush = trbuf_flush;
	ts->s.drops = trbuf_drops;
	ts->s.close = trbuf_close;
	ts->s.drain_on_stop = 1;
	*sp = &ts->s;
	return 0;

err_close_fd:
	close(ts->fd);
err_free_ts:
	free(ts);
	return ret;
}
