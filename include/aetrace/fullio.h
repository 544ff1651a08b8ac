/* SPDX-License-Identifier: MIT */
/*
 * fullio.h - whole reads and writes on file descriptors (schedlog/fullio.c,
 * libschedlog.a), at the current offset or at a given one: retry partial
 * transfers and EINTR. The one family of such loops in the user side.
 */
#ifndef AETRACE_FULLIO_H
#define AETRACE_FULLIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read up to len bytes. Returns the bytes read (less than len only at end
 * of file) or -errno. */
ssize_t schedlog_read_full(int fd, void *buf, size_t len);
/* Write all len bytes. Returns 0 or -errno. */
int schedlog_write_full(int fd, const void *buf, size_t len);
/* Read exactly len bytes at off. Returns 0, -ENODATA when the file ends
 * first, or -errno. */
int schedlog_pread_full(int fd, void *buf, size_t len, uint64_t off);
/* Write all len bytes at off. Returns 0 or -errno. */
int schedlog_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif /* AETRACE_FULLIO_H */
