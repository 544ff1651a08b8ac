// SPDX-License-Identifier: MIT
/*
 * bdump_recv.c - bdump-recv: receive bdump streams over TCP and store each
 * session as DIR/<session>/trace.zst and sched.bin.
 *
 *   bdump-recv --listen ADDR:PORT --dir DIR [--secret FILE | --insecure]
 *              [--max-conns N] [--max-per-addr N] [-q]
 *
 * A bounded number of connections (in all and per address), one thread
 * each; a stranger gets a small buffer and a few seconds to authenticate.
 * A session is named after the sender's host and start time and belongs
 * to the token the sender presented first, so a bdump that reconnects
 * (network cut, receiver restart) continues its session and nobody else
 * can. DIR/<session>/state records how many segments are stored, the file
 * sizes after them and the owner; it is written (write + rename) after the
 * data and before the ACK, and on (re)open and at receiver start the files
 * are cut back to it, so a segment is either fully stored and acknowledged
 * or will be resent. DIR/<session>/segments indexes where each segment's
 * bytes are, so a resent segment is compared with the stored one. FIN is
 * answered at once; the finished capture is then verified (bdump --check)
 * by one background worker, the verdict written to DIR/<session>/verify
 * (recv_store.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "recv_store.h"
#include "wire.h"

struct recv_cfg {
	const char *dir;
	uint8_t *key;			/* shared secret, NULL: none */
	size_t keylen;
	int quiet;
	unsigned int max_conns;		/* connections at once */
	unsigned int max_per_addr;	/* ... from one address */
	int hello_ms;			/* whole handshake of a stranger */
	int msg_ms;			/* one message, once it has begun */
};

struct addr_slot {
	char addr[64];
	unsigned int n;
};

struct recv {
	struct recv_cfg cfg;
	struct recv_store store;
	pthread_mutex_t lock;		/* connection counts, list */
	unsigned int nconns;
	unsigned int nthreads;		/* counted and evicted ones still running */
	struct addr_slot *addrs;	/* cfg.max_conns slots */
	struct conn *oldest, *newest;	/* counted connections, by age */
};

struct conn {
	struct recv *rv;
	struct conn *older, *newer;	/* under rv->lock */
	struct addr_slot *slot;		/* its address's count while counted */
	int authed;			/* proved the secret (under rv->lock) */
	int evicted;			/* no longer counted (under rv->lock) */
	struct wire_chan ch;
	char peer[80];
	char addr[64];
	struct session *s;
	uint8_t *buf;
	uint64_t segs;
};

static void session_name(char *out, size_t n, const struct ae_w_cli_hello *ch)
{
	char host[65];
	time_t sec = ch->start_ns / 1000000000ull;
	struct tm tm;
	size_t k;

	memcpy(host, ch->host, 64);
	host[64] = 0;
	for (k = 0; host[k]; k++)
		if (!(host[k] == '-' || host[k] == '.' || host[k] == '_' ||
		      (host[k] >= '0' && host[k] <= '9') || (host[k] >= 'a' && host[k] <= 'z') ||
		      (host[k] >= 'A' && host[k] <= 'Z')))
			host[k] = '_';
	if (!k || host[0] == '.')
		host[0] = '_', host[k ? k : 1] = 0;
	gmtime_r(&sec, &tm);
	k = snprintf(out, n, "%s-", host);
	k += strftime(out + k, n - k, "%Y%m%dT%H%M%S", &tm);
	snprintf(out + k, n - k, ".%09lluZ", (unsigned long long)(ch->start_ns % 1000000000ull));
}

/* ------------------------------------------------------------- connection */

#define STRANGER_LOG_MAX	100	/* lines per 10 s about failed handshakes */

/*
 * recv_log for what a stranger did (failed handshakes): at most
 * STRANGER_LOG_MAX lines per 10 s, then a count of the rest, so a flood
 * of connections cannot fill the receiver's disk with its log.
 */
