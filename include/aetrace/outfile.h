/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - the file a capture is written to (schedlog/outfile.c,
 * libschedlog.a): aerun -o, bdump's trace and schedule files.
 */
#ifndef AETRACE_OUTFILE_H
#define AETRACE_OUTFILE_H

/*
 * Open path for writing a new capture, created with mode 0644 (less the
 * umask). A regular file already there, the caller's own, with no other
 * name and no extended attributes, that it may write is replaced: a new
 * file with its group and permissions is renamed over it (the name always
 * names a whole file; a reader holding the old one keeps it), not
 * truncated in place. ext4 forces the block allocation and writeback of
 * a file truncated to zero when it is closed (its auto_da_alloc), on the
 * writer's time: capturing bzip2's data trace over the last run's file
 * took 0.6 s where a new file took 0.45 (docs/ARCHITECTURE.md item 28).
 * Anything else (another's file, a symlink, a device such as /dev/null,
 * a FIFO, a file with other names, ACLs or labels, a directory the caller
 * may not write or whose default ACL the new file would take) is opened
 * and truncated as before.
 * Returns the descriptor (close-on-exec) or -errno.
 */
int schedlog_open_output(const char *path);

#endif /* AETRACE_OUTFILE_H */
