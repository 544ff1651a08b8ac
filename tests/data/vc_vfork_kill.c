/* A vfork child killed between a value-cache record's commit and its
 * slot's store (-fae-data, docs/ARCHITECTURE.md item 23). The child
 * shares its parent's memory, value cache included: it makes the cache
 * read-only and calls touch(), whose record of q is in the trace when the
 * store into q's slot faults, and the child dies of that SIGSEGV. The
 * slot keeps the parent's last pointer; the parent, back after the
 * vfork, codes its next pointers at the same place against it. A
 * regenerator that applied the child's store would decode them wrong.
 * The parent's first store into the read-only cache faults too: the
 * handler of vc_signal_segv.c (built with -fno-ae-vcache) makes it
 * writable again. Prints the sum of the bytes read. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define AE_VC_SLOTS	4096	/* include/aetrace/schema.h */

extern __thread uint64_t __ae_vc[];

/* vc_signal_segv.c */
extern uintptr_t vc_lo, vc_hi;
void vc_catch_faults(void);

static unsigned char pool[1 << 16];
static volatile unsigned long total;

/* On the stack (more than 16 bytes): q's record is touch()'s only one. */
struct arg {
	unsigned char *p;
	long pad[2];
};

__attribute__((noinline, noipa)) static unsigned char *touch(struct arg a)
{
	unsigned char *q = a.p;

	total += *(volatile unsigned char *)q;
	return q;
}

/* vc_signal_segv.c's handler calls it after making the cache writable */
void handler_touch(void)
{
}

int main(void)
{
	int st = 0;
	pid_t pid;

	for (unsigned int i = 0; i < sizeof(pool); i++)
		pool[i] = (unsigned char)(i * 7);
	for (int i = 0; i < 64; i++)
		touch((struct arg){ .p = pool + 8 * i });
	vc_lo = (uintptr_t)&__ae_vc[0] & ~(uintptr_t)4095;
	vc_hi = ((uintptr_t)&__ae_vc[AE_VC_SLOTS] + 4095) & ~(uintptr_t)4095;
	vc_catch_faults();
	pid = vfork();
	if (pid == 0) {
		/* far from the parent's last pointer: a full record */
		signal(SIGSEGV, SIG_DFL);
		mprotect((void *)vc_lo, vc_hi - vc_lo, PROT_READ);
		touch((struct arg){ .p = pool + 40000 });
		_exit(0);	/* not reached: the store faulted */
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) ||
	    WTERMSIG(st) != SIGSEGV) {
		fprintf(stderr, "vc_vfork_kill: the child did not die of SIGSEGV (status %#x)\n", st);
		return 2;
	}
	/* 8 bytes on from the parent's last pointer: one-byte differences */
	for (int i = 64; i < 128; i++)
		touch((struct arg){ .p = pool + 8 * i });
	printf("%lu\n", total);
	return 0;
}
