/* Covers: malloc/free/realloc/calloc churn with varying sizes (musl
 * mallocng: brk and mmap paths), a linked structure built and torn down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	unsigned val;
	char pad[];
};

int main(void)
{
	static void *slots[256];
	struct node *head = NULL, *n;
	unsigned r = 7, h = 0;
	int i;

	for (i = 0; i < 700; i++) {
		unsigned k;

		r = r * 1103515245 + 12345;
		k = (r >> 16) & 255;
		if (slots[k]) {
			free(slots[k]);
			slots[k] = NULL;
		} else {
			size_t sz = 8 + ((r >> 8) & 511) * ((r & 3) == 0 ? 64 : 1);

			slots[k] = (r & 4) ? calloc(1, sz) : malloc(sz);
			memset(slots[k], (int)k, sz < 64 ? sz : 64);
			if ((r & 24) == 8)
				slots[k] = realloc(slots[k], sz * 2);
		}
		if (i % 5 == 0) {
			n = malloc(sizeof(*n) + (i & 31));
			n->val = i;
			n->next = head;
			head = n;
		}
	}
	while (head) {
		n = head->next;
		h = h * 31 + head->val;
		free(head);
		head = n;
	}
	for (i = 0; i < 256; i++)
		free(slots[i]);
	printf("malloc_churn %u\n", h);
	return 0;
}
