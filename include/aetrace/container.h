/* SPDX-License-Identifier: MIT */
/*
 * container.h - the aetrace trace container (docs/FORMAT.md, "Container").
 *
 * A trace file is one zstd stream (possibly several concatenated frames)
 * whose decompressed bytes are a sequence of chunks. Each chunk is a fixed
 * header followed by `len` payload bytes; `crc` is CRC-32C over the header
 * (with crc = 0) and the payload. Writers flush the zstd stream at chunk
 * boundaries, so a reader can follow a file that is still growing.
 */
#ifndef AETRACE_CONTAINER_H
#define AETRACE_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#define AE_CHUNK_MAGIC		0x4b484541u	/* "AEHK" little endian */
#define AE_FORMAT_VERSION	2	/* 1: markers of 64 bytes, without cx */
#define AE_CHUNK_MAX_LEN	(64u << 20)	/* larger len = corrupt */

enum ae_chunk_type {
	AE_CHUNK_SESSION	= 1,	/* struct ae_session + strings */
	AE_CHUNK_DATA		= 2,	/* committed bytes of one sub-buffer */
	AE_CHUNK_MARKERS	= 3,	/* array of struct trbuf_marker */
	AE_CHUNK_END		= 4,	/* struct ae_end: clean end of session */
	AE_CHUNK_EXIT		= 5,	/* struct ae_exit: a traced process ended */
};

struct ae_chunk_hdr {
	uint32_t magic;
	uint16_t type;		/* enum ae_chunk_type */
	uint16_t cpu;		/* DATA: cpu region; others: 0 */
	uint64_t seq;		/* DATA: sub-buffer sequence on cpu; else chunk count */
	uint32_t len;		/* payload bytes that follow */
	uint32_t crc;		/* CRC-32C of header (crc = 0) + payload */
};

enum ae_session_mode {
	AE_MODE_STANDALONE	= 1,	/* aerun: one process, no kernel parts */
	AE_MODE_KERNEL		= 2,	/* bdump on /dev/trbuf */
};

/* Payload of AE_CHUNK_SESSION, followed by `strings_len` bytes of
 * NUL-separated "key=value" strings (host, prog=<path>, argv...). */
struct ae_session {
	uint32_t version;	/* AE_FORMAT_VERSION */
	uint32_t mode;		/* enum ae_session_mode */
	uint32_t nr_cpus;
	uint32_t subbuf_size;
	uint32_t nr_subbufs;	/* per cpu */
	uint32_t strings_len;
	uint64_t start_ns;	/* CLOCK_REALTIME */
};

/* Payload of AE_CHUNK_EXIT (standalone: the traced process's end). */
struct ae_exit {
	int32_t pid;
	int32_t status;		/* wait(2) status */
	uint64_t final_ip;	/* user ip at exit (0 if unknown) */
};

/* Payload of AE_CHUNK_END. */
struct ae_end {
	uint64_t raw_bytes;	/* witness bytes in DATA chunks */
	uint64_t data_chunks;
	uint64_t markers;
	uint64_t drops;		/* 0 in lossless mode */
};
/*
 * END's counters as its producer keeps them, over the chunks before it:
 * ae_end_tally() adds chunk h to t (DATA bytes and chunks, MARKERS'
 * markers; other chunks count nothing), ae_end_matches() returns 1 when
 * END e counts what t does (drops apart), 0 when chunks were cut out or
 * added. Readers, bdump --check and aetrace salvage count alike.
 */
void ae_end_tally(struct ae_end *t, const struct ae_chunk_hdr *h);
int ae_end_matches(const struct ae_end *e, const struct ae_end *t);

/*
 * CRC-32C (Castagnoli); callers pass the previous value (0 to start).
 * ae_crc32c() is the fast one (ISA-L's crc32_iscsi, which picks the
 * CPU's fastest code: crc32 instruction lanes folded by pclmulqdq;
 * schedlog/container.c, libschedlog.a); ae_crc32c_bitwise() is the
 * bit-at-a-time reference with the same result. Both return the CRC.
 */
uint32_t ae_crc32c(uint32_t crc, const void *buf, size_t len);
#define AE_CRC32C_PIECE	(1 << 20)	/* bytes per library call */

static inline uint32_t ae_crc32c_bitwise(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}


/*
 * Container codec (implemented in schedlog/container.c, linked by bdump,
 * aerun and aetrace). All functions return 0 or -errno; readers report
 * corruption with the byte offset in the decompressed stream.
 */
