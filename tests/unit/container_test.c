// SPDX-License-Identifier: MIT
/*
 * container_test.c - test driver for the container codec (schedlog/container.c),
 * used by tests/host/bdump-format.sh and the bdump suites.
 *
 *   container_test write OUT [NCHUNKS [LEVEL [THREADS [FRAME_MIN]]]]  deterministic test file
 *   container_test check FILE [NCHUNKS]   FILE holds exactly what `write` made
 *   container_test dump FILE              one line per chunk; exit 1 + message on error
 *   container_test payloads FILE          headers + payloads of all chunks but SESSION
 *   container_test frames FILE            the compressed offset where each zstd frame ends
 *   container_test craft OUT CASE         valid zstd, bad container: huge-len,
 *                                         bad-magic, bad-type, bad-crc, two-frames
 *   container_test pace OUT [THREADS [FRAME_MIN]]  pacing (ae_writer_pace), self-checking
 *   container_test crc                    ae_crc32c == bitwise reference
 *   container_test crc-bench              MB/s of ae_crc32c and of the reference
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <aetrace/container.h>
#include <aetrace/container_sink.h>

/* Deterministic payload of test chunk i: length and bytes from a small LCG. */
static uint32_t test_len(int i)
{
	static const uint32_t lens[] = { 0, 1, 23, 24, 25, 4096, 70000, 300000 };

	return lens[i % 8] + (i / 8) * 7;
}

static void test_fill(uint8_t *p, uint32_t len, int i)
{
	uint32_t x = 2654435761u * (i + 1);

	for (uint32_t k = 0; k < len; k++) {
		x = x * 1103515245u + 12345u;
		/* witness-like: mostly a few repeating values */
		p[k] = (x >> 24) < 200 ? (uint8_t)(k % 7) : (uint8_t)(x >> 16);
	}
}

static uint16_t test_type(int i)
{
	return AE_CHUNK_SESSION + i % 5;
}

static int cmd_write(const char *out, int n, int level, int threads, uint32_t frame_min)
{
	struct ae_writer_opts o = { .level = level, .threads = threads, .frame_min = frame_min };
	struct ae_writer *w;
	uint8_t *p = malloc(test_len(7) + n * 7);
	uint64_t out_bytes = 0;
	struct stat st;
	int fd, ret;

	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !p) {
		fprintf(stderr, "%s: %s\n", out, strerror(errno));
		return 1;
	}
	ret = ae_writer_open(&w, fd, &o);
	for (int i = 0; !ret && i < n; i++) {
		test_fill(p, test_len(i), i);
		ret = ae_writer_chunk(w, test_type(i), i % 3, i, p, test_len(i), i % 2);
	}
	if (!ret)
		ret = ae_writer_close(w, &out_bytes);
	free(p);
	if (ret || fstat(fd, &st)) {
		fprintf(stderr, "%s: write failed: %s\n", out, strerror(ret ? -ret : errno));
		close(fd);
		return 1;
	}
	close(fd);
	/* the count a summary prints is the file's size, the stream's end included */
	if ((uint64_t)st.st_size != out_bytes) {
		fprintf(stderr, "%s: %lld bytes, the writer counted %llu\n", out,
			(long long)st.st_size, (unsigned long long)out_bytes);
		return 1;
	}
	return 0;
}

static int cmd_check(const char *path, int n)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	uint8_t *p = malloc(test_len(7) + n * 7);
	int i = 0, ret;

	ret = ae_reader_open(&r, path);
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return 1;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (i >= n) {
			fprintf(stderr, "%s: extra chunk %d\n", path, i);
			return 1;
		}
		test_fill(p, test_len(i), i);
		if (h.type != test_type(i) || h.cpu != i % 3 || h.seq != (uint64_t)i ||
		    h.len != test_len(i) || memcmp(pl, p, h.len)) {
			fprintf(stderr, "%s: chunk %d differs\n", path, i);
			return 1;
		}
		i++;
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", ae_reader_error(r));
		return 1;
	}
	if (i != n) {
		fprintf(stderr, "%s: %d chunks, expected %d\n", path, i, n);
		return 1;
	}
	ae_reader_close(r);
	free(p);
	return 0;
}