static void stranger_log(const char *who, const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t start_ms;
	static unsigned int n;
	static unsigned long suppressed;
	uint64_t now = wire_now_ms();
	char buf[600];
	va_list ap;
	int ok;

	pthread_mutex_lock(&lock);
	if (!start_ms || now - start_ms >= 10000) {
		if (suppressed)
			fprintf(stderr, "bdump-recv: %lu more failed handshakes not logged\n", suppressed);
		start_ms = now;
		n = 0;
		suppressed = 0;
	}
	ok = n < STRANGER_LOG_MAX;
	if (ok && ++n == STRANGER_LOG_MAX)
		fprintf(stderr, "bdump-recv: many failed handshakes: at most %d lines per 10 s logged\n",
			STRANGER_LOG_MAX);
	if (!ok)
		suppressed++;
	pthread_mutex_unlock(&lock);
	if (!ok)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	recv_log(who, "%s", buf);
}

static void send_error(struct conn *cn, const char *msg)
{
	wire_send(&cn->ch, AE_W_ERROR, msg, strlen(msg) + 1, NULL, 0);
}

/*
 * An ERROR without MAC, then the connection is closed: for input that
 * failed before its MAC could be checked (framing, CRC), which anyone on
 * the path may have damaged. The sender takes it as a lost connection
 * and resends; an authenticated ERROR would make it give up.
 */
static void send_error_unauth(struct conn *cn, const char *msg)
{
	cn->ch.keyed = 0;
	send_error(cn, msg);
}

/*
 * Hello, authentication, session lookup, WELCOME. Reads at most
 * AE_WIRE_HELLO_MAX bytes and must finish within cfg.hello_ms.
 * Returns 0 with cn->s set, <0 when the connection is to be closed.
 */
static int conn_handshake(struct conn *cn)
{
	const struct recv_cfg *cfg = &cn->rv->cfg;
	struct ae_w_srv_hello sh = { .version = AE_WIRE_VERSION, .auth = cfg->key != NULL };
	struct ae_w_cli_hello ch;
	struct ae_w_welcome wl = { 0 };
	struct ae_w_hdr h;
	uint8_t buf[AE_WIRE_HELLO_MAX], mac[AE_WIRE_MAC], token[AE_WIRE_TOKEN];
	uint64_t deadline = wire_now_ms() + cfg->hello_ms;
	char err[512];
	int ret;

	wire_random(sh.nonce, sizeof(sh.nonce));
	ret = wire_send(&cn->ch, AE_W_SRV_HELLO, &sh, sizeof(sh), NULL, 0);
	if (ret)
		return ret;
	ret = wire_recv(&cn->ch, &h, buf, sizeof(buf), deadline, err, sizeof(err));
	if (ret <= 0) {
		stranger_log(cn->peer, "%s", ret ? err : "closed before hello");
		return ret ? ret : -EPIPE;
	}
	ret = wire_parse_cli_hello(&h, buf, &ch, err, sizeof(err));
	if (ret) {
		stranger_log(cn->peer, "%s", err);
		send_error(cn, ret == -EPROTO && h.type == AE_W_CLI_HELLO ?
			   "unsupported protocol version" : "protocol error: expected CLI_HELLO");
		return ret;
	}
	wire_hello_mac(cfg->key, cfg->keylen, sh.nonce, &ch, mac);
	if (!wire_mac_equal(mac, ch.mac, AE_WIRE_MAC)) {
		stranger_log(cn->peer, "authentication failed (%s)",
		         cfg->key ? "wrong or missing shared secret" : "the sender has a secret, we have none");
		send_error(cn, "authentication failed");
		return -EACCES;
	}
	pthread_mutex_lock(&cn->rv->lock);
	cn->authed = !cn->evicted;	/* from now on never evicted */
	pthread_mutex_unlock(&cn->rv->lock);
	if (!cn->authed)
		return -ECONNRESET;
	memcpy(token, ch.token, sizeof(token));
	wire_token_wrap(cfg->key, cfg->keylen, sh.nonce, ch.nonce, token);
	/* keyed before the session lookup: its refusals carry a MAC, so the
	 * sender can tell them from ones forged on the path */
	ret = wire_chan_key(&cn->ch, 1, cfg->key, cfg->keylen, sh.nonce, ch.nonce, token);
	if (ret)
		return ret;
	session_name(wl.session, sizeof(wl.session), &ch);
	ret = recv_session_get(&cn->rv->store, wl.session, token, &cn->s, err, sizeof(err));
	if (ret == -EPERM) {
		recv_log(cn->peer, "session %s belongs to another sender (token differs): refused",
		         wl.session);
		send_error(cn, "session belongs to another sender");
		return ret;
	}
	if (ret) {
		recv_log(cn->peer, "%s", err);
		/* out of descriptors or memory may pass: let the sender retry */
		if (ret != -EMFILE && ret != -ENFILE && ret != -ENOMEM) {
			char msg[128];

			snprintf(msg, sizeof(msg), "receiver cannot store the session: %s",
				 strerror(-ret));
			send_error(cn, msg);
		}
		return ret;
	}
	pthread_mutex_lock(&cn->s->lock);
	/* the owner came back: its older connection is stale (a cut link
	 * keeps it for a keepalive minute), do not let it hold a slot */
	if (cn->s->conn_fd >= 0)
		shutdown(cn->s->conn_fd, SHUT_RDWR);
	cn->s->conn_fd = cn->ch.fd;
	wl.next_seq = cn->s->next_seq;
	wl.complete = cn->s->complete;
	pthread_mutex_unlock(&cn->s->lock);
	ret = wire_send(&cn->ch, AE_W_WELCOME, &wl, sizeof(wl), NULL, 0);
	if (ret)
		return ret;
	if (!cfg->quiet)
		recv_log(cn->peer, "session %s: resuming at segment %llu", cn->s->name,
		         (unsigned long long)wl.next_seq);
	return 0;
}

