/* setjmp-r15.c: does longjmp keep the live r15? (tests/host/real-programs.sh)
 * Freestanding: r15 is owned here, so neither aecc nor libc start-up code
 * may run; only musl's setjmp/longjmp objects are linked in. */
int setjmp(void *);
void longjmp(void *, int);
static char buf[1 << 16] __attribute__((used, aligned(4096)));
static unsigned long jb[32];
static unsigned long at_setjmp;
static unsigned long get_r15(void)
{
	unsigned long v;
	__asm__ volatile("mov %%r15, %0" : "=r"(v));
	return v;
}
static void sys_exit(long code)
{
	__asm__ volatile("syscall" : : "a"(60L), "D"(code));
	__builtin_unreachable();
}
void start_c(void)
{
	if (setjmp(jb))
		sys_exit(get_r15() >= at_setjmp + 4096 ? 0 : 1);
	at_setjmp = get_r15();
	__asm__ volatile("lea 4096(%%r15), %%r15" : : : "memory");
	longjmp(jb, 1);
}
/* r15 points into buf, as a trace cursor would. */
__asm__(".globl _start\n_start:\n\tlea buf(%rip), %r15\n\tand $-16, %rsp\n\tcall start_c\n\thlt\n");
