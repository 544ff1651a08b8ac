// SPDX-License-Identifier: MIT
/*
 * fuzz_container.c - libFuzzer target: the container reader and the
 * capture check (`bdump --check`, also run by bdump-recv on every finished
 * session) on arbitrary files. Input byte 0 chooses whether the rest is
 * the file itself or the decompressed chunk stream (compressed here, so
 * that the fuzzer reaches the chunk parser, not only zstd's frame checks).
 * Never a crash, a leak or undefined behaviour; every error has a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <zstd.h>

#include <aetrace/container.h>
#include "bdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], msg[1024];
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	void *z = NULL;
	int fd, ret;

	if (!size)
		return 0;
	fd = memfd_create("fuzz", 0);
	if (fd < 0)
		abort();
	if (data[0] & 1) {
		size_t cap = ZSTD_compressBound(size - 1), n;

		z = malloc(cap);
		n = ZSTD_compress(z, cap, data + 1, size - 1, 1);
		if (ZSTD_isError(n) || write(fd, z, n) != (ssize_t)n)
			abort();
	} else if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ae_reader_open(&r, path) == 0) {
		while ((ret = ae_reader_next(r, &h, &pl)) == 1)
			if (h.len && !pl)
				abort();
		if (ret < 0 && !strstr(ae_reader_error(r), "offset"))
			abort();	/* an error must say where */
		ae_reader_close(r);
	}
	msg[0] = 0;
	bdump_check_report(path, data[0] & 2 ? path : NULL, msg, sizeof(msg));
	if (!msg[0])
		abort();	/* a verdict always */
	close(fd);
	free(z);
	return 0;
}
