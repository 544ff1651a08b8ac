// SPDX-License-Identifier: MIT
/*
 * grpsig - signals and the process group: `grpsig group` sends SIGUSR1 to
 * its whole process group (kill(0, ...), as programs that manage a job
 * do) and expects its own handler to run; `grpsig wait SECS` waits that
 * long for a SIGUSR1 from someone else. Exits 0 when the handler ran.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	got = sig;
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	unsigned wait_ms = 1000;

	if (argc < 2 || (strcmp(argv[1], "group") && strcmp(argv[1], "wait"))) {
		fprintf(stderr, "usage: grpsig group | grpsig wait SECS\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	if (!strcmp(argv[1], "group")) {
		kill(0, SIGUSR1);
	} else {
		wait_ms = argc > 2 ? 1000u * atoi(argv[2]) : 5000;
		printf("grpsig: waiting\n");
		fflush(stdout);
	}
	for (unsigned i = 0; i < wait_ms && !got; i++)
		nanosleep(&ms, NULL);
	printf("grpsig: %s\n", got ? "got SIGUSR1" : "no signal");
	return !got;
}
