// SPDX-License-Identifier: MIT
/* paths.c - the parts of the aetrace tree aecc builds with */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"

/* Where the project's parts live: <top>/bin/aecc -> <top>. */
static const char *top(void)
{
	static char t[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (t[0])
		return t;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		t[0] = '.';
		return t;
	}
	exe[n] = 0;
	snprintf(t, sizeof(t), "%s", dirname(dirname(exe)));
	return t;
}

/* A part of the tree: $ENV when set, else <top>/REL (in buf). */
static const char *tree_path(char *buf, size_t len, const char *env, const char *rel)
{
	const char *e = env ? getenv(env) : NULL;

	if (e)
		return e;
	if ((size_t)snprintf(buf, len, "%s/%s", top(), rel) >= len) {
		fprintf(stderr, "aecc: path of %s too long\n", rel);
		exit(2);
	}
	return buf;
}

const char *ae_musl_dir(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), "AECC_MUSL", "build/musl");
}

const char *ae_musl_data_dir(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), "AECC_MUSL_DATA", "build/musl-data");
}

const char *ae_libae(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), "AECC_LIBAE", "build/instrument/libae.a");
}

const char *ae_libaert_data(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), NULL, "build/instrument/libaert-data.a");
}

const char *ae_libaert(void)
{
	static char p[PATH_MAX];

	return tree_path(p, sizeof(p), NULL, "build/instrument/libaert.a");
}
