/* Covers: siglongjmp out of a signal handler (sigsetjmp with a saved
 * mask), the handler entered synchronously from raise() deep in calls. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf env;
static volatile unsigned acc;

static void on_usr1(int sig)
{
	acc = acc * 7 + sig;
	siglongjmp(env, 1);
}

__attribute__((noinline)) static void nest(int n)
{
	unsigned i;

	for (i = 0; i < 50; i++)
		acc += i ^ n;
	if (n == 0)
		raise(SIGUSR1);
	else
		nest(n - 1);
	acc--;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	volatile int round = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (sigsetjmp(env, 1))
		round++;
	if (round < 200)
		nest(round % 9);
	printf("sigsetjmp_handler %u %d\n", acc, round);
	return 0;
}
