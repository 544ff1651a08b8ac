// SPDX-License-Identifier: MIT
/*
 * asmfile.c - split GNU as x86-64 source into labels, directives and
 * instructions, tracking which statements lie in executable sections.
 * Comments are dropped; strings are kept intact.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asmfile.h"

static const char *const prefixes[] = {
	"rep", "repe", "repz", "repne", "repnz", "lock", "data16", "data32",
	"rex64", "addr32", "notrack", "bnd", "cs", "ds", "es", "ss", "fs", "gs",
	NULL,
};

static int is_prefix(const char *s)
{
	for (int i = 0; prefixes[i]; i++)
		if (!strcmp(s, prefixes[i]))
			return 1;
	return 0;
}

static int push(struct ae_asm *a, enum ae_stmt_kind k, const char *s,
		size_t n, int line)
{
	struct ae_stmt *st;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		struct ae_stmt *p = realloc(a->st, cap * sizeof(*p));

		if (!p)
			return -1;
		a->st = p;
		a->cap = cap;
	}
	st = &a->st[a->n++];
	st->kind = k;
	st->text = strndup(s, n);
	st->line = line;
	st->exec = 0;
	st->insn = -1;
	return st->text ? 0 : -1;
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '$';
}

/* One statement (comments removed, may start with labels). */
static int add_stmt(struct ae_asm *a, const char *s, size_t n, int line)
{
	for (;;) {
		size_t i = 0, j;

		while (i < n && isspace((unsigned char)s[i]))
			i++;
		s += i;
		n -= i;
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (!n)
			return 0;
		/* leading label(s) */
		j = 0;
		if (s[0] == '"')
			break;
		while (j < n && is_ident_char((unsigned char)s[j]))
			j++;
		if (j > 0 && j < n && s[j] == ':') {
			if (push(a, AE_ST_LABEL, s, j, line))
				return -1;
			s += j + 1;
			n -= j + 1;
			continue;
		}
		break;
	}
	return push(a, s[0] == '.' ? AE_ST_DIRECTIVE : AE_ST_INSN, s, n, line);
}

static int section_is_exec(const char *d, int cur)
{
	char name[256];
	const char *p;
	size_t n = 0;

	if (!strncmp(d, ".text", 5) && (!d[5] || isspace((unsigned char)d[5])))
		return 1;
	if (!strcmp(d, ".data") || !strcmp(d, ".bss") ||
	    !strncmp(d, ".data ", 6) || !strncmp(d, ".bss ", 5))
		return 0;
	if (strncmp(d, ".section", 8) && strncmp(d, ".pushsection", 12))
		return cur;
	p = d + (d[1] == 's' ? 8 : 12);
	while (isspace((unsigned char)*p))
		p++;
	while (*p && *p != ',' && !isspace((unsigned char)*p) && n < sizeof(name) - 1)
		name[n++] = *p++;
	name[n] = 0;
	while (*p && *p != ',')
		p++;
	if (*p == ',') {
		const char *q = strchr(p, '"');

		if (q) {
			const char *e = strchr(q + 1, '"');

			for (const char *f = q + 1; e && f < e; f++)
				if (*f == 'x')
					return 1;
			return 0;
		}
	}
	return !strncmp(name, ".text", 5) || !strcmp(name, ".init") ||
	       !strcmp(name, ".fini") || !strncmp(name, ".init.", 6) ||
	       !strncmp(name, ".fini.", 6);
}