static int cmd_dump(const char *path)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	int ret;

	ret = ae_reader_open(&r, path);
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return 1;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1)
		printf("%llu type=%u cpu=%u seq=%llu len=%u crc=%08x\n",
		       (unsigned long long)ae_reader_offset(r), h.type, h.cpu,
		       (unsigned long long)h.seq, h.len, h.crc);
	if (ret < 0)
		fprintf(stderr, "%s\n", ae_reader_error(r));
	ae_reader_close(r);
	return ret < 0 ? 1 : 0;
}

/* Raw bytes of every chunk except SESSION (host, start time) to stdout. */
static int cmd_payloads(const char *path)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h;
	const void *pl;
	int ret;

	ret = ae_reader_open(&r, path);
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return 1;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (h.type == AE_CHUNK_SESSION)
			continue;
		fwrite(&h, sizeof(h), 1, stdout);
		fwrite(pl, 1, h.len, stdout);
	}
	if (ret < 0)
		fprintf(stderr, "%s\n", ae_reader_error(r));
	ae_reader_close(r);
	return ret < 0 ? 1 : 0;
}

/* One line per zstd frame of the file: the compressed offset it ends at. */
static int cmd_frames(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, off = 0, n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	do {
		if (len == cap) {
			uint8_t *p = realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!p) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	while (off < len) {
		size_t k = ZSTD_findFrameCompressedSize(buf + off, len - off);

		if (ZSTD_isError(k)) {
			fprintf(stderr, "%s: no zstd frame at offset %zu: %s\n", path, off,
				ZSTD_getErrorName(k));
			free(buf);
			return 1;
		}
		off += k;
		printf("%zu\n", off);
	}
	free(buf);
	return 0;
}

/*
 * pace: the writer's pacing (ae_writer_pace) on a scripted queue, with
 * 1 MiB chunks of word-like text: the ladder down (one step per
 * AE_WRITER_PACE_BYTES behind), the floor, the way back up (one step per
 * AE_WRITER_PACE_CALM idle, a steady chunk starting the calm over), the
 * top; each level must show in the chunk's compressed size, and the file
 * must read back chunk for chunk. Without opts.adapt nothing moves.
 */
#define PACE_CHUNK	(1u << 20)

static void pace_fill(uint8_t *p, uint32_t len, int i)
{
	static const char *const words[] = {
		"load ", "store ", "modify ", "0x7fffffffe760 ", "rsp ", "witness ",
		"marker ", "switch ", "0x401acc ", "rdi ", "value ", "cache ",
	};
	uint32_t x = 2654435761u * (i + 1), k = 0;

	while (k < len) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 12];
		while (*w && k < len)
			p[k++] = *w++;
	}
}

/* A network 5 MB/s slow (200 ns a byte), unless *ctx says fast. */
static int slow_sink(void *ctx, const void *buf, size_t len)
{
	struct timespec t = { 0, (long)(len * 200 < 999999999 ? len * 200 : 999999999) };

	(void)buf;
	if (!*(int *)ctx)
		nanosleep(&t, NULL);
	return 0;
}

static int pace_expect(int got, int want, int chunk, const char *what)
{
	if (got == want)
		return 0;
	fprintf(stderr, "pace: chunk %d (%s): level %d, expected %d\n", chunk, what, got, want);
	return 1;
}

static int cmd_pace(const char *out, int threads, uint32_t frame_min)
{
	/* the ladder from 3 down, and back up */
	static const int down[] = { 3, 1, -1, -2, -4, -8, -16, -32, -64 };
	const int per_down = AE_WRITER_PACE_BYTES / PACE_CHUNK;
	const int per_up = AE_WRITER_PACE_CALM / PACE_CHUNK;
	struct ae_writer_opts o = { .level = 3, .threads = threads, .frame_min = frame_min,
				    .adapt = 1 };
	uint64_t size[2] = { 0, 0 };	/* a chunk's compressed bytes at 3 and at -64 */
	struct ae_writer_pacing pc;
	int sink_fast = 0;
	struct ae_writer *w, *fixed;
	struct ae_chunk_hdr h;
	struct ae_reader *r;
	const void *pl;
	uint8_t *p = malloc(PACE_CHUNK);
	int fd, i = 0, bad = 0, ret = 0, step, want;

	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !p || ae_writer_open(&w, fd, &o)) {
		fprintf(stderr, "%s: cannot write\n", out);
		return 1;
	}
	/* every third chunk follows an empty one, which must not end a frame */
