// SPDX-License-Identifier: MIT
/*
 * spawn - starts PROG twice through the vfork paths: posix_spawn (musl:
 * clone with CLONE_VM | CLONE_VFORK and a child stack of its own) and
 * vfork + execve; checks both exit 0.
 *
 * usage: spawn PROG [ARG]
 */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *av[3];
	int st1 = -1, st2 = -1;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: spawn PROG [ARG]\n");
		return 2;
	}
	av[0] = argv[1];
	av[1] = argc > 2 ? argv[2] : NULL;
	av[2] = NULL;
	fflush(stdout);
	if (posix_spawn(&pid, argv[1], NULL, NULL, av, environ) ||
	    waitpid(pid, &st1, 0) != pid)
		return 1;
	pid = vfork();
	if (!pid) {
		execve(argv[1], av, environ);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st2, 0) != pid)
		return 1;
	if (st1 || st2) {
		fprintf(stderr, "spawn: children exited with status %#x and %#x\n", st1, st2);
		return 1;
	}
	printf("spawn: both children ok\n");
	return 0;
}
