/* Asynchronous signals inside expanded library routines (-fae-data): a
 * fast SIGALRM interrupts a program that spends nearly all its time in
 * memcpy, memset, strlen and long compares (whose entry scans both
 * strings before the routine runs: a signal there restarts the scan);
 * the handler calls memcpy, strlen and strcmp too.
 * The regeneration must consume every byte (each handler is entered
 * after the routine it interrupted) and the traced run must behave like
 * its twin. The output does not depend on when or how often the signal
 * arrives. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile unsigned ticks;
static char a[16384], b[16384];
static char hbuf[256];

static void on_alarm(int sig)
{
	memcpy(hbuf, "tick tock", 10);
	ticks += strlen(hbuf) == 9 && strcmp(hbuf, "tick") > 0;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	unsigned long sum = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(a, 'a', sizeof(a) - 1);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 1000 || (!ticks && i < 100000); i++) {
		memcpy(b + (i & 7), a, sizeof(a) - 8);
		memset(b + 3, 'b', 5000 + i);
		b[sizeof(b) - 1] = 0;
		sum += strlen(b + (i & 3));
		sum += memcmp(a, a + 1, sizeof(a) - 2) == 0;
		sum += strcmp(a + 1 + (i & 1), a) < 0;
		sum += strncmp(a, a + 2, 9000 + i) == 0;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("signal_memfn %lu ticked=%d\n", sum, ticks > 0);
	return 0;
}
