// SPDX-License-Identifier: MIT
/*
 * bdump_recv.c - bdump-recv: receive bdump streams over TCP and store each
 * session as DIR/<session>/trace.zst and sched.bin.
 *
 *   bdump-recv --listen ADDR:PORT --dir DIR [--secret FILE] [-q]
 *
 * One thread per connection. A session is named after the sender's host
 * and start time, so a bdump that reconnects (network cut, receiver
 * restart) continues the same session: DIR/<session>/state records how
 * many segments are stored and the file sizes after them; it is written
 * (write + rename) after the data and before the ACK, and on (re)open the
 * files are cut back to it, so a segment is either fully stored and
 * acknowledged or will be resent. Segments are accepted strictly in order;
 * a duplicate is acknowledged again, a gap or any malformed message ends
 * the connection with an error naming the peer and the stream offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
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

#include <aetrace/container.h>
#include "wire.h"

/* No application idle timeout (bdump may be idle for hours); TCP
 * keepalive notices a dead peer: 30 s idle, then 3 probes 10 s apart. */
#define IDLE_TIMEOUT_MS	-1

struct session {
	struct session *next;
	char name[128];
	pthread_mutex_t lock;
	int fd[2];		/* trace.zst, sched.bin */
	uint64_t size[2];
	uint64_t next_seq;
	int complete;
	int refs;		/* connections using it (under sessions_lock) */
};

static const char *dir;
static uint8_t *key;
static size_t keylen;
static int quiet;
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *sessions;

static void logmsg(const char *peer, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logmsg(const char *peer, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "bdump-recv: %s: %s\n", peer, buf);
}

static int save_state(struct session *s)
{
	char path[4200], tmp[4210];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/state", dir, s->name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "next_seq %llu\ntrace_size %llu\nsched_size %llu\ncomplete %d\n",
		(unsigned long long)s->next_seq, (unsigned long long)s->size[0],
		(unsigned long long)s->size[1], s->complete);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

/* Find or open (creating or resuming from state) session `name`. */
static struct session *session_get(const char *name, char *err, size_t errlen)
{
	static const char *files[2] = { "trace.zst", "sched.bin" };
	struct session *s;
	char path[4200];
	unsigned long long a = 0, b = 0, c = 0;
	int complete = 0;
	FILE *f;

	pthread_mutex_lock(&sessions_lock);
	for (s = sessions; s; s = s->next)
		if (!strcmp(s->name, name)) {
			s->refs++;
			goto out;
		}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto err_free_s;
	}
	snprintf(path, sizeof(path), "%s/%s/state", dir, name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "next_seq %llu trace_size %llu sched_size %llu complete %d",
			   &a, &b, &c, &complete) != 4) {
			fclose(f);
			snprintf(err, errlen, "%s: unreadable state file", path);
			goto err_free_s;
		}
		fclose(f);
	}
	s->next_seq = a;
	s->size[0] = b;
	s->size[1] = c;
	s->complete = complete;
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, name, files[i]);
		s->fd[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (s->fd[i] < 0 || ftruncate(s->fd[i], s->size[i])) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			if (i)
				close(s->fd[0]);
			goto err_free_s;
		}
	}
	if (save_state(s)) {
		snprintf(err, errlen, "%s/%s/state: %s", dir, name, strerror(errno));
		close(s->fd[0]);
		close(s->fd[1]);
		goto err_free_s;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	s->next = sessions;
	sessions = s;
	goto out;

err_free_s:
	free(s);
	s = NULL;
out:
	pthread_mutex_unlock(&sessions_lock);
	return s;
}

