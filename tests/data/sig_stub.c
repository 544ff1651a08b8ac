/* Signals in a loop whose back edge writes a witness (-fae-data): one
 * that comes in that edge's stub, before the witness byte, must be placed
 * after this iteration's body, not at the head of the same iteration,
 * which the regenerator reached at the same trace offset. The handler
 * loads probe[cnt % 4096], cnt the iterations main has finished; the
 * last store into arr before the handler is arr[i % 4096] of the
 * iteration it interrupted: cnt - 1 or cnt. The loop bound is loaded
 * from memory and never an address, so the branch is no decided one. */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static volatile unsigned long cnt, lim = 3000000;
static unsigned char arr[4096], probe[4096];
static volatile int got;

static const struct itimerval off;

/* (at most 20000 signals: on a loaded machine a delivery under aerun can
 * take longer than the timer's period, and the loop would hardly move) */
static void on_alarm(int sig)
{
	(void)sig;
	*(volatile unsigned char *)(probe + cnt % 4096);
	if (++got == 20000)
		setitimer(ITIMER_REAL, &off, NULL);
}

/* argv[1]: iterations (default 3000000) */
int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 100 }, { 0, 100 } };

	if (argc > 1)
		lim = strtoul(argv[1], NULL, 10);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned long i = 0; i < lim; i++) {
		((volatile unsigned char *)arr)[i % 4096] = 1;
		cnt = i + 1;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	return got ? 0 : 1;
}