#define PACE_CHUNK_AT(pace, want_level, what) do {				\
		uint64_t before = ae_writer_out_bytes(w);			\
										\
		bad |= pace_expect(ae_writer_pace(w, pace), want_level, i, what); \
		pace_fill(p, PACE_CHUNK, i);					\
		if (i % 3 == 0)							\
			ret = ret ? ret : ae_writer_chunk(w, AE_CHUNK_MARKERS, 0, i, p, 0, 0); \
		ret = ret ? ret : ae_writer_chunk(w, AE_CHUNK_DATA, 0, i, p, PACE_CHUNK, 1); \
		if ((want_level) == 3 || (want_level) == AE_WRITER_LEVEL_MIN)	\
			size[(want_level) != 3] = ae_writer_out_bytes(w) - before; \
		i++;								\
	} while (0)

	/* behind at every chunk: one step per AE_WRITER_PACE_BYTES */
	for (step = 0; step < 9; step++)
		for (int k = 0; k < per_down; k++)
			PACE_CHUNK_AT(AE_PACE_BEHIND, down[step], "behind");
	PACE_CHUNK_AT(AE_PACE_BEHIND, AE_WRITER_LEVEL_MIN, "behind at the floor");
	/*
	 * Up one step per AE_WRITER_PACE_CALM without a behind call and with
	 * an idle one: steady chunks (a burst) do not hold it back, a behind
	 * one too soon after a step to step again restarts the calm.
	 */
	for (step = 8; step > 0; step--) {
		if (step == 4) {
			PACE_CHUNK_AT(AE_PACE_IDLE, down[step], "idle");
			PACE_CHUNK_AT(AE_PACE_BEHIND, down[step], "behind after a step");
		}
		for (int k = 0; k < per_up; k++)
			PACE_CHUNK_AT(k % 2 && step == 2 ? AE_PACE_STEADY : AE_PACE_IDLE,
				      down[step], "idle");
	}
	for (int k = 0; k < per_up + 1; k++)
		PACE_CHUNK_AT(AE_PACE_IDLE, 3, "idle at the top");
