// SPDX-License-Identifier: MIT
/*
 * dropexec - becomes another user (setgid, setuid), then execs PROG: a
 * traced program that drops root's privileges before it starts another
 * one, which then cannot open what root's aerun holds.
 *
 * usage: dropexec UID PROG [ARG...]   (exits 3 when it cannot change user)
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned id;

	if (argc < 3) {
		fprintf(stderr, "usage: dropexec UID PROG [ARG...]\n");
		return 2;
	}
	id = (unsigned)atoi(argv[1]);
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		perror("dropexec: changing user");
		return 3;
	}
	execv(argv[2], argv + 2);
	perror("dropexec: execv");
	return 127;
}
