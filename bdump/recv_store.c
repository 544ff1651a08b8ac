// SPDX-License-Identifier: MIT
/*
 * recv_store.c - bdump-recv's storage: one directory per session holding
 * trace.zst, sched.bin, segments (where each segment's bytes are) and
 * state (segments stored, file sizes, complete, owner token), written by
 * rename after the data. Files are cut back to state when a session is
 * opened and at start, so what is acknowledged is stored and nothing else.
 * One background worker syncs finished sessions to disk, verifies them
 * (bdump --check) and writes the verdict to DIR/<session>/verify.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <aetrace/fullio.h>

#include "bdump.h"
#include "recv_store.h"

static const char *const file_names[NR_FILES] = { "trace.zst", "sched.bin", "segments" };


/* One entry of DIR/<session>/segments per stored segment. */
struct seg_index {
	uint32_t stream;
	uint32_t len;
	uint64_t off;
};

struct vjob {
	struct vjob *next;
	char name[128];
};

/* Parsed DIR/<session>/state. */
struct sess_state {
	uint64_t next_seq;
	uint64_t size[2];
	int complete;
	int have_owner;
	uint8_t owner[AE_WIRE_TOKEN];
};

void recv_log(const char *who, const char *fmt, ...)
{
	char buf[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "bdump-recv: %s: %s\n", who, buf);
}

/* ------------------------------------------------------------ state files */

static void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* 0, -ENOENT (no state yet) or -EINVAL with err. */
static int state_read(const char *dir, const char *name, struct sess_state *st,
		      char *err, size_t errlen)
{
	char path[4300], line[256];
	unsigned long long v;
	int seen = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%s/state", dir, name);
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return -ENOENT;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char hx[2 * AE_WIRE_TOKEN + 2];

		if (sscanf(line, "next_seq %llu", &v) == 1)
			st->next_seq = v, seen |= 1;
		else if (sscanf(line, "trace_size %llu", &v) == 1)
			st->size[0] = v, seen |= 2;
		else if (sscanf(line, "sched_size %llu", &v) == 1)
			st->size[1] = v, seen |= 4;
		else if (sscanf(line, "complete %llu", &v) == 1)
			st->complete = v != 0, seen |= 8;
		else if (sscanf(line, "owner %65s", hx) == 1 && strlen(hx) == 2 * AE_WIRE_TOKEN) {
			for (int i = 0; i < AE_WIRE_TOKEN; i++) {
				unsigned int b;

				sscanf(hx + 2 * i, "%2x", &b);
				st->owner[i] = b;
			}
			st->have_owner = 1;
		}
	}
	fclose(f);
	if (seen != 15) {
		snprintf(err, errlen, "%s: unreadable state file", path);
		return -EINVAL;
	}
	return 0;
}

static int save_state(const struct recv_store *rs, const struct session *s)
{
	char path[4300], tmp[4310], own[2 * AE_WIRE_TOKEN + 1];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/state", rs->dir, s->name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	hex(own, s->owner, AE_WIRE_TOKEN);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "next_seq %llu\ntrace_size %llu\nsched_size %llu\ncomplete %d\nowner %s\n",
		(unsigned long long)s->next_seq, (unsigned long long)s->size[0],
		(unsigned long long)s->size[1], s->complete, own);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

/*
 * Open the files of session `name` and cut them back to what state
 * records (bytes past it were never acknowledged). Returns 0 or -errno.
 */
static int open_files(const char *dir, const char *name, const struct sess_state *st,
		      int fd[NR_FILES], int quiet, char *err, size_t errlen)
{
	uint64_t want[NR_FILES] = { st->size[0], st->size[1],
				    st->next_seq * sizeof(struct seg_index) };
	char path[4300];
	struct stat sb;
	int i, ret = 0;

	for (i = 0; i < NR_FILES; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file_names[i]);
		fd[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd[i] < 0 || fstat(fd[i], &sb)) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		if ((uint64_t)sb.st_size < want[i]) {
			ret = -EUCLEAN;
			snprintf(err, errlen, "%s: %llu bytes, but state records %llu", path,
				 (unsigned long long)sb.st_size, (unsigned long long)want[i]);
			break;
		}
		if ((uint64_t)sb.st_size > want[i]) {
			if (ftruncate(fd[i], want[i])) {
				ret = -errno;
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				break;
			}
			if (!quiet)
				recv_log(name, "%s: trimmed %llu unacknowledged bytes past the recorded size",
				         file_names[i], (unsigned long long)(sb.st_size - want[i]));
		}
	}
	if (ret) {
		if (i < NR_FILES && fd[i] >= 0)
			close(fd[i]);
		while (i-- > 0)
			close(fd[i]);
	}
	return ret;
}

