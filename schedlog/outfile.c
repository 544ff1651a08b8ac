// SPDX-License-Identifier: MIT
/* outfile.c - the file a capture is written to (include/aetrace/outfile.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <aetrace/outfile.h>

/*
 * A new empty file in old's place, with old's group and permissions (st;
 * not set-user or set-group-ID, which a write would clear), put there by
 * rename(): the name always names a whole file, the old one or the new.
 * Returns its descriptor, or -1 when it cannot be made so (the caller
 * truncates in place). A kill between the create and the rename leaves
 * an empty PATH.XXXXXX of mode 0600.
 */
static int replace(const char *path, const struct stat *st)
{
	char tmp[PATH_MAX];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* (a directory's default ACL would give the new file readers the
	 * old one did not have) */
	if (fchown(fd, (uid_t)-1, st->st_gid) || fchmod(fd, st->st_mode & 01777) ||
	    flistxattr(fd, NULL, 0) != 0 || rename(tmp, path)) {
		unlink(tmp);
		close(fd);
		return -1;
	}
	return fd;
}

int schedlog_open_output(const char *path)
{
	struct stat st, st2;
	int fd;

	/* a regular file of ours with no other name and no extended
	 * attributes (ACLs, labels): replaced, if O_TRUNC would have opened
	 * it (write permission; another's file in a sticky directory, which
	 * fs.protected_regular refuses to O_CREAT, is left to that refusal);
	 * anything else (a symlink, a device, a FIFO, which a second open
	 * would close under its reader) is opened once, as before */
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_size > 0 &&
	    st.st_uid == geteuid()) {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT && errno != ELOOP)
			return -errno;
		if (fd >= 0 && !fstat(fd, &st2) && st2.st_ino == st.st_ino && st2.st_dev == st.st_dev &&
		    st2.st_nlink == 1 && flistxattr(fd, NULL, 0) == 0) {
			int nfd = replace(path, &st2);

			if (nfd >= 0) {
				close(fd);
				return nfd;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}
