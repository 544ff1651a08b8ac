// SPDX-License-Identifier: MIT
/*
 * net_client.c - lossless streaming of bdump's output to bdump-recv.
 *
 * The main thread appends compressed bytes; full (or flushed) runs become
 * segments with consecutive sequence numbers in a queue bounded by `limit`
 * bytes (the main thread, and so the source, blocks when it is full). The
 * sender thread connects, authenticates, learns from WELCOME which segment
 * the receiver needs next, drops everything below it and (re)sends the
 * rest; ACKs free segments. No ACK progress for ACK_TIMEOUT_MS, a send
 * timeout, a message failing its MAC or any error drops the connection and
 * starts over. The session token (random, per bdump run) proves to the
 * receiver on every reconnect that the session is ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "net_client.h"
#include "wire.h"

#define ACK_TIMEOUT_MS		4000
#define CONNECT_TIMEOUT_MS	2000
#define RETRY_MS		300

struct net_seg {
	struct net_seg *next;
	uint64_t seq;
	uint32_t stream;
	uint32_t len;
	uint8_t data[];
};

struct net_client {
	char host[256], port[32];
	uint8_t *key;
	size_t keylen;
	int quiet;
	volatile sig_atomic_t *abort_flag;	/* set: stop waiting for the receiver */
	uint64_t start_ns;
	char myhost[64];
	uint8_t token[AE_WIRE_TOKEN];
	int warned_insecure;
	int proven;			/* a WELCOME's MAC proved the receiver has the secret */

	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct net_seg *head, *tail;	/* unacknowledged, by seq */
	uint64_t next_seq;		/* next to assign */
	uint64_t acked;			/* all below are stored */
	size_t queued, limit;
	int finishing, complete, fatal, stop;
	int no_fin;			/* the capture failed: no FIN at the end */
	char err[256 + 32 + 256 + 8];	/* host:port: message, whole */
	uint64_t reconnects;

	uint8_t *pend[2];		/* unsealed bytes per stream */
	size_t pend_len[2];
	uint8_t *rbuf;
};

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ull + t.tv_nsec / 1000000;
}

