// SPDX-License-Identifier: MIT
/*
 * aerun_storm.c - signal storm for the aerun tests: send SIGNAL to PID
 * every USEC microseconds until it is gone (or a zombie), at most MAX times.
 * usage: aerun_storm PID|child-of:PID SIGNAL USEC MAX
 * The storm starts once the target has a handler for SIGNAL (SigCgt), so
 * no signal hits it before the program runs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The bit of sig in the SigCgt mask of pid, -1 if pid is gone. */
static int caught(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return (mask >> (sig - 1)) & 1;
}

/* First child of ppid, 0 if none yet. */
static pid_t child_of(pid_t ppid)
{
	char path[96];
	long c = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", ppid, ppid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &c) != 1)
		c = 0;
	fclose(f);
	return c;
}

int main(int argc, char **argv)
{
	long sent = 0, max;
	pid_t pid;
	int sig, usec;

	if (argc != 5) {
		fprintf(stderr, "usage: aerun_storm PID SIGNAL USEC MAX\n");
		return 2;
	}
	sig = atoi(argv[2]);
	usec = atoi(argv[3]);
	max = atol(argv[4]);
	for (int tries = 0;; tries++) {
		if (tries > 20000) {
			fprintf(stderr, "aerun_storm: %s never caught signal %d\n", argv[1], sig);
			return 1;
		}
		if (!strncmp(argv[1], "child-of:", 9))
			pid = child_of(atoi(argv[1] + 9));
		else
			pid = atoi(argv[1]);
		if (pid < 0) {
			fprintf(stderr, "aerun_storm: %s is gone\n", argv[1]);
			return 1;
		}
		if (pid > 0 && caught(pid, sig) == 1)
			break;
		usleep(500);
	}
	while (sent < max && alive(pid) && kill(pid, sig) == 0) {
		sent++;
		if (usec)
			usleep(usec);
	}
	printf("sent=%ld\n", sent);
	return 0;
}