/* One SEGMENT: store, or compare with the stored copy; ACK. 0 or <0 to close. */
static int conn_segment(struct conn *cn, const struct ae_w_hdr *h, uint64_t msg_off)
{
	struct session *s = cn->s;
	struct ae_w_segment sg;
	struct ae_w_ack ack;
	const uint8_t *data;
	size_t len;
	char err[512];
	int ret;

	ret = wire_parse_segment(h, cn->buf, &sg, &data, &len, err, sizeof(err));
	if (ret) {
		recv_log(cn->peer, "session %s: stream offset %llu: %s", s->name,
		         (unsigned long long)msg_off, err);
		send_error(cn, "protocol error: bad SEGMENT");
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (sg.seq > s->next_seq || (sg.seq == s->next_seq && s->complete)) {
		recv_log(cn->peer, "session %s: stream offset %llu: bad SEGMENT seq %llu stream %u (expected seq %llu%s)",
		         s->name, (unsigned long long)msg_off, (unsigned long long)sg.seq, sg.stream,
		         (unsigned long long)s->next_seq, s->complete ? ", session complete" : "");
		pthread_mutex_unlock(&s->lock);
		send_error(cn, "protocol error: bad SEGMENT");
		return -EPROTO;
	}
	if (sg.seq < s->next_seq) {
		ret = recv_session_same(s, &sg, data, len);
		if (ret) {
			pthread_mutex_unlock(&s->lock);
			recv_log(cn->peer, "session %s: stream offset %llu: SEGMENT %llu resent with different bytes than the stored one%s",
			         s->name, (unsigned long long)msg_off, (unsigned long long)sg.seq,
			         ret == -EEXIST ? "" : " (cannot read the stored copy)");
			send_error(cn, "segment differs from the stored one");
			return -EEXIST;
		}
	} else {
		ret = recv_session_append(&cn->rv->store, s, &sg, data, len, err, sizeof(err));
		if (ret) {
			char msg[128];

			pthread_mutex_unlock(&s->lock);
			recv_log(cn->peer, "%s", err);
			/* the sender's user needs the cause (a full disk) */
			snprintf(msg, sizeof(msg), "receiver cannot store the segment: %s",
				 strerror(-ret));
			send_error(cn, msg);
			return ret;
		}
	}
	ack = (struct ae_w_ack){ .next_seq = s->next_seq };
	pthread_mutex_unlock(&s->lock);
	cn->segs++;
	return wire_send(&cn->ch, AE_W_ACK, &ack, sizeof(ack), NULL, 0);
}

/*
 * FIN: mark complete, answer at once; sync and verification run afterwards
 * in the background. A session that is complete already just answers.
 */
static int conn_fin(struct conn *cn, const struct ae_w_hdr *h)
{
	struct session *s = cn->s;
	struct ae_w_fin fin;
	struct ae_w_ack ack;
	char err[256];
	int ret = wire_parse_fin(h, cn->buf, &fin, err, sizeof(err));

	if (ret) {
		recv_log(cn->peer, "session %s: %s", s->name, err);
		send_error(cn, "protocol error: bad FIN");
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (fin.nr_segments != s->next_seq) {
		pthread_mutex_unlock(&s->lock);
		recv_log(cn->peer, "session %s: FIN after %llu segments but %llu stored", s->name,
		         (unsigned long long)fin.nr_segments, (unsigned long long)s->next_seq);
		send_error(cn, "protocol error: FIN count");
		return -EPROTO;
	}
	ret = recv_session_finish(&cn->rv->store, s);
	ack = (struct ae_w_ack){ .next_seq = s->next_seq, .complete = !ret };
	pthread_mutex_unlock(&s->lock);
	if (ret)
		recv_log(cn->peer, "session %s: cannot record completion: %s", s->name, strerror(-ret));
	return wire_send(&cn->ch, AE_W_ACK, &ack, sizeof(ack), NULL, 0);
}

/* Messages after WELCOME until EOF or an error. */
static void conn_loop(struct conn *cn)
{
	const struct recv_cfg *cfg = &cn->rv->cfg;
	struct ae_w_hdr h;
	char err[512];
	int ret;

	for (;;) {
		uint64_t msg_off = cn->ch.off;

		/* idle between messages is fine (TCP keepalive finds dead peers) */
		ret = wire_wait(&cn->ch, -1);
		if (ret < 0)
			snprintf(err, sizeof(err), "poll: %s", strerror(-ret));
		else
			ret = wire_recv(&cn->ch, &h, cn->buf, AE_WIRE_MAX_LEN,
					wire_now_ms() + cfg->msg_ms, err, sizeof(err));
		if (ret == 0) {
			if (!cfg->quiet)
				recv_log(cn->peer, "session %s: connection closed after %llu segments",
				         cn->s->name, (unsigned long long)cn->segs);
			return;
		}
		if (ret == -EKEYREJECTED) {
			/* forged or damaged: refused; the sender reconnects and resends */
			recv_log(cn->peer, "session %s: %s", cn->s->name, err);
			return;
		}
		if (ret < 0) {
			recv_log(cn->peer, "session %s: %s", cn->s->name, err);
			if (ret == -EPROTO || ret == -EBADMSG)
				send_error_unauth(cn, "protocol error (damaged message)");
			return;
		}
		if (!(h.flags & AE_WF_MAC)) {
			/* an ERROR without MAC: from anyone on the path */
			recv_log(cn->peer, "session %s: stream offset %llu: unauthenticated message type %u: closing",
			         cn->s->name, (unsigned long long)msg_off, h.type);
			return;
		}
		if (h.type == AE_W_SEGMENT)
			ret = conn_segment(cn, &h, msg_off);
		else if (h.type == AE_W_FIN)
			ret = conn_fin(cn, &h);
		else {
			recv_log(cn->peer, "session %s: stream offset %llu: unexpected message type %u (%u bytes)",
			         cn->s->name, (unsigned long long)msg_off, h.type, h.len);
			send_error(cn, "protocol error: unexpected message");
			ret = -EPROTO;
		}
		if (ret)
			return;
	}
}

static struct addr_slot *addr_find(struct recv *rv, const char *addr)
{
	for (unsigned int i = 0; i < rv->cfg.max_conns; i++)
		if (rv->addrs[i].n && !strcmp(rv->addrs[i].addr, addr))
			return &rv->addrs[i];
	return NULL;
}

/* Stop counting cn (caller holds rv->lock). */
static void conn_uncount(struct recv *rv, struct conn *cn)
{
	rv->nconns--;
	cn->slot->n--;
	if (cn->older)
		cn->older->newer = cn->newer;
	else
		rv->oldest = cn->newer;
	if (cn->newer)
		cn->newer->older = cn->older;
	else
		rv->newest = cn->older;
	cn->older = cn->newer = NULL;
}

/* Before closing the socket: an evictor must never shut down a reused fd. */
static void conn_release(struct conn *cn)
{
	struct recv *rv = cn->rv;

	pthread_mutex_lock(&rv->lock);
	if (!cn->evicted)
		conn_uncount(rv, cn);
	cn->evicted = 1;
	rv->nthreads--;
	pthread_mutex_unlock(&rv->lock);
}

static void *conn_thread(void *arg)
{
	struct conn *cn = arg;

	if (!conn_handshake(cn)) {
		/* the full-size buffer only for an authenticated sender */
		cn->buf = malloc(AE_WIRE_MAX_LEN);
		if (cn->buf)
			conn_loop(cn);
		else
			recv_log(cn->peer, "out of memory");
	}
	if (cn->s) {
		pthread_mutex_lock(&cn->s->lock);
		if (cn->s->conn_fd == cn->ch.fd)
			cn->s->conn_fd = -1;	/* before close: the number may be reused */
		pthread_mutex_unlock(&cn->s->lock);
		recv_session_put(&cn->rv->store, cn->s);
	}
	conn_release(cn);
	close(cn->ch.fd);
	free(cn->buf);
	free(cn);
	return NULL;
}

/* ---------------------------------------------------------------- accept */

/*
 * The stranger a newcomer may replace when a limit is reached (own: its
 * address's slot or NULL, holding n_addr connections): the oldest
 * connection still in its handshake from its own address (per-address
 * limit) or, at the total limit, from the address holding the most
 * connections if that is its own or holds at least as many as its own would
 * (so strangers from many addresses with one connection each cannot
 * keep a sender out either). Strangers holding slots open thus cannot
 * lock out a sender that authenticates; they would have to keep
 * connecting faster than it authenticates. One pass over the
 * connections. Returns the victim, or NULL: nobody to replace (refuse).
 */
static struct conn *evict_victim(struct recv *rv, const struct addr_slot *own, unsigned int n_addr)
{
	struct conn *c, *v = NULL;

	for (c = rv->oldest; c; c = c->newer) {
		if (c->authed)
			continue;
		if (n_addr >= rv->cfg.max_per_addr) {
			if (c->slot == own)
				return c;
		} else if ((c->slot == own || c->slot->n > n_addr) &&
			   (!v || c->slot->n > v->slot->n)) {
			v = c;
		}
	}
	return v;
}

/*
 * Count a new connection (cn->addr), replacing a stranger over a limit
 * (*evicted set then): 0, or -EBUSY over a limit with nobody to replace.
 */
static int conn_admit(struct recv *rv, struct conn *cn, int *evicted)
{
	struct addr_slot *slot, *free_slot = NULL;
	int ret = 0;

	*evicted = 0;
	pthread_mutex_lock(&rv->lock);
	slot = addr_find(rv, cn->addr);
	if (rv->nthreads >= 2 * rv->cfg.max_conns) {
		ret = -EBUSY;	/* evicted ones not gone yet: a flood */
		goto out;
	}
	if (rv->nconns >= rv->cfg.max_conns || (slot && slot->n >= rv->cfg.max_per_addr)) {
		struct conn *v = evict_victim(rv, slot, slot ? slot->n : 0);

		if (!v) {
			ret = -EBUSY;
			goto out;
		}
		/* its thread sees EOF at once and exits; the slot is ours now */
		shutdown(v->ch.fd, SHUT_RDWR);
		conn_uncount(rv, v);
		v->evicted = 1;
		*evicted = 1;
		slot = addr_find(rv, cn->addr);
	}
	for (unsigned int i = 0; i < rv->cfg.max_conns && !slot && !free_slot; i++)
		if (!rv->addrs[i].n)
			free_slot = &rv->addrs[i];
	if (!slot) {
		slot = free_slot;	/* exists: fewer than max_conns in use */
		snprintf(slot->addr, sizeof(slot->addr), "%s", cn->addr);
	}
	slot->n++;
	cn->slot = slot;
	rv->nconns++;
	rv->nthreads++;
	cn->older = rv->newest;
	if (rv->newest)
		rv->newest->newer = cn;
	else
		rv->oldest = cn;
	rv->newest = cn;
out:
	pthread_mutex_unlock(&rv->lock);
	return ret;
}

/* At most one log line per 10 s for a repeated condition; counts the rest. */
struct ratelog {
	uint64_t last_ms;
	unsigned long suppressed;
};

static int ratelog_ok(struct ratelog *rl)
{
	uint64_t now = wire_now_ms();

	if (rl->last_ms && now - rl->last_ms < 10000) {
		rl->suppressed++;
		return 0;
	}
	rl->last_ms = now;
	return 1;
}

/*
 * What --max-per-addr counts: the IPv4 address, or the /64 an IPv6
 * address is in (one host or site holds a whole /64, so counting single
 * addresses would not bound it at all).
 */
static void limit_key(char *out, size_t n, const struct sockaddr_storage *sa, const char *host)
{
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	struct in6_addr net;
	char buf[INET6_ADDRSTRLEN];

	if (sa->ss_family != AF_INET6 || IN6_IS_ADDR_V4MAPPED(a)) {
		snprintf(out, n, "%s", host);
		return;
	}
	net = *a;
	memset(net.s6_addr + 8, 0, 8);
	inet_ntop(AF_INET6, &net, buf, sizeof(buf));
	snprintf(out, n, "%s/64", buf);
}

static void start_conn(struct recv *rv, int fd, const struct sockaddr_storage *sa, socklen_t sl)
{
	static struct ratelog busy_log;
	char host[64] = "?", port[16] = "?";
	int on = 1, idle = 30, intvl = 10, cnt = 3;
	struct timeval sndto = { 30, 0 };	/* a peer that stops reading */
	pthread_attr_t attr;
	struct conn *cn;
	pthread_t t;
	int r, evicted;

	getnameinfo((const struct sockaddr *)sa, sl, host, sizeof(host), port, sizeof(port),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	cn = calloc(1, sizeof(*cn));
	if (!cn) {
		close(fd);
		return;
	}
	cn->rv = rv;
	cn->ch.fd = fd;
	limit_key(cn->addr, sizeof(cn->addr), sa, host);
	snprintf(cn->peer, sizeof(cn->peer), "%s:%s", host, port);
	r = conn_admit(rv, cn, &evicted);
	if (r || evicted) {
		if (ratelog_ok(&busy_log)) {
			recv_log(host, "%s: over the connection limit (%u in all, %u per address)%s",
			         r ? "refused" : "admitted in place of the oldest unauthenticated connection",
			         rv->cfg.max_conns, rv->cfg.max_per_addr,
			         busy_log.suppressed ? "; more not logged for 10 s" : "");
			busy_log.suppressed = 0;
		}
	}
	if (r) {
		free(cn);
		close(fd);
		return;
	}
	/* no application idle timeout (bdump may be idle for hours); TCP
	 * keepalive notices a dead peer: 30 s idle, then 3 probes 10 s apart */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sndto, sizeof(sndto));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_thread, cn)) {
		pthread_attr_destroy(&attr);
		conn_release(cn);
		close(fd);
		free(cn);
		return;
	}
	pthread_attr_destroy(&attr);
}

