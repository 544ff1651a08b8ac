/* Covers: an ASYNCHRONOUS signal: SIGALRM from setitimer(ITIMER_REAL)
 * interrupting a syscall-free computation at arbitrary instructions.
 * The output does not depend on when or how often the signal arrives.
 * Trace comparison (tests/host/trace-exact.sh) removes on_alarm,
 * wait_for_alarm and musl's __restore_rt from both sides: all
 * timing-dependent instructions are in those three functions.
 * wait_for_alarm makes sure at least one SIGALRM is handled, using a raw
 * pause syscall so that no libc code runs a timing-dependent number of
 * times. */
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>

static volatile unsigned ticks;

__attribute__((noinline)) static void on_alarm(int sig)
{
	ticks++;
}

__attribute__((noinline)) static void wait_for_alarm(void)
{
	while (!ticks) {
		long rc;

		asm volatile("syscall" : "=a"(rc) : "0"((long)SYS_pause)
			     : "rcx", "r11", "memory");
	}
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 50 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	unsigned x = 1;
	int i;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 40000; i++)
		x = x * 1103515245 + (x >> 7) + i;
	wait_for_alarm();
	setitimer(ITIMER_REAL, &off, NULL);
	printf("signal_async %u ticked=%d\n", x, ticks > 0);
	return 0;
}
