/* SPDX-License-Identifier: MIT */
/*
 * wire.h - the bdump -> bdump-recv protocol (docs/FORMAT.md "Container",
 * "Network protocol"). Every message is a header like a container chunk
 * header (magic, type, len, CRC-32C over header with crc = 0 + payload)
 * followed by the payload. All integers little endian.
 */
#ifndef BDUMP_WIRE_H
#define BDUMP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define AE_WIRE_MAGIC		0x50574541u	/* "AEWP" */
#define AE_WIRE_VERSION		1
#define AE_WIRE_MAX_LEN		(4u << 20)	/* payload bytes */
#define AE_WIRE_SEG_MAX		(1u << 20)	/* segment data bytes bdump sends */
#define AE_WIRE_NONCE		32
#define AE_WIRE_MAC		32		/* HMAC-SHA256 */

enum ae_wire_type {
	AE_W_SRV_HELLO	= 1,	/* recv -> bdump: struct ae_w_srv_hello */
	AE_W_CLI_HELLO	= 2,	/* bdump -> recv: struct ae_w_cli_hello */
	AE_W_WELCOME	= 3,	/* recv -> bdump: struct ae_w_welcome */
	AE_W_SEGMENT	= 4,	/* bdump -> recv: struct ae_w_segment + data */
	AE_W_ACK	= 5,	/* recv -> bdump: struct ae_w_ack */
	AE_W_FIN	= 6,	/* bdump -> recv: struct ae_w_fin */
	AE_W_ERROR	= 7,	/* either way: NUL-terminated message */
};

struct ae_w_hdr {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;		/* 0 */
	uint32_t len;
	uint32_t crc;
};

struct ae_w_srv_hello {
	uint32_t version;
	uint32_t auth;		/* 1: the client must prove the shared secret */
	uint8_t nonce[AE_WIRE_NONCE];
};

struct ae_w_cli_hello {
	uint32_t version;
	uint32_t flags;		/* 0 */
	uint64_t start_ns;	/* CLOCK_REALTIME start of this bdump session */
	char host[64];		/* sender host name, NUL padded */
	uint8_t nonce[AE_WIRE_NONCE];
	uint8_t mac[AE_WIRE_MAC];	/* client proof, zero without secret */
};

struct ae_w_welcome {
	uint64_t next_seq;	/* first segment the receiver has not stored */
	uint8_t mac[AE_WIRE_MAC];	/* server proof, zero without secret */
	char session[128];	/* directory name of the session */
};

enum ae_wire_stream {
	AE_STREAM_TRACE	= 0,	/* bytes of trace.zst */
	AE_STREAM_SCHED	= 1,	/* bytes of sched.bin */
};

struct ae_w_segment {
	uint64_t seq;		/* 0, 1, 2, ... over both streams */
	uint32_t stream;	/* enum ae_wire_stream */
	uint32_t pad;
};

struct ae_w_ack {
	uint64_t next_seq;	/* every segment below is stored */
	uint64_t complete;	/* 1 after FIN: session closed cleanly */
};

struct ae_w_fin {
	uint64_t nr_segments;
};

int wire_send(int fd, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen);
/*
 * Receive one message into buf (cap >= AE_WIRE_MAX_LEN): 1 ok, 0 orderly
 * EOF before a header, <0 error with a message in err (names the stream
 * offset). timeout_ms < 0 waits forever.
 */
int wire_recv(int fd, struct ae_w_hdr *h, void *buf, int timeout_ms,
	      uint64_t *stream_off, char *err, size_t errlen);

int wire_load_secret(const char *path, uint8_t **key, size_t *len, char *err, size_t errlen);
void wire_mac(const uint8_t *key, size_t keylen, const char *role,
	      const uint8_t *n1, const uint8_t *n2, const void *extra, size_t extralen,
	      uint8_t out[AE_WIRE_MAC]);
int wire_mac_equal(const uint8_t *a, const uint8_t *b);
void wire_nonce(uint8_t n[AE_WIRE_NONCE]);

#endif /* BDUMP_WIRE_H */