static int seal_stream(struct net_client *c, int stream)
{
	struct net_seg *s;
	size_t len = c->pend_len[stream];

	if (!len)
		return 0;
	s = malloc(sizeof(*s) + len);
	if (!s)
		return -ENOMEM;
	memcpy(s->data, c->pend[stream], len);
	s->len = len;
	s->stream = stream;
	s->next = NULL;
	c->pend_len[stream] = 0;
	pthread_mutex_lock(&c->lock);
	while (c->queued && c->queued + len > c->limit && !c->fatal && !*c->abort_flag) {
		struct timespec t;	/* lossless: block until acknowledged */

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec++;
		pthread_cond_timedwait(&c->cond, &c->lock, &t);
	}
	if (c->fatal || *c->abort_flag) {
		pthread_mutex_unlock(&c->lock);
		free(s);
		return -EIO;
	}
	s->seq = c->next_seq++;
	if (c->tail)
		c->tail->next = s;
	else
		c->head = s;
	c->tail = s;
	c->queued += len;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int append(struct net_client *c, int stream, const void *buf, size_t len)
{
	while (len) {
		size_t n = AE_WIRE_SEG_MAX - c->pend_len[stream];
		int ret;

		if (n > len)
			n = len;
		memcpy(c->pend[stream] + c->pend_len[stream], buf, n);
		c->pend_len[stream] += n;
		buf = (const char *)buf + n;
		len -= n;
		if (c->pend_len[stream] == AE_WIRE_SEG_MAX) {
			ret = seal_stream(c, stream);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int net_client_sink(void *ctx, const void *buf, size_t len)
{
	return append(ctx, AE_STREAM_TRACE, buf, len);
}

int net_client_sched(struct net_client *c, const void *buf, size_t len)
{
	return append(c, AE_STREAM_SCHED, buf, len);
}

int net_client_seal(struct net_client *c)
{
	int ret = seal_stream(c, AE_STREAM_SCHED);

	return ret ? ret : seal_stream(c, AE_STREAM_TRACE);
}

static int dial(struct net_client *c)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1;

	if (getaddrinfo(c->host, c->port, &hints, &ai))
		return -EHOSTUNREACH;
	for (a = ai; a; a = a->ai_next) {
		struct pollfd p;
		int one = 1, soerr = 0;
		socklen_t sl = sizeof(soerr);
		struct timeval tv = { 2, 0 };

		fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS)
			goto next;
		p = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, CONNECT_TIMEOUT_MS) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
			goto next;
		/* back to blocking, with a send timeout to notice a dead link */
		fcntl(fd, F_SETFL, 0);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		break;
next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd < 0 ? -ECONNREFUSED : fd;
}

static void set_fatal(struct net_client *c, const char *msg)
{
	pthread_mutex_lock(&c->lock);
	if (!c->fatal)
		snprintf(c->err, sizeof(c->err), "%s:%s: %s", c->host, c->port, msg);
	c->fatal = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/*
 * Handshake; returns the receiver's next_seq or <0: -EACCES a refusal
 * that is fatal (authenticated, or a local mismatch), -EPERM a refusal
 * anyone on the path could have forged (fatal only until the receiver
 * has once proven the secret), others: retry.
 */
static int64_t handshake(struct net_client *c, struct wire_chan *wc, char *err, size_t errlen)
{
	struct ae_w_hdr h;
	struct ae_w_srv_hello sh;
	struct ae_w_cli_hello ch = { .version = AE_WIRE_VERSION, .start_ns = c->start_ns };
	struct ae_w_welcome wl;
	uint64_t deadline = wire_now_ms() + 5000;
	int ret;

	ret = wire_recv(wc, &h, c->rbuf, AE_WIRE_HELLO_MAX, deadline, err, errlen);
	if (ret == 0)
		snprintf(err, errlen, "closed by the receiver before its hello (over its connection limit?)");
	if (ret <= 0)
		return ret ? ret : -EPIPE;
	if (h.type != AE_W_SRV_HELLO || h.len < 4) {
		snprintf(err, errlen, "expected SRV_HELLO, got message type %u", h.type);
		return -EPROTO;
	}
	memcpy(&sh, c->rbuf, h.len < sizeof(sh) ? h.len : sizeof(sh));
	if (sh.version != AE_WIRE_VERSION || h.len != sizeof(sh)) {
		snprintf(err, errlen, "receiver speaks protocol version %u, we %u",
			 sh.version, AE_WIRE_VERSION);
		return -EPERM;
	}
	if (sh.auth && !c->key) {
		snprintf(err, errlen, "receiver requires a shared secret (--secret)");
		return -EPERM;
	}
	if (!sh.auth && c->key) {
		snprintf(err, errlen, "receiver runs without a shared secret, we have one: refusing to send to a receiver that does not authenticate");
		return -EPERM;
	}
	if (!c->key && !c->warned_insecure && !c->quiet) {
		fprintf(stderr, "bdump: WARNING: %s:%s: no shared secret on either side: anyone on the path can read or change the capture\n",
			c->host, c->port);
		c->warned_insecure = 1;
	}
	memcpy(ch.host, c->myhost, sizeof(ch.host));
	wire_random(ch.nonce, sizeof(ch.nonce));
	memcpy(ch.token, c->token, sizeof(ch.token));
	wire_token_wrap(c->key, c->keylen, sh.nonce, ch.nonce, ch.token);
	wire_hello_mac(c->key, c->keylen, sh.nonce, &ch, ch.mac);
	ret = wire_send(wc, AE_W_CLI_HELLO, &ch, sizeof(ch), NULL, 0);
	if (ret)
		return ret;
	ret = wire_chan_key(wc, 0, c->key, c->keylen, sh.nonce, ch.nonce, c->token);
	if (ret)
		return ret;
	ret = wire_recv(wc, &h, c->rbuf, AE_WIRE_HELLO_MAX, deadline, err, errlen);
	if (ret == -EKEYREJECTED) {
		snprintf(err, errlen, "receiver failed to prove the shared secret");
		return -EPERM;
	}
	if (ret == 0)
		snprintf(err, errlen, "closed by the receiver during the handshake");
	if (ret <= 0)
		return ret ? ret : -EPIPE;
	if (h.type == AE_W_ERROR) {
		c->rbuf[h.len < 200 ? h.len : 200] = 0;
		snprintf(err, errlen, "receiver refused: %s", (char *)c->rbuf);
		return h.flags & AE_WF_MAC ? -EACCES : -EPERM;
	}
	if (h.type != AE_W_WELCOME || h.len != sizeof(wl)) {
		snprintf(err, errlen, "expected WELCOME, got message type %u", h.type);
		return -EPROTO;
	}
	memcpy(&wl, c->rbuf, sizeof(wl));
	if (wl.next_seq > INT64_MAX) {
		snprintf(err, errlen, "receiver expects segment %llu", (unsigned long long)wl.next_seq);
		return -EPROTO;
	}
	c->proven = 1;
	return wl.next_seq;
}

/* Drop segments below next; caller holds the lock. */
static void drop_acked(struct net_client *c, uint64_t next)
{
	while (c->head && c->head->seq < next) {
		struct net_seg *s = c->head;

		c->head = s->next;
		if (!c->head)
			c->tail = NULL;
		c->queued -= s->len;
		free(s);
	}
	if (next > c->acked)
		c->acked = next;
	pthread_cond_broadcast(&c->cond);
}

/* One connection's life: 0 to reconnect, <0 fatal. */
static int session(struct net_client *c, int fd)
{
	char err[256];
	struct wire_chan wc = { .fd = fd };
	int64_t next = handshake(c, &wc, err, sizeof(err));
	struct net_seg *send_pos;
	uint64_t last_progress = now_ms(), send_seq;
	int fin_sent = 0;

	if (next == -EPERM && c->proven) {
		/* the receiver proved the secret before: a refusal without a
		 * MAC now is forged on the path (or a receiver restarted with
		 * other settings); never give up a capture for it */
		if (!c->quiet)
			fprintf(stderr, "bdump: %s:%s: unauthenticated refusal ignored (%s); retrying\n",
				c->host, c->port, err);
		return 0;
	}
	if (next == -EACCES || next == -EPERM) {
		set_fatal(c, err);
		return -EACCES;
	}
	if (next < 0) {
		if (!c->quiet)
			fprintf(stderr, "bdump: %s:%s: %s; retrying\n", c->host, c->port, err);
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	if ((uint64_t)next < c->acked || (uint64_t)next > c->next_seq) {
		pthread_mutex_unlock(&c->lock);
		snprintf(err, sizeof(err), "receiver expects segment %lld but %llu..%llu are the ones not acknowledged (receiver lost data?)",
			 (long long)next, (unsigned long long)c->acked,
			 (unsigned long long)c->next_seq);
		set_fatal(c, err);
		return -EIO;
	}
	drop_acked(c, next);
	send_seq = next;
	pthread_mutex_unlock(&c->lock);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int have, ret;

		pthread_mutex_lock(&c->lock);
		send_pos = c->head;
		while (send_pos && send_pos->seq < send_seq)
			send_pos = send_pos->next;
		have = send_pos != NULL;
		if (c->finishing && c->no_fin && !have && c->acked == c->next_seq) {
			/* all stored; the session stays incomplete on purpose */
			c->complete = 1;
			pthread_cond_broadcast(&c->cond);
			pthread_mutex_unlock(&c->lock);
			return 1;
		}
		if (c->finishing && !fin_sent && !have && c->acked == c->next_seq) {
			struct ae_w_fin fin = { .nr_segments = c->next_seq };

			pthread_mutex_unlock(&c->lock);
			if (wire_send(&wc, AE_W_FIN, &fin, sizeof(fin), NULL, 0))
				return 0;
			fin_sent = 1;
			last_progress = now_ms();
			continue;
		}
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			return -ECANCELED;
		}
		pthread_mutex_unlock(&c->lock);
		if (have)
			p.events |= POLLOUT;
		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			return 0;
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			struct ae_w_hdr h;
			struct ae_w_ack ack;

			ret = wire_recv(&wc, &h, c->rbuf, AE_WIRE_MAX_LEN, now_ms() + 2000,
					err, sizeof(err));
			if (ret <= 0) {
				if (!c->quiet)
					fprintf(stderr, "bdump: %s:%s: connection lost: %s; reconnecting\n",
						c->host, c->port, ret ? err : "closed by receiver");
				return 0;
			}
			if (h.type == AE_W_ERROR) {
				c->rbuf[h.len < 200 ? h.len : 200] = 0;
				if (!(h.flags & AE_WF_MAC)) {
					/* anyone on the path could have sent it */
					if (!c->quiet)
						fprintf(stderr, "bdump: %s:%s: unauthenticated error message '%s' ignored; reconnecting\n",
							c->host, c->port, (char *)c->rbuf);
					return 0;
				}
				set_fatal(c, (char *)c->rbuf);
				return -EIO;
			}
			if (h.type != AE_W_ACK || h.len != sizeof(ack))
				return 0;
			memcpy(&ack, c->rbuf, sizeof(ack));
			pthread_mutex_lock(&c->lock);
			if (ack.next_seq > c->acked)
				last_progress = now_ms();
			if (ack.next_seq <= c->next_seq)
				drop_acked(c, ack.next_seq);
			if (ack.complete && fin_sent) {
				c->complete = 1;
				pthread_cond_broadcast(&c->cond);
				pthread_mutex_unlock(&c->lock);
				return 1;
			}
			pthread_mutex_unlock(&c->lock);
		}
		if (have && (p.revents & POLLOUT)) {
			struct ae_w_segment sg = { .seq = send_pos->seq, .stream = send_pos->stream };

			if (wire_send(&wc, AE_W_SEGMENT, &sg, sizeof(sg), send_pos->data, send_pos->len)) {
				if (!c->quiet)
					fprintf(stderr, "bdump: %s:%s: send failed; reconnecting\n",
						c->host, c->port);
				return 0;
			}
			send_seq = send_pos->seq + 1;
		}
		pthread_mutex_lock(&c->lock);
		have = c->head != NULL || fin_sent;
		pthread_mutex_unlock(&c->lock);
		if (!have)
			last_progress = now_ms();
		else if (now_ms() - last_progress > ACK_TIMEOUT_MS) {
			if (!c->quiet)
				fprintf(stderr, "bdump: %s:%s: no acknowledgement for %d ms; reconnecting\n",
					c->host, c->port, ACK_TIMEOUT_MS);
			return 0;
		}
	}
}

static void *sender(void *arg)
{
	struct net_client *c = arg;

	for (;;) {
		int fd, ret;

		pthread_mutex_lock(&c->lock);
		ret = c->stop || c->fatal || c->complete;
		pthread_mutex_unlock(&c->lock);
		if (ret)
			break;
		fd = dial(c);
		if (fd < 0) {
			usleep(RETRY_MS * 1000);
			continue;
		}
		ret = session(c, fd);
		close(fd);
		if (ret)
			break;
		pthread_mutex_lock(&c->lock);
		c->reconnects++;
		pthread_mutex_unlock(&c->lock);
		usleep(RETRY_MS * 1000);
	}
	return NULL;
}

int net_client_open(struct net_client **cp, const char *url, const char *secret_path,
		    size_t limit, int quiet, volatile sig_atomic_t *abort_flag,
		    char *err, size_t errlen)
{
	struct net_client *c = calloc(1, sizeof(*c));
	const char *hp = url + 6, *colon;
	struct timespec t;
	int ret;

	if (!c)
		return -ENOMEM;
	colon = strrchr(hp, ':');
	if (strncmp(url, "tcp://", 6) || !colon || colon == hp ||
	    (size_t)(colon - hp) >= sizeof(c->host) || !colon[1] || strlen(colon + 1) >= sizeof(c->port)) {
		snprintf(err, errlen, "%s: expected tcp://HOST:PORT", url);
		free(c);
		return -EINVAL;
	}
	memcpy(c->host, hp, colon - hp);
	if (c->host[0] == '[' && c->host[colon - hp - 1] == ']') {
		memmove(c->host, c->host + 1, colon - hp - 2);
		c->host[colon - hp - 2] = 0;
	}
	strcpy(c->port, colon + 1);
	if (secret_path) {
		ret = wire_load_secret(secret_path, &c->key, &c->keylen, err, errlen);
		if (ret) {
			free(c);
			return ret;
		}
	}
	c->limit = limit < 2 * AE_WIRE_SEG_MAX ? 2 * AE_WIRE_SEG_MAX : limit;
	c->quiet = quiet;
	c->abort_flag = abort_flag;
	clock_gettime(CLOCK_REALTIME, &t);
	c->start_ns = t.tv_sec * 1000000000ull + t.tv_nsec;
	gethostname(c->myhost, sizeof(c->myhost) - 1);
	wire_random(c->token, sizeof(c->token));
	c->pend[0] = malloc(AE_WIRE_SEG_MAX);
	c->pend[1] = malloc(AE_WIRE_SEG_MAX);
	c->rbuf = malloc(AE_WIRE_MAX_LEN + 1);	/* + NUL after an ERROR text */
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (!c->pend[0] || !c->pend[1] || !c->rbuf ||
	    pthread_create(&c->thr, NULL, sender, c)) {
		snprintf(err, errlen, "%s: cannot start the sender", url);
		free(c->pend[0]);
		free(c->pend[1]);
		free(c->rbuf);
		free(c->key);
		free(c);
		return -ENOMEM;
	}
	*cp = c;
	return 0;
}

int net_client_finish(struct net_client *c, int incomplete, volatile sig_atomic_t *abort_flag,
		      char *err, size_t errlen)
{
	int ret = net_client_seal(c);

	pthread_mutex_lock(&c->lock);
	c->no_fin = incomplete;
	c->finishing = 1;
	while (!ret && !c->complete && !c->fatal && !*abort_flag) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 200000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->cond, &c->lock, &t);
	}
	if (c->fatal) {
		snprintf(err, errlen, "%s", c->err);
		ret = -EIO;
	} else if (!c->complete && !ret) {
		snprintf(err, errlen, "%s:%s: aborted with %llu segments not acknowledged",
			 c->host, c->port, (unsigned long long)(c->next_seq - c->acked));
		ret = -EINTR;
	}
	c->stop = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thr, NULL);
	drop_acked(c, UINT64_MAX);
	free(c->pend[0]);
	free(c->pend[1]);
	free(c->rbuf);
	free(c->key);
	free(c);
	return ret;
}

uint64_t net_client_reconnects(const struct net_client *c)
{
	return c->reconnects;
}
