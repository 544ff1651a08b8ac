/* Covers: spilled registers and their reloads (aecc -fae-data), and
 * frame slots written behind the regenerator's back, which any tracking
 * of spill slots must leave to records (docs/ARCHITECTURE.md: spill
 * slots): pointers loaded once and kept in frame slots across calls and
 * loops; a slot the kernel overwrites through the frame's escaped
 * address (read() from a pipe into the slot); one the kernel overwrites
 * through an address a callee computes from its own %rsp (the caller
 * never lets its frame out); one overwritten through a copy of %rsp;
 * one overwritten by a callee's frame after the caller's %rsp moved
 * above it. Each then loads through the reloaded pointer: a reload
 * taken as the stored value would regenerate the old pointer's
 * address. */
#include <stdio.h>
#include <unistd.h>

long cell_a = 1, cell_b = 2;

/* long kernel_slot(int fd, long *a): a stored in a slot, the slot's
 * address given to read(fd, slot, 8); returns *(the slot's new value) */
long kernel_slot(int fd, long *a);
/* long caller_slot(int fd, long *a): a stored in a slot; a callee reads
 * fd into the slot through 16(%rsp), its caller's 8(%rsp); returns
 * *(the slot's new value) */
long caller_slot(int fd, long *a);
/* long alias_slot(long *a, long **b): a stored in a slot, *b (a value
 * the regenerator does not know) stored over it through a copy of %rsp;
 * returns *(slot) */
long alias_slot(long *a, long **b);
/* long popped_slot(long *a, long *b): a stored below the return address
 * (in the red zone of the caller once it returned), a call's frame over
 * it; returns *(slot) */
long popped_slot(long *a, long *b);

__asm__(".text\n"
	".globl kernel_slot\n"
	".type kernel_slot, @function\n"
	"kernel_slot:\n"
	"	sub $24, %rsp\n"
	"	mov %rsi, 8(%rsp)\n"
	"	lea 8(%rsp), %rsi\n"
	"	mov $8, %edx\n"
	"	xor %eax, %eax\n"
	"	syscall\n"
	"	mov 8(%rsp), %rax\n"
	"	mov (%rax), %rax\n"
	"	add $24, %rsp\n"
	"	ret\n"
	".size kernel_slot, .-kernel_slot\n"
	".type rd, @function\n"
	"rd:\n"
	"	lea 16(%rsp), %rsi\n"
	"	mov $8, %edx\n"
	"	xor %eax, %eax\n"
	"	syscall\n"
	"	ret\n"
	".size rd, .-rd\n"
	".globl caller_slot\n"
	".type caller_slot, @function\n"
	"caller_slot:\n"
	"	sub $24, %rsp\n"
	"	mov %rsi, 8(%rsp)\n"
	"	call rd\n"
	"	mov 8(%rsp), %rax\n"
	"	mov (%rax), %rax\n"
	"	add $24, %rsp\n"
	"	ret\n"
	".size caller_slot, .-caller_slot\n"
	".globl alias_slot\n"
	".type alias_slot, @function\n"
	"alias_slot:\n"
	"	sub $24, %rsp\n"
	"	mov %rdi, 8(%rsp)\n"
	"	mov (%rsi), %rsi\n"
	"	mov %rsp, %rcx\n"
	"	mov %rsi, 8(%rcx)\n"
	"	mov 8(%rsp), %rax\n"
	"	mov (%rax), %rax\n"
	"	add $24, %rsp\n"
	"	ret\n"
	".size alias_slot, .-alias_slot\n"
	".type store_b, @function\n"
	"store_b:\n"
	"	push %rsi\n"
	"	pop %rsi\n"
	"	ret\n"
	".size store_b, .-store_b\n"
	".globl popped_slot\n"
	".type popped_slot, @function\n"
	"popped_slot:\n"
	"	mov %rdi, -16(%rsp)\n"
	"	call store_b\n"
	"	mov -16(%rsp), %rax\n"
	"	mov (%rax), %rax\n"
	"	ret\n"
	".size popped_slot, .-popped_slot\n");

struct many {
	long *p[8];
	long n;
};

__attribute__((noinline)) static long tick(long i)
{
	return i & 3;
}

/* eight pointers live across a call: more than the callee-saved registers */
__attribute__((noinline)) static long across_calls(const struct many *m)
{
	long *p0 = m->p[0], *p1 = m->p[1], *p2 = m->p[2], *p3 = m->p[3];
	long *p4 = m->p[4], *p5 = m->p[5], *p6 = m->p[6], *p7 = m->p[7];
	long t = 0;

	for (long i = 0; i < m->n; i++) {
		long k = tick(i);

		t += p0[k] + p1[k] + p2[k] + p3[k] + p4[k] + p5[k] + p6[k] + p7[k];
	}
	return t;
}

static long tabs[8][4];

int main(void)
{
	struct many m;
	long *pb = &cell_b, h = 0;
	int fd[2];

	for (int i = 0; i < 8; i++) {
		m.p[i] = tabs[i];
		for (int j = 0; j < 4; j++)
			tabs[i][j] = i * 10 + j;
	}
	m.n = 200;
	h += across_calls(&m);
	if (pipe(fd) || write(fd[1], &pb, sizeof(pb)) != sizeof(pb))
		return 1;
	h = h * 3 + kernel_slot(fd[0], &cell_a);
	if (write(fd[1], &pb, sizeof(pb)) != sizeof(pb))
		return 1;
	h = h * 3 + caller_slot(fd[0], &cell_a);
	h = h * 3 + alias_slot(&cell_a, &pb);
	/* popped_slot's slot lies below its %rsp once store_b's frame is
	 * there: store_b pushes b over it (a callee the caller's slot
	 * follows); b's value is what the reload must see */
	h = h * 3 + popped_slot(&cell_a, &cell_b);
	printf("spills %ld\n", h);
	return 0;
}
