// SPDX-License-Identifier: MIT
/*
 * pingpong - a pipe ping-pong client/server pair in one program: the
 * parent (client) forks the server, sends it ROUNDS numbers over one pipe
 * and checks every answer on another. Each process's control flow is fixed
 * by its input (blocking reads of whole 8-byte messages), not by timing.
 * Exits 0 when every answer and the server's exit status are right.
 *
 * usage: pingpong [ROUNDS]   (default 200)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t serve(uint64_t x)
{
	return x * 2654435761u + 12345;
}

/* Reads exactly one 8-byte message; 0 on success, -1 on EOF or error. */
static int get(int fd, uint64_t *v)
{
	size_t got = 0;

	while (got < sizeof(*v)) {
		ssize_t n = read(fd, (char *)v + got, sizeof(*v) - got);

		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static int put(int fd, uint64_t v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static int server(int in, int out)
{
	uint64_t v, n = 0;

	while (!get(in, &v)) {
		if (put(out, serve(v)))
			return 1;
		n++;
	}
	return n ? 0 : 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	int req[2], rsp[2], status, bad = 0;
	uint64_t x = 1, y;
	pid_t pid;

	if (rounds <= 0 || pipe(req) || pipe(rsp)) {
		fprintf(stderr, "pingpong: bad rounds or pipe failed\n");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (!pid) {
		close(req[1]);
		close(rsp[0]);
		_exit(server(req[0], rsp[1]));
	}
	close(req[0]);
	close(rsp[1]);
	for (int i = 0; i < rounds; i++) {
		if (put(req[1], x) || get(rsp[0], &y)) {
			fprintf(stderr, "pingpong: round %d: pipe broke\n", i);
			return 1;
		}
		if (y != serve(x))
			bad++;
		x = y ^ (uint64_t)i;
	}
	close(req[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "pingpong: server failed (status %#x)\n", status);
		return 1;
	}
	if (bad) {
		fprintf(stderr, "pingpong: %d wrong answers\n", bad);
		return 1;
	}
	printf("pingpong: %d rounds ok, last %016llx\n", rounds, (unsigned long long)x);
	return 0;
}
