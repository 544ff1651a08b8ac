// SPDX-License-Identifier: MIT
/*
 * wire.c - message framing, checksums, per-message HMAC-SHA256 and the key
 * derivation (HKDF-SHA256) of the bdump network protocol (wire.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <aetrace/container.h>
#include "wire.h"

/* Key material when no secret is given: MACs then catch only accidents. */
static const uint8_t no_secret[] = "aetrace-bdump no shared secret";

uint64_t wire_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ull + t.tv_nsec / 1000000;
}

static void ikm(const uint8_t **k, size_t *n)
{
	if (!*k || !*n) {
		*k = no_secret;
		*n = sizeof(no_secret) - 1;
	}
}

/* HMAC-SHA256 over up to three pieces; 0 or -EIO. */
static int hmac3(const uint8_t *key, size_t keylen, const void *a, size_t alen,
		 const void *b, size_t blen, const void *c, size_t clen, uint8_t out[AE_WIRE_MAC])
{
	static EVP_MAC *mac;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx;
	size_t olen = 0;
	int ok;

	if (!__atomic_load_n(&mac, __ATOMIC_ACQUIRE)) {
		EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL), *old = NULL;

		if (!m)
			return -EIO;
		if (!__atomic_compare_exchange_n(&mac, &old, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			EVP_MAC_free(m);
	}
	ctx = EVP_MAC_CTX_new(mac);
	if (!ctx)
		return -EIO;
	ok = EVP_MAC_init(ctx, key, keylen, params) &&
	     (!alen || EVP_MAC_update(ctx, a, alen)) &&
	     (!blen || EVP_MAC_update(ctx, b, blen)) &&
	     (!clen || EVP_MAC_update(ctx, c, clen)) &&
	     EVP_MAC_final(ctx, out, &olen, AE_WIRE_MAC) && olen == AE_WIRE_MAC;
	EVP_MAC_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

/* HKDF-SHA256(ikm, salt = nonce_s || nonce_c, info) -> out; 0 or -EIO. */
static int hkdf(const uint8_t *key, size_t keylen, const uint8_t *nonce_s,
		const uint8_t *nonce_c, const char *info, uint8_t *out, size_t outlen)
{
	uint8_t salt[2 * AE_WIRE_NONCE];
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	int ok;

	memcpy(salt, nonce_s, AE_WIRE_NONCE);
	memcpy(salt + AE_WIRE_NONCE, nonce_c, AE_WIRE_NONCE);
	ok = pc && EVP_PKEY_derive_init(pc) > 0 &&
	     EVP_PKEY_CTX_set_hkdf_md(pc, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_salt(pc, salt, sizeof(salt)) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_key(pc, key, keylen) > 0 &&
	     EVP_PKEY_CTX_add1_hkdf_info(pc, (const unsigned char *)info, strlen(info)) > 0 &&
	     EVP_PKEY_derive(pc, out, &outlen) > 0;
	EVP_PKEY_CTX_free(pc);
	return ok ? 0 : -EIO;
}

/* The MAC of message number seq: HMAC(key, le64 seq || header(crc 0) || payload). */
static int msg_mac(const uint8_t *key, uint64_t seq, const struct ae_w_hdr *h,
		   const void *a, size_t alen, const void *b, size_t blen, uint8_t out[AE_WIRE_MAC])
{
	uint8_t pre[8 + sizeof(*h)];
	struct ae_w_hdr hh = *h;

	hh.crc = 0;
	memcpy(pre, &seq, 8);
	memcpy(pre + 8, &hh, sizeof(hh));
	return hmac3(key, AE_WIRE_KEY, pre, sizeof(pre), a, alen, b, blen, out);
}

int wire_send(struct wire_chan *c, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen)
{
	struct ae_w_hdr h = { .magic = AE_WIRE_MAGIC, .type = type,
			      .len = alen + blen };
	uint8_t mac[AE_WIRE_MAC];
	struct iovec iov[4] = {
		{ &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen }, { mac, 0 },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 4 };
	uint32_t crc;

	if (c->keyed) {
		h.flags = AE_WF_MAC;
		h.len += AE_WIRE_MAC;
		if (msg_mac(c->tx_key, c->tx_seq, &h, a, alen, b, blen, mac))
			return -EIO;
		iov[3].iov_len = AE_WIRE_MAC;
		c->tx_seq++;
	}
	crc = ae_crc32c(ae_crc32c(ae_crc32c(0, &h, sizeof(h)), a, alen), b, blen);
	h.crc = ae_crc32c(crc, mac, iov[3].iov_len);
	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov->iov_len) {
			n -= msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= n;
		}
	}
	return 0;
}

int wire_wait(struct wire_chan *c, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* Read exactly len bytes before deadline: 1 ok, 0 EOF at the first byte, <0 error. */
static int read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (deadline) {
			uint64_t now = wire_now_ms();
			int pr;

			if (now >= deadline)
				return -ETIMEDOUT;
			pr = poll(&p, 1, deadline - now > 60000 ? 60000 : (int)(deadline - now));
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr < 0)
				return -errno;
			if (pr == 0)
				continue;
		}
		n = recv(fd, (char *)buf + got, len - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return got ? -EPIPE : 0;
		got += n;
	}
	return 1;
}

