/* A blocking read interrupted by SIGALRMs whose handler has SA_RESTART:
 * the kernel moves %rip back onto the system call before it builds the
 * signal frame, after the tracer's signal-delivery stop. The third
 * handler writes the byte the read waits for. The SIGNAL markers must
 * say where the task really resumes (aerun: from the frame), or the
 * handlers' sigreturns look like changed contexts.
 * argv[1]: the read through libc (none), through rawsys, a function
 * whose first instruction is the syscall and which loads through %rsi
 * after it (so that a data trace records registers before the call:
 * "entry"), or through the i386 entry, int $0x80 ("int80"). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int fds[2];
static volatile int handled;
static char c;

__asm__(".text\n"
	".type rawsys,@function\n"
	"rawsys:\n"
	"	syscall\n"
	"	movzbl (%rsi),%ecx\n"
	"	ret\n"
	".size rawsys,.-rawsys\n");

static void on_alrm(int sig)
{
	(void)sig;
	if (++handled == 3 && write(fds[1], "x", 1) != 1)
		_exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alrm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	const char *how = argc > 1 ? argv[1] : "libc";
	long r;

	if (pipe(fds) || sigaction(SIGALRM, &sa, 0) || setitimer(ITIMER_REAL, &it, 0))
		return 1;
	if (!strcmp(how, "entry")) {
		r = 0;	/* __NR_read */
		__asm__ volatile("call rawsys" : "+a"(r) : "D"((long)fds[0]), "S"(&c), "d"(1L)
				 : "rcx", "r8", "r9", "r10", "r11", "memory");
	} else if (!strcmp(how, "int80")) {
		r = 3;	/* __NR_read (i386); &c below 4 GiB (no PIE) */
		__asm__ volatile("int $0x80" : "+a"(r) : "b"(fds[0]), "c"(&c), "d"(1L) : "memory");
	} else {
		r = read(fds[0], &c, 1);
	}
	if (r != 1)
		return 1;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, 0);
	printf("read %c after %d handlers\n", c, handled);
	return c != 'x';
}
