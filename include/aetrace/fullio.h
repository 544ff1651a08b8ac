/* SPDX-License-Identifier: MIT */
/*
 * fullio.h - whole reads and writes on file descriptors (schedlog/fullio.c,
 * libschedlog.a): retry partial transfers and EINTR.
 */
#ifndef AETRACE_FULLIO_H
#define AETRACE_FULLIO_H

#include <stddef.h>
#include <sys/types.h>

/* Read up to len bytes. Returns the bytes read (less than len only at end
 * of file) or -errno. */
ssize_t schedlog_read_full(int fd, void *buf, size_t len);
/* Write all len bytes. Returns 0 or -errno. */
int schedlog_write_full(int fd, const void *buf, size_t len);

#endif /* AETRACE_FULLIO_H */
