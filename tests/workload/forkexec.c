// SPDX-License-Identifier: MIT
/*
 * forkexec - forks and execs another (traced) program, LEAF, twice: once
 * with N and once with N/2, working on its own in between; checks that both
 * children exit 0. The twin runs LEAF's twin at a path of the same length,
 * so traced and untraced runs see the same argv bytes.
 *
 * usage: forkexec LEAF [N]   (default N 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int run(const char *leaf, unsigned n)
{
	char arg[16];
	char *argv[] = { (char *)leaf, arg, NULL };
	int status;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%u", n);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return -1;
	}
	if (!pid) {
		execve(leaf, argv, environ);
		perror("forkexec: execve");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned long long h = 1469598103934665603ull;
	int r1, r2;

	if (argc < 2 || !n) {
		fprintf(stderr, "usage: forkexec LEAF [N]\n");
		return 2;
	}
	r1 = run(argv[1], n);
	for (unsigned i = 0; i < 20000; i++)
		h = (h ^ i) * 1099511628211ull;
	r2 = run(argv[1], n / 2 ? n / 2 : 1);
	if (r1 || r2) {
		fprintf(stderr, "forkexec: children exited %d and %d\n", r1, r2);
		return 1;
	}
	printf("forkexec: both children ok, hash %016llx\n", h);
	return 0;
}
