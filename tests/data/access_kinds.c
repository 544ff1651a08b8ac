// SPDX-License-Identifier: MIT
/*
 * access_kinds - one program that makes every kind of user-mode data
 * access issue 12 lists, for tests/host/data-exact.sh: x87 long double
 * (10-byte fldt/fstpt), SSE and AVX operands, locked read-modify-writes,
 * xchg, cmpxchg, xadd, rep movs/stos/cmps/scas, lods, bt on registers and
 * memory, push/pop of memory, pushfq/popfq, clflush, calls through memory,
 * %fs-relative (TLS) accesses, setjmp/longjmp. Prints a checksum so the
 * traced run and the twin can be compared.
 */
#include <setjmp.h>
#include <stdio.h>

static unsigned char src[300], dst[300];
static long cell = 7, cells[4];
static __thread long tls_counter;
static jmp_buf env;
static long (*fnp)(long);

static long twice(long v)
{
	tls_counter += v;
	return 2 * v;
}

static int has_avx(void)
{
	unsigned int a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	return (c >> 28) & 1 && (c >> 27) & 1;	/* AVX and OSXSAVE */
}

static void jump(int v)
{
	longjmp(env, v);
}

int main(int argc, char **argv)
{
	volatile long double x = argc * 1.5L, y;
	double d[4] = { 1, 2, 3, argc };
	long sum = 0, n, old;
	unsigned char *s = src, *t = dst;
	volatile int r;

	(void)argv;
	for (int i = 0; i < 300; i++)
		src[i] = (unsigned char)(i * 7 + argc);
	/* x87: fldt / fstpt */
	y = x * 3 + x;
	sum += (long)y;
	/* SSE 16 bytes; AVX 32 when the CPU has it */
	__asm__ volatile("movupd %1, %%xmm0\n\tmovupd %%xmm0, %0"
			 : "=m"(*(char (*)[16])dst) : "m"(*(char (*)[16])d) : "xmm0");
	if (has_avx())
		__asm__ volatile("vmovdqu %1, %%ymm1\n\tvmovdqu %%ymm1, %0\n\tvzeroupper"
				 : "=m"(*(char (*)[32])(dst + 32)) : "m"(*(char (*)[32])src)
				 : "xmm1");
	/* atomics */
	__atomic_fetch_add(&cell, 3, __ATOMIC_SEQ_CST);
	old = __atomic_fetch_add(&cells[1], 5, __ATOMIC_SEQ_CST);
	old += __atomic_exchange_n(&cells[2], 9, __ATOMIC_SEQ_CST);
	n = 9;
	__atomic_compare_exchange_n(&cells[2], &n, 11, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	__asm__ volatile("xchg %0, %1" : "+r"(old), "+m"(cells[3]));
	sum += cell + cells[1] + cells[2] + cells[3] + old;
	/* string instructions */
	n = 100 + argc;
	__asm__ volatile("rep movsb" : "+D"(t), "+S"(s), "+c"(n) : : "memory");
	t = dst + 200;
	n = 8;
	__asm__ volatile("rep stosq" : "+D"(t), "+c"(n) : "a"(0x5a5aL) : "memory");
	s = src;
	t = dst;
	n = 64;
	__asm__ volatile("repe cmpsb" : "+D"(t), "+S"(s), "+c"(n) : : "memory", "cc");
	sum += n;
	t = src;
	n = 300;
	__asm__ volatile("repne scasb" : "+D"(t), "+c"(n) : "a"(src[77]) : "memory", "cc");
	sum += n;
	/* (not rep lodsb: valgrind runs it once, whatever %rcx says; and a
	 * loaded value must be used, or VEX drops the load) */
	s = src;
	__asm__ volatile("lodsb\n\tmovzbl %%al, %%edx\n\tlodsq\n\tadd %%rdx, %%rax"
			 : "+S"(s), "=a"(old) : : "rdx", "memory");
	sum += old;
	/* bt on a register and on memory, bts on memory */
	{
		long bit = argc + 40, v = 0x123456789abcdefL, c1, c2;

		__asm__ volatile("bt %2, %1\n\tsbb %0, %0" : "=r"(c1) : "r"(v), "r"(bit) : "cc");
		__asm__ volatile("bts %1, %2\n\tsbb %0, %0" : "=r"(c2), "+r"(bit), "+m"(cells[0]) : : "cc");
		sum += c1 + c2 + cells[0];
	}
	/* push and pop of memory, a call through memory */
	__asm__ volatile("pushq %0\n\tpopq %0" : "+m"(cell));
	/* pushfq and popfq (a store and a load at the stack: they had no
	 * records, and the next string instruction went the way a std
	 * before the popfq said) */
	{
		unsigned long f;

		__asm__ volatile("pushfq\n\tstd\n\tpopfq\n\tpushfq\n\tpopq %0" : "=r"(f) : : "cc");
		sum += (long)(f & 0x400);
		/* a cld makes the direction flag known again */
		t = dst + 250;
		n = 8;
		__asm__ volatile("cld\n\trep stosb" : "+D"(t), "+c"(n) : "a"(0x33L) : "memory");
	}
	/* clflush: no access (it had a 1-byte load) */
	__asm__ volatile("clflush %0" : : "m"(cells[0]));
	fnp = twice;
	__asm__ volatile("" : "+m"(fnp));
	sum += fnp(sum & 0xff);
	/* TLS */
	tls_counter += argc;
	sum += tls_counter;
	/* setjmp / longjmp */
	r = setjmp(env);
	if (r < 3)
		jump(r + 1);
	sum += r;
	for (int i = 0; i < 300; i++)
		sum += dst[i];
	printf("access_kinds %ld\n", sum);
	return 0;
}