int wire_recv(struct wire_chan *c, struct ae_w_hdr *h, void *buf, size_t cap,
	      uint64_t deadline_ms, char *err, size_t errlen)
{
	unsigned long long off = c->off;
	uint32_t crc;
	int ret;

	ret = read_full(c->fd, h, sizeof(*h), deadline_ms);
	if (ret <= 0) {
		if (ret < 0)
			snprintf(err, errlen, "stream offset %llu: reading message header: %s",
				 off, ret == -ETIMEDOUT ? "peer too slow (deadline passed)" : strerror(-ret));
		return ret;
	}
	if (h->magic != AE_WIRE_MAGIC) {
		snprintf(err, errlen, "stream offset %llu: bad message magic 0x%08x", off, h->magic);
		return -EPROTO;
	}
	if (h->type < AE_W_SRV_HELLO || h->type > AE_W_ERROR || (h->flags & ~AE_WF_MAC)) {
		snprintf(err, errlen, "stream offset %llu: bad message type %u flags %u",
			 off, h->type, h->flags);
		return -EPROTO;
	}
	if (h->len > cap) {
		snprintf(err, errlen, "stream offset %llu: message length %u exceeds %zu",
			 off, h->len, cap);
		return -EPROTO;
	}
	ret = read_full(c->fd, buf, h->len, deadline_ms);
	if (ret <= 0 && h->len) {
		ret = ret ? ret : -EPIPE;
		snprintf(err, errlen, "stream offset %llu: truncated message payload: %s", off,
			 ret == -ETIMEDOUT ? "peer too slow (deadline passed)" : strerror(-ret));
		return ret;
	}
	crc = h->crc;
	h->crc = 0;
	h->crc = ae_crc32c(ae_crc32c(0, h, sizeof(*h)), buf, h->len);
	if (h->crc != crc) {
		snprintf(err, errlen, "stream offset %llu: CRC-32C mismatch in message type %u (stored 0x%08x, computed 0x%08x)",
			 off, h->type, crc, h->crc);
		return -EBADMSG;
	}
	c->off += sizeof(*h) + h->len;
	if (!(h->flags & AE_WF_MAC)) {
		/* unauthenticated: fine before the keys, and for an ERROR */
		if (c->keyed && h->type != AE_W_ERROR) {
			snprintf(err, errlen, "stream offset %llu: message type %u without MAC",
				 off, h->type);
			return -EKEYREJECTED;
		}
		return 1;
	}
	if (!c->keyed || h->len < AE_WIRE_MAC) {
		snprintf(err, errlen, "stream offset %llu: unexpected MAC flag on message type %u",
			 off, h->type);
		return -EPROTO;
	}
	{
		uint8_t mac[AE_WIRE_MAC];
		uint32_t len = h->len;

		if (msg_mac(c->rx_key, c->rx_seq, h, buf, len - AE_WIRE_MAC, NULL, 0, mac)) {
			snprintf(err, errlen, "stream offset %llu: HMAC-SHA256 failed in libcrypto", off);
			return -EIO;
		}
		if (!wire_mac_equal(mac, (uint8_t *)buf + len - AE_WIRE_MAC, AE_WIRE_MAC)) {
			snprintf(err, errlen, "stream offset %llu: MAC mismatch in message %llu (type %u, %u bytes): refused",
				 off, (unsigned long long)c->rx_seq, h->type, len);
			return -EKEYREJECTED;
		}
		h->len = len - AE_WIRE_MAC;
		c->rx_seq++;
	}
	return 1;
}

int wire_parse_cli_hello(const struct ae_w_hdr *h, const void *p,
			 struct ae_w_cli_hello *out, char *err, size_t errlen)
{
	if (h->type != AE_W_CLI_HELLO || h->len != sizeof(*out)) {
		snprintf(err, errlen, "stream offset 0: expected CLI_HELLO (%zu bytes), got type %u (%u bytes)",
			 sizeof(*out), h->type, h->len);
		return -EPROTO;
	}
	memcpy(out, p, sizeof(*out));
	if (out->version != AE_WIRE_VERSION || out->flags) {
		snprintf(err, errlen, "unsupported protocol version %u (flags %u), we speak %u",
			 out->version, out->flags, AE_WIRE_VERSION);
		return -EPROTO;
	}
	return 0;
}