/*
 * Accept forever. Out of descriptors or memory: back off, and log the
 * failure once (at most one such line per 10 s) until accept works again.
 */
static void accept_loop(struct recv *rv, int lfd)
{
	static struct ratelog fail_log;
	unsigned long failures = 0;
	int logged = 0;

	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);

		if (fd < 0) {
			int e = errno;

			if (e == EINTR || e == ECONNABORTED)
				continue;
			if (!failures++ && ratelog_ok(&fail_log)) {
				fprintf(stderr, "bdump-recv: accept: %s; backing off (logged once until accept works again)\n",
					strerror(e));
				logged = 1;
			}
			poll(NULL, 0, e == EMFILE || e == ENFILE ? 250 : 100);
			continue;
		}
		if (failures && logged)
			fprintf(stderr, "bdump-recv: accept works again after %lu failures\n", failures);
		failures = 0;
		logged = 0;
		start_conn(rv, fd, &sa, sl);
	}
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

/* Returns the listening fd (and whether it is loopback only) or -errno. */
static int listen_on(const char *addr, int *loopback, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	char host[256];
	const char *colon = strrchr(addr, ':');
	int fd, one = 1, r;

	if (!colon || (size_t)(colon - addr) >= sizeof(host)) {
		snprintf(err, errlen, "--listen %s: expected ADDR:PORT", addr);
		return -EINVAL;
	}
	memcpy(host, addr, colon - addr);
	host[colon - addr] = 0;
	if (host[0] == '[' && colon - addr >= 2 && host[colon - addr - 1] == ']') {
		host[colon - addr - 1] = 0;	/* [::1]:PORT */
		memmove(host, host + 1, colon - addr - 1);
	}
	r = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (r) {
		snprintf(err, errlen, "--listen %s: %s", addr, gai_strerror(r));
		return -EINVAL;
	}
	*loopback = is_loopback(ai->ai_addr);
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		r = -errno;
		snprintf(err, errlen, "--listen %s: %s", addr, strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return r;
	}
	freeaddrinfo(ai);
	return fd;
}

