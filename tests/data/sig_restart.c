/* A blocking read interrupted by SIGALRMs whose handler has SA_RESTART:
 * the kernel moves %rip back onto the system call before it builds the
 * signal frame, after the tracer's signal-delivery stop. The third
 * handler writes the byte the read waits for. The SIGNAL markers must
 * say where the task really resumes (aerun: from the frame), or the
 * handlers' sigreturns look like changed contexts. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

static int fds[2];
static volatile int handled;

static void on_alrm(int sig)
{
	(void)sig;
	if (++handled == 3 && write(fds[1], "x", 1) != 1)
		_exit(2);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alrm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	char c = 0;

	if (pipe(fds) || sigaction(SIGALRM, &sa, 0) || setitimer(ITIMER_REAL, &it, 0))
		return 1;
	if (read(fds[0], &c, 1) != 1)
		return 1;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, 0);
	printf("read %c after %d handlers\n", c, handled);
	return c != 'x';
}
