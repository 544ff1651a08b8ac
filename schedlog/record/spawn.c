// SPDX-License-Identifier: MIT
/* spawn.c - run schedlog-record beside another program (see spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "sched_event.h"
#include "spawn.h"

#define SPAWN_READY_TIMEOUT_S	120

static void describe(int st, char *err, size_t errlen)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == SCHED_RECORD_EXIT_NOBPF)
		snprintf(err, errlen, "schedlog-record: BPF unavailable on this kernel (status %d)",
			 SCHED_RECORD_EXIT_NOBPF);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(err, errlen, "schedlog-record not found (next to this program, in $PATH or $AE_SCHEDLOG_RECORD)");
	else if (WIFEXITED(st))
		snprintf(err, errlen, "schedlog-record failed (status %d: events lost or an error, see above)",
			 WEXITSTATUS(st));
	else
		snprintf(err, errlen, "schedlog-record killed by signal %d", WTERMSIG(st));
}

static int wait_child(pid_t pid, int *st)
{
	while (waitpid(pid, st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* In the child: exec the recorder; never returns. */
static void exec_recorder(const char *out, int ready_fd)
{
	const char *env = getenv("AE_SCHEDLOG_RECORD");
	char self[PATH_MAX], fd[16];
	ssize_t n;

	snprintf(fd, sizeof(fd), "%d", ready_fd);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (env && *env)
		execl(env, "schedlog-record", "-q", "-o", out, "--ready-fd", fd, (char *)NULL);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + sizeof("/schedlog-record") <= sizeof(self)) {
			strcpy(slash, "/schedlog-record");
			execl(self, "schedlog-record", "-q", "-o", out, "--ready-fd", fd, (char *)NULL);
		}
	}
	execlp("schedlog-record", "schedlog-record", "-q", "-o", out, "--ready-fd", fd, (char *)NULL);
	_exit(127);
}

pid_t schedlog_record_spawn(const char *out, char *err, size_t errlen)
{
	int p[2], st;
	char c;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int fd = dup(p[1]);	/* without O_CLOEXEC: the recorder inherits it */

		exec_recorder(out, fd < 0 ? p[1] : fd);
	}
	close(p[1]);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		return -1;
	}
	/* loading is slow under emulation, but not this slow */
	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int r, waited = 0;

		while ((r = poll(&pfd, 1, 1000)) <= 0 && waited < SPAWN_READY_TIMEOUT_S) {
			if (r == 0)
				waited++;
			else if (errno != EINTR)
				break;
		}
		n = r > 0 ? read(p[0], &c, 1) : -1;
	}
	close(p[0]);
	if (n == 1)
		return pid;
	/* EOF or no word in time: it ended (or hangs) without recording */
	kill(pid, n < 0 ? SIGKILL : SIGTERM);
	if (wait_child(pid, &st))
		snprintf(err, errlen, "schedlog-record: wait: %s", strerror(errno));
	else if (n < 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		snprintf(err, errlen, "schedlog-record was not recording after %d s (killed)",
			 SPAWN_READY_TIMEOUT_S);
	else
		describe(st, err, errlen);
	return -1;
}

int schedlog_record_stop(pid_t pid, char *err, size_t errlen)
{
	int st;

	if (kill(pid, SIGTERM) && errno != ESRCH) {
		snprintf(err, errlen, "schedlog-record: kill: %s", strerror(errno));
		return -1;
	}
	if (wait_child(pid, &st)) {
		snprintf(err, errlen, "schedlog-record: wait: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	describe(st, err, errlen);
	return -1;
}