int ae_asm_parse(struct ae_asm *a, const char *path, const char *buf, size_t len)
{
	/* as starts in .text */
	int line = 1, in_comment = 0, exec = 1, prev = 1;
	int stack[64], sp = 0;
	size_t i = 0;
	char *cur = malloc(len + 1);
	size_t cn = 0;
	int start_line = 1;

	memset(a, 0, sizeof(*a));
	a->path = path;
	if (!cur)
		return -1;
	/* Pass 1: statements without comments. */
	while (i <= len) {
		char c = i < len ? buf[i] : '\n';

		if (in_comment) {
			if (c == '*' && i + 1 < len && buf[i + 1] == '/') {
				in_comment = 0;
				i += 2;
				continue;
			}
			if (c == '\n')
				line++;
			i++;
			continue;
		}
		if (c == '"') {
			size_t j = i + 1;

			while (j < len && buf[j] != '"' && buf[j] != '\n') {
				if (buf[j] == '\\')
					j++;
				j++;
			}
			if (j < len && buf[j] == '"')
				j++;
			memcpy(cur + cn, buf + i, j - i);
			cn += j - i;
			i = j;
			continue;
		}
		if (c == '/' && i + 1 < len && buf[i + 1] == '*') {
			in_comment = 1;
			i += 2;
			continue;
		}
		if (c == '#') {
			while (i < len && buf[i] != '\n')
				i++;
			continue;
		}
		if (c == '\n' || c == ';') {
			if (add_stmt(a, cur, cn, start_line))
				goto err;
			cn = 0;
			if (c == '\n')
				line++;
			start_line = line;
			i++;
			continue;
		}
		cur[cn++] = c;
		i++;
	}
	free(cur);
	cur = NULL;

	/* Pass 2: merge prefix-only statements, sections, instruction numbers. */
	{
		size_t w = 0;

		for (size_t r = 0; r < a->n; r++) {
			struct ae_stmt *s = &a->st[r];

			if (s->kind == AE_ST_INSN && is_prefix(s->text) &&
			    r + 1 < a->n && a->st[r + 1].kind == AE_ST_INSN) {
				struct ae_stmt *nx = &a->st[r + 1];
				char *t = malloc(strlen(s->text) + strlen(nx->text) + 2);

				if (!t)
					return -1;
				sprintf(t, "%s %s", s->text, nx->text);
				free(nx->text);
				free(s->text);
				nx->text = t;
				continue;
			}
			a->st[w++] = *s;
		}
		a->n = w;
	}
	for (size_t r = 0; r < a->n; r++) {
		struct ae_stmt *s = &a->st[r];

		if (s->kind == AE_ST_DIRECTIVE) {
			if (!strncmp(s->text, ".pushsection", 12)) {
				if (sp < 64)
					stack[sp++] = exec;
				prev = exec;
				exec = section_is_exec(s->text, exec);
			} else if (!strcmp(s->text, ".popsection")) {
				if (sp)
					exec = stack[--sp];
			} else if (!strcmp(s->text, ".previous")) {
				int t = exec;

				exec = prev;
				prev = t;
			} else if (!strncmp(s->text, ".text", 5) ||
				   !strncmp(s->text, ".data", 5) ||
				   !strncmp(s->text, ".bss", 4) ||
				   !strncmp(s->text, ".section", 8)) {
				int n = section_is_exec(s->text, exec);

				prev = exec;
				exec = n;
			}
		}
		s->exec = exec;
		if (s->kind == AE_ST_INSN && exec)
			s->insn = a->ninsn++;
	}
	return 0;
err:
	free(cur);
	return -1;
}

void ae_asm_free(struct ae_asm *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->st[i].text);
	free(a->st);
	memset(a, 0, sizeof(*a));
}

void ae_insn_split(const char *text, char *mnem, size_t mlen, const char **ops)
{
	const char *p = text;
	size_t n;

	for (;;) {
		n = 0;
		while (p[n] && !isspace((unsigned char)p[n]))
			n++;
		if (n < mlen) {
			memcpy(mnem, p, n);
			mnem[n] = 0;
		} else {
			mnem[0] = 0;
		}
		p += n;
		while (isspace((unsigned char)*p))
			p++;
		if (!is_prefix(mnem) || !*p)
			break;
	}
	*ops = p;
}

const char *ae_load_operand(const char *text, char *buf, size_t len)
{
	char m[32];
	const char *ops;
	int depth = 0;
	size_t i;

	ae_insn_split(text, m, sizeof(m), &ops);
	for (i = 0; ops[i] && i + 1 < len; i++) {
		if (ops[i] == '(')
			depth++;
		else if (ops[i] == ')')
			depth--;
		else if (ops[i] == ',' && !depth)
			break;
		buf[i] = ops[i];
	}
	buf[i] = 0;
	if (ops[i] != ',' || !strchr(buf, '(') || !strchr(buf, '%') || strchr(buf, ':'))
		return NULL;
	/* a numeric label ("1b", "2f") would mean another label elsewhere */
	for (i = 0; buf[i]; i++)
		if (isdigit((unsigned char)buf[i]) && (!i || !isalnum((unsigned char)buf[i - 1]))) {
			size_t j = i;

			while (isdigit((unsigned char)buf[j]))
				j++;
			if ((buf[j] == 'b' || buf[j] == 'f') && !isalnum((unsigned char)buf[j + 1]) &&
			    buf[j + 1] != '_')
				return NULL;
		}
	return buf;
}

/*
 * The section a directive switches to, into name (len bytes): 1, or 0
 * when it switches to none, or -1 when ae_asm_table_len does not follow
 * it: a section stack, subsections, repetition, macros, conditions, any
 * spelling but GCC's lower-case `.text`, `.data`, `.bss` and `.section
 * NAME[,"FLAGS",@TYPE[,SIZE]]` (a group or a unique id makes sections
 * that share a name), a name that is quoted or does not fit.
 */
