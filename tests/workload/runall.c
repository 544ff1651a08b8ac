// SPDX-License-Identifier: MIT
/*
 * runall - the workload driver: starts every command at once (fork +
 * exec each), waits for all and checks that each exited 0. Commands are
 * separated by a lone ":".
 *
 * usage: runall PROG [ARGS...] [: PROG [ARGS...]]...
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CMDS 16

extern char **environ;

int main(int argc, char **argv)
{
	pid_t pid[MAX_CMDS];
	char *name[MAX_CMDS];
	int n = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		int j = i;

		while (j < argc && strcmp(argv[j], ":"))
			j++;
		if (j == i || n == MAX_CMDS) {
			fprintf(stderr, "usage: runall PROG [ARGS...] [: PROG [ARGS...]]... (at most %d)\n",
				MAX_CMDS);
			return 2;
		}
		argv[j < argc ? j : argc] = NULL;
		name[n] = argv[i];
		fflush(stdout);
		pid[n] = fork();
		if (pid[n] < 0) {
			perror("runall: fork");
			return 1;
		}
		if (!pid[n]) {
			execve(argv[i], argv + i, environ);
			perror("runall: execve");
			_exit(127);
		}
		n++;
		i = j;
	}
	if (!n) {
		fprintf(stderr, "usage: runall PROG [ARGS...] [: PROG [ARGS...]]...\n");
		return 2;
	}
	for (int k = 0; k < n; k++) {
		int status;

		if (waitpid(pid[k], &status, 0) != pid[k] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "runall: %s failed (status %#x)\n", name[k], status);
			bad++;
		}
	}
	printf("runall: %d programs, %d failed\n", n, bad);
	return bad ? 1 : 0;
}
