// SPDX-License-Identifier: MIT
/* tstream.c - a task's growing witness stream and its markers (regen.h) */
#include <stdlib.h>
#include <string.h>

#include "tstream.h"

int ae_tstream_append(struct ae_tstream *s, const void *data, size_t len)
{
	size_t have = s->end - s->base;

	if (have + len > s->cap) {
		size_t cap = s->cap ? s->cap : 1 << 16;
		uint8_t *n;

		while (cap < have + len)
			cap *= 2;
		n = realloc(s->buf, cap);
		if (!n)
			return -1;
		s->buf = n;
		s->cap = cap;
	}
	memcpy(s->buf + have, data, len);
	s->end += len;
	return 0;
}

void ae_tstream_consumed(struct ae_tstream *s, uint64_t pos)
{
	uint64_t drop;

	if (s->pinned && pos > s->pin_pos && pos - s->pin_pos > AE_TSTREAM_PIN_MAX)
		s->pinned = 0;	/* (a handler that runs that long) */
	if (s->pinned && pos > s->pin_pos)
		pos = s->pin_pos;
	drop = pos - s->base;

	if (drop < (1 << 16) || drop < (s->end - s->base) / 2)
		return;
	memmove(s->buf, s->buf + drop, s->end - pos);
	s->base = pos;
}

void ae_tstream_markers_done(struct ae_tstream *s, uint64_t mi)
{
	uint64_t drop;

	if (s->pinned && mi > s->pin_mi)
		mi = s->pin_mi;
	drop = mi - s->mk_base;

	if (!drop || (drop < 256 && !s->eager) || drop > s->nmk)
		return;
	memmove(s->mk, s->mk + drop, (s->nmk - drop) * sizeof(*s->mk));
	s->nmk -= drop;
	s->mk_base = mi;
}

int ae_tstream_marker(struct ae_tstream *s, const struct trbuf_marker *m, uint64_t index)
{
	struct ae_smk *k;
	uint64_t abs;

	if (s->nmk == s->capmk) {
		size_t cap = s->capmk ? s->capmk * 2 : 16;
		struct ae_smk *n = realloc(s->mk, cap * sizeof(*n));

		if (!n)
			return -1;
		s->mk = n;
		s->capmk = cap;
	}
	if (m->type == TRBUF_MK_EXIT || m->type == TRBUF_MK_EXEC)
		for (size_t i = s->nmk; i-- > 0 && s->mk[i].pos == s->end;)
			if (s->mk[i].m.type == TRBUF_MK_SWITCH_IN && !s->mk[i].taken &&
			    !s->mk[i].moot) {
				s->mk[i].moot = 1;
				s->nmoot++;
			}
	s->nswitch += m->type == TRBUF_MK_SWITCH_IN;
	abs = s->mk_base + s->nmk;
	k = &s->mk[s->nmk++];
	memset(k, 0, sizeof(*k));
	k->m = *m;
	k->pos = s->end;
	k->index = index;
	k->end = UINT64_MAX;
	if (m->type == TRBUF_MK_SIGNAL && s->nopen < 64) {
		s->open_sig[s->nopen++] = abs;
	} else if (m->type == TRBUF_MK_SIGRETURN && s->nopen) {
		uint64_t o = s->open_sig[--s->nopen];

		if (o >= s->mk_base)
			s->mk[o - s->mk_base].end = abs;
	}
	return 0;
}

void ae_tstream_free(struct ae_tstream *s)
{
	free(s->buf);
	free(s->mk);
	memset(s, 0, sizeof(*s));
}
