/* Signals in a recursion whose returns write nothing (-fae-data): every
 * level's return passes the same instructions at the same trace offset,
 * so a marker's ip alone does not say which level a signal interrupted;
 * its %rsp does. The handler loads probe[(sp >> 3) % 4096], sp the
 * interrupted %rsp from its ucontext; the last stack access before the
 * handler was at sp or sp - 8 (rec and main move %rsp only by push, pop,
 * call and ret). A signal placed at another level fails that. rec's
 * depth is known from the records, so its branch is a decided one. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile unsigned long lim = 200000, depth = 24, sink;
static unsigned char probe[4096];
static volatile int got;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	unsigned long sp = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];

	(void)sig;
	(void)si;
	*(volatile unsigned char *)(probe + (sp >> 3) % 4096);
	got++;
}

__attribute__((noipa)) static unsigned long rec(unsigned long n)
{
	unsigned long r;

	if (!n)
		return 1;
	r = rec(n - 1);
	return r ^ (r >> 3) ^ n;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_RESTART | SA_SIGINFO };
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned long i = 0; i < lim; i++)
		sink = rec(depth);
	setitimer(ITIMER_REAL, &off, NULL);
	return got ? 0 : 1;
}
