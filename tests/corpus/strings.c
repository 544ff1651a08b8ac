/* Covers: libc string functions (strlen, strcpy, strcat, strcmp, strchr,
 * strstr, memcpy, memmove, memset, memcmp, strtol, strtok_r), several of
 * which use rep-prefixed instructions in musl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char a[512], b[512], *save, *tok;
	unsigned h = 0;
	int i;

	for (i = 0; i < 50; i++) {
		snprintf(a, sizeof(a), "alpha %d beta %x gamma delta-%d", i, i * 977, i % 13);
		strcpy(b, a);
		strcat(b, " / tail ");
		h = h * 33 + strlen(b) + (strcmp(a, b) < 0);
		h += strchr(b, 'g') ? (unsigned)(strchr(b, 'g') - b) : 0;
		h += strstr(b, "delta") ? 1 : 0;
		memmove(b + 3, b, 100);
		memset(b + 200, 'x', 100 + i);
		h += memcmp(a, b, 50) > 0;
		memcpy(a, b, 300);
		h += strtol(a + 9, NULL, 10);
		for (tok = strtok_r(a, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			h = h * 5 + tok[0];
	}
	printf("strings %u\n", h);
	return 0;
}
