/* SPDX-License-Identifier: MIT */
/*
 * wire.h - the bdump -> bdump-recv protocol, version 2 (docs/FORMAT.md
 * "Network protocol"). Every message is a header like a container chunk
 * header (magic, type, flags, len, CRC-32C over header with crc = 0 +
 * payload) followed by the payload. After the hello exchange every message
 * carries flag AE_WF_MAC and ends with HMAC-SHA256 under a per-direction
 * key derived (HKDF-SHA256) from the shared secret, both nonces and the
 * session token, over its direction's message counter, header and payload.
 * All integers little endian.
 */
#ifndef BDUMP_WIRE_H
#define BDUMP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define AE_WIRE_MAGIC		0x50574541u	/* "AEWP" */
#define AE_WIRE_VERSION		2
#define AE_WIRE_SEG_MAX		(1u << 20)	/* segment data bytes bdump sends */
#define AE_WIRE_MAX_LEN		(AE_WIRE_SEG_MAX + 256)	/* payload bytes, MAC included */
#define AE_WIRE_HELLO_MAX	512		/* payload limit before authentication */
#define AE_WIRE_NONCE		32
#define AE_WIRE_MAC		32		/* HMAC-SHA256 */
#define AE_WIRE_KEY		32
#define AE_WIRE_TOKEN		32

/* Header flags. */
#define AE_WF_MAC		1	/* payload ends with a message MAC */

enum ae_wire_type {
	AE_W_SRV_HELLO	= 1,	/* recv -> bdump: struct ae_w_srv_hello */
	AE_W_CLI_HELLO	= 2,	/* bdump -> recv: struct ae_w_cli_hello */
	AE_W_WELCOME	= 3,	/* recv -> bdump: struct ae_w_welcome (MAC) */
	AE_W_SEGMENT	= 4,	/* bdump -> recv: struct ae_w_segment + data (MAC) */
	AE_W_ACK	= 5,	/* recv -> bdump: struct ae_w_ack (MAC) */
	AE_W_FIN	= 6,	/* bdump -> recv: struct ae_w_fin (MAC) */
	AE_W_ERROR	= 7,	/* either way: NUL-terminated message */
};

struct ae_w_hdr {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;		/* AE_WF_* */
	uint32_t len;		/* payload bytes, MAC included */
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
	uint8_t token[AE_WIRE_TOKEN];	/* session token XOR HKDF pad */
	uint8_t mac[AE_WIRE_MAC];	/* client proof over all fields above */
};

struct ae_w_welcome {
	uint64_t next_seq;	/* first segment the receiver has not stored */
	uint64_t complete;	/* 1: the session already ended (FIN acknowledged) */
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

/*
 * One end of a connection. Before wire_chan_key() messages are sent and
 * accepted without MAC; after it every message sent carries one and every
 * message received must (except an unauthenticated ERROR, reported as such).
 */
struct wire_chan {
	int fd;
	int keyed;
	uint8_t tx_key[AE_WIRE_KEY], rx_key[AE_WIRE_KEY];
	uint64_t tx_seq, rx_seq;	/* message counters under MAC */
	uint64_t off;			/* bytes received: error messages */
};

/* Send one message (payload a then b; with its MAC once keyed): 0 or -errno. */
int wire_send(struct wire_chan *c, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen);
/*
 * Receive one message into buf (at most cap payload bytes, MAC included):
 * 1 ok (h->len is then the payload without MAC; h->flags tells whether it
 * was authenticated), 0 orderly EOF before a header, <0 error with a
 * message in err naming the stream offset. The whole message must arrive
 * before deadline_ms (CLOCK_MONOTONIC ms, wire_now_ms(); 0: no deadline).
 * -EKEYREJECTED: the message failed its MAC (or lacked one) and was refused.
 */
int wire_recv(struct wire_chan *c, struct ae_w_hdr *h, void *buf, size_t cap,
	      uint64_t deadline_ms, char *err, size_t errlen);
/* Wait until c->fd is readable: 1 readable, 0 timeout, <0 error. */
int wire_wait(struct wire_chan *c, int timeout_ms);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t wire_now_ms(void);

/* Checks of received payloads (also the fuzz target's entry): 0 or -EPROTO + err. */
int wire_parse_cli_hello(const struct ae_w_hdr *h, const void *p,
			 struct ae_w_cli_hello *out, char *err, size_t errlen);
int wire_parse_segment(const struct ae_w_hdr *h, const void *p, struct ae_w_segment *out,
		       const uint8_t **data, size_t *len, char *err, size_t errlen);
int wire_parse_fin(const struct ae_w_hdr *h, const void *p, struct ae_w_fin *out,
		   char *err, size_t errlen);

/* Read a 1..4096 byte secret (trailing newlines dropped) into *key (malloc): 0 or -errno + err. */
int wire_load_secret(const char *path, uint8_t **key, size_t *len, char *err, size_t errlen);
/* HMAC-SHA256 of the client's hello fields (before mac) under the secret. */
void wire_hello_mac(const uint8_t *key, size_t keylen, const uint8_t nonce_s[AE_WIRE_NONCE],
		    const struct ae_w_cli_hello *ch, uint8_t out[AE_WIRE_MAC]);
/* XOR the token with a pad derived from the secret and both nonces (wraps and unwraps). */
void wire_token_wrap(const uint8_t *key, size_t keylen, const uint8_t nonce_s[AE_WIRE_NONCE],
		     const uint8_t nonce_c[AE_WIRE_NONCE], uint8_t token[AE_WIRE_TOKEN]);
/* Derive the per-direction MAC keys and switch the channel to MACs; 0 or -EIO. */
int wire_chan_key(struct wire_chan *c, int is_server, const uint8_t *key, size_t keylen,
		  const uint8_t nonce_s[AE_WIRE_NONCE], const uint8_t nonce_c[AE_WIRE_NONCE],
		  const uint8_t token[AE_WIRE_TOKEN]);
/* 1 when the n bytes are equal (constant time), else 0. */
int wire_mac_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* n bytes from getrandom(); aborts rather than run with guessable nonces. */
void wire_random(uint8_t *buf, size_t n);

#endif /* BDUMP_WIRE_H */
