/* Signals in a recursion whose returns write nothing: every level's
 * return passes the same instructions at the same trace offset, so a
 * marker's ip alone does not say which level a signal interrupted; its
 * %rsp does. The handler keeps the interrupted %rip and %rsp from its
 * ucontext, which main prints at the end; the checker follows %rsp
 * through the regenerated instructions of rec and main and needs one
 * constant difference at every handler's entry. Built with -fae-data,
 * rec's depth is known from the records and its branch is a decided one;
 * without, the regenerator follows %rsp from aerun's START marker. The
 * thread-local count on the way down takes, with -fae-data, a record of
 * the %fs base before it, whose sequence moves %rsp: a signal there
 * comes after the record's bytes and before the access (and its handler
 * sees %rsp 128 or 136 bytes lower than the program's). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <ucontext.h>

#define MAXSIG 4096

static volatile unsigned long depth = 24, sink;
static __thread unsigned long visits[32];
static unsigned long sig_ip[MAXSIG], sig_sp[MAXSIG];
static volatile unsigned int got;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	const greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;

	(void)sig;
	(void)si;
	if (got < MAXSIG) {
		sig_ip[got] = r[REG_RIP];
		sig_sp[got] = r[REG_RSP];
	}
	got++;
}

__attribute__((noipa)) static unsigned long rec(unsigned long n)
{
	unsigned long r;

	if (!n)
		return 1;
	visits[n & 31]++;
	r = rec(n - 1);
	return r ^ (r >> 3) ^ n;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_RESTART | SA_SIGINFO };
	struct itimerval once = { { 0, 0 }, { 0, 10 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	unsigned long lim = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned int armed = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	/* a thousand signals are enough, one at a time: a periodic timer
	 * faster than a traced handler's way in and out piles its signals
	 * up where the first one returned, and main never runs (CI saw
	 * 21509 at one ip) */
	for (unsigned long i = 0; i < lim && got < 1000; i++) {
		if (armed == got) {
			armed = got + 1;
			setitimer(ITIMER_REAL, &once, NULL);
		}
		sink = rec(depth);
	}
	setitimer(ITIMER_REAL, &off, NULL);	/* (lim reached first) */
	for (unsigned int i = 0; i < got && i < MAXSIG; i++)
		printf("%lx %lx\n", sig_ip[i], sig_sp[i]);
	return got ? 0 : 1;
}
