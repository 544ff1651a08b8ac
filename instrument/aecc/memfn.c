// SPDX-License-Identifier: MIT
/*
 * memfn.c - library routines traced by their arguments only (paper
 * section 5.1: bcopy's 268 bytes of trace become 12). With -fae-data,
 * musl's C memcpy, memmove, memset, strlen, stpcpy (under strcpy) and
 * memchr (under strnlen), memcmp, strcmp and strncmp write no witnesses
 * and no register records in their bodies: the argument registers are
 * recorded at the entry, and where the control flow also depends on
 * memory content, the result that decides it (strlen's length, the end
 * stpcpy returns, the byte memchr found) before every ret; a compare's
 * depends on both areas, so the entry scans them as the routine will and
 * records where it stops and the two bytes there (emit.c). The regenerator
 * (analysis/memfn.c) expands such a call into the instruction and data
 * records the routine executes.
 */
#include <stdio.h>
#include <string.h>

#include "asmfile.h"
#include "memfn.h"
#include "xalloc.h"

/* The label past a routine's argument records: this and the kind */
#define ARGS_LABEL	"__ae_memfn_args_"

/* Each routine's body in the C library, by kind: only the body's own
 * name (a call of the weak alias stpcpy goes wherever the link resolves
 * it, a program's own stpcpy included) */
static const char *const memfns[AE_MEMFN_MAX + 1] = {
	[AE_MEMFN_MEMCPY] = "memcpy", [AE_MEMFN_MEMMOVE] = "memmove",
	[AE_MEMFN_MEMSET] = "memset", [AE_MEMFN_STRLEN] = "strlen",
	[AE_MEMFN_STPCPY] = "__stpcpy", [AE_MEMFN_MEMCHR] = "memchr",
	[AE_MEMFN_MEMCMP] = "memcmp", [AE_MEMFN_STRCMP] = "strcmp",
	[AE_MEMFN_STRNCMP] = "strncmp",
};

int ae_memfn_kind(const char *name)
{
	for (int k = 1; k <= AE_MEMFN_MAX; k++)
		if (!strcmp(name, memfns[k]))
			return k;
	return 0;
}

const char *ae_memfn_args_label(int kind, char *buf, size_t len)
{
	snprintf(buf, len, ARGS_LABEL "%d", kind);
	return buf;
}

int ae_memfn_is_args_label(const char *name)
{
	return !strncmp(name, ARGS_LABEL, strlen(ARGS_LABEL));
}

/* A direct call or jump out of the object: to which such routine (0: none)? */
static int ext_is_memfn(const struct ae_ctx *c, const struct insn *x)
{
	char m[32], name[64];
	const char *ops;
	size_t n;

	ae_insn_split(c->a.st[x->stmt].text, m, sizeof(m), &ops);
	n = strcspn(ops, "@ \t");
	if (n >= sizeof(name))
		return 0;
	memcpy(name, ops, n);
	name[n] = 0;
	return ae_memfn_kind(name);
}

/* Can instruction x of a body be expanded offline? */
static int expandable(const struct ae_ctx *c, const struct insn *x)
{
	switch (x->kind) {
	case IK_PLAIN:
		return !x->rep && x->df.kind != AE_DF_SYSCALL && !x->df.mem.fs;
	case IK_JCC:
	case IK_RET:
		return 1;
	case IK_JMP:
	case IK_CALL:
		if (x->target >= 0)
			return !c->in[x->target].func_start || c->in[x->target].memfn;
		return ext_is_memfn(c, x);
	default:
		return 0;
	}
}

/* The body of the routine entered at k0 into body[] (marks 1 + k0);
 * returns 0, or -1 when it cannot be expanded. */
static int find_body(struct ae_ctx *c, int k0, int *stack)
{
	int n = c->n, sp = 0;

	stack[sp++] = k0;
	c->in[k0].memfn_body = k0 + 1;
	while (sp) {
		int k = stack[--sp], succ[4], ns = 0;
		struct insn *x = &c->in[k];

		if (!expandable(c, x))
			return -1;
		for (int j = 0; j < x->nout; j++)
			if (c->e[x->out[j]].to < n)
				succ[ns++] = c->e[x->out[j]].to;
		/* falling through assembler padding: the next placed insn */
		if (x->next < 0 && (x->kind == IK_PLAIN || x->kind == IK_JCC ||
				    x->kind == IK_CALL)) {
			for (int i = 0; i + 1 < n; i++)
				if (c->by_place[i] == k && c->in[c->by_place[i + 1]].sec == x->sec)
					succ[ns++] = c->by_place[i + 1];
		}
		if (x->kind == IK_CALL && x->next >= 0)
			succ[ns++] = x->next;
		for (int i = 0; i < ns; i++) {
			struct insn *y = &c->in[succ[i]];

			/* a tail jump to another routine of the list */
			if (y->func_start && succ[i] != k0 && x->kind == IK_JMP)
				continue;
			if (y->func_start && succ[i] != k0)
				return -1;
			if (y->memfn_body == k0 + 1)
				continue;
			if (y->memfn_body)
				return -1;
			y->memfn_body = k0 + 1;
			stack[sp++] = succ[i];
		}
	}
	return 0;
}

static void unmark(struct ae_ctx *c, int k0)
{
	for (int k = 0; k < c->n; k++)
		if (c->in[k].memfn_body == k0 + 1)
			c->in[k].memfn_body = 0;
	c->in[k0].memfn = 0;
}

void ae_memfn_plan(struct ae_ctx *c)
{
	int n = c->n;
	int *stack;

	if (!c->data || c->no_memfn)
		return;
	stack = ae_xmalloc((n + 1) * 4 * sizeof(int));
	for (int k0 = 0; k0 < n; k0++) {
		if (!c->in[k0].memfn)
			continue;
		if (find_body(c, k0, stack)) {
			unmark(c, k0);
			continue;
		}
		/* nothing outside the body may branch into it but to its entry */
		for (int i = 0; i < c->ne; i++) {
			const struct edge *e = &c->e[i];

			if (e->to < n && c->in[e->to].memfn_body == k0 + 1 &&
			    c->in[e->from].memfn_body != k0 + 1 &&
			    !(e->to == k0 && c->in[e->from].kind == IK_JMP)) {
				unmark(c, k0);
				break;
			}
		}
	}
	free(stack);
	/*
	 * Direct calls of such routines from outside their bodies make the
	 * arguments known themselves (data.c treats them as address uses,
	 * often free: a stack buffer, a pointer already recorded) and enter
	 * past the routine's argument records. A call from one routine to
	 * another is emulated with it and keeps the records.
	 */
	for (int k = 0; k < n; k++) {
		struct insn *x = &c->in[k];

		if (x->kind != IK_CALL || x->memfn_body)
			continue;
		if (x->target >= 0)
			x->memfn_call = c->in[x->target].memfn;
		else if (x->ext)
			x->memfn_call = ext_is_memfn(c, x);
	}
}

void ae_memfn_records(struct ae_ctx *c)
{
	for (int k = 0; k < c->n; k++) {
		struct insn *x = &c->in[k];

		if (!x->memfn_body)
			continue;
		if (x->memfn)
			x->rec_before = (x->rec_before & (1u << AE_DF_RSP)) | ae_memfn_args(x->memfn);
		else
			x->rec_before = 0;
		x->rec_after = 0;
	}
}
