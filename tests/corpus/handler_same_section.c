/* Covers: a signal handler whose address is taken by a rip-relative lea
 * in its own section (as -fPIE code or assembly does: the assembler
 * resolves it and leaves no relocation), entered on the stack the
 * kernel chose, where it reads and writes its own frame. */
#include <signal.h>
#include <stdio.h>

static volatile long seen[8];

__attribute__((noinline, used)) static void handler(int s)
{
	volatile long local[4];

	for (int i = 0; i < 4; i++)
		local[i] = s + i;
	seen[s & 7] += local[1] + local[3];
}

__attribute__((noinline)) static void setup(void)
{
	void (*h)(int);

	__asm__("lea handler(%%rip), %0" : "=r"(h));
	signal(SIGUSR1, h);
}

static long work[512];

int main(void)
{
	long h = 0;

	setup();
	for (int i = 0; i < 40; i++) {
		raise(SIGUSR1);
		for (int j = 0; j < 512; j++)
			h = h * 7 + (work[(j * 37 + i) & 511] += j ^ i);
	}
	printf("handler_same_section %ld %ld\n", seen[SIGUSR1 & 7], h);
	return 0;
}
