// SPDX-License-Identifier: MIT
/*
 * forkloop - forks N children one after another, each exiting at once, and
 * waits for each: a program that is often inside fork, for tests that
 * kill it there. SIGCHLD is blocked: a traced forkloop stops (ptrace) only
 * in fork and exit events, never for the signal.
 *
 * usage: forkloop N
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	sigset_t chld;

	if (!n) {
		fprintf(stderr, "usage: forkloop N\n");
		return 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	for (unsigned i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("forkloop: fork");
			return 1;
		}
		if (!p)
			_exit(0);
		if (waitpid(p, NULL, 0) != p)
			return 1;
	}
	printf("forkloop: %u children\n", n);
	return 0;
}