static int section_switch(const char *t, char *name, size_t len)
{
	static const char *const untracked[] = {
		".pushsection", ".popsection", ".previous", ".subsection", ".rept",
		".irp", ".irpc", ".macro", ".if", ".include", ".sect", ".struct",
		".offset", NULL,
	};
	size_t n = 0;

	for (const char *c = t; *c && !isspace((unsigned char)*c); c++)
		if (isupper((unsigned char)*c))
			return -1;
	if (!strcmp(t, ".text") || !strcmp(t, ".data") || !strcmp(t, ".bss")) {
		snprintf(name, len, "%s", t);
		return 1;
	}
	if (!strncmp(t, ".text", 5) || !strncmp(t, ".data", 5) || !strncmp(t, ".bss", 4))
		return -1;	/* a numbered subsection */
	if (strncmp(t, ".section", 8) || !isspace((unsigned char)t[8])) {
		for (int i = 0; untracked[i]; i++)
			if (!strncmp(t, untracked[i], strlen(untracked[i])))
				return -1;
		return 0;
	}
	t += 8;
	while (isspace((unsigned char)*t))
		t++;
	while (isalnum((unsigned char)t[n]) || t[n] == '.' || t[n] == '_' || t[n] == '-')
		n++;
	if (!n || n >= len || (t[n] && t[n] != ',') || strchr(t + n, 'G') ||
	    strstr(t + n, "unique") || strstr(t + n, "comdat"))
		return -1;
	snprintf(name, len, "%.*s", (int)n, t);
	return 1;
}

/* Does an instruction index a table at the label `name` (`NAME(,`)? */
static int names_table(const struct ae_asm *a, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < a->n; i++) {
		const char *s = a->st[i].kind == AE_ST_INSN ? a->st[i].text : "";

		for (const char *t = strstr(s, name); t; t = strstr(t + 1, name))
			if (t[len] == '(' && t[len + 1] == ',' && t > s &&
			    !is_ident_char((unsigned char)t[-1]))
				return 1;
	}
	return 0;
}

int ae_asm_table_len(const struct ae_asm *a, const char *insn_text)
{
	char m[16], sec[128] = "", name[128];
	const char *ops;
	size_t len = 0, i, j;
	int n = 0;

	ae_insn_split(insn_text, m, sizeof(m), &ops);
	if (*ops == '*')
		ops++;
	while (is_ident_char((unsigned char)ops[len]))
		len++;
	if (!len || ops[len] != '(')
		return -1;
	for (i = 0; i < a->n; i++) {
		const struct ae_stmt *st = &a->st[i];
		int sw = st->kind == AE_ST_DIRECTIVE ?
			 section_switch(st->text, name, sizeof(name)) : 0;

		if (sw < 0)
			return -1;
		if (sw > 0)
			snprintf(sec, sizeof(sec), "%s", name);
		if (st->kind == AE_ST_LABEL && !strncmp(st->text, ops, len) && !st->text[len])
			break;
	}
	if (i == a->n || !sec[0])
		return -1;
	for (j = i + 1; j < a->n; j++) {
		const char *t = a->st[j].text;

		if (a->st[j].kind != AE_ST_DIRECTIVE || strncmp(t, ".quad", 5) ||
		    !isspace((unsigned char)t[5]))
			break;
		n++;
		for (; *t; t++)
			n += *t == ',';
	}
	/* The table ends where the text leaves its section, and what the
	 * section holds next (in this file) is another table: anything
	 * else may go on with it. */
	if (!n || (j < a->n && section_switch(a->st[j].text, name, sizeof(name)) != 1))
		return -1;
	for (; j < a->n; j++) {
		const struct ae_stmt *st = &a->st[j];
		int sw = st->kind == AE_ST_DIRECTIVE ?
			 section_switch(st->text, name, sizeof(name)) : 0;

		if (sw < 0 || (st->kind == AE_ST_LABEL && !strncmp(st->text, ops, len) &&
			       !st->text[len]))
			return -1;
		if (sw > 0 && !strcmp(name, sec))
			break;
	}
	for (j++; j < a->n && a->st[j].kind == AE_ST_DIRECTIVE &&
	     (!strncmp(a->st[j].text, ".align", 6) || !strncmp(a->st[j].text, ".p2align", 8) ||
	      !strncmp(a->st[j].text, ".balign", 7)); j++)
		;
	if (j >= a->n)
		return n;
	if (a->st[j].kind != AE_ST_LABEL || j + 1 == a->n ||
	    a->st[j + 1].kind != AE_ST_DIRECTIVE || strncmp(a->st[j + 1].text, ".quad", 5) ||
	    !names_table(a, a->st[j].text))
		return -1;
	return n;
}