int wire_parse_segment(const struct ae_w_hdr *h, const void *p, struct ae_w_segment *out,
		       const uint8_t **data, size_t *len, char *err, size_t errlen)
{
	if (h->type != AE_W_SEGMENT || h->len < sizeof(*out) ||
	    h->len - sizeof(*out) > AE_WIRE_SEG_MAX) {
		snprintf(err, errlen, "bad SEGMENT (type %u, %u bytes)", h->type, h->len);
		return -EPROTO;
	}
	memcpy(out, p, sizeof(*out));
	if (out->stream > AE_STREAM_SCHED || out->pad) {
		snprintf(err, errlen, "bad SEGMENT seq %llu stream %u pad %u",
			 (unsigned long long)out->seq, out->stream, out->pad);
		return -EPROTO;
	}
	*data = (const uint8_t *)p + sizeof(*out);
	*len = h->len - sizeof(*out);
	return 0;
}

int wire_parse_fin(const struct ae_w_hdr *h, const void *p, struct ae_w_fin *out,
		   char *err, size_t errlen)
{
	if (h->type != AE_W_FIN || h->len != sizeof(*out)) {
		snprintf(err, errlen, "bad FIN (type %u, %u bytes)", h->type, h->len);
		return -EPROTO;
	}
	memcpy(out, p, sizeof(*out));
	return 0;
}

int wire_load_secret(const char *path, uint8_t **key, size_t *len, char *err, size_t errlen)
{
	uint8_t *k = malloc(4097);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!k || fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(k);
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	n = read(fd, k, 4097);
	close(fd);
	while (n > 0 && (k[n - 1] == '\n' || k[n - 1] == '\r'))
		n--;
	if (n <= 0 || n > 4096) {
		snprintf(err, errlen, "%s: secret must be 1..4096 bytes", path);
		free(k);
		return -EINVAL;
	}
	*key = k;
	*len = n;
	return 0;
}

void wire_hello_mac(const uint8_t *key, size_t keylen, const uint8_t nonce_s[AE_WIRE_NONCE],
		    const struct ae_w_cli_hello *ch, uint8_t out[AE_WIRE_MAC])
{
	static const char label[] = "aetrace-bdump-v2 client";

	ikm(&key, &keylen);
	if (hmac3(key, keylen, label, sizeof(label), nonce_s, AE_WIRE_NONCE,
		  ch, offsetof(struct ae_w_cli_hello, mac), out))
		memset(out, 0, AE_WIRE_MAC);	/* never equal to a real MAC by chance */
}

void wire_token_wrap(const uint8_t *key, size_t keylen, const uint8_t nonce_s[AE_WIRE_NONCE],
		     const uint8_t nonce_c[AE_WIRE_NONCE], uint8_t token[AE_WIRE_TOKEN])
{
	uint8_t pad[AE_WIRE_TOKEN];

	ikm(&key, &keylen);
	if (hkdf(key, keylen, nonce_s, nonce_c, "aetrace-bdump-v2 token", pad, sizeof(pad)))
		abort();	/* libcrypto cannot do HKDF: nothing safe to do */
	for (int i = 0; i < AE_WIRE_TOKEN; i++)
		token[i] ^= pad[i];
}

int wire_chan_key(struct wire_chan *c, int is_server, const uint8_t *key, size_t keylen,
		  const uint8_t nonce_s[AE_WIRE_NONCE], const uint8_t nonce_c[AE_WIRE_NONCE],
		  const uint8_t token[AE_WIRE_TOKEN])
{
	uint8_t *k, c2s[AE_WIRE_KEY], s2c[AE_WIRE_KEY];
	int ret;

	ikm(&key, &keylen);
	k = malloc(keylen + AE_WIRE_TOKEN);
	if (!k)
		return -ENOMEM;
	memcpy(k, key, keylen);
	memcpy(k + keylen, token, AE_WIRE_TOKEN);
	ret = hkdf(k, keylen + AE_WIRE_TOKEN, nonce_s, nonce_c, "aetrace-bdump-v2 c2s", c2s, sizeof(c2s));
	if (!ret)
		ret = hkdf(k, keylen + AE_WIRE_TOKEN, nonce_s, nonce_c, "aetrace-bdump-v2 s2c", s2c, sizeof(s2c));
	free(k);
	if (ret)
		return ret;
	memcpy(c->tx_key, is_server ? s2c : c2s, AE_WIRE_KEY);
	memcpy(c->rx_key, is_server ? c2s : s2c, AE_WIRE_KEY);
	c->tx_seq = c->rx_seq = 0;
	c->keyed = 1;
	return 0;
}

int wire_mac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

void wire_random(uint8_t *buf, size_t n)
{
	if (getrandom(buf, n, 0) != (ssize_t)n)
		abort();	/* no entropy: never run auth with a fixed nonce */
}