#undef PACE_CHUNK_AT
	ae_writer_pacing(w, &pc);
	bad |= pace_expect(pc.low, AE_WRITER_LEVEL_MIN, i, "lowest");
	bad |= pace_expect(pc.level, 3, i, "at the end");
	bad |= pace_expect(pc.down, 8, i, "steps down");
	bad |= pace_expect(pc.up, 8, i, "steps up");
	if (!ret)
		ret = ae_writer_close(w, NULL);
	close(fd);
	if (ret) {
		fprintf(stderr, "%s: write failed: %s\n", out, strerror(-ret));
		return 1;
	}
	/* the level took effect at once, whatever the path */
	if (size[1] * 10 < size[0] * 11) {
		fprintf(stderr, "pace: a chunk took %llu bytes at level 3, %llu at %d\n",
			(unsigned long long)size[0], (unsigned long long)size[1],
			AE_WRITER_LEVEL_MIN);
		bad = 1;
	}
	/* without adapt, behind changes nothing */
	o.adapt = 0;
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || ae_writer_open(&fixed, fd, &o))
		return 1;
	for (int k = 0; k < 2 * per_down; k++) {
		bad |= pace_expect(ae_writer_pace(fixed, AE_PACE_BEHIND), 3, k, "no adapt");
		ae_writer_chunk(fixed, AE_CHUNK_DATA, 0, k, p, PACE_CHUNK, 0);
	}
	ae_writer_pacing(fixed, &pc);
	bad |= pace_expect(pc.low, 3, 0, "no adapt, lowest");
	ae_writer_close(fixed, NULL);
	close(fd);
	/*
	 * Behind a slow sink, a lower level would only write more: streamed
	 * at level 3, and at level 1 as frames of their own. The sink turns
	 * slow after 100 chunks written fast (zstd's time then outweighs the
	 * sink's since the start, not recently), and the producer is behind
	 * from two chunks later on.
	 */
	o.adapt = 1;
	for (int v = 0; v < 2; v++) {
		struct ae_writer_opts so = o;

		if (v) {
			so.level = 1;
			so.frame_min = 1;
		}
		if (ae_writer_open_sink(&fixed, slow_sink, &sink_fast, &so))
			return 1;
		for (int k = 0; k < 108; k++) {
			enum ae_pace pace = k < 102 ? AE_PACE_STEADY : AE_PACE_BEHIND;

			sink_fast = k < 100;
			bad |= pace_expect(ae_writer_pace(fixed, pace), so.level, k,
					   v ? "slow sink, own frames" : "slow sink");
			pace_fill(p, PACE_CHUNK, k);
			ae_writer_chunk(fixed, AE_CHUNK_DATA, 0, k, p, PACE_CHUNK, 1);
		}
		ae_writer_close(fixed, NULL);
	}
	/*
	 * Paced down with a fast sink (3 to 1 to -1), then the sink turns
	 * slow while the producer stays behind: back up (fewer bytes help
	 * there), never above 3; then steady chunks alone never raise it.
	 */
	if (ae_writer_open_sink(&fixed, slow_sink, &sink_fast, &o))
		return 1;
	for (int k = 0; k < 6 * per_down; k++) {
		sink_fast = k < 2 * per_down;
		ae_writer_pace(fixed, AE_PACE_BEHIND);
		pace_fill(p, PACE_CHUNK, k);
		ae_writer_chunk(fixed, AE_CHUNK_DATA, 0, k, p, PACE_CHUNK, 1);
	}
	ae_writer_pacing(fixed, &pc);
	bad |= pace_expect(pc.low, -1, 0, "slow sink later, lowest");
	bad |= pace_expect(pc.level, 3, 0, "slow sink later, at the end");
	bad |= pace_expect(pc.up, 2, 0, "slow sink later, steps up");
	ae_writer_close(fixed, NULL);
	o.level = -1;
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || ae_writer_open(&fixed, fd, &o))
		return 1;
	for (int k = 0; k < 2 * per_up; k++) {
		bad |= pace_expect(ae_writer_pace(fixed, AE_PACE_STEADY), -1, k, "steady");
		ae_writer_chunk(fixed, AE_CHUNK_DATA, 0, k, p, PACE_CHUNK, 0);
	}
	ae_writer_close(fixed, NULL);
	close(fd);
	/* every chunk reads back */
	if (ae_reader_open(&r, out)) {
		fprintf(stderr, "%s: cannot read\n", out);
		return 1;
	}
	want = i;
	i = 0;
	while ((ret = ae_reader_next(r, &h, &pl)) == 1) {
		if (h.type == AE_CHUNK_MARKERS) {
			if (h.seq != (uint64_t)i || h.len || i % 3) {
				fprintf(stderr, "%s: empty chunk before %d differs\n", out, i);
				bad = 1;
			}
			continue;
		}
		pace_fill(p, PACE_CHUNK, i);
		if (h.seq != (uint64_t)i || h.len != PACE_CHUNK || memcmp(pl, p, PACE_CHUNK)) {
			fprintf(stderr, "%s: chunk %d differs\n", out, i);
			bad = 1;
		}
		i++;
	}
	if (ret < 0 || i != want) {
		fprintf(stderr, "%s: %s (%d of %d chunks)\n", out,
			ret < 0 ? ae_reader_error(r) : "short", i, want);
		bad = 1;
	}
	ae_reader_close(r);
	free(p);
	if (!bad)
		printf("%d chunks; a chunk at level 3: %llu bytes, at %d: %llu\n", want,
		       (unsigned long long)size[0], AE_WRITER_LEVEL_MIN,
		       (unsigned long long)size[1]);
	return bad;
}

static size_t put_chunk(uint8_t *dst, uint16_t type, uint32_t len,
			const void *pl, uint32_t magic, int bad_crc)
{
	struct ae_chunk_hdr h = { .magic = magic, .type = type, .len = len };

	h.crc = ae_crc32c(ae_crc32c(0, &h, sizeof(h)), pl, len);
	if (bad_crc)
		h.crc ^= 0x10;
	memcpy(dst, &h, sizeof(h));
	memcpy(dst + sizeof(h), pl, len);
	return sizeof(h) + len;
}