struct ae_writer;
/*
 * At zstd levels up to 1 and without worker threads, a payload of
 * `frame_min` bytes or more but its last byte is compressed in one call
 * straight from the caller's buffer, as a zstd frame of its own (its
 * header ends the frame before, its last byte starts the next, so a
 * chunk never ends at a frame end): the streaming API would first copy
 * it into its window. aerun's 4 MiB sub-buffers of a data trace are
 * written 8% (Lua) and 15% (bzip2) faster so, for 0.4% and 0.03% more
 * bytes; smaller chunks lose more of the history a new frame forgets
 * (at the driver's 64 KiB sub-buffers, 21% more bytes for Lua's trace),
 * hence the default (docs/ARCHITECTURE.md item 23).
 */
#define AE_WRITER_FRAME_MIN	(2u << 20)
/*
 * The zstd levels a writer accepts: zstd's fast modes down to -64 (about
 * 1.2 GB/s on one core of this project's machines, 1.2:1 on a data
 * trace), up to zstd's strongest.
 */
#define AE_WRITER_LEVEL_MIN	(-64)
#define AE_WRITER_LEVEL_MAX	22
struct ae_writer_opts {
	int level;		/* zstd level, default 1 */
	int threads;		/* zstd worker threads, 0 = single threaded */
	uint32_t frame_min;	/* 0: AE_WRITER_FRAME_MIN */
	int adapt;		/* ae_writer_pace() may lower the level */
};
int ae_writer_open(struct ae_writer **wp, int fd, const struct ae_writer_opts *o);
/*
 * Pacing (zstd's --adapt, for a writer that must keep up with a producer
 * that waits for it: aerun's traced program, trbuf's traced tasks). Before
 * a chunk, the caller says how its producer stands: AE_PACE_BEHIND (it
 * waits for the writer, or its queue grows), AE_PACE_IDLE (the writer
 * waited for data since the last chunk) or AE_PACE_STEADY. Behind steps
 * the level, at most once per AE_WRITER_PACE_BYTES written: down (19,
 * 9, 4, 2, 1, -1, -2, -4 ... AE_WRITER_LEVEL_MIN) while zstd takes at
 * least twice the writer's recent time in the sink, up while the sink
 * takes more than zstd (behind a slow network or disk, a lower level
 * would only write more bytes); each call keeps three quarters of the
 * times before it. AE_WRITER_PACE_CALM bytes without a behind call and
 * with an idle one raise it one step, never above the level opened
 * with. Without opts.adapt, nothing changes. Returns the level the next
 * chunk is compressed at.
 */
enum ae_pace { AE_PACE_IDLE = -1, AE_PACE_STEADY = 0, AE_PACE_BEHIND = 1 };
#define AE_WRITER_PACE_BYTES	(4u << 20)
#define AE_WRITER_PACE_CALM	(16u << 20)
int ae_writer_pace(struct ae_writer *w, enum ae_pace pace);
/* What pacing did so far (for summaries). */
struct ae_writer_pacing {
	int level;		/* the next chunk's */
	int low;		/* the lowest any chunk was compressed at */
	uint32_t down, up;	/* steps taken each way */
};
void ae_writer_pacing(const struct ae_writer *w, struct ae_writer_pacing *p);
/* Append one chunk; flushes the zstd stream at the chunk end when `flush`. */
int ae_writer_chunk(struct ae_writer *w, uint16_t type, uint16_t cpu,
		    uint64_t seq, const void *payload, uint32_t len, int flush);
/*
 * Ends the stream and frees w. `out_bytes`, unless NULL: every byte
 * written to the fd, the stream's end included.
 */
int ae_writer_close(struct ae_writer *w, uint64_t *out_bytes);
uint64_t ae_writer_in_bytes(const struct ae_writer *w);	/* before compression */
uint64_t ae_writer_out_bytes(const struct ae_writer *w);	/* written so far */

struct ae_reader;
/* path "-" reads standard input. */
int ae_reader_open(struct ae_reader **rp, const char *path);
/* 1: *h and *payload (valid until the next call) filled; 0: clean end of
 * stream; <0: error, message from ae_reader_error() (names the file and the
 * offset of the bad chunk). */
int ae_reader_next(struct ae_reader *r, struct ae_chunk_hdr *h, const void **payload);
const char *ae_reader_error(const struct ae_reader *r);
/* 1 when the error is the file ending inside a chunk or a zstd frame (a
 * writer that stopped), 0 for damage or no error. */
int ae_reader_truncated(const struct ae_reader *r);
/* The decompressed offset of the chunk last returned (its header). */
uint64_t ae_reader_offset(const struct ae_reader *r);
void ae_reader_close(struct ae_reader *r);

#endif /* AETRACE_CONTAINER_H */
