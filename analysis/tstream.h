/* SPDX-License-Identifier: MIT */
/* tstream.h - one task's growing witness stream and its markers */
#ifndef AE_TSTREAM_H
#define AE_TSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/trbuf.h>

/* trbuf_marker.flags of an EXIT marker: ip is the entry of _Exit and the
 * program ends after the next system call (raw captures). */
#define AE_MK_EXIT_AT_SYSCALL	1

/* A marker placed in a task's stream. */
struct ae_smk {
	struct trbuf_marker m;
	uint64_t pos;		/* byte position in the task's stream */
	uint64_t index;		/* in the schedule file */
	uint64_t end;		/* SIGNAL: index of its SIGRETURN, or UINT64_MAX */
	uint64_t ip;		/* twin ip (0: none), once computed */
	int ip_done;
	int via_seq;		/* ip is reached through a trace-writing sequence */
	int sp_known;		/* sp: %rsp at ip (m.sp is where the task stopped) */
	uint64_t sp;
	int sp_missed;		/* ip was reached at pos with another %rsp */
	int taken;		/* SWITCH_IN: the regenerator reached it */
	int moot;		/* SWITCH_IN: the task ended at its offset before
				 * reaching it (it ran nothing after it) */
};

/*
 * One task's witness stream: the bytes [base, end) not consumed yet, and
 * its active markers (SIGNAL, SIGRETURN, FORK, EXEC, EXIT) from mk_base on.
 */
struct ae_tstream {
	uint8_t *buf;
	uint64_t base, end;
	size_t cap;
	struct ae_smk *mk;
	uint64_t mk_base;
	size_t nmk, capmk;
	uint64_t nswitch;	/* switch points appended, and made moot */
	uint64_t nmoot;
	uint64_t open_sig[64];	/* SIGNAL indexes waiting for their SIGRETURN */
	int nopen;
	int final;		/* 0 open; 1 complete (EXIT, EXEC); 2 the capture ended */
	int eager;		/* markers are let go of as soon as they are done
				 * with, not 256 at a time (AETRACE_DEBUG: so
				 * that one read after that fails every time) */
	/* the regenerator's checkpoint: bytes from pin_pos and markers from
	 * pin_mi are kept (a child forked inside a handler replays them),
	 * while the regenerator is less than AE_TSTREAM_PIN_MAX past it */
	int pinned;
	uint64_t pin_pos, pin_mi;
};

#define AE_TSTREAM_PIN_MAX	(16ull << 20)
#define AE_TSTREAM_PIN_MAX_TEXT	"16 MiB"

/*
 * Append bytes / a marker at the current end: 0 or -1 (out of memory).
 * A SWITCH_IN marker is a switch point: where the task was switched out
 * (its feeder appends it where the task's bytes of that slice end). The
 * task's end (EXIT, EXEC) at the same offset makes the switch points
 * there that the regenerator has not reached moot.
 */
int ae_tstream_append(struct ae_tstream *s, const void *data, size_t len);
int ae_tstream_marker(struct ae_tstream *s, const struct trbuf_marker *m, uint64_t index);
/* The regenerator is done with bytes below pos / markers below index mi:
 * their memory may be reused (not past the pins). */
void ae_tstream_consumed(struct ae_tstream *s, uint64_t pos);
void ae_tstream_markers_done(struct ae_tstream *s, uint64_t mi);
void ae_tstream_free(struct ae_tstream *s);

#endif
