/* Covers: a bytecode interpreter loop whose dispatch is a switch compiled
 * to a jump table (dense opcodes), with loops in the interpreted program. */
#include <stdio.h>

enum { PUSH, ADD, SUB, MUL, DUP, SWAP, JNZ, DEC, POP, XOR, HALT };

static const int prog[] = {
	PUSH, 1, PUSH, 1500,		/* acc counter */
	/* loop: */
	SWAP, PUSH, 3, MUL, PUSH, 7, XOR, SWAP, DEC, DUP, JNZ, 4,
	POP, HALT,
};

int main(void)
{
	long stack[64];
	int sp = 0, pc = 0;
	unsigned long ops = 0;

	for (;;) {
		long a;

		ops++;
		switch (prog[pc++]) {
		case PUSH: stack[sp++] = prog[pc++]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case SWAP: a = stack[sp - 1]; stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = a; break;
		case JNZ: if (stack[--sp]) pc = prog[pc]; else pc++; break;
		case DEC: stack[sp - 1]--; break;
		case POP: sp--; break;
		case XOR: sp--; stack[sp - 1] ^= stack[sp]; break;
		case HALT: goto out;
		}
	}
out:
	printf("interp %ld ops %lu\n", stack[sp - 1] & 0xffffffff, ops);
	return 0;
}