/* The last connection of a session closes its files (state is on disk). */
static void session_put(struct session *s)
{
	struct session **pp;

	pthread_mutex_lock(&sessions_lock);
	if (--s->refs == 0) {
		for (pp = &sessions; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		close(s->fd[0]);
		close(s->fd[1]);
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	pthread_mutex_unlock(&sessions_lock);
}

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

static void send_error(int fd, const char *msg)
{
	wire_send(fd, AE_W_ERROR, msg, strlen(msg) + 1, NULL, 0);
}

struct conn {
	int fd;
	char peer[80];
};

static int store_segment(struct session *s, const struct ae_w_segment *sg,
			 const uint8_t *data, size_t len, char *err, size_t errlen)
{
	int st = sg->stream;
	const uint8_t *p = data;
	size_t left = len;
	uint64_t off = s->size[st];

	while (left) {
		ssize_t n = pwrite(s->fd[st], p, left, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: write: %s", s->name, strerror(errno));
			return -errno;
		}
		p += n;
		left -= n;
		off += n;
	}
	s->size[st] = off;
	s->next_seq++;
	if (save_state(s)) {
		snprintf(err, errlen, "%s: state: %s", s->name, strerror(errno));
		return -EIO;
	}
	return 0;
}

/*
 * Before a session is marked complete, decode the stored trace: every
 * chunk's CRC-32C, and the last chunk must be END.
 */
static int verify_trace(struct session *s, char *err, size_t errlen)
{
	struct ae_reader *r;
	struct ae_chunk_hdr h = { 0 };
	const void *pl;
	char path[4200];
	int ret;

	snprintf(path, sizeof(path), "%s/%s/trace.zst", dir, s->name);
	ret = ae_reader_open(&r, path);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	while ((ret = ae_reader_next(r, &h, &pl)) == 1)
		;
	if (ret < 0)
		snprintf(err, errlen, "%s", ae_reader_error(r));
	else if (h.type != AE_CHUNK_END) {
		snprintf(err, errlen, "%s: no END chunk", path);
		ret = -EBADMSG;
	}
	ae_reader_close(r);
	return ret;
}

static void *conn_thread(void *arg)
{
	struct conn *cn = arg;
	struct ae_w_srv_hello sh = { .version = AE_WIRE_VERSION, .auth = key != NULL };
	struct ae_w_cli_hello ch;
	struct ae_w_welcome wl = { 0 };
	struct ae_w_hdr h;
	struct session *s = NULL;
	uint8_t *buf = malloc(AE_WIRE_MAX_LEN);
	uint64_t off = 0, segs = 0;
	char err[512];
	int ret;

	if (!buf)
		goto out;
	wire_nonce(sh.nonce);
	if (wire_send(cn->fd, AE_W_SRV_HELLO, &sh, sizeof(sh), NULL, 0))
		goto out;
	ret = wire_recv(cn->fd, &h, buf, 10000, &off, err, sizeof(err));
	if (ret <= 0) {
		logmsg(cn->peer, "%s", ret ? err : "closed before hello");
		goto out;
	}
	if (h.type != AE_W_CLI_HELLO || h.len != sizeof(ch)) {
		logmsg(cn->peer, "stream offset 0: expected CLI_HELLO (%zu bytes), got type %u (%u bytes)",
		       sizeof(ch), h.type, h.len);
		send_error(cn->fd, "protocol error: expected CLI_HELLO");
		goto out;
	}
	memcpy(&ch, buf, sizeof(ch));
	if (ch.version != AE_WIRE_VERSION || ch.flags) {
		logmsg(cn->peer, "unsupported protocol version %u", ch.version);
		send_error(cn->fd, "unsupported protocol version");
		goto out;
	}
	if (key) {
		uint8_t mac[AE_WIRE_MAC];

		wire_mac(key, keylen, "client", sh.nonce, ch.nonce, &ch,
			 offsetof(struct ae_w_cli_hello, nonce), mac);
		if (!wire_mac_equal(mac, ch.mac)) {
			logmsg(cn->peer, "authentication failed (wrong or missing shared secret)");
			send_error(cn->fd, "authentication failed");
			goto out;
		}
	}
	session_name(wl.session, sizeof(wl.session), &ch);
	s = session_get(wl.session, err, sizeof(err));
	if (!s) {
		logmsg(cn->peer, "%s", err);
		send_error(cn->fd, "receiver cannot store the session");
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	wl.next_seq = s->next_seq;
	pthread_mutex_unlock(&s->lock);
	if (key)
		wire_mac(key, keylen, "server", ch.nonce, sh.nonce, &wl,
			 offsetof(struct ae_w_welcome, mac), wl.mac);
	if (wire_send(cn->fd, AE_W_WELCOME, &wl, sizeof(wl), NULL, 0))
		goto out;
	if (!quiet)
		logmsg(cn->peer, "session %s: resuming at segment %llu", s->name,
		       (unsigned long long)wl.next_seq);

	for (;;) {
		struct ae_w_segment sg;
		struct ae_w_ack ack;
		struct ae_w_fin fin;

		ret = wire_recv(cn->fd, &h, buf, IDLE_TIMEOUT_MS, &off, err, sizeof(err));
		if (ret == 0) {
			if (!quiet)
				logmsg(cn->peer, "session %s: connection closed after %llu segments",
				       s->name, (unsigned long long)segs);
			break;
		}
		if (ret < 0) {
			logmsg(cn->peer, "session %s: %s", s->name, err);
			if (ret == -EPROTO || ret == -EBADMSG)
				send_error(cn->fd, "protocol error");
			break;
		}
		if (h.type == AE_W_SEGMENT) {
			if (h.len < sizeof(sg)) {
				logmsg(cn->peer, "session %s: stream offset %llu: short SEGMENT (%u bytes)",
				       s->name, (unsigned long long)(off - h.len - sizeof(h)), h.len);
				send_error(cn->fd, "protocol error: short SEGMENT");
				break;
			}
			memcpy(&sg, buf, sizeof(sg));
			pthread_mutex_lock(&s->lock);
			if (sg.stream > AE_STREAM_SCHED || sg.pad || sg.seq > s->next_seq || s->complete) {
				logmsg(cn->peer, "session %s: stream offset %llu: bad SEGMENT seq %llu stream %u (expected seq %llu%s)",
				       s->name, (unsigned long long)(off - h.len - sizeof(h)),
				       (unsigned long long)sg.seq, sg.stream,
				       (unsigned long long)s->next_seq, s->complete ? ", session complete" : "");
				pthread_mutex_unlock(&s->lock);
				send_error(cn->fd, "protocol error: bad SEGMENT");
				break;
			}
			ret = 0;
			if (sg.seq == s->next_seq)
				ret = store_segment(s, &sg, buf + sizeof(sg), h.len - sizeof(sg),
						    err, sizeof(err));
			ack = (struct ae_w_ack){ .next_seq = s->next_seq };
			pthread_mutex_unlock(&s->lock);
			if (ret) {
				logmsg(cn->peer, "%s", err);
				send_error(cn->fd, "receiver cannot store the segment");
				break;
			}
			segs++;
			if (wire_send(cn->fd, AE_W_ACK, &ack, sizeof(ack), NULL, 0))
				break;
		} else if (h.type == AE_W_FIN && h.len == sizeof(fin)) {
			memcpy(&fin, buf, sizeof(fin));
			pthread_mutex_lock(&s->lock);
			if (fin.nr_segments != s->next_seq) {
				pthread_mutex_unlock(&s->lock);
				logmsg(cn->peer, "session %s: FIN after %llu segments but %llu stored",
				       s->name, (unsigned long long)fin.nr_segments,
				       (unsigned long long)s->next_seq);
				send_error(cn->fd, "protocol error: FIN count");
				break;
			}
			fdatasync(s->fd[0]);
			fdatasync(s->fd[1]);
			ret = verify_trace(s, err, sizeof(err));
			if (ret) {
				pthread_mutex_unlock(&s->lock);
				logmsg(cn->peer, "session %s: stored trace fails verification: %s",
				       s->name, err);
				send_error(cn->fd, "stored trace fails verification");
				break;
			}
			s->complete = 1;
			ret = save_state(s);
			ack = (struct ae_w_ack){ .next_seq = s->next_seq, .complete = !ret };
			pthread_mutex_unlock(&s->lock);
			if (!quiet)
				logmsg(cn->peer, "session %s complete: %llu segments, trace %llu bytes, sched %llu bytes",
				       s->name, (unsigned long long)ack.next_seq,
				       (unsigned long long)s->size[0], (unsigned long long)s->size[1]);
			wire_send(cn->fd, AE_W_ACK, &ack, sizeof(ack), NULL, 0);
		} else {
			logmsg(cn->peer, "session %s: stream offset %llu: unexpected message type %u (%u bytes)",
			       s->name, (unsigned long long)(off - h.len - sizeof(h)), h.type, h.len);
			send_error(cn->fd, "protocol error: unexpected message");
			break;
		}
	}
out:
	if (s)
		session_put(s);
	close(cn->fd);
	free(cn);
	free(buf);
	return NULL;
}

static int listen_on(const char *addr, char *err, size_t errlen)
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
	r = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (r) {
		snprintf(err, errlen, "--listen %s: %s", addr, gai_strerror(r));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		snprintf(err, errlen, "--listen %s: %s", addr, strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	freeaddrinfo(ai);
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "dir", required_argument, NULL, 'D' },
		{ "secret", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *listen_addr = NULL, *secret = NULL;
	char err[512];
	struct stat stt;
	int c, lfd;

	while ((c = getopt_long(argc, argv, "qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'L': listen_addr = optarg; break;
		case 'D': dir = optarg; break;
		case 'S': secret = optarg; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: bdump-recv --listen ADDR:PORT --dir DIR [--secret FILE] [-q]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!listen_addr || !dir || optind != argc) {
		fprintf(stderr, "usage: bdump-recv --listen ADDR:PORT --dir DIR [--secret FILE] [-q]\n");
		return 2;
	}
	if (stat(dir, &stt) || !S_ISDIR(stt.st_mode)) {
		fprintf(stderr, "bdump-recv: --dir %s: not a directory\n", dir);
		return 1;
	}
	if (secret && wire_load_secret(secret, &key, &keylen, err, sizeof(err))) {
		fprintf(stderr, "bdump-recv: --secret %s\n", err);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(listen_addr, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "bdump-recv: %s\n", err);
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "bdump-recv: listening on %s, storing in %s%s\n", listen_addr, dir,
			key ? ", shared secret required" : "");
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		struct conn *cn;
		pthread_t t;
		char host[64] = "?", port[16] = "?";
		int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				fprintf(stderr, "bdump-recv: accept: %s\n", strerror(errno));
			continue;
		}
		cn = calloc(1, sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
		snprintf(cn->peer, sizeof(cn->peer), "%s:%s", host, port);
		{
			int on = 1, idle = 30, intvl = 10, cnt = 3;

			setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
		}
		cn->fd = fd;
		if (pthread_create(&t, NULL, conn_thread, cn)) {
			close(fd);
			free(cn);
			continue;
		}
		pthread_detach(t);
	}
}
