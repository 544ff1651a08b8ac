/* Covers: pointer chasing through a chained hash table (insert, lookup,
 * delete), data-dependent loop trip counts. */
#include <stdio.h>
#include <stdlib.h>

struct ent {
	struct ent *next;
	unsigned key, val;
};

static struct ent *buckets[97];

static struct ent **find(unsigned key)
{
	struct ent **p = &buckets[key % 97];

	while (*p && (*p)->key != key)
		p = &(*p)->next;
	return p;
}

int main(void)
{
	unsigned r = 3, h = 0;
	int i;

	for (i = 0; i < 1500; i++) {
		struct ent **p, *e;

		r = r * 1664525 + 1013904223;
		p = find((r >> 12) & 1023);
		if (*p) {
			h += (*p)->val;
			if (r & 0x100) {
				e = *p;
				*p = e->next;
				free(e);
			}
		} else {
			e = malloc(sizeof(*e));
			e->key = (r >> 12) & 1023;
			e->val = i;
			e->next = NULL;
			*p = e;
		}
	}
	printf("hash_table %u\n", h);
	return 0;
}
