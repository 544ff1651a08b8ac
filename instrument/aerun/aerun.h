/* SPDX-License-Identifier: MIT */
/*
 * aerun.h - standalone capture: one traced thread under ptrace, the kernel
 * hooks of docs/ARCHITECTURE.md emulated by the tracer (overflow, rollback, signal
 * markers, live r15 at sigreturn, exit).
 */
#ifndef AERUN_H
#define AERUN_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/trbuf.h>
#include <aetrace/container.h>
#include "standalone.h"

#define AERUN_EXIT_USAGE	2	/* bad command line */
#define AERUN_EXIT_FAIL		125	/* aerun itself failed */
#define AERUN_EXIT_NOEXEC	126	/* program found but not executable */
#define AERUN_EXIT_NOENT	127	/* program not found */

struct aerun_opts {
	const char *out;		/* NULL with --discard */
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	int level;
	int quiet;
	int verbose;
	const char *prog;		/* as given */
	char *path;			/* resolved through PATH */
	char **argv;			/* program argv, argv[0] as given */
};

/* The sub-buffer ring shared with the writer thread (ring.c). */
struct aerun_ring {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t n;
	uint8_t *busy;			/* 1: committed, not yet written */
	uint32_t *len;			/* committed length */
	uint64_t *seq;			/* its sub-buffer sequence number */
	struct trbuf_marker **mk;	/* markers to write before its DATA */
	uint32_t *nr_mk;
	uint32_t head;			/* next to write (writer) */
	uint32_t pending;		/* committed, not yet written */
	int stop;
	int err;			/* first writer error, -errno */
	pthread_t thread;
	int have_thread;
};

struct aerun_seqtab {
	struct trbuf_seq_range *r;
	size_t n;
};

struct aerun {
	struct aerun_opts o;
	int memfd;
	uint8_t *map;			/* aerun's view of the memfd */
	size_t map_len;
	struct ae_standalone_ctl ctl;
	struct aerun_ring ring;
	struct ae_writer *w;		/* NULL with --discard */
	int out_fd;
	struct aerun_seqtab seqtab;
	pid_t pid;

	/* Current sub-buffer of the traced thread. */
	uint32_t cur;
	uint64_t cur_seq;

	/* Markers not yet attached to a commit. */
	struct trbuf_marker *mk;
	uint32_t nr_mk, cap_mk;

	/* Statistics. */
	uint64_t raw_bytes, commits, rollbacks, signals, sigreturns, markers;
	int status;			/* wait status of the program */
	uint64_t final_ip;
	int failed;			/* aerun killed the program */
};

/* seqtab.c */
int aerun_seqtab_load(struct aerun_seqtab *t, const char *path, char *err, size_t errlen);
uint64_t aerun_seqtab_rollback(const struct aerun_seqtab *t, uint64_t ip);

/* ring.c */
int aerun_ring_init(struct aerun *a);
uint8_t *aerun_subbuf(struct aerun *a, uint32_t i);
int aerun_ring_commit(struct aerun *a, uint32_t len);	/* commits a->cur */
int aerun_ring_next(struct aerun *a);			/* waits for a free one */
int aerun_ring_finish(struct aerun *a);
void aerun_add_marker(struct aerun *a, const struct trbuf_marker *m);

/* trace.c */
int aerun_trace(struct aerun *a);

#endif /* AERUN_H */
