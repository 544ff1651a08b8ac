// SPDX-License-Identifier: MIT
/*
 * wire.c - message framing, checksums and HMAC-SHA256 challenge-response
 * of the bdump network protocol (wire.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <aetrace/container.h>
#include "wire.h"

int wire_send(int fd, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen)
{
	struct ae_w_hdr h = { .magic = AE_WIRE_MAGIC, .type = type,
			      .len = alen + blen };
	struct iovec iov[3] = {
		{ &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 3 };

	h.crc = ae_crc32c(ae_crc32c(ae_crc32c(0, &h, sizeof(h)), a, alen), b, blen);
	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);

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

/* Read exactly len bytes: 1 ok, 0 EOF at the first byte, <0 error. */
static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (timeout_ms >= 0) {
			int pr = poll(&p, 1, timeout_ms);

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0)
				return -ETIMEDOUT;
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

int wire_recv(int fd, struct ae_w_hdr *h, void *buf, int timeout_ms,
	      uint64_t *stream_off, char *err, size_t errlen)
{
	uint64_t off = *stream_off;
	uint32_t crc;
	int ret;

	ret = read_full(fd, h, sizeof(*h), timeout_ms);
	if (ret <= 0) {
		if (ret < 0)
			snprintf(err, errlen, "stream offset %llu: reading message header: %s",
				 (unsigned long long)off, strerror(-ret));
		return ret;
	}
	if (h->magic != AE_WIRE_MAGIC) {
		snprintf(err, errlen, "stream offset %llu: bad message magic 0x%08x",
			 (unsigned long long)off, h->magic);
		return -EPROTO;
	}
	if (h->type < AE_W_SRV_HELLO || h->type > AE_W_ERROR || h->flags) {
		snprintf(err, errlen, "stream offset %llu: bad message type %u flags %u",
			 (unsigned long long)off, h->type, h->flags);
		return -EPROTO;
	}
	if (h->len > AE_WIRE_MAX_LEN) {
		snprintf(err, errlen, "stream offset %llu: message length %u exceeds %u",
			 (unsigned long long)off, h->len, AE_WIRE_MAX_LEN);
		return -EPROTO;
	}
	ret = read_full(fd, buf, h->len, timeout_ms);
	if (ret <= 0 && h->len) {
		ret = ret ? ret : -EPIPE;
		snprintf(err, errlen, "stream offset %llu: truncated message payload: %s",
			 (unsigned long long)off, strerror(-ret));
		return ret;
	}
	crc = h->crc;
	h->crc = 0;
	h->crc = ae_crc32c(ae_crc32c(0, h, sizeof(*h)), buf, h->len);
	if (h->crc != crc) {
		snprintf(err, errlen, "stream offset %llu: CRC-32C mismatch in message type %u (stored 0x%08x, computed 0x%08x)",
			 (unsigned long long)off, h->type, crc, h->crc);
		return -EBADMSG;
	}
	*stream_off += sizeof(*h) + h->len;
	return 1;
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

void wire_mac(const uint8_t *key, size_t keylen, const char *role,
	      const uint8_t *n1, const uint8_t *n2, const void *extra, size_t extralen,
	      uint8_t out[AE_WIRE_MAC])
{
	uint8_t msg[64 + 2 * AE_WIRE_NONCE + 256];
	size_t n = 0;
	unsigned int olen = AE_WIRE_MAC;

	n += snprintf((char *)msg, 64, "aetrace-bdump-v1 %s", role) + 1;
	memcpy(msg + n, n1, AE_WIRE_NONCE);
	n += AE_WIRE_NONCE;
	memcpy(msg + n, n2, AE_WIRE_NONCE);
	n += AE_WIRE_NONCE;
	if (extralen > 256)
		extralen = 256;
	memcpy(msg + n, extra, extralen);
	n += extralen;
	HMAC(EVP_sha256(), key, keylen, msg, n, out, &olen);
}

int wire_mac_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (int i = 0; i < AE_WIRE_MAC; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

void wire_nonce(uint8_t n[AE_WIRE_NONCE])
{
	if (getrandom(n, AE_WIRE_NONCE, 0) != AE_WIRE_NONCE)
		abort();	/* no entropy: never run auth with a fixed nonce */
}
