// SPDX-License-Identifier: MIT
/*
 * sched_workload.c - a workload whose scheduler events are known, for the
 * BPF recorder tests (tests/host/schedlog-record.sh):
 *
 *   sched_workload sleep N   fork; the child execs `sched_workload child N`,
 *                            which sleeps 1 ms N times and exits with 7;
 *                            prints "parent PID child PID"
 *   sched_workload pingpong N  two processes pass a byte N times through
 *                            pipes (2N blocking switches)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static int sleeper(int n)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 7;
}

static int pingpong(int n)
{
	int a[2], b[2];
	char c = 0;
	pid_t pid;

	if (pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		if (pid == 0) {
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		} else {
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				return 1;
		}
	}
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	int n, st;
	pid_t pid;
	char num[16], self[4096];
	ssize_t len;

	if (argc != 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: sched_workload sleep|child|pingpong N\n");
		return 2;
	}
	if (!strcmp(argv[1], "child"))
		return sleeper(n);
	if (!strcmp(argv[1], "pingpong"))
		return pingpong(n);
	snprintf(num, sizeof(num), "%d", n);
	/* exec by real path: the child's new comm is "sched_workload" */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = 0;
	pid = fork();
	if (pid == 0) {
		execl(self, argv[0], "child", num, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	printf("parent %d child %d status %d\n", (int)getpid(), (int)pid, st);
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}
