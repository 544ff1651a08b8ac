/* A program whose memcpy is its own, from another object (own.c, or the
 * weak one in own_weak.c) or through `-Wl,--wrap=memcpy` (wrap.c), while
 * the C library's callers (snprintf, puts) copy through memcpy too:
 * tests/host/data-exact.sh (ownlink) links it each way and compares the
 * regenerated trace with the stepper. Each once ran the library's memcpy
 * in the traced program and the program's in its twin, or failed to link. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static char *volatile text = "the quick brown fox jumps over the lazy dog";

int main(void)
{
	char line[128], buf[128];
	unsigned long sum = 0;

	for (int i = 0; i < 20; i++) {
		snprintf(line, sizeof(line), "%2d %s", i, text + i);
		/* a length GCC cannot know: a call, not inline moves */
		memcpy(buf, line, strlen(line) + 1);
		sum += strlen(buf) * (i + 1);
		puts(buf);
	}
	printf("sum %lu\n", sum);
	return 0;
}
