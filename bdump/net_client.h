/* SPDX-License-Identifier: MIT */
/*
 * net_client.h - bdump's side of the network transport: compressed bytes
 * are cut into numbered segments kept in bounded memory until bdump-recv
 * acknowledges them; a sender thread (re)connects and resends.
 */
#ifndef BDUMP_NET_CLIENT_H
#define BDUMP_NET_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct net_client;

/*
 * url "tcp://host:port"; secret NULL for none; limit = bytes kept
 * unacknowledged (appending blocks beyond it until *abort_flag is set).
 */
int net_client_open(struct net_client **cp, const char *url, const char *secret_path,
		    size_t limit, int quiet, volatile sig_atomic_t *abort_flag,
		    char *err, size_t errlen);
/* ae_sink_fn for the trace stream. */
int net_client_sink(void *ctx, const void *buf, size_t len);
int net_client_sched(struct net_client *c, const void *buf, size_t len);
/* Seal pending bytes of both streams into segments (blocks when full). */
int net_client_seal(struct net_client *c);
/*
 * Seal, wait until everything is acknowledged, then send FIN (the receiver
 * marks the session complete) unless incomplete is set (a capture that
 * failed: it stays an incomplete session). Frees c; 0 or -errno + err.
 */
int net_client_finish(struct net_client *c, int incomplete, volatile sig_atomic_t *abort_flag,
		      char *err, size_t errlen);
uint64_t net_client_reconnects(const struct net_client *c);

#endif /* BDUMP_NET_CLIENT_H */
