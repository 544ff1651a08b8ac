// SPDX-License-Identifier: MIT
/*
 * trace_mutate - rewrite an aetrace container with one witness byte
 * changed, the %rsp of every SIGNAL marker (or of the one with
 * absolute marker index INDEX) moved, the ip, sp, cx, offset, arg,
 * flags or time of marker INDEX set, or the DATA payload cut after LEN bytes (a task killed
 * there: the END chunk then counts the bytes left), for tests of the
 * regenerator on hand-made input.
 *
 *   trace_mutate IN OUT OFFSET XOR   (OFFSET counts DATA payload bytes)
 *   trace_mutate --signal-sp IN OUT ADD [INDEX]
 *   trace_mutate --marker IN OUT INDEX ip|sp|cx|offset|arg|flags|time VALUE
 *   trace_mutate --data-cut IN OUT LEN
 *   trace_mutate --data-len IN       (prints the number of DATA bytes)
 *   trace_mutate --end-drops IN OUT N  (the END chunk's drops set to N)
 *   trace_mutate --retid IN OUT TID NEWTID  (every marker of thread TID
 *                                           said to be NEWTID's)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aetrace/container.h>
#include <linux/trbuf.h>

int main(int argc, char **argv)
{
	struct ae_reader *r;
	struct ae_writer *w = NULL;
	struct ae_writer_opts o = { .level = 1 };
	struct ae_chunk_hdr h;
	const void *p;
	unsigned long long pos = 0, at = 0;
	int xr = 0, count = argc == 3 && !strcmp(argv[1], "--data-len"), ret, fd;
	int sp = (argc == 5 || argc == 6) && !strcmp(argv[1], "--signal-sp");
	int set = argc == 7 && !strcmp(argv[1], "--marker") &&
		  (!strcmp(argv[5], "ip") || !strcmp(argv[5], "sp") || !strcmp(argv[5], "cx") ||
		   !strcmp(argv[5], "offset") || !strcmp(argv[5], "arg") ||
		   !strcmp(argv[5], "flags") || !strcmp(argv[5], "time"));
	int cut = argc == 5 && !strcmp(argv[1], "--data-cut");
	int drops = argc == 5 && !strcmp(argv[1], "--end-drops");
	int retid = argc == 6 && !strcmp(argv[1], "--retid");
	long long sp_add = 0, only = -1, mki = 0, tid = 0;
	unsigned long long val = 0;

	if (!count && !sp && !set && !cut && !drops && !retid && argc != 5) {
		fprintf(stderr, "usage: trace_mutate IN OUT OFFSET XOR | --signal-sp IN OUT ADD [INDEX] | --marker IN OUT INDEX ip|sp|cx|offset|arg|flags|time VALUE | --data-cut IN OUT LEN | --data-len IN | --end-drops IN OUT N | --retid IN OUT TID NEWTID\n");
		return 2;
	}
	if (set) {
		only = strtoll(argv[4], NULL, 0);
		val = strtoull(argv[6], NULL, 0);
		set = argv[5][0];	/* the field: i, s, c, o, a, f or t */
		argv++;
	} else if (cut || drops) {
		val = strtoull(argv[4], NULL, 0);
		argv++;
	} else if (retid) {
		tid = strtoll(argv[4], NULL, 0);
		val = strtoull(argv[5], NULL, 0);
		argv++;
	} else if (sp) {
		sp_add = strtoll(argv[4], NULL, 0);
		if (argc == 6)
			only = strtoll(argv[5], NULL, 0);
		argv++;
	}
	if (ae_reader_open(&r, argv[count ? 2 : 1])) {
		fprintf(stderr, "trace_mutate: cannot open input\n");
		return 1;
	}
	if (!count) {
		at = sp || set || cut || drops || retid ? ~0ull : strtoull(argv[3], NULL, 0);
		xr = sp || set || cut || drops || retid ? 0 : (int)strtol(argv[4], NULL, 0);
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ae_writer_open(&w, fd, &o))
			return 1;
	}
	while ((ret = ae_reader_next(r, &h, &p)) == 1) {
		if (h.type == AE_CHUNK_END && (drops || cut) && h.len >= sizeof(struct ae_end)) {
			struct ae_end e;

			memcpy(&e, p, sizeof(e));
			if (drops)
				e.drops = val;
			else if (e.raw_bytes > val)
				e.raw_bytes = val;	/* what a task killed there leaves */
			ret = ae_writer_chunk(w, h.type, h.cpu, h.seq, &e, sizeof(e), 0);
		} else if (h.type == AE_CHUNK_DATA && cut && pos + h.len > val) {
			ret = ae_writer_chunk(w, h.type, h.cpu, h.seq, p, pos > val ? 0 : val - pos, 0);
		} else if (h.type == AE_CHUNK_DATA && !count && at >= pos && at < pos + h.len) {
			unsigned char *c = malloc(h.len);

			memcpy(c, p, h.len);
			c[at - pos] ^= xr;
			ret = ae_writer_chunk(w, h.type, h.cpu, h.seq, c, h.len, 0);
			free(c);
		} else if (h.type == AE_CHUNK_MARKERS && (sp || set || retid)) {
			struct trbuf_marker *m = malloc(h.len);

			if (!m)
				return 1;
			memcpy(m, p, h.len);
			for (size_t i = 0; i < h.len / sizeof(*m); i++, mki++) {
				if (set == 'i' && only == mki)
					m[i].ip = val;
				else if (set == 's' && only == mki)
					m[i].sp = val;
				else if (set == 'c' && only == mki)
					m[i].cx = val;
				else if (set == 'o' && only == mki)
					m[i].offset = val;
				else if (set == 'a' && only == mki)
					m[i].arg = val;
				else if (set == 'f' && only == mki)
					m[i].flags = val;
				else if (set == 't' && only == mki)
					m[i].time_ns = val;
				else if (sp && m[i].type == TRBUF_MK_SIGNAL && (only < 0 || only == mki))
					m[i].sp += sp_add;
				else if (retid && m[i].tid == tid) {
					if (m[i].pid == tid)
						m[i].pid = (int32_t)val;
					m[i].tid = (int32_t)val;
				}
			}
			ret = ae_writer_chunk(w, h.type, h.cpu, h.seq, m, h.len, 0);
			free(m);
		} else if (!count) {
			ret = ae_writer_chunk(w, h.type, h.cpu, h.seq, p, h.len, 0);
		}
		if (ret < 0)
			return 1;
		if (h.type == AE_CHUNK_DATA)
			pos += h.len;
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", ae_reader_error(r));
		return 1;
	}
	if (count)
		printf("%llu\n", pos);
	else if (ae_writer_close(w, NULL))
		return 1;
	ae_reader_close(r);
	return 0;
}
