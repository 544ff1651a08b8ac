// SPDX-License-Identifier: MIT
/*
 * source_trbuf.c - the real source: /dev/trbuf as consumer
 * (include/uapi/linux/trbuf.h): map the whole buffer read-only at
 * TRBUF_MAP_ADDR (sub-buffer offsets are relative to it), take full
 * sub-buffers with GET_SUBBUF, give them back with PUT_SUBBUF, read
 * schedule markers with read(2).
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
};

static int trbuf_next(struct bdump_source *s, struct bdump_subbuf *sb, int timeout_ms)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;
	struct trbuf_subbuf k;

	for (int tries = 0; tries < 2; tries++) {
		struct pollfd pfd = { .fd = ts->fd, .events = POLLIN };

		if (ioctl(ts->fd, TRBUF_IOC_GET_SUBBUF, &k) == 0) {
			if (k.offset + k.len > ts->info.map_size || k.len > AE_CHUNK_MAX_LEN)
				return -EPROTO;
			*sb = (struct bdump_subbuf){ .cpu = k.cpu, .index = k.index,
				.seq = k.seq, .data = ts->map + k.offset, .len = k.len };
			return 1;
		}
		if (errno != EAGAIN)
			return -errno;
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
	ssize_t n = read(ts->fd, m, max * sizeof(*m));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return n / sizeof(*m);
}

static int trbuf_flush(struct bdump_source *s)
{
	struct trbuf_source *ts = (struct trbuf_source *)s;

	return ioctl(ts->fd, TRBUF_IOC_FLUSH) ? -errno : 0;
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
	free(ts);
}

int bdump_source_trbuf_open(struct bdump_source **sp, const char *dev)
{
	struct trbuf_source *ts = calloc(1, sizeof(*ts));
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