/* ---------------------------------------------------------- verification */

static void verify_queue(struct recv_store *rs, const char *name)
{
	struct vjob *j = calloc(1, sizeof(*j));

	if (!j) {
		recv_log(name, "out of memory: capture not verified");
		return;
	}
	snprintf(j->name, sizeof(j->name), "%s", name);
	pthread_mutex_lock(&rs->vlock);
	if (rs->vtail)
		rs->vtail->next = j;
	else
		rs->vhead = j;
	rs->vtail = j;
	pthread_cond_signal(&rs->vcond);
	pthread_mutex_unlock(&rs->vlock);
}

/* Sync and verify one finished session as `bdump --check` does; verdict to DIR/name/verify. */
static void verify_session(struct recv_store *rs, const char *name)
{
	char trace[4300], sched[4300], path[4300], tmp[4310], msg[1024];
	int bad;
	FILE *f;

	/* to disk first (FIN did not wait for it: a busy disk may take long) */
	for (int i = 0; i < NR_FILES; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s/%s", rs->dir, name, file_names[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fdatasync(fd))
			recv_log(name, "%s: sync: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (rs->verify_delay_ms)
		usleep(rs->verify_delay_ms * 1000);
	snprintf(trace, sizeof(trace), "%s/%s/trace.zst", rs->dir, name);
	snprintf(sched, sizeof(sched), "%s/%s/sched.bin", rs->dir, name);
	bad = bdump_check_report(trace, sched, msg, sizeof(msg));
	snprintf(path, sizeof(path), "%s/%s/verify", rs->dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f) {
		int werr = fprintf(f, "%s %s\n", bad ? "failed" : "ok", msg) < 0;

		if (fclose(f) || werr || rename(tmp, path))
			f = NULL;
	}
	if (!f)
		recv_log(name, "%s: %s", path, strerror(errno));
	if (bad)
		recv_log(name, "stored capture FAILS verification: %s", msg);
	else if (!rs->quiet)
		recv_log(name, "capture verified: %s", msg);
}

static void *verify_worker(void *arg)
{
	struct recv_store *rs = arg;

	for (;;) {
		struct vjob *j;

		pthread_mutex_lock(&rs->vlock);
		while (!rs->vhead)
			pthread_cond_wait(&rs->vcond, &rs->vlock);
		j = rs->vhead;
		rs->vhead = j->next;
		if (!rs->vhead)
			rs->vtail = NULL;
		pthread_mutex_unlock(&rs->vlock);
		verify_session(rs, j->name);
		free(j);
	}
	return NULL;
}

/*
 * At start: cut every session's files back to its state (a receiver that
 * died between writing and recording) and queue the finished sessions
 * whose verification never ran.
 */
static void scan_sessions(struct recv_store *rs)
{
	DIR *d = opendir(rs->dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct sess_state st;
		char err[512], path[4300];
		int fd[NR_FILES], r;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(((struct session *)0)->name))
			continue;
		r = state_read(rs->dir, de->d_name, &st, err, sizeof(err));
		if (r) {
			if (r != -ENOENT)
				recv_log(de->d_name, "%s", err);
			continue;
		}
		if (!st.have_owner)
			continue;	/* protocol 1: never resumed, left as it is */
		if (open_files(rs->dir, de->d_name, &st, fd, rs->quiet, err, sizeof(err))) {
			recv_log(de->d_name, "%s", err);
			continue;
		}
		for (int i = 0; i < NR_FILES; i++)
			close(fd[i]);
		snprintf(path, sizeof(path), "%s/%s/verify", rs->dir, de->d_name);
		if (st.complete && access(path, F_OK))
			verify_queue(rs, de->d_name);
	}
	closedir(d);
}

/* --------------------------------------------------------------- sessions */

int recv_session_get(struct recv_store *rs, const char *name, const uint8_t *token,
		     struct session **sp, char *err, size_t errlen)
{
	struct sess_state st;
	struct session *s;
	char path[4300];
	int ret = 0;

	pthread_mutex_lock(&rs->lock);
	for (s = rs->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			break;
	if (s) {
		if (!wire_mac_equal(s->owner, token, AE_WIRE_TOKEN)) {
			ret = -EPERM;
			goto out;
		}
		s->refs++;
		*sp = s;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", rs->dir, name);
	if (mkdir(path, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ret = -errno;
		goto out;
	}
	ret = state_read(rs->dir, name, &st, err, errlen);
	if (ret == -ENOENT) {
		memcpy(st.owner, token, AE_WIRE_TOKEN);	/* a new session */
		st.have_owner = 1;
		ret = 0;
	}
	if (ret)
		goto out;
	if (!st.have_owner || !wire_mac_equal(st.owner, token, AE_WIRE_TOKEN)) {
		ret = -EPERM;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->next_seq = st.next_seq;
	s->size[0] = st.size[0];
	s->size[1] = st.size[1];
	s->complete = st.complete;
	memcpy(s->owner, st.owner, AE_WIRE_TOKEN);
	s->conn_fd = -1;
	ret = open_files(rs->dir, name, &st, s->fd, rs->quiet, err, errlen);
	if (ret)
		goto err_free_s;
	ret = save_state(rs, s);
	if (ret) {
		snprintf(err, errlen, "%s/%s/state: %s", rs->dir, name, strerror(-ret));
		for (int i = 0; i < NR_FILES; i++)
			close(s->fd[i]);
		goto err_free_s;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	s->next = rs->sessions;
	rs->sessions = s;
	*sp = s;
	goto out;

err_free_s:
	free(s);
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

void recv_session_put(struct recv_store *rs, struct session *s)
{
	struct session **pp;

	pthread_mutex_lock(&rs->lock);
	if (--s->refs == 0) {
		for (pp = &rs->sessions; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		for (int i = 0; i < NR_FILES; i++)
			close(s->fd[i]);
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	pthread_mutex_unlock(&rs->lock);
}

int recv_session_append(struct recv_store *rs, struct session *s, const struct ae_w_segment *sg,
			const uint8_t *data, size_t len, char *err, size_t errlen)
{
	struct seg_index ix = { .stream = sg->stream, .len = len, .off = s->size[sg->stream] };
	int fd = s->fd[sg->stream], ret;

	ret = schedlog_pwrite_full(fd, data, len, ix.off);
	if (!ret)
		ret = schedlog_pwrite_full(s->fd[F_INDEX], &ix, sizeof(ix), s->next_seq * sizeof(ix));
	if (ret) {
		snprintf(err, errlen, "%s: write: %s", s->name, strerror(-ret));
		return ret;
	}
	s->size[sg->stream] += len;
	s->next_seq++;
	ret = save_state(rs, s);
	if (ret) {
		/* not recorded, so not stored: the bytes are cut at the next open */
		s->size[sg->stream] -= len;
		s->next_seq--;
		snprintf(err, errlen, "%s: state: %s", s->name, strerror(-ret));
		return ret;
	}
	return 0;
}

int recv_session_same(struct session *s, const struct ae_w_segment *sg,
		      const uint8_t *data, size_t len)
{
	struct seg_index ix;
	uint8_t *old;
	int ret;

	if (schedlog_pread_full(s->fd[F_INDEX], &ix, sizeof(ix), sg->seq * sizeof(ix)))
		return -EIO;
	if (ix.stream != sg->stream || ix.len != len)
		return -EEXIST;
	old = malloc(len ? len : 1);
	if (!old)
		return -ENOMEM;
	ret = schedlog_pread_full(s->fd[sg->stream], old, len, ix.off);
	if (!ret && memcmp(old, data, len))
		ret = -EEXIST;
	free(old);
	return ret;
}

int recv_session_finish(struct recv_store *rs, struct session *s)
{
	int ret = 0;

	if (s->complete)
		return 0;
	s->complete = 1;
	ret = save_state(rs, s);
	if (ret) {
		s->complete = 0;
		return ret;
	}
	if (!rs->quiet)
		recv_log(s->name, "complete: %llu segments, trace %llu bytes, sched %llu bytes",
			   (unsigned long long)s->next_seq, (unsigned long long)s->size[0],
			   (unsigned long long)s->size[1]);
	verify_queue(rs, s->name);
	return 0;
}

int recv_store_open(struct recv_store *rs, const char *dir, int quiet, int verify_delay_ms)
{
	pthread_t t;

	memset(rs, 0, sizeof(*rs));
	rs->dir = dir;
	rs->quiet = quiet;
	rs->verify_delay_ms = verify_delay_ms;
	pthread_mutex_init(&rs->lock, NULL);
	pthread_mutex_init(&rs->vlock, NULL);
	pthread_cond_init(&rs->vcond, NULL);
	scan_sessions(rs);
	if (pthread_create(&t, NULL, verify_worker, rs))
		return -EAGAIN;
	pthread_detach(t);
	return 0;
}
