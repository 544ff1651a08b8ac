// SPDX-License-Identifier: MIT
/*
 * salvage.c - `aetrace salvage IN OUT`: the chunks of a capture that was
 * cut short (aerun or bdump killed, a full disk, a lost link), each one
 * whole and checked, copied into a file every reader accepts. A cut file
 * ends inside a zstd frame, which every reader refuses (so that a cut is
 * never taken for an end); its chunks up to the cut are sound. OUT has no
 * END chunk: `aetrace regen OUT` regenerates what it holds and says that
 * the capture was cut short; a task whose START or parent's FORK lies past
 * the cut (aerun writes a task's markers with its sub-buffer: a parent
 * that commits late) is skipped, with a warning. An END that does not
 * count the chunks before it says chunks were cut out of the file: that
 * is damage, not a cut (a lost MARKERS chunk would join a task's slices
 * across the hole), and nothing is salvaged. The copy ends at END.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <aetrace/container.h>
#include "salvage.h"

int ae_salvage_main(int argc, char **argv)
{
	struct ae_writer_opts wo = { .level = 1 };
	struct ae_reader *r = NULL;
	struct ae_writer *w = NULL;
	struct ae_chunk_hdr h;
	const void *pl;
	struct ae_end kept = { 0 };
	unsigned long long chunks = 0;
	struct stat si, so;
	int fd, ret, session = 0, end = 0, rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: aetrace salvage CUT OUT   (a cut-short capture's sound chunks, into OUT)\n");
		return 2;
	}
	/* OUT is truncated first: never the file being rescued */
	if (!stat(argv[1], &si) && !stat(argv[2], &so) && si.st_dev == so.st_dev &&
	    si.st_ino == so.st_ino) {
		fprintf(stderr, "aetrace salvage: %s and %s are one file: give another OUT\n",
			argv[1], argv[2]);
		return 2;
	}
	ret = ae_reader_open(&r, argv[1]);
	if (ret) {
		fprintf(stderr, "aetrace salvage: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "aetrace salvage: %s: %s\n", argv[2], strerror(errno));
		goto out_close_reader;
	}
	ret = ae_writer_open(&w, fd, &wo);
	if (ret) {
		fprintf(stderr, "aetrace salvage: %s: %s\n", argv[2], strerror(-ret));
		close(fd);
		goto out_close_reader;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (!chunks && h.type != AE_CHUNK_SESSION)
			break;	/* not a capture: said below */
		if (h.type == AE_CHUNK_END) {
			struct ae_end e = { 0 };

			memcpy(&e, pl, h.len < sizeof(e) ? h.len : sizeof(e));
			if (h.len != sizeof(e) || !ae_end_matches(&e, &kept)) {
				fprintf(stderr, "aetrace salvage: %s: the END chunk at offset %llu does not count the chunks before it (%llu DATA chunks, %llu witness bytes, %llu markers; it says %llu, %llu, %llu): chunks were cut out of the file, which is damaged, not cut short: nothing salvaged\n",
					argv[1], (unsigned long long)ae_reader_offset(r),
					(unsigned long long)kept.data_chunks,
					(unsigned long long)kept.raw_bytes,
					(unsigned long long)kept.markers,
					(unsigned long long)e.data_chunks,
					(unsigned long long)e.raw_bytes,
					(unsigned long long)e.markers);
				goto out_close_writer;
			}
		}
		if (ae_writer_chunk(w, h.type, h.cpu, h.seq, pl, h.len, 0)) {
			fprintf(stderr, "aetrace salvage: %s: cannot write\n", argv[2]);
			goto out_close_writer;
		}
		chunks++;
		session |= h.type == AE_CHUNK_SESSION;
		ae_end_tally(&kept, &h);
		if (h.type == AE_CHUNK_END) {
			end = 1;
			ret = ae_reader_next(r, &h, &pl);
			if (ret == 1)
				fprintf(stderr, "aetrace salvage: %s: chunks after the END chunk, from offset %llu: left out\n",
					argv[1], (unsigned long long)ae_reader_offset(r));
			if (ret > 0)
				ret = 0;
			break;
		}
	}
	if (!session) {
		fprintf(stderr, "aetrace salvage: %s: %s\n", argv[1],
			ret < 0 ? ae_reader_error(r) : "no SESSION chunk first: not a capture");
		goto out_close_writer;
	}
	/* where and why the copy stopped: the cut, or damage before it */
	if (ret < 0)
		fprintf(stderr, "aetrace salvage: %s: stopped: %s\n", argv[1], ae_reader_error(r));
	fprintf(stderr, "aetrace salvage: %s: %llu chunks kept (%llu DATA chunks, %llu witness bytes, %llu markers)%s\n",
		argv[2], chunks, (unsigned long long)kept.data_chunks,
		(unsigned long long)kept.raw_bytes, (unsigned long long)kept.markers,
		end ? ", END included: the capture was complete" : ", no END");
	rc = 0;
out_close_writer:
	if (ae_writer_close(w, NULL) && !rc) {
		fprintf(stderr, "aetrace salvage: %s: cannot write\n", argv[2]);
		rc = 1;
	}
	if (close(fd) && !rc)
		rc = 1;
	if (rc)
		unlink(argv[2]);	/* no half-made OUT left behind */
out_close_reader:
	ae_reader_close(r);
	return rc;
}
