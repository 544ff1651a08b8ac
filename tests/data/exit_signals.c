// SPDX-License-Identifier: MIT
/*
 * exit_signals.c - a thread raising signals in a loop while the main
 * thread exits the process after argv[1] microseconds: exit_group() kills
 * the thread wherever it is, in its handler, its rt_sigreturn or the
 * kernel's delivery of the next signal, which is where a producer's stops
 * (aerun's) meet the kill. With argv[2] "vfork", the thread vforks
 * children that exit at once, in a loop: a parent blocked in vfork is
 * killed too. Every run must capture and regenerate.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink[256];

static void on_usr1(int sig)
{
	for (int i = 0; i < 256; i++)
		sink[i] += sig + (sink[(i * 7) & 255] & 3);
}

static void *raiser(void *arg)
{
	for (;;)
		raise(SIGUSR1);
	return arg;
}

static void *vforker(void *arg)
{
	for (;;) {
		pid_t p = vfork();

		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th;

	signal(SIGUSR1, on_usr1);
	if (pthread_create(&th, NULL, argc > 2 && !strcmp(argv[2], "vfork") ? vforker : raiser, NULL))
		return 1;
	usleep(argc > 1 ? atoi(argv[1]) : 2000);
	exit(0);
}
