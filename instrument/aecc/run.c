// SPDX-License-Identifier: MIT
/* run.c - run one tool and wait for it */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

int ae_run(char *const argv[], int verbose)
{
	pid_t pid;
	int st;

	if (verbose) {
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, "%s%s", i ? " " : "+ ", argv[i]);
		fputc('\n', stderr);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "aecc: cannot run %s: fork: %s\n", argv[0], strerror(errno));
		return -1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "aecc: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "aecc: waiting for %s: %s\n", argv[0], strerror(errno));
			return -1;
		}
	}
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "aecc: %s killed by signal %d\n", argv[0], WTERMSIG(st));
		return -1;
	}
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}
