/* Asynchronous signals inside expanded compares (-fae-data): memcmp,
 * strcmp and strncmp of two distinct 8000-byte areas that differ only at
 * their ends, under a fast SIGALRM. The traced musl's compares keep
 * their index in %rcx, which the SIGNAL marker carries, so aetrace can
 * deliver each handler at the iteration it interrupted. The handler says
 * which that was in an address the data trace shows: it loads
 * count[%rcx & 0xffff] from the interrupted context when its ip lies
 * within 4096 bytes after a compare's entry. A handler regenerated
 * inside a compare's loop must follow as many of the loop's increments
 * as %rcx said (tests/host/data-exact.sh sigcmp). The output does not
 * depend on when the signals come. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

#define LEN	8000

static char a[LEN + 1], b[LEN + 1];
static unsigned char count[65536];
static uintptr_t fn[3];
static volatile unsigned ticks, near;

static void on_alarm(int sig, siginfo_t *si, void *v)
{
	ucontext_t *uc = v;
	uintptr_t ip = uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t cx = uc->uc_mcontext.gregs[REG_RCX];

	(void)sig;
	(void)si;
	for (int i = 0; i < 3; i++)
		if (ip - fn[i] < 4096) {
			(void)*(volatile unsigned char *)(count + (cx & 0xffff));
			near++;
		}
	ticks++;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_RESTART | SA_SIGINFO };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	unsigned long sum = 0;

	fn[0] = (uintptr_t)memcmp;
	fn[1] = (uintptr_t)strcmp;
	fn[2] = (uintptr_t)strncmp;
	memset(a, 'a', LEN);
	memset(b, 'a', LEN);
	b[LEN - 1] = 'b';
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/* (until 200 signals came near a compare; the sum of the first 150
	 * rounds only) */
	for (int i = 0; i < 150 || (near < 200 && i < 100000); i++) {
		unsigned long s = 0;

		s += memcmp(a, b, LEN - (i & 7)) < 0;
		s += strcmp(a + (i & 1), b + (i & 1)) < 0;
		s += strncmp(a, b, LEN - (i & 3)) < 0;
		if (i < 150)
			sum += s;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("signal_cmp %lu ticked=%d\n", sum, ticks > 0);
	return 0;
}
