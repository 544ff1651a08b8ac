// SPDX-License-Identifier: GPL-2.0
/*
 * ae-tracecmp: compare two lackey-format instruction streams.
 *
 *   ae-tracecmp [--from ADDR] [--skip-range LO-HI]... A B
 *
 * Only "I  addr,size" lines count; data lines (" L ...", " S ...") and
 * valgrind's "==pid==" lines are ignored. With --from, each stream starts at
 * its own first instruction at ADDR (hex). --skip-range drops every
 * instruction whose address is in [LO, HI) from both streams (used for an
 * asynchronous signal handler whose timing differs between runs), and an
 * instruction right after such a cut equal to the one right before it:
 * valgrind reports the instruction a signal interrupted before and after
 * the handler (lackey's I record precedes the execution that the signal
 * cut), the CPU executes it once.
 * Streams line by line (traces have 100M+ lines) and keeps only a ring of
 * the last 5 instructions of each side for the report.
 *
 * Prints "identical: N instructions" (exit 0) or the first divergence with
 * its index and 5 instructions of context on each side (exit 1). Exit 2 on
 * usage or I/O errors, naming the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTX 5
#define MAX_SKIP 64

struct insn {
	uint64_t addr;
	unsigned int size;
};

struct stream {
	const char *path;
	FILE *f;
	char *line;
	size_t cap;
	unsigned long long lineno;
	struct insn last;	/* the last instruction kept */
	int cut;		/* instructions dropped since */
};

struct skip_range {
	uint64_t lo, hi;
};

static struct skip_range skips[MAX_SKIP];
static int nskips;

static int skipped(uint64_t a)
{
	int i;

	for (i = 0; i < nskips; i++)
		if (a >= skips[i].lo && a < skips[i].hi)
			return 1;
	return 0;
}

/* Next kept instruction: 1, 0 at EOF, -1 on a read error or bad line. */
static int next_insn(struct stream *s, struct insn *in)
{
	for (;;) {
		char *end;
		ssize_t n;

		n = getline(&s->line, &s->cap, s->f);
		if (n < 0) {
			if (ferror(s->f)) {
				fprintf(stderr, "ae-tracecmp: %s: %s\n",
					s->path, strerror(errno));
				return -1;
			}
			return 0;
		}
		s->lineno++;
		if (s->line[0] != 'I')
			continue;
		errno = 0;
		in->addr = strtoull(s->line + 1, &end, 16);
		if (errno || *end != ',') {
			fprintf(stderr, "ae-tracecmp: %s:%llu: bad line '%s'\n",
				s->path, s->lineno, s->line);
			return -1;
		}
		in->size = strtoul(end + 1, NULL, 10);
		if (skipped(in->addr)) {
			s->cut = 1;
			continue;
		}
		if (s->cut && in->addr == s->last.addr && in->size == s->last.size) {
			s->cut = 0;
			continue;
		}
		s->cut = 0;
		s->last = *in;
		return 1;
	}
}

static void print_ctx(const char *side, const struct insn *ring,
		      unsigned long long idx, const struct insn *div, int have,
		      struct stream *s)
{
	unsigned long long first = idx > CTX ? idx - CTX : 0, i;
	struct insn in;
	int k;

	printf("%s (%s):\n", side, s->path);
	for (i = first; i < idx; i++)
		printf("   %12llu  I  %08" PRIx64 ",%u\n", i,
		       ring[i % CTX].addr, ring[i % CTX].size);
	if (!have) {
		printf(" > %12llu  <end of stream>\n", idx);
		return;
	}
	printf(" > %12llu  I  %08" PRIx64 ",%u\n", idx, div->addr, div->size);
	for (k = 1; k <= CTX && next_insn(s, &in) == 1; k++)
		printf("   %12llu  I  %08" PRIx64 ",%u\n", idx + k, in.addr,
		       in.size);
}

static int open_stream(struct stream *s, const char *path)
{
	s->path = path;
	s->f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!s->f) {
		fprintf(stderr, "ae-tracecmp: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Advances @s to its first instruction at @from; 1 found, 0 not, -1 error. */
static int seek_from(struct stream *s, uint64_t from, struct insn *in)
{
	int r;

	while ((r = next_insn(s, in)) == 1)
		if (in->addr == from)
			return 1;
	return r;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ae-tracecmp [--from ADDR] [--skip-range LO-HI]... A B\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct insn ring_a[CTX], ring_b[CTX], a, b;
	struct stream sa = { 0 }, sb = { 0 };
	unsigned long long n = 0;
	int have_from = 0, ra, rb, i;
	uint64_t from = 0;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			from = strtoull(argv[++i], NULL, 16);
			have_from = 1;
		} else if (!strcmp(argv[i], "--skip-range") && i + 1 < argc) {
			char *dash;

			if (nskips == MAX_SKIP) {
				fprintf(stderr, "ae-tracecmp: more than %d --skip-range\n",
					MAX_SKIP);
				return 2;
			}

			skips[nskips].lo = strtoull(argv[++i], &dash, 16);
			if (*dash != '-')
				usage();
			skips[nskips].hi = strtoull(dash + 1, NULL, 16);
			nskips++;
		} else {
			usage();
		}
	}
	if (argc - i != 2)
		usage();
	if (open_stream(&sa, argv[i]) || open_stream(&sb, argv[i + 1]))
		return 2;

	if (have_from) {
		ra = seek_from(&sa, from, &a);
		rb = seek_from(&sb, from, &b);
		if (!ra || !rb) {
			printf("no instruction at %#" PRIx64 " in %s\n", from,
			       !ra ? sa.path : sb.path);
			return 1;
		}
	} else {
		ra = next_insn(&sa, &a);
		rb = next_insn(&sb, &b);
	}
	for (;;) {
		if (ra < 0 || rb < 0)
			return 2;
		if (!ra && !rb)
			break;
		if (ra != rb || a.addr != b.addr || a.size != b.size) {
			printf("diverge at instruction %llu%s\n", n,
			       have_from ? " (counted from --from)" : "");
			print_ctx("A", ring_a, n, &a, ra, &sa);
			print_ctx("B", ring_b, n, &b, rb, &sb);
			return 1;
		}
		ring_a[n % CTX] = a;
		ring_b[n % CTX] = b;
		n++;
		ra = next_insn(&sa, &a);
		rb = next_insn(&sb, &b);
	}
	printf("identical: %llu instructions\n", n);
	return 0;
}
