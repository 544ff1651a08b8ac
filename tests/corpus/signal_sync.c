/* Covers: synchronous signal delivery: raise() and kill(getpid()) with
 * handlers installed by signal() and sigaction(SA_SIGINFO), a handler that
 * runs with another signal blocked, and sigprocmask release of a pending
 * signal. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned acc;

static void on_usr1(int sig)
{
	unsigned i;

	for (i = 0; i < 100; i++)
		acc = acc * 3 + i + sig;
}

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	acc ^= (unsigned)si->si_signo << 8;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr2, .sa_flags = SA_SIGINFO };
	sigset_t set;
	int i;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(SIGUSR2, &sa, NULL);
	for (i = 0; i < 300; i++) {
		if (i & 1)
			raise(SIGUSR1);
		else
			kill(getpid(), SIGUSR2);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);			/* stays pending */
	acc += 5;
	sigprocmask(SIG_UNBLOCK, &set, NULL);	/* delivered here */
	printf("signal_sync %u\n", acc);
	return 0;
}
