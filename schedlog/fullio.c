// SPDX-License-Identifier: MIT
/* fullio.c - whole reads and writes, positional or not (include/aetrace/fullio.h) */
#include <errno.h>
#include <unistd.h>

#include <aetrace/fullio.h>

/* No offset: transfer at the file's current offset (read/write). */
#define FULLIO_CUR	((uint64_t)-1)

/*
 * Move len bytes between buf and fd, at off or (FULLIO_CUR) at the current
 * offset, retrying EINTR and partial transfers. Returns the bytes moved
 * (less than len only when a read meets the end of the file) or -errno.
 */
static ssize_t fullio_xfer(int fd, void *buf, size_t len, uint64_t off, int wr)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n;

		if (off == FULLIO_CUR)
			n = wr ? write(fd, p + done, len - done) : read(fd, p + done, len - done);
		else if (wr)
			n = pwrite(fd, p + done, len - done, off + done);
		else
			n = pread(fd, p + done, len - done, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return wr ? -EIO : (ssize_t)done;
		done += n;
	}
	return done;
}

ssize_t schedlog_read_full(int fd, void *buf, size_t len)
{
	return fullio_xfer(fd, buf, len, FULLIO_CUR, 0);
}

int schedlog_write_full(int fd, const void *buf, size_t len)
{
	ssize_t n = fullio_xfer(fd, (void *)buf, len, FULLIO_CUR, 1);

	return n < 0 ? n : 0;
}

int schedlog_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (off == FULLIO_CUR)
		return -EINVAL;
	n = fullio_xfer(fd, buf, len, off, 0);
	if (n < 0)
		return n;
	return (size_t)n < len ? -ENODATA : 0;
}

int schedlog_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (off == FULLIO_CUR)
		return -EINVAL;
	n = fullio_xfer(fd, (void *)buf, len, off, 1);
	return n < 0 ? n : 0;
}