static const char usage_text[] =
"usage: bdump-recv --listen ADDR:PORT --dir DIR [--secret FILE | --insecure]\n"
"                  [--max-conns N] [--max-per-addr N] [-q]\n"
"  --secret FILE     shared secret: senders must prove it, every message is MACed\n"
"  --insecure        allow listening on a non-loopback address without --secret\n"
"  --max-conns N     connections at once (default 64)\n"
"  --max-per-addr N  connections at once from one address (default 8)\n";

static int parse_uint(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < 1 || v > 100000)
		return -EINVAL;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "dir", required_argument, NULL, 'D' },
		{ "secret", required_argument, NULL, 'S' },
		{ "insecure", no_argument, NULL, 'I' },
		{ "max-conns", required_argument, NULL, 'M' },
		{ "max-per-addr", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static struct recv rv = {
		.cfg = { .max_conns = 64, .max_per_addr = 8, .hello_ms = 5000, .msg_ms = 30000 },
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	const char *listen_addr = NULL, *secret = NULL, *knob;
	char err[512];
	struct stat stt;
	int c, lfd, insecure = 0, loopback = 0, verify_delay_ms = 0;

	while ((c = getopt_long(argc, argv, "qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'L': listen_addr = optarg; break;
		case 'D': rv.cfg.dir = optarg; break;
		case 'S': secret = optarg; break;
		case 'I': insecure = 1; break;
		case 'q': rv.cfg.quiet = 1; break;
		case 'M':
		case 'P':
			if (parse_uint(optarg, c == 'M' ? &rv.cfg.max_conns : &rv.cfg.max_per_addr)) {
				fprintf(stderr, "bdump-recv: bad value '%s' for --%s\n", optarg,
					c == 'M' ? "max-conns" : "max-per-addr");
				return 2;
			}
			break;
		default:
			fputs(usage_text, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!listen_addr || !rv.cfg.dir || optind != argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (stat(rv.cfg.dir, &stt) || !S_ISDIR(stt.st_mode)) {
		fprintf(stderr, "bdump-recv: --dir %s: not a directory\n", rv.cfg.dir);
		return 1;
	}
	if (secret && wire_load_secret(secret, &rv.cfg.key, &rv.cfg.keylen, err, sizeof(err))) {
		fprintf(stderr, "bdump-recv: --secret %s\n", err);
		return 1;
	}
	knob = getenv("BDUMP_RECV_TEST_VERIFY_DELAY_MS");
	if (knob)
		verify_delay_ms = atoi(knob);
	rv.addrs = calloc(rv.cfg.max_conns, sizeof(*rv.addrs));
	if (!rv.addrs) {
		fprintf(stderr, "bdump-recv: out of memory\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(listen_addr, &loopback, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "bdump-recv: %s\n", err);
		return 1;
	}
	if (!rv.cfg.key && !loopback) {
		if (!insecure) {
			fprintf(stderr, "bdump-recv: refusing to listen on %s without --secret: anyone who can reach it could store data; give --secret FILE, or --insecure to accept that\n",
				listen_addr);
			return 2;
		}
		fprintf(stderr, "bdump-recv: WARNING: --insecure: listening on %s without a shared secret: anyone who can reach it can store captures, nothing is authenticated\n",
			listen_addr);
	}
	if (recv_store_open(&rv.store, rv.cfg.dir, rv.cfg.quiet, verify_delay_ms)) {
		fprintf(stderr, "bdump-recv: cannot start the verification thread\n");
		return 1;
	}
	if (!rv.cfg.quiet)
		fprintf(stderr, "bdump-recv: listening on %s, storing in %s%s\n", listen_addr,
			rv.cfg.dir, rv.cfg.key ? ", shared secret required" : "");
	accept_loop(&rv, lfd);
	return 1;
}
