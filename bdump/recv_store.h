/* SPDX-License-Identifier: MIT */
/*
 * recv_store.h - bdump-recv's session storage (recv_store.c): sessions
 * opened by owner token, segments appended or compared with the stored
 * copy, completion, background verification.
 */
#ifndef BDUMP_RECV_STORE_H
#define BDUMP_RECV_STORE_H

#include <pthread.h>
#include <stdint.h>

#include "wire.h"

enum { F_TRACE, F_SCHED, F_INDEX, NR_FILES };

struct session {
	struct session *next;
	char name[128];
	pthread_mutex_t lock;
	int fd[NR_FILES];
	uint64_t size[2];		/* trace, sched */
	uint64_t next_seq;
	int complete;
	uint8_t owner[AE_WIRE_TOKEN];
	int conn_fd;			/* socket of the newest connection, -1: none */
	int refs;			/* connections using it (under recv_store.lock) */
};

struct vjob;

struct recv_store {
	const char *dir;
	int quiet;
	int verify_delay_ms;		/* test knob: slow verification */
	pthread_mutex_t lock;		/* sessions */
	struct session *sessions;
	pthread_mutex_t vlock;		/* verification queue */
	pthread_cond_t vcond;
	struct vjob *vhead, *vtail;
};

/* One line "bdump-recv: WHO: message" on stderr. */
void recv_log(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Set up storage in dir: cut every session back to its state, queue the
 * finished ones never verified, start the verifier. 0 or -errno.
 */
int recv_store_open(struct recv_store *rs, const char *dir, int quiet, int verify_delay_ms);
/*
 * Find or open session `name` for the sender holding `token`: 0 and *sp,
 * -EPERM when the session belongs to another token, other -errno + err.
 */
int recv_session_get(struct recv_store *rs, const char *name, const uint8_t *token,
		     struct session **sp, char *err, size_t errlen);
/* The last user of a session closes its files (state is on disk). */
void recv_session_put(struct recv_store *rs, struct session *s);
/* Caller holds s->lock. Append segment sg (its bytes, index entry, state): 0 or -errno + err. */
int recv_session_append(struct recv_store *rs, struct session *s, const struct ae_w_segment *sg,
			const uint8_t *data, size_t len, char *err, size_t errlen);
/* Caller holds s->lock. 0 when stored segment sg->seq has exactly these bytes, -EEXIST if not, other -errno. */
int recv_session_same(struct session *s, const struct ae_w_segment *sg,
		      const uint8_t *data, size_t len);
/*
 * Caller holds s->lock. Mark complete and queue the sync to disk and the
 * verification (once; never waits for the disk): 0 or -errno.
 */
int recv_session_finish(struct recv_store *rs, struct session *s);

#endif /* BDUMP_RECV_STORE_H */
