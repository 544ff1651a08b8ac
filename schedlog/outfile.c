// SPDX-License-Identifier: MIT
/* outfile.c - the file a capture is written to (include/aetrace/outfile.h) */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <aetrace/outfile.h>

int schedlog_open_output(const char *path)
{
	struct stat st;
	int fd;

	if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_size > 0 &&
	    !unlink(path)) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		/* created again since: that one is truncated */
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}
