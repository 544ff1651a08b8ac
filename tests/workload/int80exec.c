// SPDX-License-Identifier: MIT
/*
 * int80exec - works a little, then execs PROG through the i386 system
 * call entry (int 0x80, execve = 11) of a 64-bit process: an exec that a
 * tracer watching only the x86-64 system call table does not see coming.
 * The path, argument and argv array sit in .bss (below 4 GiB: static,
 * not PIE), argv holds 32-bit pointers; the environment is empty.
 *
 * usage: int80exec PROG [ARG]   (exits 3 when the kernel has no int 0x80)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char path[256], arg[64];
static uint32_t av[3];

int main(int argc, char **argv)
{
	unsigned long long h = 1469598103934665603ull;
	long r;

	if (argc < 2) {
		fprintf(stderr, "usage: int80exec PROG [ARG]\n");
		return 2;
	}
	for (unsigned i = 0; i < 20000; i++)
		h = (h ^ i) * 1099511628211ull;
	printf("int80exec: hash %016llx\n", h);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s", argv[1]);
	snprintf(arg, sizeof(arg), "%s", argc > 2 ? argv[2] : "");
	av[0] = (uint32_t)(uintptr_t)path;
	av[1] = argc > 2 ? (uint32_t)(uintptr_t)arg : 0;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(11L), "b"(path), "c"(av), "d"(0L)
			 : "memory", "r8", "r9", "r10", "r11");
	fprintf(stderr, "int80exec: execve through int 0x80: %ld\n", r);
	return r == -38 ? 3 : 1;
}