static int cmd_craft(const char *out, const char *what)
{
	uint8_t raw[4096], z[8192], pl[64];
	size_t n = 0, zn;
	FILE *f;

	memset(pl, 0xab, sizeof(pl));
	n += put_chunk(raw + n, AE_CHUNK_DATA, sizeof(pl), pl, AE_CHUNK_MAGIC, 0);
	if (!strcmp(what, "huge-len")) {
		struct ae_chunk_hdr h = { .magic = AE_CHUNK_MAGIC, .type = AE_CHUNK_DATA,
					  .len = 0xfffffff0u };
		h.crc = ae_crc32c(0, &h, sizeof(h));
		memcpy(raw + n, &h, sizeof(h));
		n += sizeof(h);
	} else if (!strcmp(what, "bad-magic")) {
		n += put_chunk(raw + n, AE_CHUNK_DATA, 8, pl, 0x12345678, 0);
	} else if (!strcmp(what, "bad-type")) {
		n += put_chunk(raw + n, 77, 8, pl, AE_CHUNK_MAGIC, 0);
	} else if (!strcmp(what, "bad-crc")) {
		n += put_chunk(raw + n, AE_CHUNK_DATA, 8, pl, AE_CHUNK_MAGIC, 1);
	} else if (strcmp(what, "two-frames")) {
		fprintf(stderr, "craft: unknown case '%s'\n", what);
		return 2;
	}
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "%s: %s\n", out, strerror(errno));
		return 1;
	}
	zn = ZSTD_compress(z, sizeof(z), raw, n, 1);
	fwrite(z, 1, zn, f);
	if (!strcmp(what, "two-frames")) {
		n = put_chunk(raw, AE_CHUNK_END, 8, pl, AE_CHUNK_MAGIC, 0);
		zn = ZSTD_compress(z, sizeof(z), raw, n, 3);
		fwrite(z, 1, zn, f);
	}
	return fclose(f) ? 1 : 0;
}

static int cmd_crc(void)
{
	static uint8_t buf[3 * AE_CRC32C_PIECE + 16];
	static const size_t big[] = { AE_CRC32C_PIECE, AE_CRC32C_PIECE + 1,
				      3 * AE_CRC32C_PIECE - 5 };
	int bad = 0;

	if (ae_crc32c(0, "123456789", 9) != 0xe3069283u) {
		fprintf(stderr, "crc: check value wrong: %08x\n", ae_crc32c(0, "123456789", 9));
		return 1;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 5));
	/*
	 * Every alignment, lengths past the library's lanes and folds, and
	 * past the pieces ae_crc32c() cuts a buffer into.
	 */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0, j = 0; j < 3; len += 1 + len / 8) {
			uint32_t a, b;

			if (len > (64 << 10))
				len = big[j++];
			a = ae_crc32c(0x1234, buf + off, len);
			b = ae_crc32c_bitwise(0x1234, buf + off, len);
			if (a != b) {
				fprintf(stderr, "crc: off %zu len %zu: %08x != %08x\n",
					off, len, a, b);
				bad = 1;
			}
		}
	return bad;
}

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmd_crc_bench(void)
{
	size_t len = 64 << 20;
	uint8_t *buf = malloc(len);
	volatile uint32_t sink = 0;
	double t0, fast, ref;

	if (!buf)
		return 1;
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + (i >> 9));
	t0 = secs();
	for (int k = 0; k < 8; k++)
		sink += ae_crc32c(sink, buf, len);
	fast = 8.0 * len / 1e6 / (secs() - t0);
	t0 = secs();
	sink += ae_crc32c_bitwise(0, buf, len / 8);
	ref = len / 8 / 1e6 / (secs() - t0);
	printf("ae_crc32c %.0f MB/s, bitwise reference %.0f MB/s\n", fast, ref);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], argc > 3 ? atoi(argv[3]) : 20,
				 argc > 4 ? atoi(argv[4]) : 1, argc > 5 ? atoi(argv[5]) : 0,
				 argc > 6 ? (uint32_t)strtoul(argv[6], NULL, 0) : 0);
	if (argc >= 3 && !strcmp(argv[1], "check"))
		return cmd_check(argv[2], argc > 3 ? atoi(argv[3]) : 20);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return cmd_dump(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "payloads"))
		return cmd_payloads(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "frames"))
		return cmd_frames(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "craft"))
		return cmd_craft(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "pace"))
		return cmd_pace(argv[2], argc > 3 ? atoi(argv[3]) : 0,
				argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 0);
	if (argc == 2 && !strcmp(argv[1], "crc"))
		return cmd_crc();
	if (argc == 2 && !strcmp(argv[1], "crc-bench"))
		return cmd_crc_bench();
	fprintf(stderr, "usage: %s write|check|dump|payloads|frames|craft|crc ... (see source)\n", argv[0]);
	return 2;
}
